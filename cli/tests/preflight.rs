//! `cozystack-policies preflight` end to end, from the cluster to the exit
//! code.
//!
//! Each directory of `tests/data/preflight/` is one outcome. Most hold a
//! `cluster.yaml`: what the management cluster's API server answers, kind
//! by kind (the objects, or `forbidden`, `timeout`, `failed`; a kind it does
//! not name is not served), which group versions answer 503 as an
//! aggregated API that is down (`unavailable`), or that nothing listens
//! (`server: refused`); a `base` fixture's answers apply where it names
//! none (`null` drops one). A loopback API server answers as it says
//! (`common::apiserver`), and the capture block `snapshot-command` prints
//! runs against it with the real kubectl, exactly as an operator runs it,
//! and writes `snapshot.yaml`; a directory may hold a `snapshot.yaml`
//! instead, used as it is (plain `kubectl get` output, a hand-made record).
//! `preflight` then judges the snapshot: its output must be
//! `checklist.txt` word for word, and its exit code, and the capture's, what
//! `expect.yaml` says. `UPDATE_GOLDEN=1` rewrites the checklists (review the
//! diff). Needs the bundle in dist/ (`make dist`) and kubectl (`tools/need
//! kubectl kubernetes-client`; without it the capture tests say they are
//! skipped, and fail under CI=true).

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::apiserver::{self, Answer, ApiServer, Contents, Failure, Resource};
use common::{command, root};
use serde::Deserialize;
use serde_json::{Value, json};

const DATA: &str = "cli/tests/data/preflight";

fn cli(args: &[&str]) -> Output {
    command(args).output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// What the management cluster answers, as a fixture writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cluster {
    /// A fixture whose answers apply where this one names none.
    #[serde(default)]
    base: Option<String>,
    #[serde(default)]
    context: Option<String>,
    /// `refused`: nothing listens where the kubeconfig points.
    #[serde(default)]
    server: Option<String>,
    /// Group versions whose aggregated API answers 503.
    #[serde(default)]
    unavailable: Vec<String>,
    /// `<resource>`: every object of it, or how a list of it fails.
    #[serde(default)]
    lists: serde_json::Map<String, Value>,
    /// `<resource>/[<ns>/]<name>`: one object, or how a read of it fails.
    #[serde(default)]
    objects: serde_json::Map<String, Value>,
}

impl Cluster {
    /// The fixture of `dir`, its base's answers filled in.
    fn load(dir: &Path) -> Self {
        let mut cluster: Cluster =
            serde_saphyr::from_str(&fs::read_to_string(dir.join("cluster.yaml")).unwrap()).unwrap();
        if let Some(base) = cluster.base.take() {
            let base = Cluster::load(&dir.parent().unwrap().join(base));
            for (mine, theirs) in [
                (&mut cluster.lists, base.lists),
                (&mut cluster.objects, base.objects),
            ] {
                for (key, value) in theirs {
                    mine.entry(key).or_insert(value);
                }
            }
            cluster.context = cluster.context.or(base.context);
            cluster.server = cluster.server.or(base.server);
            if cluster.unavailable.is_empty() {
                cluster.unavailable = base.unavailable;
            }
        }
        cluster.lists.retain(|_, v| !v.is_null());
        cluster.objects.retain(|_, v| !v.is_null());
        cluster
    }
}

/// What a fixture expects of the capture and of the preflight.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Expect {
    /// The capture block's exit status (absent without a capture).
    #[serde(default)]
    capture_exit: Option<i32>,
    preflight_exit: i32,
    /// Extra flags of `preflight`.
    #[serde(default)]
    flags: Vec<String>,
}

/// Kinds served cluster-wide.
const CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "Node",
    "StorageClass",
    "CustomResourceDefinition",
    "APIService",
    "Package",
    "ApplicationDefinition",
];

/// The resources the capture block reads: `<plural>[.<group>]` with its
/// group, version and kind, from its `capture` lines.
fn captured_kinds(block: &str) -> BTreeMap<String, (String, String, String)> {
    let mut kinds = BTreeMap::new();
    for line in block.lines().filter(|l| l.starts_with("capture ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (api_version, kind, resource) = (words[1], words[2], words[3]);
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let plural = resource.split('.').next().unwrap();
        let key = if group.is_empty() {
            plural.to_owned()
        } else {
            format!("{plural}.{group}")
        };
        kinds.insert(key, (group.to_owned(), version.to_owned(), kind.to_owned()));
    }
    kinds
}

/// The resource `key` of `resources`, made as the capture block reads it
/// (served at `served_at`, the version of its objects, if they name one).
fn resource<'r>(
    resources: &'r mut BTreeMap<String, Resource>,
    kinds: &BTreeMap<String, (String, String, String)>,
    key: &str,
    served_at: Option<&str>,
) -> &'r mut Resource {
    let (group, version, kind) = kinds
        .get(key)
        .unwrap_or_else(|| panic!("{key}: the capture block reads no such resource"))
        .clone();
    let version = served_at
        .and_then(|api| api.rsplit('/').next())
        .map_or(version, str::to_owned);
    resources.entry(key.to_owned()).or_insert_with(|| Resource {
        namespaced: !CLUSTER_SCOPED.contains(&kind.as_str()),
        plural: key.split('.').next().unwrap().to_owned(),
        group,
        version,
        kind,
        list: Answer::Objects(Vec::new()),
        objects_fail: BTreeMap::new(),
    })
}

/// What the loopback API server holds for `cluster`.
fn contents(cluster: &Cluster, block: &str) -> Contents {
    let kinds = captured_kinds(block);
    let mut resources: BTreeMap<String, Resource> = BTreeMap::new();
    for (key, value) in &cluster.lists {
        match value {
            Value::String(how) => {
                resource(&mut resources, &kinds, key, None).list =
                    Answer::Fails(Failure::parse(how).unwrap());
            }
            Value::Array(items) => {
                let served_at = items.first().and_then(|i| i["apiVersion"].as_str());
                resource(&mut resources, &kinds, key, served_at).list =
                    Answer::Objects(items.clone());
            }
            other => panic!("{key}: unexpected {other}"),
        }
    }
    for (key, value) in &cluster.objects {
        let (plural, object) = key.split_once('/').unwrap();
        match value {
            Value::String(how) => {
                resource(&mut resources, &kinds, plural, None)
                    .objects_fail
                    .insert(object.to_owned(), Failure::parse(how).unwrap());
            }
            Value::Object(_) => {
                let entry = resource(&mut resources, &kinds, plural, value["apiVersion"].as_str());
                if let Answer::Objects(objects) = &mut entry.list {
                    objects.push(value.clone());
                }
            }
            other => panic!("{key}: unexpected {other}"),
        }
    }
    Contents {
        resources: resources.into_values().collect(),
        unavailable: cluster.unavailable.clone(),
    }
}

/// Whether the real kubectl is here; under CI it must be.
fn kubectl() -> bool {
    let found = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "kubectl is needed under CI: tools/need kubectl kubernetes-client"
        );
        println!("skipped: the capture runs the real kubectl, which is not installed");
    }
    found
}

/// The capture's clock, so a checklist can be compared word for word.
const DATE: &str = "#!/bin/sh\necho 2026-12-05T08:00:00Z\n";

fn executable(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    let mut permissions = fs::metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    fs::set_permissions(path, permissions).unwrap();
}

/// Runs the capture block against `cluster` in `work` with the real
/// kubectl; its exit status and standard error.
fn capture(block: &str, cluster: &Cluster, work: &Path) -> (i32, String) {
    let bin = work.join("bin");
    let home = work.join("home");
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&home).unwrap();
    executable(&bin.join("date"), DATE);
    let context = cluster.context.as_deref().unwrap_or("admin@cozy");
    let server = match cluster.server.as_deref() {
        Some("refused") => None,
        Some(other) => panic!("server: {other}?"),
        None => Some(ApiServer::start(contents(cluster, block))),
    };
    let kubeconfig = match &server {
        Some(server) => server.kubeconfig(context),
        None => apiserver::kubeconfig(&apiserver::refused(), context),
    };
    fs::write(work.join("kubeconfig"), kubeconfig).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let output = Command::new("bash")
        .arg("-c")
        .arg(block)
        .current_dir(work)
        .env("PATH", path)
        .env("HOME", &home)
        .env("KUBECONFIG", work.join("kubeconfig"))
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The snapshot the capture block writes of fixture `name`'s cluster, in a
/// work directory of the test's own (`work`); `None` without kubectl.
fn captured(name: &str, work: &str) -> Option<PathBuf> {
    if !kubectl() {
        return None;
    }
    let block = stdout(&cli(&["snapshot-command"]));
    let cluster = Cluster::load(&root().join(DATA).join(name));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(work);
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).unwrap();
    capture(&block, &cluster, &work);
    Some(work.join("snapshot.yaml"))
}

fn fixtures() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root().join(DATA))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("expect.yaml").exists())
        .collect();
    dirs.sort();
    dirs
}

/// Every outcome: the capture's exit status, the checklist word for word
/// and the preflight's exit code. The fixtures run four at a time: each
/// capture is some thirty kubectl runs.
#[test]
fn each_snapshot_gives_its_checklist_and_exit_code() {
    let block = stdout(&cli(&["snapshot-command"]));
    let with_kubectl = kubectl();
    let fixtures = fixtures();
    assert!(fixtures.len() >= 30, "{fixtures:?}");
    let queue = std::sync::Mutex::new(fixtures.into_iter());
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let Some(dir) = queue.lock().unwrap().next() else {
                        break;
                    };
                    let found = judge_fixture(&dir, &block, with_kubectl);
                    failures.lock().unwrap().extend(found);
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// What differs from what fixture `dir` expects.
fn judge_fixture(dir: &Path, block: &str, with_kubectl: bool) -> Vec<String> {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let expect: Expect =
        serde_saphyr::from_str(&fs::read_to_string(dir.join("expect.yaml")).unwrap()).unwrap();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("preflight")
        .join(&name);
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).unwrap();
    let snapshot = if dir.join("cluster.yaml").exists() {
        if !with_kubectl {
            return failures;
        }
        let (exit, _) = capture(block, &Cluster::load(dir), &work);
        if Some(exit) != expect.capture_exit {
            failures.push(format!(
                "{name}: the capture exited {exit}, not {:?}",
                expect.capture_exit
            ));
        }
        work.join("snapshot.yaml")
    } else {
        dir.join("snapshot.yaml")
    };
    let mut args = vec!["preflight".to_owned(), snapshot.display().to_string()];
    args.extend(expect.flags.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = cli(&args);
    let text = stdout(&output);
    let golden = dir.join("checklist.txt");
    if update {
        fs::write(&golden, &text).unwrap();
    } else if fs::read_to_string(&golden).unwrap_or_default() != text {
        failures.push(format!(
            "{name}: the checklist differs from {}:\n{text}",
            golden.display()
        ));
    }
    if output.status.code() != Some(expect.preflight_exit) {
        failures.push(format!(
            "{name}: preflight exited {:?}, not {}: {}",
            output.status.code(),
            expect.preflight_exit,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    // The reason is on the first screen: the first line says how it
    // ended, and every check that decided it.
    let first = text.lines().next().unwrap_or_default();
    let ended = match expect.preflight_exit {
        4 => "ALREADY UPGRADED (exit 4)",
        1 => "FAIL (exit 1)",
        3 => "INCOMPLETE (exit 3",
        _ => "",
    };
    // `--allow-incomplete` makes an INCOMPLETE run exit 0.
    let accepted = expect.preflight_exit == 0 && first.starts_with("INCOMPLETE");
    if !(first.starts_with(ended) || accepted) {
        failures.push(format!("{name}: the first line is {first:?}"));
    }
    failures
}

/// The record of one read of the capture of fixture `name`: its result
/// and message, by resource (as the capture gave it to kubectl).
fn reads_of(name: &str) -> Option<(i32, String, Vec<Value>)> {
    if !kubectl() {
        return None;
    }
    let block = stdout(&cli(&["snapshot-command"]));
    let cluster = Cluster::load(&root().join(DATA).join(name));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("capture-record")
        .join(name);
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).unwrap();
    let (exit, stderr) = capture(&block, &cluster, &work);
    let text = fs::read_to_string(work.join("snapshot.yaml")).unwrap();
    let record = text.split("---\n").last().unwrap();
    let record: Value = serde_saphyr::from_str(record).unwrap();
    assert_eq!(record["kind"], "SnapshotCapture");
    assert_eq!(record["capturedAt"], "2026-12-05T08:00:00Z");
    Some((exit, stderr, record["reads"].as_array().unwrap().clone()))
}

/// `(result, message)` of the read of `resource` (`<plural>[.<group>]`).
fn result(reads: &[Value], resource: &str) -> (String, String) {
    let plural = resource.split('.').next().unwrap();
    let group = resource.split_once('.').map(|(_, g)| g).unwrap_or_default();
    reads
        .iter()
        .find(|r| {
            let read = r["resource"].as_str().unwrap();
            read.split('.').next() == Some(plural)
                && read.ends_with(group)
                && r.get("name").is_none()
        })
        .map(|r| {
            (
                r["result"].as_str().unwrap().to_owned(),
                r["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .unwrap_or_else(|| panic!("no read of {resource}"))
}

/// The capture's own record: every read, how it ended, and kubectl's own
/// error line (never a klog line), and a summary naming what failed.
#[test]
fn the_capture_records_every_read_and_how_it_ended() {
    let Some((exit, stderr, reads)) = reads_of("incomplete-forbidden-and-timeout") else {
        return;
    };
    assert_eq!(exit, 1, "a failed read fails the capture");
    assert_eq!(result(&reads, "persistentvolumeclaims").0, "captured");
    let (forbidden, message) = result(&reads, "statefulsets.apps");
    assert_eq!(forbidden, "forbidden");
    assert!(
        message.starts_with("Error from server (Forbidden): "),
        "{message}"
    );
    let (timeout, message) = result(&reads, "resourcequotas");
    assert_eq!(timeout, "timeout");
    assert!(
        message.starts_with("Error from server (Timeout): "),
        "{message}"
    );
    assert_eq!(
        result(&reads, "etcdclusters.etcd.aenix.io").0,
        "not-installed"
    );
    assert!(
        stderr
            .contains("kubectl get statefulsets.v1.apps: forbidden: Error from server (Forbidden)"),
        "{stderr}"
    );
    // Every kind a policy reads (but Secrets, ConfigMaps and Deployments,
    // read by name) and every kind the checklist judges is read.
    assert!(reads.len() >= 28, "{} reads", reads.len());
    // A Secret read by name is named in the summary.
    let Some((_, stderr, reads)) = reads_of("incomplete-secret-forbidden") else {
        return;
    };
    let named = reads
        .iter()
        .find(|r| r["name"] == "cozy-backups-creds")
        .unwrap();
    assert_eq!(named["result"], "forbidden");
    assert!(
        stderr.contains(
            "kubectl get secrets --namespace cozy-velero cozy-backups-creds: forbidden: "
        ),
        "{stderr}"
    );
}

/// An aggregated API that answers 503 is unavailable, not absent, even
/// when kubectl then says "the server doesn't have a resource type"; a
/// refused connection is refused, not a timeout.
#[test]
fn unavailable_and_refused_are_told_apart() {
    let Some((exit, _, reads)) = reads_of("fail-cozystack-api-unavailable") else {
        return;
    };
    assert_eq!(exit, 1);
    for app in ["tenants", "kuberneteses", "etcds", "seaweedfses"] {
        let (how, message) = result(&reads, &format!("{app}.apps.cozystack.io"));
        assert_eq!(how, "unavailable", "{app}: {message}");
        assert!(!message.starts_with('E'), "a klog line: {message}");
    }
    assert_eq!(
        result(&reads, "apiservices.apiregistration.k8s.io").0,
        "captured"
    );
    let Some((exit, stderr, reads)) = reads_of("incomplete-connection-refused") else {
        return;
    };
    assert_eq!(exit, 1);
    let (how, message) = result(&reads, "nodes");
    assert_eq!(how, "refused", "{message}");
    assert!(message.contains("refused"), "{message}");
    assert!(!message.contains("?timeout="), "a klog line: {message}");
    assert!(
        reads.iter().all(|r| r["result"] == "refused"),
        "{reads:?}\n{stderr}"
    );
}

/// A snapshot of two captures is an error naming both, never the first
/// hiding the second.
#[test]
fn two_records_are_an_error_naming_both() {
    let record = |context: &str, at: &str| {
        format!(
            "---\napiVersion: cozystack-policies.io/v1alpha1\nkind: SnapshotCapture\nmetadata: {{name: snapshot}}\n\
             context: {context}\ncapturedAt: '{at}'\nreads: []\n"
        )
    };
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("two-records.yaml");
    fs::write(
        &file,
        record("admin@old", "2026-11-01T08:00:00Z") + &record("admin@new", "2026-12-05T08:00:00Z"),
    )
    .unwrap();
    let output = cli(&["preflight", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("two SnapshotCapture records, the capture of \"admin@old\" at \"2026-11-01T08:00:00Z\" and the capture of \"admin@new\""),
        "{error}"
    );
}

/// The values planted in fixture `credentials-planted`: each a credential a
/// cluster holds where the rules read, or next to it.
const PLANTED: &[&str] = &[
    "pg-user-password-1",
    "pg-backup-s3-access",
    "pg-backup-s3-secret",
    "registry-auth-dXNlcjpwYXNz",
    "platform-values-token",
    "etcd-s3-access-key",
    "etcd-s3-secret-key",
    "kubeadm-file-content-ca-key",
    "statefulset-env-value",
    "addon-values-override-password",
    "last-applied-password",
    "QVdTLWFjY2Vzcy1rZXktaWQ=",
    "c2VjcmV0LXZhbHVl",
];

/// The capture, with the real kubectl, copies none of the credentials the
/// cluster holds; what the rules compare it still copies.
#[test]
fn the_capture_copies_no_planted_credential() {
    let Some(snapshot) = captured("credentials-planted", "credentials-planted") else {
        return;
    };
    let text = fs::read_to_string(&snapshot).unwrap();
    let leaked: Vec<&&str> = PLANTED.iter().filter(|p| text.contains(**p)).collect();
    assert!(
        leaked.is_empty(),
        "planted credentials in snapshot.yaml: {leaked:?}\n{text}"
    );
    // The cluster does hold them (a fixture that plants nothing proves nothing).
    let cluster =
        fs::read_to_string(root().join(DATA).join("credentials-planted/cluster.yaml")).unwrap();
    for planted in PLANTED {
        assert!(cluster.contains(planted), "{planted} is not planted");
    }
    let documents: Vec<Value> = text
        .split("\n---\n")
        .filter(|d| !d.trim().is_empty() && d.trim() != "---")
        .map(|d| serde_saphyr::from_str(d.trim_start_matches("---\n")).unwrap())
        .collect();
    let find = |kind: &str, name: &str| {
        documents
            .iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name} in {text}"))
    };
    // What the rules read is there, credentials as whether they are set.
    let etcd = find("Etcd", "etcd");
    assert_eq!(etcd["apiVersion"], "apps.cozystack.io/v1alpha1");
    assert_eq!(etcd["spec"]["backup"]["s3AccessKey"], "KHJlZGFjdGVkKQ==");
    assert_eq!(etcd["spec"]["backup"]["enabled"], false);
    assert_eq!(etcd["spec"]["replicas"], 3);
    let secret = find("Secret", "cozy-backups-creds");
    assert_eq!(secret["data"]["AWS_ACCESS_KEY_ID"], "KHJlZGFjdGVkKQ==");
    assert_eq!(secret["data"]["bucketName"], "Y296eS1iYWNrdXBzLThmM2E=");
    let release = find("HelmRelease", "seaweedfs-system");
    assert_eq!(
        release["spec"]["values"],
        json!({"seaweedfs": {"fullnameOverride": "seaweedfs"}})
    );
    let template = find("KubeadmConfigTemplate", "kubernetes-dev-md0");
    assert!(template.pointer("/spec/template").is_none(), "{template}");
    assert_eq!(
        template["metadata"]["annotations"]["helm.sh/resource-policy"],
        "keep"
    );
    let kubernetes = find("Kubernetes", "dev");
    let controller = &kubernetes["spec"]["addons"]["ingressNginx"]["valuesOverride"]["ingress-nginx"]
        ["controller"];
    assert_eq!(controller["replicaCount"], 2, "{kubernetes}");
    assert_eq!(controller["config"]["auth-password"], "KHJlZGFjdGVkKQ==");
    // Numbers as kubectl's JSON has them, whole numbers without exponent.
    assert_eq!(kubernetes["spec"]["nodeGroups"]["md0"]["maxReplicas"], 10);
    // The preflight finds nothing to warn about in it.
    let output = cli(&["preflight", snapshot.to_str().unwrap()]);
    assert!(!stdout(&output).contains("WARNING"), "{}", stdout(&output));
}

#[test]
fn check_with_the_cluster_is_the_same_checklist() {
    // The objects judged may come from standard input; the snapshot answers.
    let snapshot = root()
        .join(DATA)
        .join("bare-etcd-and-seaweedfs/snapshot.yaml");
    let snapshot = snapshot.to_str().unwrap();
    let objects = fs::read_to_string(snapshot).unwrap();
    let output = common::run_with_stdin(
        &["check", "--cluster", snapshot, "--checklist", "-"],
        &objects,
    );
    let text = stdout(&output);
    assert!(text.contains("NOT CHECKED  seaweedfs-naming:"), "{text}");
    assert!(
        text.ends_with("(exit 3, unless --allow-incomplete accepts it).\n"),
        "{text}"
    );
    assert_eq!(output.status.code(), Some(3));
    let accepted = common::run_with_stdin(
        &[
            "check",
            "--cluster",
            snapshot,
            "--checklist",
            "--allow-incomplete",
            "-",
        ],
        &objects,
    );
    assert_eq!(accepted.status.code(), Some(0));
    // Findings alone: a rule that could not read is counted apart, and the
    // exit code says the run is incomplete.
    let findings = common::run_with_stdin(&["check", "--cluster", snapshot, "-"], &objects);
    let text = stdout(&findings);
    assert!(
        text.contains(": upgrade-gate/etcd-adoption-not-checked: not checked: "),
        "{text}"
    );
    assert!(
        text.contains("0 violation(s), 0 warning(s), 5 not checked in 2 objects"),
        "{text}"
    );
    assert_eq!(findings.status.code(), Some(3));
}

/// Without `--cluster` nothing changes: the lookups have no cluster, the
/// context-aware rules say they did not check, and that fails nothing. A
/// report-only policy's not-checked findings are one entry per rule unless
/// `--verbose` lists them.
#[test]
fn without_the_cluster_lookups_are_not_answered() {
    let Some(snapshot) = captured("realistic-1-5-4", "without-the-cluster") else {
        return;
    };
    let snapshot = snapshot.to_str().unwrap();
    let rules = |parsed: &Value, list: &str, key: &str| -> Vec<String> {
        parsed
            .pointer(list)
            .and_then(Value::as_array)
            .map(|all| {
                all.iter()
                    .map(|f| f[key].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let output = cli(&["check", "--json", snapshot]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "the snapshot's own violations"
    );
    let parsed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let folded = rules(&parsed, "/summary/folded", "rule");
    assert!(
        folded.contains(&"upgrade-gate/etcd-adoption-not-checked".to_owned()),
        "{parsed:#}"
    );
    let listed = rules(&parsed, "/findings", "rule");
    assert!(
        !listed.iter().any(|rule| folded.contains(rule)),
        "{listed:?}"
    );
    let verbose = cli(&["check", "--json", "--verbose", snapshot]);
    assert_eq!(verbose.status.code(), Some(1));
    let parsed: Value = serde_json::from_str(&stdout(&verbose)).unwrap();
    let listed = rules(&parsed, "/findings", "rule");
    assert!(
        listed.contains(&"upgrade-gate/etcd-adoption-not-checked".to_owned()),
        "{listed:?}"
    );
    assert!(
        !listed.contains(&"upgrade-gate/etcd-adoption-target".to_owned()),
        "{listed:?}"
    );
    let not_checked: Vec<&Value> = parsed["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().ends_with("-not-checked"))
        .collect();
    assert!(
        not_checked.iter().all(|f| f["severity"] == "not-checked"),
        "{not_checked:?}"
    );
    assert_eq!(
        parsed["summary"]["notChecked"].as_u64(),
        Some(u64::try_from(not_checked.len()).unwrap())
    );
    let refused = cli(&["check", "--checklist", snapshot]);
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn report_renders_the_checklist() {
    let Some(snapshot) = captured("realistic-1-5-4", "report-renders") else {
        return;
    };
    let snapshot = snapshot.to_str().unwrap();
    let json = cli(&["preflight", "--format", "json", snapshot]);
    let parsed: Value = serde_json::from_str(&stdout(&json)).unwrap();
    let checklist = parsed["checklist"].as_array().unwrap();
    let status = |id: &str| {
        checklist.iter().find(|c| c["id"] == id).unwrap()["status"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(status("seaweedfs-naming"), "fail");
    assert_eq!(status("etcd-backup-values"), "pass");
    assert_eq!(status("tenant-storage-classes"), "by-hand");
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("preflight.json");
    fs::write(&file, stdout(&json)).unwrap();
    let file = file.to_str().unwrap();
    let counts = preflight_counts(&stdout(&cli(&["preflight", snapshot])));
    let html = stdout(&cli(&["report", "--format", "html", file]));
    assert!(html.contains("<table id=\"checklist\">"), "{html}");
    assert!(html.contains("<tr class=\"fail\" id=\"check-etcd-adoption\"><td>FAIL</td>"));
    assert!(html.contains(&counts), "{counts}");
    let markdown = stdout(&cli(&["report", "--format", "markdown", file]));
    assert!(markdown.contains("### Upgrade checklist"), "{markdown}");
    assert!(markdown.contains("| FAIL | tenant-quotas: Review sub-tenant quotas |"));
    let table = stdout(&cli(&["report", file]));
    assert!(table.starts_with("Upgrade checklist\n"), "{table}");
    // The report's own JSON keeps the checklist for a later run.
    let again: Value =
        serde_json::from_str(&stdout(&cli(&["report", "--format", "json", file]))).unwrap();
    assert_eq!(
        again["checklist"].as_array().unwrap().len(),
        checklist.len()
    );
}

/// The counts line of a checklist (`FAIL: 4 fail, ...`).
fn preflight_counts(checklist: &str) -> String {
    checklist
        .lines()
        .find(|l| l.starts_with("FAIL: ") || l.starts_with("FAIL, INCOMPLETE: "))
        .unwrap()
        .to_owned()
}

#[test]
fn the_upgrade_page_holds_the_snapshot_command() {
    let output = cli(&["snapshot-command"]);
    assert!(output.status.success());
    let command = stdout(&output);
    assert!(
        command.contains("capture v1 Secret secrets cozy-velero cozy-backups-creds"),
        "{command}"
    );
    for whole in [
        "capture v1 Secret secrets '' ''",
        "capture v1 ConfigMap configmaps '' ''",
        "capture apps/v1 Deployment deployments.v1.apps '' ''",
    ] {
        assert!(!command.contains(whole), "only by name: {whole}");
    }
    let page = fs::read_to_string(root().join("docs/upgrade.md")).unwrap();
    assert!(
        page.contains(&format!("```sh\n{command}```")),
        "docs/upgrade.md must hold `cozystack-policies snapshot-command` as printed:\n{command}"
    );
}
