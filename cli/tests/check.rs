//! The main job end to end: `cozystack-policies check` over the example
//! change and over scratch GitOps trees, with the bundle in dist/ (built by
//! `make dist`).

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::process::{Command, Stdio};

use common::{command, root};
use serde_json::Value;

fn cli(args: &[&str]) -> Output {
    command(args).output().unwrap()
}

/// Runs with `input` on standard input.
fn cli_stdin(args: &[&str], input: &str) -> Output {
    common::run_with_stdin(args, input)
}

fn parse(output: &Output) -> (i32, Vec<Value>, Value) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let parsed: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&output.stderr)));
    (
        output.status.code().unwrap(),
        parsed["findings"].as_array().unwrap().clone(),
        parsed["summary"].clone(),
    )
}

fn findings(args: &[&str]) -> (i32, Vec<Value>) {
    let (code, found, _) = parse(&cli(args));
    (code, found)
}

fn has(findings: &[Value], policy: &str, operation: &str, name: &str, field: &str) -> bool {
    findings.iter().any(|f| {
        f["policy"] == policy
            && f["operation"] == operation
            && f["name"] == name
            && f["field"] == field
    })
}

/// A scratch directory of its own for each test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "cozystack-policies-check-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A Postgres the values-schema policy denies at spec.resourcesPreset
/// (line 6, column 3) when `preset` is not one of the chart's presets.
fn postgres(name: &str, preset: &str) -> String {
    format!(
        "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: {name}\n  namespace: tenant-foo\nspec:\n  resourcesPreset: {preset}\n"
    )
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap()
}

fn at(finding: &Value) -> (i64, i64) {
    (
        finding["line"].as_i64().unwrap(),
        finding["column"].as_i64().unwrap(),
    )
}

#[test]
fn the_example_change_shows_each_rule_and_fails() {
    let (code, found) = findings(common::CHECK_THE_EXAMPLE_CHANGE);
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
        violation["rule"]
            .as_str()
            .unwrap()
            .starts_with("storageclass-immutable/")
    );
    assert!(
        violation["file"]
            .as_str()
            .unwrap()
            .ends_with("examples/after/tenant-foo.yaml")
    );
    // `  storageClass: local` on line 9 of the first document.
    assert_eq!(at(violation), (9, 3));
    // The Kafka is the second document: its zookeeper class is on line 18.
    let kafka = found.iter().find(|f| f["name"] == "events").unwrap();
    assert_eq!(at(kafka), (18, 39));
    // A deletion points into the old tree, at the label that protects it.
    let deleted = found
        .iter()
        .find(|f| f["name"] == "cozystack-version")
        .unwrap();
    assert!(
        deleted["file"]
            .as_str()
            .unwrap()
            .ends_with("examples/before/platform.yaml")
    );
    assert_eq!(at(deleted), (8, 5));
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
fn text_output_is_file_line_column_rule_message() {
    let output = cli(&["check", "--old", "examples/before", "examples/after"]);
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("storageClass is immutable: Postgres tenant-foo/db"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.starts_with("examples/after/tenant-foo.yaml:9:3: storageclass-immutable/"),
        "{line}"
    );
    assert!(line.contains(": error: spec.storageClass: "), "{line}");
    assert!(line.ends_with("(UPDATE Postgres tenant-foo/db)"), "{line}");
    // Not a terminal: no colour codes.
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.contains("violation(s)"), "{text}");
}

#[test]
fn a_clean_tree_exits_zero_and_bad_input_exits_two() {
    let dir = scratch("clean");
    write(
        &dir,
        "ok.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\ndata: {}\n",
    );
    let clean = cli(&["check", dir.to_str().unwrap()]);
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    write(&dir, "bad.yaml", "apiVersion: v1\nkind: ConfigMap\n");
    let bad = cli(&["check", dir.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("bad.yaml:1:1: a ConfigMap without metadata.name"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A release's modules unpacked anywhere: `--dist` outside a clone takes
/// every module of the directory (it once demanded `./policies`).
#[test]
fn dist_outside_a_clone_takes_every_module_it_holds() {
    let elsewhere = scratch("dist-elsewhere");
    let dist = elsewhere.join("modules");
    std::fs::create_dir_all(&dist).unwrap();
    for entry in std::fs::read_dir(root().join("dist")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wasm") {
            std::fs::copy(&path, dist.join(path.file_name().unwrap())).unwrap();
        }
    }
    write(&elsewhere, "db.yaml", &postgres("db", "huge"));
    let run = |dist: &Path| {
        command(&[
            "check",
            "--format",
            "json",
            "--dist",
            dist.to_str().unwrap(),
            "db.yaml",
        ])
        .current_dir(&elsewhere)
        .output()
        .unwrap()
    };
    let output = run(&dist);
    let (code, found, _) = parse(&output);
    assert_eq!(code, 1, "{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        has(
            &found,
            "values-schema",
            "CREATE",
            "db",
            "spec.resourcesPreset"
        ),
        "{found:?}"
    );
    let empty = elsewhere.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let refused = run(&empty);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("empty: the directory holds no .wasm module"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&elsewhere).unwrap();
}

#[test]
fn files_that_are_not_objects_are_skipped_or_refused_when_strict() {
    let dir = scratch("gitops");
    write(
        &dir,
        "kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nresources: [db.yaml]\n",
    );
    write(&dir, "charts/values.yaml", "replicas: 3\nimage: {tag: x}\n");
    write(&dir, "ci/pipeline.yml", "- step: build\n");
    write(&dir, "notes.txt", "not read at all\n");
    write(&dir, "apps/db.yaml", &postgres("db", "t1.small"));
    write(
        &dir,
        "apps/cm.json",
        r#"{"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "c"}}"#,
    );
    let path = dir.to_str().unwrap();
    let output = cli(&["check", "--json", path]);
    let (code, found, summary) = parse(&output);
    assert_eq!(code, 0, "{found:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let skipped: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("skipped "))
        .collect();
    assert_eq!(skipped.len(), 3, "{stderr}");
    assert!(
        stderr.contains("kustomization.yaml:1:1: not a Kubernetes object"),
        "{stderr}"
    );
    assert!(stderr.contains("values.yaml:1:1"), "{stderr}");
    assert!(stderr.contains("pipeline.yml:1:1"), "{stderr}");
    assert_eq!(summary["skipped"], 3);
    assert_eq!(summary["objects"], 2);
    // No policy's rules match a Widget: counted, not listed.
    assert_eq!(summary["unmatched"], 1);
    let strict = cli(&["check", "--strict", path]);
    assert_eq!(strict.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("--strict refuses it"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn standard_input_with_several_documents_and_lists() {
    let stream = format!(
        "# kustomize build output\n{}---\n{}---\napiVersion: v1\nkind: List\nitems:\n- {}\n",
        postgres("a", "t1.small"),
        postgres("b", "huge"),
        postgres("c", "huge").trim_end().replace('\n', "\n  ")
    );
    let output = cli_stdin(&["check", "--json", "-"], &stream);
    let (code, found, summary) = parse(&output);
    assert_eq!(code, 1);
    assert_eq!(summary["objects"], 3, "{summary}");
    let b = found.iter().find(|f| f["name"] == "b").unwrap();
    assert_eq!(b["file"], "<stdin>");
    assert_eq!(b["field"], "spec.resourcesPreset");
    assert!(b["rule"].as_str().unwrap().starts_with("values-schema/"));
    // Document 2 starts on line 10: its field is 6 lines further down.
    assert_eq!(at(b), (16, 3));
    // The List item: `- apiVersion` on line 21, its preset 6 lines below,
    // indented under the item.
    let c = found.iter().find(|f| f["name"] == "c").unwrap();
    assert_eq!(at(c), (27, 5));
    assert!(!found.iter().any(|f| f["name"] == "a"), "{found:?}");
}

/// A `kustomize build` of a platform is thousands of documents: more than
/// serde-saphyr's default budget of 1,024, which refused the stream once.
#[test]
fn a_stream_of_thousands_of_documents_is_read_to_its_end() {
    const CONFIG_MAPS: i64 = 2_000;
    let mut stream: String = (0..CONFIG_MAPS)
        .map(|i| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-{i}\n  namespace: tenant-foo\n---\n"
            )
        })
        .collect();
    stream.push_str(&postgres("last", "huge"));
    let output = cli_stdin(&["check", "--format", "json", "-"], &stream);
    let (code, found, summary) = parse(&output);
    assert_eq!(code, 1, "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(summary["objects"], CONFIG_MAPS + 1, "{summary}");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["name"], "last");
    // Six lines per ConfigMap; the preset is line 7 of the last document.
    assert_eq!(at(&found[0]), (6 * CONFIG_MAPS + 7, 3));
}

#[test]
fn flux_variables_fill_placeholders_and_unresolved_ones_are_not_judged() {
    let dir = scratch("vars");
    write(&dir, "db.yaml", &postgres("db", "${PRESET}"));
    write(
        &dir,
        "quoted.yaml",
        &postgres("quoted", "\"${PRESET:=t1.small}\""),
    );
    let path = dir.to_str().unwrap();
    // Unresolved: a warning at the field, and the object is not judged (a
    // literal `${PRESET}` is no preset at all).
    let (code, found) = findings(&["check", "--json", path]);
    assert_eq!(code, 0, "{found:?}");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["rule"], "check/unresolved-variable");
    assert_eq!(found[0]["severity"], "warning");
    assert_eq!(found[0]["field"], "spec.resourcesPreset");
    assert_eq!(at(&found[0]), (7, 3));
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("${PRESET} has no value")
    );
    let (code, _) = findings(&["check", "--json", "--fail-on", "warning", path]);
    assert_eq!(code, 1, "--fail-on warning fails on it");
    // Filled from --var: judged as Flux would apply it.
    let (code, found) = findings(&["check", "--json", "--var", "PRESET=huge", path]);
    assert_eq!(code, 1);
    assert!(has(
        &found,
        "values-schema",
        "CREATE",
        "db",
        "spec.resourcesPreset"
    ));
    assert!(has(
        &found,
        "values-schema",
        "CREATE",
        "quoted",
        "spec.resourcesPreset"
    ));
    // From a Secret as Flux's substituteFrom reads it.
    write(
        &dir,
        "vars/secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: vars}\ndata: {PRESET: dDEuc21hbGw=}\n",
    );
    let secret = dir.join("vars/secret.yaml");
    let (code, found) = findings(&[
        "check",
        "--json",
        "--vars-from",
        secret.to_str().unwrap(),
        path,
    ]);
    assert_eq!((code, found.len()), (0, 0), "{found:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sarif_output_follows_the_schema_with_rules_and_regions() {
    let output = cli(&[
        "check",
        "--format",
        "sarif",
        "--old",
        "examples/before",
        "examples/after",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    let schema_path = root().join("cli/tests/data/sarif-schema-2.1.0.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("file:///sarif-schema-2.1.0.json", schema)
        .unwrap();
    let index = compiler
        .compile("file:///sarif-schema-2.1.0.json", &mut schemas)
        .unwrap();
    if let Err(error) = schemas.validate(&log, index) {
        panic!("{error:#}");
    }
    // The schema does refuse what SARIF does not allow.
    let mut wrong = log.clone();
    wrong["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(schemas.validate(&wrong, index).is_err());
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    let db = results
        .iter()
        .find(|r| {
            r["message"]["text"]
                .as_str()
                .unwrap()
                .contains("Postgres tenant-foo/db")
        })
        .unwrap();
    let rule_id = db["ruleId"].as_str().unwrap();
    assert!(rule_id.starts_with("storageclass-immutable/"));
    assert_eq!(db["level"], "error");
    let location = &db["locations"][0]["physicalLocation"];
    assert_eq!(
        location["artifactLocation"]["uri"],
        "examples/after/tenant-foo.yaml"
    );
    assert_eq!(location["region"]["startLine"], 9);
    assert_eq!(location["region"]["startColumn"], 3);
    let rule = &rules[usize::try_from(db["ruleIndex"].as_u64().unwrap()).unwrap()];
    assert_eq!(rule["id"], rule_id);
    assert!(
        rule["helpUri"]
            .as_str()
            .unwrap()
            .contains("policies/storageclass-immutable/README.md")
    );
    assert!(results.iter().any(|r| r["level"] == "warning"));
}

#[test]
fn junit_output_is_xml_with_a_case_per_object_and_failures() {
    let output = cli(&[
        "check",
        "--format",
        "junit",
        "--old",
        "examples/before",
        "examples/after",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let xml = String::from_utf8(output.stdout).unwrap();
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut suites, mut cases, mut failures) = (0, Vec::new(), Vec::new());
    loop {
        match reader.read_event().unwrap_or_else(|e| panic!("{e}: {xml}")) {
            quick_xml::events::Event::Eof => break,
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                let attribute = |name: &str| {
                    e.try_get_attribute(name)
                        .unwrap()
                        .map(|a| {
                            a.normalized_value(quick_xml::XmlVersion::Explicit1_0)
                                .unwrap()
                                .into_owned()
                        })
                        .unwrap_or_default()
                };
                match e.name().as_ref() {
                    "testsuite" => suites += 1,
                    "testcase" => cases.push(attribute("name")),
                    "failure" => failures.push(attribute("message")),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    assert!(suites >= 5, "one suite per file: {xml}");
    // Objects are `OPERATION Kind namespace/name`; the rules folded offline
    // have a case each, named by rule.
    let (objects, folded): (Vec<&String>, Vec<&String>) =
        cases.iter().partition(|case| case.contains(' '));
    assert_eq!(objects.len(), 23, "a case per object: {cases:?}");
    assert!(
        folded.iter().all(|rule| rule.starts_with("upgrade-gate/")),
        "{folded:?}"
    );
    assert!(cases.contains(&"UPDATE Postgres tenant-foo/db".to_owned()));
    assert!(
        failures
            .iter()
            .any(|f| f.starts_with("examples/after/tenant-foo.yaml:9:3: storageclass-immutable/")),
        "{failures:?}"
    );
}

/// The example change offline: securitygroup-validity cannot check that
/// the applications a SecurityGroup names exist, and upgrade-gate (report
/// only) cannot read what its Kubernetes rules need. Every format says the
/// same of those findings: not checked, neither a violation nor a warning,
/// counted as such; upgrade-gate's are one line per rule unless
/// `--verbose` lists them.
#[test]
fn a_not_checked_finding_says_the_same_in_every_format() {
    let run = |format: &str, verbose: bool| {
        let mut args = vec!["check", "--format", format, "--old", "examples/before"];
        if verbose {
            args.push("--verbose");
        }
        args.push("examples/after");
        let output = cli(&args);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{format}: the example's violations"
        );
        output
    };
    let is_not_checked = |rule: &str| rule.ends_with("-not-checked");
    let (_, found, summary) = parse(&run("json", false));
    let listed: Vec<&Value> = found
        .iter()
        .filter(|f| is_not_checked(f["rule"].as_str().unwrap()))
        .collect();
    assert!(!listed.is_empty(), "securitygroup-validity's: {found:?}");
    for finding in &listed {
        assert_eq!(finding["severity"], "not-checked", "{finding}");
        assert_ne!(
            finding["policy"], "upgrade-gate",
            "folded offline: {finding}"
        );
    }
    let folded = summary["folded"].as_array().cloned().unwrap_or_default();
    assert!(
        folded
            .iter()
            .all(|f| f["rule"].as_str().unwrap().starts_with("upgrade-gate/")),
        "{folded:?}"
    );
    assert!(
        !folded.is_empty(),
        "the example's Kubernetes clusters: {summary}"
    );
    let folded_findings: u64 = folded.iter().map(|f| f["findings"].as_u64().unwrap()).sum();
    let not_checked = summary["notChecked"].as_u64().unwrap();
    assert_eq!(
        not_checked,
        count(listed.len()) + folded_findings,
        "{summary}"
    );
    let verdicts = |severity: &str| found.iter().filter(|f| f["severity"] == severity).count();
    assert_eq!(
        summary["violations"].as_u64(),
        Some(count(verdicts("violation")))
    );
    assert_eq!(
        summary["warnings"].as_u64(),
        Some(count(verdicts("warning")))
    );

    // --verbose lists what was folded, and counts the same.
    let (_, all, verbose) = parse(&run("json", true));
    assert!(verbose.get("folded").is_none(), "{verbose}");
    assert_eq!(verbose["notChecked"].as_u64(), Some(not_checked));
    let listed_all = all
        .iter()
        .filter(|f| f["severity"] == "not-checked")
        .count();
    assert_eq!(count(listed_all), not_checked);

    // SARIF: an `open` result with level `none` for each listed one, and a
    // notification for each folded rule.
    let log: Value = serde_json::from_slice(&run("sarif", false).stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let open: Vec<&Value> = results.iter().filter(|r| r["kind"] == "open").collect();
    assert_eq!(open.len(), listed.len());
    for result in &open {
        assert!(
            is_not_checked(result["ruleId"].as_str().unwrap()),
            "{result}"
        );
        assert_eq!(result["level"], "none");
    }
    assert!(
        results
            .iter()
            .filter(|r| r["kind"] == "fail")
            .all(|r| !is_not_checked(r["ruleId"].as_str().unwrap()))
    );
    let notifications = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert_eq!(notifications.len(), folded.len());
    for (notification, rule) in notifications.iter().zip(&folded) {
        assert_eq!(notification["associatedRule"]["id"], rule["rule"]);
    }

    // JUnit: the folded rules are skipped cases of their own suite, and no
    // line calls a not-checked finding a warning.
    let xml = String::from_utf8(run("junit", false).stdout).unwrap();
    let skipped = xml.matches("<skipped ").count();
    assert!(skipped >= folded.len(), "{xml}");
    assert!(
        xml.contains("<testsuite name=\"not checked offline\""),
        "{xml}"
    );
    let top_skipped = xml
        .split("<testsuites ")
        .nth(1)
        .and_then(|rest| rest.split("skipped=\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .unwrap();
    assert_eq!(top_skipped, skipped.to_string(), "{xml}");
    for finding in &listed {
        let place = format!(
            "{}:{}:{}: {}",
            finding["file"].as_str().unwrap(),
            finding["line"],
            finding["column"],
            finding["rule"].as_str().unwrap()
        );
        assert!(
            xml.contains(&format!("not checked {place}")),
            "{place}: {xml}"
        );
        assert!(!xml.contains(&format!("warning {place}")), "{place}: {xml}");
    }
    assert!(!xml.contains("not checked: not checked"), "{xml}");

    // Text: each listed one labelled once, each folded rule one line, and
    // the summary counts them all.
    let text = String::from_utf8(run("text", false).stdout).unwrap();
    let labelled = text
        .lines()
        .filter(|l| l.split(": ").nth(2) == Some("not checked"))
        .count();
    assert_eq!(labelled, listed.len(), "{text}");
    assert!(!text.contains("not checked: not checked"), "{text}");
    for rule in &folded {
        let rule = rule["rule"].as_str().unwrap();
        let lines = text.lines().filter(|l| l.starts_with(rule)).count();
        assert_eq!(lines, 1, "{rule}: {text}");
    }
    assert!(
        text.contains(&format!(" {not_checked} not checked in ")),
        "{text}"
    );
}

#[test]
fn a_baseline_fails_only_on_new_findings() {
    let dir = scratch("baseline");
    let tree = dir.join("tree");
    write(&tree, "db.yaml", &postgres("db", "huge"));
    let baseline = dir.join("baseline.json");
    let (tree_path, baseline_path) = (tree.to_str().unwrap(), baseline.to_str().unwrap());
    let written = cli(&["check", "--write-baseline", baseline_path, tree_path]);
    assert_eq!(written.status.code(), Some(0), "writing a baseline adopts");
    let entries: Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    assert_eq!(entries["version"], 1);
    let entry = &entries["findings"][0];
    assert_eq!(entry["kind"], "Postgres");
    assert_eq!(entry["field"], "spec.resourcesPreset");
    assert!(entry.get("line").is_none(), "no line numbers: {entry}");
    // Known findings pass, even when their lines move.
    write(
        &tree,
        "db.yaml",
        &format!("# moved down\n\n{}", postgres("db", "huge")),
    );
    let (code, found, summary) = parse(&cli(&[
        "check",
        "--json",
        "--baseline",
        baseline_path,
        tree_path,
    ]));
    assert_eq!((code, found.len()), (0, 0), "{found:?}");
    assert_eq!(summary["baselined"], 1);
    // A new one fails, alone.
    write(&tree, "other.yaml", &postgres("other", "huge"));
    let (code, found, _) = parse(&cli(&[
        "check",
        "--json",
        "--baseline",
        baseline_path,
        tree_path,
    ]));
    assert_eq!(code, 1);
    assert!(found.iter().all(|f| f["name"] == "other"), "{found:?}");
    // --fail-on never reports without failing.
    let never = cli(&["check", "--fail-on", "never", tree_path]);
    assert_eq!(never.status.code(), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=test", "-c", "user.email=test@example.org"])
        .args(args)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn old_takes_a_git_revision_for_create_update_and_delete() {
    let repo = scratch("git");
    git(&repo, &["init", "-q"]);
    let postgres_class = |class: &str| {
        format!(
            "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata: {{name: db, namespace: tenant-foo}}\nspec:\n  storageClass: {class}\n"
        )
    };
    write(&repo, "manifests/db.yaml", &postgres_class("replicated"));
    write(
        &repo,
        "manifests/platform/version.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cozystack-version\n  namespace: cozy-system\n  labels:\n    platform.cozystack.io/no-delete: \"true\"\n",
    );
    write(
        &repo,
        "elsewhere/ignored.yaml",
        &postgres("ignored", "huge"),
    );
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    git(&repo, &["branch", "base"]);
    // The pull request: a class change, a deletion, a new object.
    write(&repo, "manifests/db.yaml", &postgres_class("local"));
    std::fs::remove_file(repo.join("manifests/platform/version.yaml")).unwrap();
    write(&repo, "manifests/new.yaml", &postgres("new", "t1.small"));
    let manifests = repo.join("manifests");
    let (code, found, summary) = parse(&cli(&[
        "check",
        "--json",
        "--old",
        "base",
        manifests.to_str().unwrap(),
    ]));
    assert_eq!(code, 1, "{found:?}");
    assert_eq!(
        (&summary["create"], &summary["update"], &summary["delete"]),
        (&Value::from(1), &Value::from(1), &Value::from(1)),
        "{summary}"
    );
    let update = found
        .iter()
        .find(|f| f["policy"] == "storageclass-immutable")
        .unwrap();
    assert_eq!(update["operation"], "UPDATE");
    assert_eq!(at(update), (5, 3));
    let deleted = found.iter().find(|f| f["policy"] == "no-delete").unwrap();
    assert_eq!(deleted["operation"], "DELETE");
    // Named where the file was, read from the revision.
    assert_eq!(
        deleted["file"],
        manifests.join("platform/version.yaml").to_str().unwrap()
    );
    assert_eq!(at(deleted), (7, 5));
    assert!(!found.iter().any(|f| f["name"] == "ignored"));
    let unknown = cli(&[
        "check",
        "--old",
        "no-such-revision",
        manifests.to_str().unwrap(),
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    std::fs::remove_dir_all(&repo).unwrap();
}

/// The compiled modules a cache directory holds (testkit).
fn compiled(cache: &Path) -> Vec<testkit::Compiled> {
    testkit::compiled_modules(cache).unwrap()
}

/// `check` of the example change with `XDG_CACHE_HOME` at `cache`.
fn check_cached(cache: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "check",
        "--json",
        "--old",
        "examples/before",
        "examples/after",
    ];
    args.extend(extra);
    command(&args)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .unwrap()
}

#[test]
fn compiled_modules_are_cached_and_a_second_run_only_reads_them() {
    let home = scratch("compile-cache");
    let first = check_cached(&home, &[]);
    assert_eq!(
        first.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let cache = home.join("cozystack-policies/compiled");
    let stored = compiled(&cache);
    let modules = std::fs::read_dir(root().join("dist"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "wasm")
        })
        .count();
    assert_eq!(
        stored.len(),
        modules,
        "one compiled module per policy: {stored:?}"
    );

    let second = check_cached(&home, &[]);
    assert_eq!(second.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&second.stdout),
        String::from_utf8_lossy(&first.stdout)
    );
    // Nothing compiled again: every module file is the one the first run
    // wrote, untouched.
    assert!(
        compiled(&cache) == stored,
        "the second run rewrote the cache"
    );
    std::fs::remove_dir_all(&home).unwrap();
}

#[test]
fn the_compile_cache_opt_out_writes_nothing_and_judges_the_same() {
    let home = scratch("no-compile-cache");
    let flag = check_cached(&home, &["--no-compile-cache"]);
    let mut by_env = command(&[
        "check",
        "--json",
        "--old",
        "examples/before",
        "examples/after",
    ]);
    let by_env = by_env
        .env("XDG_CACHE_HOME", &home)
        .env("COZYSTACK_POLICIES_NO_COMPILE_CACHE", "1")
        .output()
        .unwrap();
    assert_eq!(
        std::fs::read_dir(&home).unwrap().count(),
        0,
        "the cache was written"
    );
    let reference = scratch("compile-cache-reference");
    let cached = check_cached(&reference, &[]);
    for output in [&flag, &by_env] {
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&cached.stdout)
        );
    }
    std::fs::remove_dir_all(&home).unwrap();
    std::fs::remove_dir_all(&reference).unwrap();
}

#[test]
fn an_unusable_cache_is_a_warning_and_the_check_goes_on() {
    let dir = scratch("unusable-cache");
    // A file where the cache directory would be created.
    write(&dir, "cozystack-policies", "not a directory");
    let output = check_cached(&dir, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("warning: compiled modules are not cached (")
            && stderr.contains("pass --no-compile-cache"),
        "{stderr}"
    );
    let (_, found, _) = parse(&output);
    assert!(!found.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
