//! Kubewarden's own policy-server, run on loopback: the suite that proves
//! every case against the real server and the benchmark that measures what
//! a user waits for both start it through this module.
//!
//! The configuration is the `policies.yml` that Kubewarden's controller
//! writes into the PolicyServer's ConfigMap (`policyserver_controller_configmap.go`):
//! one entry per policy id with the module, settings, mode, mutation flag,
//! context-aware resources and host capabilities (`*` for cluster-wide
//! policies). The server runs without a cluster
//! (`--ignore-kubernetes-connection-failure`), so context-aware calls fail as
//! they would on a cluster the server cannot reach.

use std::collections::BTreeMap;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use wasm_meta::metadata::ContextAwareResource;

pub mod answer;
pub mod one_shot;

pub use answer::Answer;

/// How long the server may take to load and precompile its policies.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// `policyMode` of a policy id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyMode {
    #[default]
    Protect,
    Monitor,
}

/// One policy id of `policies.yml`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyEntry {
    /// `file:///…` of an annotated module.
    pub module: String,
    pub policy_mode: PolicyMode,
    pub allowed_to_mutate: bool,
    pub settings: Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_aware_resources: Vec<ContextAwareResource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_eval_seconds: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub host_capabilities: Vec<String>,
}

impl PolicyEntry {
    /// A validating policy in protect mode, as Kubewarden's controller
    /// configures a ClusterAdmissionPolicy: every host capability granted.
    pub fn new(module: &Path, settings: Value) -> Self {
        // policy-server takes only absolute `file://` URLs.
        let module = std::path::absolute(module).unwrap_or_else(|_| module.to_path_buf());
        Self {
            module: format!("file://{}", module.display()),
            policy_mode: PolicyMode::Protect,
            allowed_to_mutate: false,
            settings,
            context_aware_resources: Vec::new(),
            timeout_eval_seconds: None,
            message: None,
            host_capabilities: vec!["*".to_owned()],
        }
    }
}

/// Why the server could not be started or asked.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot {what}")]
    Io {
        what: String,
        #[source]
        error: std::io::Error,
    },
    #[error("cannot write policies.yml")]
    Config(#[from] serde_saphyr::SerializeError),
    /// The server stopped before it was ready; the log says why (invalid
    /// settings, a module that does not load).
    #[error("policy-server exited ({status}) before it was ready:\n{log}")]
    Exited { status: String, log: String },
    #[error("policy-server was not ready after {0:?}:\n{1}")]
    NotReady(Duration, String),
    #[error("POST {url}")]
    OneShot {
        url: String,
        #[source]
        error: one_shot::OneShotError,
    },
    #[error("POST {url}")]
    Http {
        url: String,
        #[source]
        error: ureq::Error,
    },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServerError {
    let what = what.into();
    move |error| ServerError::Io { what, error }
}

/// A port nobody listens on now (the server binds it a moment later).
fn free_port() -> Result<u16, ServerError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(io("find a free port"))
}

/// What to start: the binary, its policy ids, and the flags that keep it
/// offline.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub binary: PathBuf,
    pub policies: BTreeMap<String, PolicyEntry>,
    /// A Sigstore trust configuration that spares the wait for the network
    /// at start-up (`KUBEWARDEN_SIGSTORE_TRUST_CONFIG_PATH`).
    pub trust_config: Option<PathBuf>,
    /// Evaluation threads; the server's default (one per core) when `None`.
    pub workers: Option<usize>,
    /// Modules pulled from a registry (`registry://` in a policy's
    /// `module`): where from, and what their signatures must satisfy.
    pub registry: Option<RegistryConfig>,
}

/// How policy-server pulls modules from a registry and verifies them.
#[derive(Debug, Clone, Default)]
pub struct RegistryConfig {
    /// `--sources-path`: Kubewarden's sources file (insecure, plain-HTTP
    /// registries such as a loopback test registry).
    pub sources: Option<PathBuf>,
    /// `--verification-path`: the verification config every module's
    /// signatures must satisfy before it is loaded.
    pub verification: Option<PathBuf>,
}

/// A running policy-server, stopped when dropped.
#[derive(Debug)]
pub struct PolicyServer {
    child: Child,
    port: u16,
    log: PathBuf,
    agent: ureq::Agent,
}

impl PolicyServer {
    /// Writes `policies.yml` into `dir`, starts the server and waits until
    /// its readiness probe answers. A server that exits first (it refuses
    /// invalid settings at start-up) is [`ServerError::Exited`] with its log.
    pub fn start(config: &ServerConfig, dir: &Path) -> Result<Self, ServerError> {
        std::fs::create_dir_all(dir).map_err(io(format!("create {}", dir.display())))?;
        // The server runs in `dir`; every path it is given must hold there.
        let dir = &std::path::absolute(dir).map_err(io(format!("resolve {}", dir.display())))?;
        let policies = dir.join("policies.yml");
        std::fs::write(&policies, serde_saphyr::to_string(&config.policies)?)
            .map_err(io(format!("write {}", policies.display())))?;
        let (port, readiness) = (free_port()?, free_port()?);
        let log = dir.join("policy-server.log");
        let log_file =
            std::fs::File::create(&log).map_err(io(format!("create {}", log.display())))?;
        let stderr = log_file.try_clone().map_err(io("open the log twice"))?;
        let mut command = Command::new(&config.binary);
        command
            .current_dir(dir)
            .args(["--addr", "127.0.0.1", "--port", &port.to_string()])
            .args(["--readiness-probe-port", &readiness.to_string()])
            .arg("--policies")
            .arg(&policies)
            .args([
                "--ignore-kubernetes-connection-failure",
                "--log-fmt",
                "json",
            ])
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(stderr);
        if let Some(trust) = &config.trust_config {
            command.arg("--sigstore-trust-config").arg(trust);
        }
        if let Some(workers) = config.workers {
            command.args(["--workers", &workers.to_string()]);
        }
        if let Some(registry) = &config.registry {
            // A relative download directory fails to write the modules
            // (CannotWriteWasmModuleFile): always an absolute one.
            let downloads = dir.join("downloads");
            std::fs::create_dir_all(&downloads)
                .map_err(io(format!("create {}", downloads.display())))?;
            command.arg("--policies-download-dir").arg(&downloads);
            if let Some(sources) = &registry.sources {
                command.arg("--sources-path").arg(sources);
            }
            if let Some(verification) = &registry.verification {
                command.arg("--verification-path").arg(verification);
            }
        }
        let child = command
            .spawn()
            .map_err(io(format!("start {}", config.binary.display())))?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        let mut server = Self {
            child,
            port,
            log,
            agent,
        };
        server.wait_ready(readiness)?;
        Ok(server)
    }

    fn wait_ready(&mut self, readiness: u16) -> Result<(), ServerError> {
        let url = format!("http://127.0.0.1:{readiness}/readiness");
        let started = Instant::now();
        loop {
            if let Some(status) = self
                .child
                .try_wait()
                .map_err(io("wait for policy-server"))?
            {
                return Err(ServerError::Exited {
                    status: status.to_string(),
                    log: self.log(),
                });
            }
            if let Ok(answer) = self.agent.get(&url).call()
                && answer.status() == 200
            {
                return Ok(());
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(ServerError::NotReady(START_TIMEOUT, self.log()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The URL of a policy id's validation endpoint.
    pub fn validate_url(&self, policy_id: &str) -> String {
        format!("http://127.0.0.1:{}/validate/{policy_id}", self.port)
    }

    /// POSTs `review` (an AdmissionReview, as JSON) to a policy id.
    pub fn post(&self, policy_id: &str, review: &[u8]) -> Result<Answer, ServerError> {
        let url = self.validate_url(policy_id);
        let http = |error| ServerError::Http {
            url: url.clone(),
            error,
        };
        let mut answer = self
            .agent
            .post(&url)
            .header("Content-Type", "application/json")
            .send(review)
            .map_err(http)?;
        let status = answer.status().as_u16();
        let mut body = String::new();
        answer
            .body_mut()
            .as_reader()
            .read_to_string(&mut body)
            .map_err(io(format!("read the answer of {url}")))?;
        Ok(Answer { status, body })
    }

    /// POSTs `review` as it is on a connection of its own
    /// ([`one_shot`]): the server's answer even to a body it refuses
    /// before reading it whole (413 above its limit), and no closed
    /// connection left behind for the next request.
    pub fn post_once(&self, policy_id: &str, review: &[u8]) -> Result<Answer, ServerError> {
        one_shot::post(self.port, &format!("/validate/{policy_id}"), review).map_err(|error| {
            ServerError::OneShot {
                url: self.validate_url(policy_id),
                error,
            }
        })
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The server's resident memory in KiB (Linux), `None` elsewhere.
    pub fn resident_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

impl Drop for PolicyServer {
    fn drop(&mut self) {
        // Already gone is fine: the point is that nothing outlives the test.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `request` (a bare AdmissionRequest or a whole AdmissionReview) as the
/// AdmissionReview the API server would POST.
pub fn admission_review(request: &Value) -> Value {
    if request.get("kind").and_then(Value::as_str) == Some("AdmissionReview") {
        request.clone()
    } else {
        serde_json::json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": request,
        })
    }
}

/// Finds a program on `PATH`.
pub fn find_program(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_written_as_the_controller_writes_them() {
        let mut entry = PolicyEntry::new(Path::new("/dist/p.wasm"), serde_json::json!({}));
        entry.policy_mode = PolicyMode::Monitor;
        entry.context_aware_resources = vec![ContextAwareResource {
            api_version: "v1".into(),
            kind: "Namespace".into(),
        }];
        let yaml = serde_saphyr::to_string(&BTreeMap::from([("p", entry)])).unwrap();
        assert_eq!(
            yaml,
            "p:\n  module: file:///dist/p.wasm\n  policyMode: monitor\n  allowedToMutate: false\n  settings: {}\n  contextAwareResources:\n  - apiVersion: v1\n    kind: Namespace\n  hostCapabilities:\n  - \"*\"\n"
        );
    }

    #[test]
    fn requests_become_reviews_once() {
        let bare = serde_json::json!({"uid": "u"});
        let review = admission_review(&bare);
        assert_eq!(review["kind"], "AdmissionReview");
        assert_eq!(review["request"]["uid"], "u");
        assert_eq!(admission_review(&review), review);
    }
}
