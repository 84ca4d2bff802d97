//! `cozystack-policies preflight` end to end: a snapshot of a realistic
//! 1.5.4 management cluster (tests/data/preflight) gives the exact upgrade
//! checklist, `report` renders it, and `snapshot-command` prints the block
//! the README documents. Needs the bundle in dist/ (`make dist`).

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::process::Output;

use common::{command, root};
use serde_json::Value;

const SNAPSHOT: &str = "cli/tests/data/preflight/snapshot-1.5.4.yaml";

fn cli(args: &[&str]) -> Output {
    command(args).output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn the_snapshot_gives_the_exact_checklist() {
    let output = cli(&["preflight", SNAPSHOT]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a failed check fails the preflight: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected =
        std::fs::read_to_string(root().join("cli/tests/data/preflight/expected-checklist.txt"))
            .unwrap();
    assert_eq!(stdout(&output), expected);
}

#[test]
fn check_with_the_cluster_is_the_same_checklist() {
    // The objects judged may come from standard input; the snapshot answers.
    let objects = std::fs::read_to_string(root().join(SNAPSHOT)).unwrap();
    let output = common::run_with_stdin(
        &["check", "--cluster", SNAPSHOT, "--checklist", "-"],
        &objects,
    );
    let text = stdout(&output);
    assert!(text.contains("FAIL         etcd-adoption:"), "{text}");
    assert!(text.contains("4 fail, 6 warn, 2 pass, 5 by hand"), "{text}");
}

/// Without `--cluster` nothing changes: the lookups have no cluster, and
/// the context-aware rules say they did not check.
#[test]
fn without_the_cluster_lookups_are_not_answered() {
    let output = cli(&["check", "--json", "--fail-on", "never", SNAPSHOT]);
    let parsed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let rules: Vec<&str> = parsed["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"upgrade-gate/etcd-adoption-not-checked"),
        "{rules:?}"
    );
    assert!(
        !rules.contains(&"upgrade-gate/etcd-adoption-target"),
        "{rules:?}"
    );
    let refused = cli(&["check", "--checklist", SNAPSHOT]);
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn report_renders_the_checklist() {
    let json = cli(&["preflight", "--format", "json", SNAPSHOT]);
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
    let file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("preflight.json");
    std::fs::write(&file, stdout(&json)).unwrap();
    let file = file.to_str().unwrap();
    let html = stdout(&cli(&["report", "--format", "html", file]));
    assert!(html.contains("<table id=\"checklist\">"), "{html}");
    assert!(html.contains("<tr class=\"fail\" id=\"check-etcd-adoption\"><td>FAIL</td>"));
    assert!(html.contains("4 fail, 6 warn, 2 pass, 5 by hand"));
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

#[test]
fn the_readme_holds_the_snapshot_command() {
    let output = cli(&["snapshot-command"]);
    assert!(output.status.success());
    let command = stdout(&output);
    assert!(
        command.contains("kubectl get secret --namespace"),
        "{command}"
    );
    assert!(
        !command.contains("secrets"),
        "Secrets only by name: {command}"
    );
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("```sh\n{command}```")),
        "README.md must hold `cozystack-policies snapshot-command` as printed:\n{command}"
    );
}
