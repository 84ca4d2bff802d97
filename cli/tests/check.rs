//! The main job end to end: `cozystack-policies check` over the example
//! change, with the bundle in dist/ (built by `make dist`).

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn cli(args: &[&str]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    Command::new(env!("CARGO_BIN_EXE_cozystack-policies"))
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap()
}

fn findings(args: &[&str]) -> (i32, Vec<Value>) {
    let output = cli(args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let parsed: Vec<Value> =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (output.status.code().unwrap(), parsed)
}

fn has(findings: &[Value], policy: &str, operation: &str, name: &str, field: &str) -> bool {
    findings.iter().any(|f| {
        f["policy"] == policy
            && f["operation"] == operation
            && f["name"] == name
            && f["field"] == field
    })
}

#[test]
fn the_example_change_shows_each_rule_and_fails() {
    let (code, found) = findings(&[
        "check",
        "--json",
        "--old",
        "examples/before",
        "examples/after",
    ]);
    assert_eq!(code, 1, "violations exit 1");
    assert!(has(
        &found,
        "no-delete",
        "DELETE",
        "cozystack-version",
        "metadata.labels[\"platform.cozystack.io/no-delete\"]"
    ));
    assert!(has(
        &found,
        "storageclass-immutable",
        "UPDATE",
        "db",
        "spec.storageClass"
    ));
    assert!(has(
        &found,
        "storageclass-immutable",
        "UPDATE",
        "events",
        "spec.zookeeper.storageClass"
    ));
    // Clean changes produce nothing: the unprotected ConfigMap deletion, the
    // Kubernetes node-group class, the new Redis.
    for clean in ["legacy-settings", "dev", "cache"] {
        assert!(
            !found
                .iter()
                .any(|f| f["name"] == clean && f["severity"] == "violation"),
            "{clean} is clean: {found:?}"
        );
    }
    let violation = found.iter().find(|f| f["name"] == "db").unwrap();
    assert_eq!(violation["kind"], "Postgres");
    assert_eq!(violation["namespace"], "tenant-foo");
    assert_eq!(violation["apiVersion"], "apps.cozystack.io/v1alpha1");
    assert_eq!(violation["code"], 422);
    assert_eq!(
        violation["rule"],
        "storageclass-immutable/storage-class-changed"
    );
    assert_eq!(violation["field"], "spec.storageClass");
    assert!(
        violation["message"]
            .as_str()
            .unwrap()
            .starts_with("storageClass is immutable"),
        "the tag and the field are not part of the message: {violation}"
    );
    assert!(
        violation["file"]
            .as_str()
            .unwrap()
            .ends_with("examples/after/tenant-foo.yaml")
    );
}

#[test]
fn one_tree_is_all_creates_like_audit_scanner() {
    let (_, found) = findings(&["check", "--json", "examples/after"]);
    assert!(
        found.iter().all(|f| f["operation"] == "CREATE"),
        "{found:?}"
    );
    // Creating with any storage class is fine.
    assert!(
        !found
            .iter()
            .any(|f| f["policy"] == "storageclass-immutable")
    );
}

#[test]
fn text_output_names_rule_object_field_and_message() {
    let output = cli(&["check", "--old", "examples/before", "examples/after"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("UPDATE Postgres tenant-foo/db"), "{text}");
    assert!(
        text.contains("✗ storageclass-immutable/storage-class-changed spec.storageClass"),
        "{text}"
    );
    assert!(
        text.contains("storageClass is immutable: Postgres tenant-foo/db cannot change"),
        "{text}"
    );
    assert!(text.contains("violation(s)"), "{text}");
}

#[test]
fn a_clean_tree_exits_zero_and_bad_input_exits_two() {
    let dir = std::env::temp_dir().join(format!("cozystack-policies-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("ok.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\ndata: {}\n",
    )
    .unwrap();
    let clean = cli(&["check", dir.to_str().unwrap()]);
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    std::fs::write(dir.join("bad.yaml"), "apiVersion: v1\nkind: ConfigMap\n").unwrap();
    let bad = cli(&["check", dir.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("bad.yaml: document 1 is not a Kubernetes object")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
