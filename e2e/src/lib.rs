//! What the suites that judge the built bundle share: the workspace's
//! modules and cases, `deploy/` as Kubewarden's controller would configure
//! it, Kubewarden's own policy-server on loopback ([`policy_server`]), and
//! where Kubewarden's programs are.
//!
//! The suites run every case through our host (`tests/host_cases.rs`),
//! kwctl and policy-server, and check what only a real server shows:
//! monitor mode, settings refused at start-up, and context-aware policies
//! without a cluster. Kubewarden's programs must be on `PATH`; without them
//! those suites say so and skip, except under CI (`CI=true`), where a
//! missing program is a failure.

pub mod helm;
pub mod hostile;
pub mod manifests;
pub mod policy_server;
pub mod rbac;
pub mod soak;

use reading::yaml::{self, Limit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::policy_server::{PolicyEntry, PolicyMode, find_program};
use host::PolicyModule;
use kubewarden_policy_sdk::crd::policies::common::PolicyMode as CrdMode;
use testkit::case::{Case, case_files};
use wasm_meta::Metadata;
use wasm_meta::metadata::ContextAwareResource;

/// Kubewarden's own type for the manifests in `deploy/`.
pub use kubewarden_policy_sdk::crd::policies::cluster_admission_policy::ClusterAdmissionPolicy;

/// The workspace root.
pub use layout::checkout as root;

/// The annotated module of `policy`, as `make dist` leaves it.
pub fn module(policy: &str) -> PathBuf {
    std::env::var_os("COZYSTACK_POLICIES_DIST")
        .map_or_else(|| root().join("dist"), PathBuf::from)
        .join(format!("{policy}.wasm"))
}

/// The module of `policy` as `make dist` left it, compiled by our host;
/// refused when it is older than its sources, so that no test judges
/// stale code.
pub fn load_module(policy: &str) -> Result<PolicyModule, String> {
    let module = module(policy);
    let built = std::fs::metadata(&module)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{}: {e}; run `make dist` first", module.display()))?;
    let root = root();
    let sources = [
        root.join(layout::POLICIES).join(policy),
        root.join("shared"),
    ];
    if let Some(source) = sources.iter().filter_map(|d| newest_mtime(d)).max()
        && source > built
    {
        return Err(format!(
            "{} is older than its sources; run `make dist`",
            module.display()
        ));
    }
    PolicyModule::from_file(&module).map_err(|e| testkit::with_causes(&e))
}

/// The newest modification time of the files under `dir`, its tests and
/// build output left out.
fn newest_mtime(dir: &Path) -> Option<SystemTime> {
    let mut newest = None;
    for entry in std::fs::read_dir(dir).ok()?.filter_map(Result::ok) {
        let path = entry.path();
        let mtime = if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|n| n == "tests" || n == "target")
            {
                continue;
            }
            newest_mtime(&path)
        } else {
            entry.metadata().and_then(|m| m.modified()).ok()
        };
        newest = newest.max(mtime);
    }
    newest
}

/// The metadata `make dist` annotated into the module of `policy`.
pub fn module_metadata(policy: &str) -> Result<Metadata, String> {
    let module = module(policy);
    let bytes = std::fs::read(&module)
        .map_err(|e| format!("{}: {e}; run `make dist` first", module.display()))?;
    Metadata::from_wasm(&bytes)
        .map_err(|e| testkit::with_causes(&e))?
        .ok_or_else(|| format!("{} is not annotated", module.display()))
}

/// One case file of one policy.
#[derive(Debug, Clone)]
pub struct PolicyCase {
    pub policy: String,
    /// The file stem, e.g. `delete-protected-configmap`.
    pub name: String,
    pub case: Case,
}

impl PolicyCase {
    /// `<policy>/<case>`, the name tests and reports use.
    pub fn id(&self) -> String {
        format!("{}/{}", self.policy, self.name)
    }

    /// The settings the case runs with (`{}` when it gives none).
    pub fn settings(&self) -> serde_json::Value {
        self.case.settings()
    }
}

/// The policies of the workspace, sorted ([`layout::policy_names`]).
pub fn policies() -> Result<Vec<String>, String> {
    layout::policy_names(&root()).map_err(|e| e.to_string())
}

/// Every case of every policy.
pub fn cases() -> Result<Vec<PolicyCase>, String> {
    let mut all = Vec::new();
    for policy in layout::policies(&root()).map_err(|e| e.to_string())? {
        let dir = policy.cases_dir();
        for file in case_files(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let case = Case::load(&file).map_err(|e| e.with_causes())?;
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            all.push(PolicyCase {
                policy: policy.name.clone(),
                name,
                case,
            });
        }
    }
    Ok(all)
}

/// Where a Kubewarden program is: `Ok(None)` when it is missing on a
/// developer's machine (the suite is skipped, visibly), an error when it is
/// missing under CI.
pub fn program(name: &str) -> Result<Option<PathBuf>, String> {
    match find_program(name) {
        Some(path) => Ok(Some(path)),
        None if std::env::var("CI").is_ok_and(|ci| ci == "true") => Err(format!(
            "{name} is not on PATH, and under CI that is a failure: `make setup` installs it from ../shared/kubewarden"
        )),
        None => Ok(None),
    }
}

/// The Sigstore trust configuration that keeps Kubewarden's programs from
/// waiting for the network at start-up (`SIGSTORE_TRUST_CONFIG`, set by
/// the Makefile when `../shared/kubewarden` is there).
pub fn trust_config() -> Option<PathBuf> {
    std::env::var_os("SIGSTORE_TRUST_CONFIG")
        .map(PathBuf::from)
        .filter(|path| path.is_file())
}

/// The ClusterAdmissionPolicies of `deploy/bundle/policies/`, by policy.
pub fn deployed() -> Result<BTreeMap<String, ClusterAdmissionPolicy>, String> {
    let dir = root().join("deploy/bundle/policies");
    let mut found = BTreeMap::new();
    for file in case_files(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let policy: ClusterAdmissionPolicy =
            yaml::document(&text, Limit::Cases).map_err(|e| format!("{}: {e}", file.display()))?;
        let name = policy
            .metadata
            .name
            .clone()
            .ok_or_else(|| format!("{}: metadata.name is missing", file.display()))?;
        found.insert(name, policy);
    }
    Ok(found)
}

/// The policy id Kubewarden's controller gives a ClusterAdmissionPolicy.
pub fn deployed_id(policy: &ClusterAdmissionPolicy) -> String {
    format!(
        "clusterwide-{}",
        policy.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The `policies.yml` entry Kubewarden's controller writes for `policy`
/// (`policyserver_controller_configmap.go`), with the module taken from
/// `dist/` instead of the registry: the policy's own name is the last
/// segment of the module's reference.
pub fn deployed_entry(policy: &ClusterAdmissionPolicy) -> Result<PolicyEntry, String> {
    let spec = policy
        .spec
        .as_ref()
        .ok_or_else(|| format!("{} has no spec", deployed_id(policy)))?;
    let name = spec
        .module
        .rsplit('/')
        .next()
        .and_then(|last| last.split([':', '@']).next())
        .filter(|name| !name.is_empty())
        .ok_or_else(|| format!("module {:?} names no policy", spec.module))?;
    let settings = serde_json::to_value(&spec.settings).map_err(|e| e.to_string())?;
    let mut entry = PolicyEntry::new(&module(name), settings);
    entry.policy_mode = match spec.mode {
        Some(CrdMode::Monitor) => PolicyMode::Monitor,
        _ => PolicyMode::Protect,
    };
    entry.allowed_to_mutate = spec.mutating;
    entry.context_aware_resources = spec
        .context_aware_resources
        .iter()
        .map(|resource| ContextAwareResource {
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
        })
        .collect();
    entry.message = spec.message.clone();
    entry.timeout_eval_seconds = spec
        .timeout_eval_seconds
        .as_ref()
        .map(i32::from)
        .and_then(|seconds| u64::try_from(seconds).ok());
    Ok(entry)
}

/// Whether `case` runs with the settings a policy is deployed with. The
/// chart sets `cozystackVersion` explicitly; a case judged by the policies'
/// default release leaves it out.
pub fn runs_with(case: &PolicyCase, deployed: &serde_json::Value) -> bool {
    let mut deployed = deployed.clone();
    if let Some(map) = deployed.as_object_mut()
        && map
            .get("cozystackVersion")
            .and_then(serde_json::Value::as_str)
            == Some(release::Release::default().as_str())
    {
        map.remove("cozystackVersion");
    }
    case.settings() == deployed
}

/// The response policy-server logged for request `uid` to `policy_id` in
/// monitor mode (it answers "allowed" and logs what the policy said), from
/// its JSON log (`--log-fmt json`, one object per line).
pub fn monitor_mode_log(log: &str, policy_id: &str, uid: &str) -> Option<String> {
    log.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|entry| {
            let text = |pointer| entry.pointer(pointer).and_then(serde_json::Value::as_str);
            text("/fields/message") == Some("policy evaluation (monitor mode)")
                && text("/fields/policy_id") == Some(policy_id)
                && text("/span/request_uid") == Some(uid)
        })
        .and_then(|entry| {
            entry
                .pointer("/fields/response")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        })
}
