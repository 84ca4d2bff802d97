//! `cozystack-policies preflight` end to end, from the cluster to the exit
//! code.
//!
//! Each directory of `tests/data/preflight/` is one outcome. Most hold a
//! `cluster.yaml`: what the management cluster's API server answers, kind
//! by kind (the objects, or `forbidden`, `timeout`, `failed`; a kind it does
//! not name is not installed). The capture block `snapshot-command` prints
//! runs against it through a stand-in `kubectl`, exactly as an operator runs
//! it, and writes `snapshot.yaml`; a directory may hold a `snapshot.yaml`
//! instead, used as it is (plain `kubectl get` output, without a capture
//! record). `preflight` then judges the snapshot: its output must be
//! `checklist.txt` word for word, and its exit code, and the capture's, what
//! `expect.yaml` says. `UPDATE_GOLDEN=1` rewrites the checklists (review the
//! diff). Needs the bundle in dist/ (`make dist`).

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
    context: String,
    /// `kubectl get <resource> --all-namespaces`: the objects, or how the
    /// read fails.
    #[serde(default)]
    lists: serde_json::Map<String, Value>,
    /// `kubectl get <resource> [--namespace <ns>] <name>`, keyed
    /// `<resource>/[<ns>/]<name>`: the object as the capture writes it (a
    /// Secret already through the capture's template), or how it fails.
    #[serde(default)]
    objects: serde_json::Map<String, Value>,
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

/// kubectl's words for a read that fails.
fn failure(how: &str, resource: &str) -> String {
    match how {
        "forbidden" => format!(
            "Error from server (Forbidden): {resource} is forbidden: User \"system:serviceaccount:ops:preflight\" \
             cannot list resource \"{resource}\" at the cluster scope"
        ),
        "timeout" => {
            "Unable to connect to the server: net/http: request canceled (Client.Timeout exceeded \
                      while awaiting headers)"
                .to_owned()
        }
        "failed" => {
            "Error from server (InternalError): an error on the server (\"\") has prevented the \
                     request from succeeding"
                .to_owned()
        }
        other => panic!("a read fails as forbidden, timeout or failed, not {other:?}"),
    }
}

/// A stand-in for kubectl: `get` answered from the files of `$FAKE_CLUSTER`,
/// `config current-context` from its `.context`.
const KUBECTL: &str = r#"#!/usr/bin/env bash
set -u
if [ "${1:-}" = config ]; then cat "$FAKE_CLUSTER/.context"; exit 0; fi
resource= namespace= name= next=
for arg in "$@"; do
  case "$next" in
    namespace) namespace=$arg; next=; continue ;;
    output) next=; continue ;;
  esac
  case "$arg" in
    --request-timeout=*|--all-namespaces|--ignore-not-found|get) ;;
    --namespace) next=namespace ;;
    -o) next=output ;;
    *) if [ -z "$resource" ]; then resource=$arg; else name=$arg; fi ;;
  esac
done
dir=$FAKE_CLUSTER
fails() {
  local how
  for how in forbidden timeout failed; do
    if [ -e "$dir/$1.$how" ]; then cat "$dir/$1.$how" >&2; exit 1; fi
  done
}
if [ -n "$name" ]; then
  key="$resource/${namespace:+$namespace/}$name"
  fails "$key"; fails "$resource"
  if [ -e "$dir/$key.yaml" ]; then cat "$dir/$key.yaml"; exit 0; fi
  # --ignore-not-found: a served kind without the object prints nothing.
  if [ -e "$dir/$resource.yaml" ] || [[ "$resource" != *.* ]]; then exit 0; fi
else
  fails "$resource"
  if [ -e "$dir/$resource.yaml" ]; then cat "$dir/$resource.yaml"; exit 0; fi
fi
echo "error: the server doesn't have a resource type \"${resource%%.*}\"" >&2
exit 1
"#;

/// The capture's clock, so a checklist can be compared word for word.
const DATE: &str = "#!/bin/sh\necho 2026-12-05T08:00:00Z\n";

fn executable(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    let mut permissions = fs::metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    fs::set_permissions(path, permissions).unwrap();
}

/// The files the stand-in kubectl answers from.
fn materialize(cluster: &Cluster, dir: &Path) {
    fs::write(dir.join(".context"), format!("{}\n", cluster.context)).unwrap();
    let write = |key: &str, value: &Value, object: bool| {
        let path = dir.join(key);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let resource = key.split('/').next().unwrap();
        match value {
            Value::String(how) => fs::write(
                dir.join(format!("{key}.{how}")),
                format!("{}\n", failure(how, resource)),
            )
            .unwrap(),
            Value::Array(items) if !object => fs::write(
                dir.join(format!("{key}.yaml")),
                json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
                    .to_string(),
            )
            .unwrap(),
            Value::Object(_) if object => {
                fs::write(dir.join(format!("{key}.yaml")), value.to_string()).unwrap();
            }
            other => panic!("{key}: unexpected {other}"),
        }
    };
    for (key, value) in &cluster.lists {
        write(key, value, false);
    }
    for (key, value) in &cluster.objects {
        write(key, value, true);
    }
}

/// Runs the capture block against `cluster` in `work`; its exit status.
fn capture(block: &str, cluster: &Cluster, work: &Path) -> i32 {
    let fake = work.join("cluster");
    let bin = work.join("bin");
    fs::create_dir_all(&fake).unwrap();
    fs::create_dir_all(&bin).unwrap();
    materialize(cluster, &fake);
    executable(&bin.join("kubectl"), KUBECTL);
    executable(&bin.join("date"), DATE);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let output = Command::new("bash")
        .arg("-c")
        .arg(block)
        .current_dir(work)
        .env("PATH", path)
        .env("FAKE_CLUSTER", &fake)
        .output()
        .unwrap();
    output.status.code().unwrap()
}

/// The snapshot the capture block writes of fixture `name`'s cluster, in a
/// work directory of the test's own (`work`).
fn captured(name: &str, work: &str) -> PathBuf {
    let block = stdout(&cli(&["snapshot-command"]));
    let dir = root().join(DATA).join(name);
    let cluster: Cluster =
        serde_saphyr::from_str(&fs::read_to_string(dir.join("cluster.yaml")).unwrap()).unwrap();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(work);
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).unwrap();
    capture(&block, &cluster, &work);
    work.join("snapshot.yaml")
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
/// and the preflight's exit code.
#[test]
fn each_snapshot_gives_its_checklist_and_exit_code() {
    let block = stdout(&cli(&["snapshot-command"]));
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    let fixtures = fixtures();
    assert!(fixtures.len() >= 10, "{fixtures:?}");
    for dir in fixtures {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let expect: Expect =
            serde_saphyr::from_str(&fs::read_to_string(dir.join("expect.yaml")).unwrap()).unwrap();
        let work = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("preflight")
            .join(&name);
        let _ = fs::remove_dir_all(&work);
        fs::create_dir_all(&work).unwrap();
        let snapshot = if dir.join("cluster.yaml").exists() {
            let cluster: Cluster =
                serde_saphyr::from_str(&fs::read_to_string(dir.join("cluster.yaml")).unwrap())
                    .unwrap();
            let exit = capture(&block, &cluster, &work);
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
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The capture's own record: every read, how it ended, and kubectl's
/// words for a failure.
#[test]
fn the_capture_records_every_read_and_how_it_ended() {
    let block = stdout(&cli(&["snapshot-command"]));
    let dir = root().join(DATA).join("incomplete-forbidden-and-timeout");
    let cluster: Cluster =
        serde_saphyr::from_str(&fs::read_to_string(dir.join("cluster.yaml")).unwrap()).unwrap();
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capture-record");
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).unwrap();
    assert_eq!(
        capture(&block, &cluster, &work),
        1,
        "a failed read fails the capture"
    );
    let text = fs::read_to_string(work.join("snapshot.yaml")).unwrap();
    let record = text.split("---\n").last().unwrap();
    let record: Value = serde_saphyr::from_str(record).unwrap();
    assert_eq!(record["kind"], "SnapshotCapture");
    assert_eq!(record["context"], cluster.context);
    assert_eq!(record["capturedAt"], "2026-12-05T08:00:00Z");
    let result = |resource: &str| {
        record["reads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == resource && r.get("name").is_none())
            .map(|r| {
                (
                    r["result"].as_str().unwrap().to_owned(),
                    r.get("message").cloned(),
                )
            })
            .unwrap()
    };
    assert_eq!(result("persistentvolumeclaims").0, "captured");
    let (forbidden, message) = result("statefulsets.apps");
    assert_eq!(forbidden, "forbidden");
    assert!(message.unwrap().as_str().unwrap().contains("is forbidden"));
    assert_eq!(result("resourcequotas").0, "timeout");
    assert_eq!(result("etcdclusters.etcd.aenix.io").0, "not-installed");
    // Every kind a policy reads (but Secrets and ConfigMaps, read by name)
    // and every kind the checklist judges is read.
    let reads = record["reads"].as_array().unwrap().len();
    assert!(reads >= 25, "{reads} reads");
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
        text.contains("0 violation(s), 0 warning(s), 2 not checked in 2 objects"),
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
    let snapshot = captured("realistic-1-5-4", "without-the-cluster");
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
    let snapshot = captured("realistic-1-5-4", "report-renders");
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
        .find(|l| l.starts_with("FAIL") && l.contains(": ") && l.contains(" fail"))
        .unwrap()
        .to_owned()
}

#[test]
fn the_readme_holds_the_snapshot_command() {
    let output = cli(&["snapshot-command"]);
    assert!(output.status.success());
    let command = stdout(&output);
    assert!(
        command.contains("capture v1 Secret secrets cozy-velero cozy-backups-creds"),
        "{command}"
    );
    assert!(
        !command.contains("capture v1 Secret secrets\n"),
        "Secrets only by name: {command}"
    );
    assert!(
        !command.contains("capture v1 ConfigMap configmaps\n"),
        "ConfigMaps only by name: {command}"
    );
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("```sh\n{command}```")),
        "README.md must hold `cozystack-policies snapshot-command` as printed:\n{command}"
    );
}

/// The go-templates of the capture block, executed by Go's text/template
/// (through Helm's SDK, the engine kubectl runs them with): a Secret keeps
/// the values the policies compare and only a marker for each non-empty
/// credential; a CustomResourceDefinition its name; a Node its kubelet.
#[test]
fn the_capture_templates_copy_no_credential() {
    let Some(helm) = e2e::helm::Helm::find().unwrap() else {
        println!("skipped: Go's templates need Helm's SDK (tools/helm-venv)");
        return;
    };
    let block = stdout(&cli(&["snapshot-command"]));
    let template = |start: &str| -> String {
        let line = block.lines().find(|l| l.starts_with(start)).unwrap();
        let quoted = line.rsplit_once(" '").unwrap().1;
        quoted.strip_suffix('\'').unwrap().to_owned()
    };
    let b64 = |text: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(text)
    };
    let secret = template("capture v1 Secret secrets cozy-velero cozy-backups-creds");
    let object = json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "cozy-backups-creds", "namespace": "cozy-velero", "uid": "u"},
        "data": {"AWS_ACCESS_KEY_ID": b64("AKIAEXAMPLEKEY"), "AWS_SECRET_ACCESS_KEY": b64("wJalrXUtnFEMI/K7MDENG"),
            "bucketName": b64("cozy-backups-8f3a"), "endpoint": b64("s3.example.org"), "region": b64("us-east-1")}});
    let text = helm.go_template(&secret, &object).unwrap();
    assert!(
        !text.contains(&b64("AKIAEXAMPLEKEY")) && !text.contains(&b64("wJalrXUtnFEMI/K7MDENG")),
        "{text}"
    );
    let copied: Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(
        copied["data"],
        json!({"bucketName": b64("cozy-backups-8f3a"), "endpoint": b64("s3.example.org"),
            "AWS_ACCESS_KEY_ID": "KHJlZGFjdGVkKQ==", "AWS_SECRET_ACCESS_KEY": "KHJlZGFjdGVkKQ=="}),
        "{text}"
    );
    assert_eq!(
        copied["metadata"]["annotations"]["cozystack-policies.io/captured-keys"],
        "AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY bucketName endpoint"
    );
    assert_eq!(copied["metadata"]["name"], "cozy-backups-creds");
    // An empty credential is not there; a Secret without data has none.
    let mut empty = object.clone();
    empty["data"]["AWS_SECRET_ACCESS_KEY"] = json!("");
    let copied: Value =
        serde_saphyr::from_str(&helm.go_template(&secret, &empty).unwrap()).unwrap();
    assert!(
        copied["data"].get("AWS_SECRET_ACCESS_KEY").is_none(),
        "{copied}"
    );
    assert_eq!(copied["data"]["AWS_ACCESS_KEY_ID"], "KHJlZGFjdGVkKQ==");
    let mut bare = object.clone();
    bare.as_object_mut().unwrap().remove("data");
    let copied: Value = serde_saphyr::from_str(&helm.go_template(&secret, &bare).unwrap()).unwrap();
    assert!(copied["data"].is_null(), "{copied}");
    // Lists: a document per item, with only what the policies read.
    let nodes = template("capture v1 Node nodes");
    let list = json!({"items": [
        {"metadata": {"name": "a", "labels": {"x": "y"}}, "status": {"nodeInfo": {"kubeletVersion": "v1.33.4", "osImage": "Talos"}}},
        {"metadata": {"name": "b"}, "status": {"nodeInfo": {"kubeletVersion": "v1.32.9"}}}]});
    let text = helm.go_template(&nodes, &list).unwrap();
    let documents: Vec<Value> = text
        .split("---\n")
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_saphyr::from_str(d).unwrap())
        .collect();
    assert_eq!(
        documents,
        [
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"},
                "status": {"nodeInfo": {"kubeletVersion": "v1.33.4"}}}),
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"},
                "status": {"nodeInfo": {"kubeletVersion": "v1.32.9"}}}),
        ]
    );
    let crds = template("capture apiextensions.k8s.io/v1 CustomResourceDefinition");
    let text = helm
        .go_template(
            &crds,
            &json!({"items": [{"metadata": {"name": "bucketclaims.objectstorage.k8s.io"},
            "spec": {"versions": [{"name": "v1alpha1"}]}}]}),
        )
        .unwrap();
    assert_eq!(
        text,
        "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: bucketclaims.objectstorage.k8s.io\n"
    );
}
