//! The OCI round trip against a real registry: the CNCF distribution
//! registry (Debian's `docker-registry`) on 127.0.0.1 with a temporary
//! storage directory; `cozystack-policies push` publishes the whole bundle
//! in `dist/`, and every artifact is pulled back and checked (digest, media
//! types, config, layer bytes, annotations, tag).
//!
//! `make registry` installs the registry when it is missing and runs these
//! tests (`--ignored`): they need the binary, which a plain `cargo test`
//! does not install. The registry is stopped when the test ends, pass or
//! fail (the guard's `Drop`), or is killed (`setpriv --pdeathsig`).

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use host::Metadata;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::manifest::{
    OCI_IMAGE_MEDIA_TYPE, OciImageManifest, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE,
};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::{Digest, Sha256};

/// A user and the bcrypt hash of its password (`htpasswd -nbB`), for the
/// registry that requires credentials.
const USER: &str = "pusher";
const PASSWORD: &str = "round-trip-secret";
const HTPASSWD: &str = "pusher:$2y$05$uqUqA9mOjvPSdAfZ0lHJYu5rrc.ePmuBSWfbiVqsHAHgspC64DNF2\n";

use layout::checkout as root;

fn dist() -> PathBuf {
    std::env::var_os("COZYSTACK_POLICIES_DIST").map_or_else(|| root().join("dist"), PathBuf::from)
}

fn registry_binary() -> PathBuf {
    let path = std::env::var_os("DOCKER_REGISTRY")
        .map_or_else(|| PathBuf::from("/usr/bin/docker-registry"), PathBuf::from);
    assert!(
        path.is_file(),
        "{} is missing: `make registry` installs the Debian package docker-registry",
        path.display()
    );
    path
}

/// A registry process with its own storage; killed and removed on drop.
struct Registry {
    child: Child,
    dir: PathBuf,
    /// `127.0.0.1:<port>`
    address: String,
}

impl Registry {
    fn start(name: &str, htpasswd: Option<&str>) -> Registry {
        let dir =
            std::env::temp_dir().join(format!("cozystack-registry-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("storage")).unwrap();
        // Port 0 lets the kernel choose a free port; the registry binds it
        // right after the probe socket is closed.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let address = format!("127.0.0.1:{port}");
        let auth = match htpasswd {
            Some(users) => {
                std::fs::write(dir.join("htpasswd"), users).unwrap();
                format!(
                    "auth:\n  htpasswd:\n    realm: round-trip\n    path: {}\n",
                    dir.join("htpasswd").display()
                )
            }
            None => String::new(),
        };
        let config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  \
             delete:\n    enabled: true\nhttp:\n  addr: {address}\n{auth}",
            dir.join("storage").display()
        );
        std::fs::write(dir.join("config.yml"), config).unwrap();
        let log = std::fs::File::create(dir.join("registry.log")).unwrap();
        // setpriv (util-linux) asks the kernel to kill the registry when this
        // thread ends, so not even a killed test run leaves it behind.
        let child = Command::new("setpriv")
            .args(["--pdeathsig", "KILL", "--"])
            .arg(registry_binary())
            .arg("serve")
            .arg(dir.join("config.yml"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut registry = Registry {
            child,
            dir,
            address,
        };
        registry.wait_ready();
        registry
    }

    /// Waits until `/v2/` answers (200, or 401 when it wants credentials).
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("registry exited with {status}:\n{}", self.log());
            }
            if let Ok(mut stream) = TcpStream::connect(&self.address) {
                let request = format!("GET /v2/ HTTP/1.0\r\nHost: {}\r\n\r\n", self.address);
                let mut answer = String::new();
                if stream.write_all(request.as_bytes()).is_ok()
                    && stream.read_to_string(&mut answer).is_ok()
                    && (answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.0 401"))
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("registry did not answer in 20 s:\n{}", self.log());
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("registry.log")).unwrap_or_default()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn cli(args: &[&str], stdin: Option<&str>) -> Output {
    cli_with(args, stdin, &DockerConfig::empty("cli"))
}

/// A docker configuration directory (`DOCKER_CONFIG`) of the test's own,
/// so no credentials of the machine's user are read; removed on drop.
struct DockerConfig {
    dir: PathBuf,
}

impl DockerConfig {
    fn empty(name: &str) -> DockerConfig {
        let dir = std::env::temp_dir().join(format!(
            "cozystack-docker-config-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        DockerConfig { dir }
    }

    /// A configuration as `docker login registry` leaves it.
    fn logged_in(name: &str, registry: &str, user: &str, password: &str) -> DockerConfig {
        use base64::Engine as _;
        let config = DockerConfig::empty(name);
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let json = serde_json::json!({"auths": {registry: {"auth": auth}}});
        std::fs::write(config.dir.join("config.json"), json.to_string()).unwrap();
        config
    }
}

impl Drop for DockerConfig {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn cli_with(args: &[&str], stdin: Option<&str>, docker: &DockerConfig) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cozystack-policies"))
        .arg("--root")
        .arg(root())
        .args(args)
        .env("DOCKER_CONFIG", &docker.dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

fn client() -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::try_from(ClientConfig {
        protocol: ClientProtocol::Http,
        ..ClientConfig::default()
    })
    .unwrap()
}

/// The annotations `kwctl push` writes for a module's metadata.
fn expected_annotations(metadata: &Metadata) -> BTreeMap<String, String> {
    let mut expected: BTreeMap<String, String> = metadata
        .annotations
        .iter()
        .filter(|(_, v)| !v.contains('\n'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let source = metadata.annotations["io.kubewarden.policy.source"].clone();
    expected.insert("org.opencontainers.image.source".to_owned(), source);
    expected
}

/// Pulls one pushed artifact back by digest and checks it against the
/// module it was pushed from.
async fn verify(client: &Client, auth: &RegistryAuth, pushed: &serde_json::Value) -> String {
    let module_path = PathBuf::from(pushed["path"].as_str().unwrap());
    let wasm = std::fs::read(&module_path).unwrap();
    let metadata = Metadata::from_wasm(&wasm).unwrap().unwrap();
    let version = metadata.version().unwrap().to_owned();
    let reference = pushed["reference"].as_str().unwrap();
    let immutable = pushed["immutable_ref"].as_str().unwrap();
    assert!(
        reference.ends_with(&format!(":v{version}")),
        "{reference} is not tagged v{version}"
    );
    let (repository, digest) = immutable.split_once('@').unwrap();
    assert_eq!(repository, reference.rsplit_once(':').unwrap().0);

    // The manifest, by digest: its bytes hash to the digest printed.
    let by_digest: Reference = immutable.parse().unwrap();
    let (raw, served_digest) = client
        .pull_manifest_raw(&by_digest, auth, &[OCI_IMAGE_MEDIA_TYPE])
        .await
        .unwrap();
    assert_eq!(sha256(&raw), digest, "{immutable}: manifest bytes");
    assert_eq!(served_digest, digest);
    let manifest: OciImageManifest = serde_json::from_slice(&raw).unwrap();
    assert_eq!(manifest.schema_version, 2);
    assert_eq!(manifest.media_type.as_deref(), Some(OCI_IMAGE_MEDIA_TYPE));

    // The config: `{}` with the wasm config media type.
    assert_eq!(manifest.config.media_type, WASM_CONFIG_MEDIA_TYPE);
    let mut config = Vec::new();
    client
        .pull_blob(&by_digest, &manifest.config, &mut config)
        .await
        .unwrap();
    assert_eq!(config, b"{}");
    assert_eq!(manifest.config.digest, sha256(b"{}"));

    // Exactly one layer: the module, byte for byte.
    assert_eq!(manifest.layers.len(), 1, "{immutable}: layers");
    let layer = &manifest.layers[0];
    assert_eq!(layer.media_type, WASM_LAYER_MEDIA_TYPE);
    assert_eq!(layer.digest, sha256(&wasm));
    assert_eq!(layer.size, i64::try_from(wasm.len()).unwrap());
    let mut pulled = Vec::new();
    client
        .pull_blob(&by_digest, layer, &mut pulled)
        .await
        .unwrap();
    assert!(
        pulled == wasm,
        "{immutable}: layer differs from {module_path:?}"
    );
    assert_eq!(
        Metadata::from_wasm(&pulled).unwrap().unwrap(),
        metadata,
        "{immutable}: metadata section"
    );

    // Annotations: the metadata's single-line ones plus the OCI source.
    let annotations = manifest.annotations.clone().unwrap_or_default();
    assert_eq!(annotations, expected_annotations(&metadata), "{immutable}");
    assert!(!annotations.contains_key("io.kubewarden.policy.usage"));
    assert_eq!(annotations["io.kubewarden.policy.version"], version);

    // The tag points at the same manifest.
    let by_tag: Reference = reference.parse().unwrap();
    assert_eq!(
        client.fetch_manifest_digest(&by_tag, auth).await.unwrap(),
        digest
    );
    format!("{immutable} ({} bytes)", wasm.len())
}

fn pushed_lines(output: &Output) -> Vec<serde_json::Value> {
    assert!(
        output.status.success(),
        "push failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn modules_in_dist() -> Vec<String> {
    let mut modules: Vec<String> = std::fs::read_dir(dist())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wasm"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    modules.sort();
    modules
}

#[test]
#[ignore = "needs the docker-registry binary: run `make registry`"]
fn bundle_round_trips_through_a_real_registry() {
    let registry = Registry::start("plain", None);
    let prefix = format!("{}/cozystack-policies", registry.address);
    let dist = dist();
    let push_bundle = || {
        pushed_lines(&cli(
            &[
                "push",
                "--json",
                "--dist",
                &dist.to_string_lossy(),
                "--registry",
                &prefix,
            ],
            None,
        ))
    };
    let pushed = push_bundle();
    let modules = modules_in_dist();
    assert_eq!(
        pushed.len(),
        modules.len(),
        "every module in dist/ is pushed"
    );
    // Every policy of the workspace is in the bundle.
    for entry in std::fs::read_dir(root().join("policies")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.toml").is_file() {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                modules
                    .iter()
                    .any(|m| m.ends_with(&format!("/{name}.wasm"))),
                "dist/{name}.wasm is missing: run `make dist`"
            );
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = client();
    println!("round trip through {}:", registry.address);
    for artifact in &pushed {
        let seen = runtime.block_on(verify(&client, &RegistryAuth::Anonymous, artifact));
        println!("  {seen}");
    }

    // Pushing the same bundle again is idempotent: same digests.
    let again = push_bundle();
    let digests = |lines: &[serde_json::Value]| {
        lines
            .iter()
            .map(|l| l["immutable_ref"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(digests(&again), digests(&pushed));
}

#[test]
#[ignore = "needs the docker-registry binary: run `make registry`"]
fn push_refuses_unannotated_modules_before_pushing_anything() {
    let registry = Registry::start("refuse", None);
    let dir = std::env::temp_dir().join(format!("cozystack-unannotated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A good module first, then an unannotated one: nothing may be pushed.
    let good = modules_in_dist().into_iter().next().unwrap();
    std::fs::copy(&good, dir.join("a-good.wasm")).unwrap();
    std::fs::write(dir.join("b-raw.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let prefix = format!("{}/cozystack-policies", registry.address);
    let output = cli(
        &[
            "push",
            "--dist",
            &dir.to_string_lossy(),
            "--registry",
            &prefix,
        ],
        None,
    );
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("b-raw.wasm is not annotated"), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing is pushed");
    let catalog = {
        let mut stream = TcpStream::connect(&registry.address).unwrap();
        let request = format!(
            "GET /v2/_catalog HTTP/1.0\r\nHost: {}\r\n\r\n",
            registry.address
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    assert!(catalog.contains(r#"{"repositories":[]}"#), "{catalog}");
}

#[test]
#[ignore = "needs the docker-registry binary: run `make registry`"]
fn push_sends_credentials_to_a_registry_that_wants_them() {
    let registry = Registry::start("auth", Some(HTPASSWD));
    let prefix = format!("{}/cozystack-policies", registry.address);
    let dist = dist().to_string_lossy().into_owned();
    let module = modules_in_dist().into_iter().next().unwrap();

    let anonymous = cli(
        &["push", "--dist", &dist, "--registry", &prefix, &module],
        None,
    );
    assert!(!anonymous.status.success(), "anonymous push was accepted");

    let wrong = cli(
        &[
            "push",
            "--dist",
            &dist,
            "--registry",
            &prefix,
            "--username",
            USER,
            "--password-stdin",
            &module,
        ],
        Some("not-the-password\n"),
    );
    assert!(!wrong.status.success(), "a wrong password was accepted");

    let pushed = pushed_lines(&cli(
        &[
            "push",
            "--json",
            "--dist",
            &dist,
            "--registry",
            &prefix,
            "--username",
            USER,
            "--password-stdin",
            &module,
        ],
        Some(&format!("{PASSWORD}\n")),
    ));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let auth = RegistryAuth::Basic(USER.to_owned(), PASSWORD.to_owned());
    let seen = runtime.block_on(verify(&client(), &auth, &pushed[0]));
    println!("with credentials: {seen}");
}

/// `check` with the exit code, stdout and stderr, caching under `cache`.
fn check_with_cache(cache: &Path, args: &[&str]) -> (i32, String, String) {
    check_as(cache, args, &DockerConfig::empty("check"))
}

/// `check` with the docker configuration `docker`.
fn check_as(cache: &Path, args: &[&str], docker: &DockerConfig) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_cozystack-policies"))
        .arg("--root")
        .arg(root())
        .arg("check")
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .env("DOCKER_CONFIG", &docker.dir)
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn cached_files(cache: &Path) -> usize {
    std::fs::read_dir(cache.join("cozystack-policies/sha256")).map_or(0, |dir| dir.count())
}

#[test]
#[ignore = "needs the docker-registry binary: run `make registry`"]
fn check_pulls_published_modules_once_and_then_works_offline() {
    let registry = Registry::start("check", None);
    let prefix = format!("{}/cozystack-policies", registry.address);
    let module = dist().join("no-delete.wasm");
    let pushed = pushed_lines(&cli(
        &[
            "push",
            "--json",
            "--registry",
            &prefix,
            &module.to_string_lossy(),
        ],
        None,
    ));
    let digest = pushed[0]["immutable_ref"]
        .as_str()
        .unwrap()
        .split_once('@')
        .unwrap()
        .1;
    let pinned = format!("registry://{prefix}/no-delete:v0.1.0@{digest}");
    let cache = std::env::temp_dir().join(format!("cozystack-check-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let args = [
        "--json",
        "--policy",
        pinned.as_str(),
        "--old",
        "examples/before",
        "examples/after",
    ];

    let (code, stdout, stderr) = check_with_cache(&cache, &args);
    assert_eq!(
        code, 1,
        "{pinned}: the example deletes a protected object\n{stderr}"
    );
    let output: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let findings = output["findings"].as_array().cloned().unwrap_or_default();
    assert!(!findings.is_empty(), "{stdout}");
    assert!(
        findings.iter().all(|f| f["policy"] == "no-delete"),
        "only the module named runs: {stdout}"
    );
    assert!(
        findings.iter().any(|f| f["operation"] == "DELETE"),
        "{stdout}"
    );
    assert_eq!(
        cached_files(&cache),
        2,
        "the manifest and the module are cached"
    );

    // The registry gone, the pinned reference is served from the cache.
    drop(registry);
    let (offline, offline_stdout, stderr) = check_with_cache(&cache, &args);
    assert_eq!(offline, 1, "from the cache: {stderr}");
    assert_eq!(offline_stdout, stdout, "the cached module judges the same");

    // A digest nobody published: not in the cache, and no registry to ask.
    let (code, _, stderr) = check_with_cache(
        &cache,
        &[
            "--policy",
            &format!(
                "registry://{prefix}/no-delete:v0.1.0@sha256:{}",
                "0".repeat(64)
            ),
            "examples/after",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no-delete:v0.1.0@sha256:000"), "{stderr}");
    std::fs::remove_dir_all(&cache).unwrap();
}

#[test]
#[ignore = "needs the docker-registry binary: run `make registry`"]
fn check_and_push_use_the_docker_login_of_a_private_registry() {
    let registry = Registry::start("private", Some(HTPASSWD));
    let prefix = format!("{}/cozystack-policies", registry.address);
    let module = dist().join("no-delete.wasm").to_string_lossy().into_owned();
    let logged_in = DockerConfig::logged_in("private", &registry.address, USER, PASSWORD);

    // `docker login` is enough to push, without --username.
    let pushed = pushed_lines(&cli_with(
        &["push", "--json", "--registry", &prefix, &module],
        None,
        &logged_in,
    ));
    let reference = format!(
        "registry://{}",
        pushed[0]["immutable_ref"].as_str().unwrap()
    );
    let cache =
        std::env::temp_dir().join(format!("cozystack-private-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let args = [
        "--json",
        "--policy",
        reference.as_str(),
        "--old",
        "examples/before",
        "examples/after",
    ];

    // Without credentials the registry refuses, and the error says what to do.
    let (code, _, stderr) = check_as(&cache, &args, &DockerConfig::empty("anonymous"));
    assert_eq!(code, 2, "{stderr}");
    let hint = format!("run `docker login {}`", registry.address);
    assert!(stderr.contains(&hint), "{stderr}");
    assert_eq!(
        cached_files(&cache),
        0,
        "nothing is cached from a refused pull"
    );

    // Wrong credentials: the hint says to log in again.
    let wrong = DockerConfig::logged_in("wrong", &registry.address, USER, "not-the-password");
    let (code, _, stderr) = check_as(&cache, &args, &wrong);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("refused the credentials of the docker configuration"),
        "{stderr}"
    );

    // Logged in: pulled and judged.
    let (code, stdout, stderr) = check_as(&cache, &args, &logged_in);
    assert_eq!(code, 1, "the example deletes a protected object\n{stderr}");
    let output: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let findings = output["findings"].as_array().cloned().unwrap_or_default();
    assert!(
        findings
            .iter()
            .any(|f| f["policy"] == "no-delete" && f["operation"] == "DELETE"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&cache).unwrap();
}

// --- The chart, and signatures ---------------------------------------------

/// The chart archive `make chart-package` wrote (`CHART_ARCHIVE`), when
/// Helm's SDK was there to write it.
fn chart_archive() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("CHART_ARCHIVE")?);
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").map_or(true, |ci| ci != "true"),
        "{} is missing: `make chart-package` writes it",
        path.display()
    );
    None
}

fn helm() -> Option<e2e::helm::Helm> {
    e2e::helm::Helm::find().unwrap()
}

#[test]
#[ignore = "needs the docker-registry binary: run `make registry`"]
fn chart_round_trips_through_a_real_registry() {
    let (Some(archive), Some(helm)) = (chart_archive(), helm()) else {
        println!("skipped: no chart archive or no Helm SDK (make chart-package, tools/helm-venv)");
        return;
    };
    let registry = Registry::start("chart", None);
    let prefix = format!("{}/cozystack-policies", registry.address);
    let archive_arg = archive.to_string_lossy().into_owned();
    let push = || {
        pushed_lines(&cli(
            &[
                "push",
                "--json",
                "--chart-only",
                "--chart",
                &archive_arg,
                "--registry",
                &prefix,
            ],
            None,
        ))
    };
    let pushed = push();
    assert_eq!(pushed.len(), 1, "{pushed:?}");
    let reference = pushed[0]["reference"].as_str().unwrap();
    assert_eq!(
        reference,
        format!("{prefix}/charts/cozystack-policies:0.1.0"),
        "the chart goes to <registry>/charts/<name>:<version>"
    );
    // Helm's OCI layout, read back with the OCI client.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let immutable: Reference = pushed[0]["immutable_ref"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let bytes = std::fs::read(&archive).unwrap();
    runtime.block_on(async {
        let client = client();
        let (raw, _) = client
            .pull_manifest_raw(
                &immutable,
                &RegistryAuth::Anonymous,
                &[OCI_IMAGE_MEDIA_TYPE],
            )
            .await
            .unwrap();
        let manifest: OciImageManifest = serde_json::from_slice(&raw).unwrap();
        assert_eq!(
            manifest.config.media_type,
            "application/vnd.cncf.helm.config.v1+json"
        );
        assert_eq!(manifest.layers.len(), 1);
        assert_eq!(
            manifest.layers[0].media_type,
            "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
        );
        assert_eq!(manifest.layers[0].digest, sha256(&bytes));
        let annotations = manifest.annotations.unwrap_or_default();
        assert_eq!(
            annotations["org.opencontainers.image.title"],
            "cozystack-policies"
        );
        assert_eq!(annotations["org.opencontainers.image.version"], "0.1.0");
    });
    // Helm itself pulls it back, byte for byte.
    let dir = std::env::temp_dir().join(format!("cozystack-chart-pull-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let pulled = helm
        .pull(&format!("{prefix}/charts/cozystack-policies:0.1.0"), &dir)
        .unwrap();
    assert!(
        std::fs::read(&pulled).unwrap() == bytes,
        "{} differs from {}",
        pulled.display(),
        archive.display()
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // A second push of the same archive is the same manifest.
    assert_eq!(push()[0]["immutable_ref"], pushed[0]["immutable_ref"]);
    println!(
        "chart: {} ({} bytes), pulled back by Helm identical",
        pushed[0]["immutable_ref"],
        bytes.len()
    );
}

/// A P-256 key pair in PEM files, from a fixed scalar: a throwaway key.
struct KeyPair {
    private: PathBuf,
    public: PathBuf,
    public_pem: String,
}

impl KeyPair {
    fn new(dir: &Path, name: &str, scalar: u8) -> KeyPair {
        use p256::pkcs8::{EncodePrivateKey as _, EncodePublicKey as _, LineEnding};
        let key = p256::ecdsa::SigningKey::from_bytes(&[scalar; 32].into()).unwrap();
        let private = dir.join(format!("{name}.key"));
        let public = dir.join(format!("{name}.pub"));
        std::fs::write(
            &private,
            key.to_pkcs8_pem(LineEnding::LF).unwrap().as_bytes(),
        )
        .unwrap();
        let public_pem = key
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        std::fs::write(&public, &public_pem).unwrap();
        KeyPair {
            private,
            public,
            public_pem,
        }
    }
}

/// Kubewarden's sources file: the loopback registry over plain HTTP.
fn sources(dir: &Path, registry: &Registry) -> PathBuf {
    let path = dir.join("sources.yml");
    std::fs::write(
        &path,
        format!("insecure_sources:\n- \"{}\"\n", registry.address),
    )
    .unwrap();
    path
}

/// kwctl with its store and configuration in `home`.
fn kwctl(home: &Path, args: &[&str]) -> Output {
    let binary = e2e::policy_server::find_program("kwctl").expect("kwctl on PATH");
    let mut command = Command::new(binary);
    command
        .args(args)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("DOCKER_CONFIG", home.join("docker"));
    if let Some(trust) = e2e::trust_config() {
        // Spares the wait for Sigstore's network (no key here is Sigstore's).
        if matches!(args.first(), Some(&"verify" | &"pull")) {
            command.arg("--sigstore-trust-config").arg(trust);
        }
    }
    command.output().unwrap()
}

/// The chart rendered with `values`: its ClusterAdmissionPolicies and the
/// verification config its ConfigMap holds.
fn render_chart(
    helm: &e2e::helm::Helm,
    values: serde_json::Value,
) -> (Vec<e2e::manifests::ClusterAdmissionPolicy>, Option<String>) {
    let rendered = helm
        .render(&[e2e::helm::Render::with(values)])
        .unwrap()
        .pop()
        .unwrap();
    let mut policies = Vec::new();
    let mut verification = None;
    for document in rendered.documents().unwrap() {
        match e2e::manifests::Object::from_value(&document).unwrap() {
            e2e::manifests::Object::ClusterAdmissionPolicy(policy) => policies.push(*policy),
            e2e::manifests::Object::ConfigMap(map) => {
                verification = map
                    .data
                    .unwrap_or_default()
                    .get("verification-config")
                    .cloned();
            }
            _ => {}
        }
    }
    (policies, verification)
}

/// policy-server configured as the controller configures the rendered
/// policies: every module pulled from the registry, verified with the
/// rendered verification config.
fn start_verified(
    name: &str,
    policies: &[e2e::manifests::ClusterAdmissionPolicy],
    verification: &str,
    sources: &Path,
) -> Result<e2e::policy_server::PolicyServer, e2e::policy_server::ServerError> {
    let binary = e2e::policy_server::find_program("policy-server").expect("policy-server on PATH");
    let dir = root().join("target/e2e/verification").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let verification_path = dir.join("verification.yml");
    std::fs::write(&verification_path, verification).unwrap();
    let mut entries = BTreeMap::new();
    for policy in policies {
        let mut entry = e2e::deployed_entry(policy).unwrap();
        entry.module = policy.spec.as_ref().unwrap().module.clone();
        entries.insert(e2e::deployed_id(policy), entry);
    }
    let config = e2e::policy_server::ServerConfig {
        binary,
        policies: entries,
        trust_config: e2e::trust_config(),
        workers: Some(1),
        registry: Some(e2e::policy_server::RegistryConfig {
            sources: Some(sources.to_owned()),
            verification: Some(verification_path),
        }),
    };
    e2e::policy_server::PolicyServer::start(&config, &dir)
}

/// The `Error:` line of a policy-server that stopped at start-up, which must
/// say that one of `policies` cannot be verified.
fn refused(
    result: Result<e2e::policy_server::PolicyServer, e2e::policy_server::ServerError>,
    policies: &[String],
) -> String {
    match result {
        Ok(_) => panic!("policy-server started although {policies:?} do not verify"),
        Err(e2e::policy_server::ServerError::Exited { log, .. }) => {
            let line = log
                .lines()
                .find(|line| line.starts_with("Error:"))
                .unwrap_or_else(|| panic!("no `Error:` line in the log:\n{log}"))
                .to_owned();
            assert!(
                policies
                    .iter()
                    .any(|p| line.contains(&format!("Policy 'clusterwide-{p}' cannot be verified"))),
                "the error names none of {policies:?}: {line}"
            );
            line
        }
        Err(other) => panic!("{other}"),
    }
}

#[test]
#[ignore = "needs the docker-registry binary: run `make registry`"]
fn signed_bundle_is_verified_by_kwctl_and_policy_server() {
    let (Some(_), Some(_)) = (
        e2e::policy_server::find_program("kwctl"),
        e2e::policy_server::find_program("policy-server"),
    ) else {
        assert!(
            std::env::var("CI").map_or(true, |ci| ci != "true"),
            "kwctl and policy-server are needed under CI"
        );
        println!("skipped: kwctl or policy-server is not on PATH");
        return;
    };
    let helm = helm();
    let registry = Registry::start("signed", None);
    let work = std::env::temp_dir().join(format!("cozystack-signing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let key = KeyPair::new(&work, "cosign", 7);
    let other = KeyPair::new(&work, "other", 9);
    let sources = sources(&work, &registry);
    let prefix = format!("{}/signed", registry.address);
    let mut args = vec![
        "push".to_owned(),
        "--json".to_owned(),
        "--registry".to_owned(),
        prefix.clone(),
        "--sign-key".to_owned(),
        key.private.to_string_lossy().into_owned(),
    ];
    let archive = chart_archive();
    if let Some(archive) = &archive {
        args.extend(["--chart".to_owned(), archive.to_string_lossy().into_owned()]);
    }
    let pushed = pushed_lines(&cli(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    ));
    assert_eq!(
        pushed.len(),
        modules_in_dist().len() + usize::from(archive.is_some())
    );
    for line in &pushed {
        let signature = line["signature"]
            .as_str()
            .unwrap_or_else(|| panic!("not signed: {line}"));
        let digest = line["immutable_ref"]
            .as_str()
            .unwrap()
            .split_once("@sha256:")
            .unwrap()
            .1;
        assert!(
            signature.ends_with(&format!(":sha256-{digest}.sig")),
            "{signature}"
        );
    }
    let home = work.join("kwctl-home");
    let sources_arg = sources.to_string_lossy().into_owned();
    let public = key.public.to_string_lossy().into_owned();
    let wrong = other.public.to_string_lossy().into_owned();
    // kwctl verifies every signed module with the key, and with no other.
    for line in &pushed {
        let reference = format!("registry://{}", line["reference"].as_str().unwrap());
        let ok = kwctl(
            &home,
            &[
                "verify",
                "--sources-path",
                &sources_arg,
                "-k",
                &public,
                &reference,
            ],
        );
        assert!(
            ok.status.success(),
            "kwctl verify {reference}: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
        let other_key = kwctl(
            &home,
            &[
                "verify",
                "--sources-path",
                &sources_arg,
                "-k",
                &wrong,
                &reference,
            ],
        );
        assert!(
            !other_key.status.success(),
            "kwctl verify accepted {reference} with another key"
        );
    }
    // kwctl pull with verification.
    let no_delete = pushed
        .iter()
        .find(|l| l["reference"].as_str().unwrap().contains("/no-delete:"))
        .unwrap();
    let reference = format!("registry://{}", no_delete["reference"].as_str().unwrap());
    let pulled = kwctl(
        &home,
        &[
            "pull",
            "--sources-path",
            &sources_arg,
            "--verification-key",
            &public,
            &reference,
        ],
    );
    assert!(
        pulled.status.success(),
        "kwctl pull -k: {}",
        String::from_utf8_lossy(&pulled.stderr)
    );
    let refused_pull = kwctl(
        &home,
        &[
            "pull",
            "--sources-path",
            &sources_arg,
            "--verification-key",
            &wrong,
            &reference,
        ],
    );
    assert!(
        !refused_pull.status.success(),
        "kwctl pull accepted another key"
    );
    println!(
        "kwctl verify -k: {} artifacts signed, verified, and refused with another key",
        pushed.len()
    );

    let Some(helm) = helm else {
        println!("skipped: the policy-server half needs Helm's SDK (tools/helm-venv)");
        return;
    };
    // policy-server, configured as the chart renders it with the key in its
    // verificationConfig, starts and serves the signed bundle.
    let values = |registry: &str, public_pem: &str| {
        serde_json::json!({
            "mode": "protect",
            "modules": {"registry": registry},
            "policyServer": {"verificationConfig": {"apiVersion": "v1", "allOf": [
                {"kind": "pubKey", "owner": "platform-team", "key": public_pem},
            ]}},
        })
    };
    let (policies, verification) = render_chart(&helm, values(&prefix, &key.public_pem));
    let verification = verification.expect("the chart renders the verification ConfigMap");
    let server = start_verified("signed", &policies, &verification, &sources)
        .unwrap_or_else(|error| panic!("policy-server refused the signed bundle: {error}"));
    let log = server.log();
    assert!(
        log.contains("verified-signatures") || log.contains("signature"),
        "{log}"
    );
    let case = testkit::case::Case::load(
        &root().join("policies/no-delete/tests/cases/delete-protected-configmap.yaml"),
    )
    .unwrap();
    let review = e2e::policy_server::admission_review(&case.request);
    let answer = server
        .post(
            "clusterwide-no-delete",
            &serde_json::to_vec(&review).unwrap(),
        )
        .unwrap()
        .response()
        .unwrap();
    assert!(
        !answer.allowed,
        "the signed no-delete, in protect mode, rejects the case: {answer:?}"
    );
    drop(server);
    println!(
        "policy-server: started with the chart's verificationConfig, {} signed policies served",
        policies.len()
    );

    // Another key: refused at start-up, the policy named.
    let (_, wrong_config) = render_chart(&helm, values(&prefix, &other.public_pem));
    let names: Vec<String> = policies
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    let line = refused(
        start_verified("wrong-key", &policies, &wrong_config.unwrap(), &sources),
        &names,
    );
    println!("wrong key: {line}");

    // An unsigned module: refused.
    let unsigned_prefix = format!("{}/unsigned", registry.address);
    let module = dist().join("no-delete.wasm").to_string_lossy().into_owned();
    pushed_lines(&cli(
        &["push", "--json", "--registry", &unsigned_prefix, &module],
        None,
    ));
    let (unsigned, _) = render_chart(
        &helm,
        serde_json::json!({
            "policies": {"no-delete": {"module": {"registry": unsigned_prefix}}},
        }),
    );
    let unsigned: Vec<_> = unsigned
        .into_iter()
        .filter(|p| p.metadata.name.as_deref() == Some("no-delete"))
        .collect();
    let line = refused(
        start_verified("unsigned", &unsigned, &verification, &sources),
        &["no-delete".to_owned()],
    );
    println!("unsigned module: {line}");

    // The signed tag re-pushed with another module: its digest has no
    // signature, refused.
    let other_module = std::fs::read(dist().join("storageclass-immutable.wasm")).unwrap();
    let tag: Reference = format!("{prefix}/no-delete:v0.1.0").parse().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let layers = [oci_client::client::ImageLayer::new(
            other_module,
            WASM_LAYER_MEDIA_TYPE.to_owned(),
            None,
        )];
        let config = oci_client::client::Config::new(
            b"{}".to_vec(),
            WASM_CONFIG_MEDIA_TYPE.to_owned(),
            None,
        );
        client()
            .push(&tag, &layers, config, &RegistryAuth::Anonymous, None)
            .await
            .unwrap();
    });
    let line = refused(
        start_verified(
            "re-pushed",
            &only_no_delete(&policies),
            &verification,
            &sources,
        ),
        &["no-delete".to_owned()],
    );
    println!("re-pushed tag: {line}");
    let _ = std::fs::remove_dir_all(&work);
}

/// no-delete alone, of the rendered policies.
fn only_no_delete(
    policies: &[e2e::manifests::ClusterAdmissionPolicy],
) -> Vec<e2e::manifests::ClusterAdmissionPolicy> {
    policies
        .iter()
        .filter(|p| p.metadata.name.as_deref() == Some("no-delete"))
        .cloned()
        .collect()
}
