//! `cozystack-policies report` end to end: the fixtures under
//! tests/data/report (shaped as audit-scanner writes its reports) through
//! every output format.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use quick_xml::events::Event;
use serde_json::Value;

const DATA: &str = "cli/tests/data/report";

/// Runs `report` with `args` (paths relative to the repository), feeding
/// `stdin`; returns stdout, asserting success.
fn report(args: &[&str], stdin: &str) -> String {
    let root = common::root();
    let root = root.to_str().unwrap();
    let mut full = vec!["--root", root, "report"];
    full.extend_from_slice(args);
    let output = common::run_with_stdin(&full, stdin);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "report {args:?} failed: {stderr}");
    String::from_utf8(output.stdout).unwrap()
}

fn data(name: &str) -> String {
    format!("{DATA}/{name}")
}

fn json(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.extend(["--format", "json"]);
    serde_json::from_str(&report(&args, "")).unwrap()
}

#[test]
fn json_totals_count_only_our_findings_unless_asked() {
    let ours = json(&[&data("policyreports.json")]);
    let totals = &ours["totals"];
    assert_eq!(totals["findings"], 6);
    assert_eq!(
        totals["byPolicy"],
        serde_json::json!({"chart-render": 2, "no-delete": 1, "oidc-config": 2, "upgrade-readiness": 1})
    );
    assert_eq!(
        totals["bySeverity"],
        serde_json::json!({"high": 1, "info": 3, "medium": 2})
    );
    assert_eq!(
        totals["byNamespace"],
        serde_json::json!({"(cluster)": 1, "tenant-dev": 2, "tenant-root": 3})
    );
    assert_eq!(totals["byCategory"]["Resource validation"], 2, "{totals}");
    let all = json(&[&data("policyreports.json"), "--all-policies"]);
    assert_eq!(all["totals"]["findings"], 8);
    assert_eq!(
        all["totals"]["byResult"],
        serde_json::json!({"error": 1, "fail": 7})
    );
}

#[test]
fn several_inputs_and_standard_input_make_one_report() {
    let stdin = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/report/openreports.yaml"),
    )
    .unwrap();
    let out = report(&["-", &data("check.json"), "--format", "json"], &stdin);
    let parsed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        parsed["totals"]["findings"], 6,
        "3 of the OpenReports, 3 of check"
    );
    assert_eq!(
        parsed["totals"]["byResult"],
        serde_json::json!({"fail": 5, "warn": 1})
    );
}

/// What `check --format json` prints, read back by `report`: one finding per
/// finding of check, each with its rule id (the modules in dist/, built by
/// `make dist`); with `--verbose`, so that the not-checked findings check
/// folds offline are findings too.
#[test]
fn the_json_of_check_is_read_back_finding_for_finding() {
    let mut args = common::CHECK_THE_EXAMPLE_CHANGE.to_vec();
    args.push("--verbose");
    let check = common::command(&args).output().unwrap();
    let stdout = String::from_utf8(check.stdout).unwrap();
    assert_eq!(
        check.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let checked: Value = serde_json::from_str(&stdout).unwrap();
    let read: Value = serde_json::from_str(&report(&["-", "--format", "json"], &stdout)).unwrap();
    let summary = &checked["summary"];
    assert_eq!(
        read["totals"]["byResult"],
        serde_json::json!({"fail": summary["violations"], "warn": summary["warnings"],
            "not-checked": summary["notChecked"]})
    );
    let key = |policy: &Value, rule: &str, field: &Value, message: &Value| {
        format!("{policy} {rule} {field} {message}")
    };
    let mut expected: Vec<String> = checked["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let rule = f["rule"].as_str().unwrap();
            let (_, rule) = rule.split_once('/').unwrap();
            key(&f["policy"], rule, &f["field"], &f["message"])
        })
        .collect();
    let mut found: Vec<String> = read["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            key(
                &f["policy"],
                f["rule"].as_str().unwrap(),
                &f["field"],
                &f["message"],
            )
        })
        .collect();
    expected.sort();
    found.sort();
    assert!(!expected.is_empty());
    assert_eq!(found, expected);
}
#[test]
fn since_marks_new_resolved_and_open() {
    let diff = json(&[
        &data("policyreports.json"),
        "--since",
        &data("policyreports-previous.json"),
    ]);
    assert_eq!(
        diff["totals"]["since"],
        serde_json::json!({"new": 1, "open": 5, "resolved": 1})
    );
    let resolved = &diff["resolved"][0];
    assert_eq!(resolved["policy"], "securitygroup-validity");
    assert_eq!(resolved["status"], "resolved");
}

#[test]
fn since_reads_the_report_own_json() {
    let earlier = report(&[&data("openreports.yaml"), "--format", "json"], "");
    let dir = std::env::temp_dir().join(format!("report-since-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("old.json");
    std::fs::write(&path, earlier).unwrap();
    let again = json(&[&data("openreports.yaml"), "--since", path.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        again["totals"]["since"],
        serde_json::json!({"new": 0, "open": 3, "resolved": 0})
    );
}

#[test]
fn markdown_has_the_totals_and_a_linked_row_per_finding() {
    let md = report(&[&data("check.json"), "--format", "markdown"], "");
    assert!(
        md.starts_with("## Policy report\n\n3 findings (2 fail, 1 warn)\n"),
        "{md}"
    );
    assert!(md.contains("| policy | findings |\n|---|---:|\n| chart-render | 1 |\n| no-delete | 1 |\n| oidc-config | 1 |\n"), "{md}");
    assert!(md.contains(
        "| fail | medium | [oidc-config/custom-config-exclusive](https://github.com/cozystack/cozystack-policies/blob/main/policies/oidc-config/README.md#rule-custom-config-exclusive) \
         | Kubernetes tenant-root/dev | `spec.oidc.customConfig` | set exactly one of `config` (inline) or `secretRef.name` |  |\n"
    ), "{md}");
    assert!(
        md.contains("| warn | medium | [chart-render/external-without-tls](https://github.com/cozystack/cozystack-policies/blob/main/policies/chart-render/README.md#rule-external-without-tls)"),
        "{md}"
    );
    assert_eq!(
        md.lines()
            .filter(|l| l.starts_with("| fail |") || l.starts_with("| warn |"))
            .count(),
        3 + 2,
        "3 findings and the totals of fail and warn"
    );
}

#[test]
fn markdown_shows_the_change_column_with_since() {
    let md = report(
        &[
            &data("policyreports.json"),
            "--since",
            &data("policyreports-previous.json"),
            "--format",
            "markdown",
        ],
        "",
    );
    assert!(
        md.contains("since the previous report: 1 new, 1 resolved, 5 still open"),
        "{md}"
    );
    assert!(
        md.contains("| new | fail | medium | [oidc-config/user-role]"),
        "{md}"
    );
    assert!(
        md.contains("| resolved | fail | medium | [securitygroup-validity/duplicate-attachment]"),
        "{md}"
    );
}

#[test]
fn csv_has_a_header_and_one_quoted_row_per_finding() {
    let csv = report(&[&data("policyreports.json"), "--format", "csv"], "");
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1 + 6, "{csv}");
    assert!(lines[0].starts_with("change,result,severity,category,policy,rule,"));
    assert!(lines.contains(
        &",fail,medium,Authentication,oidc-config,user-role,oidc-config,tenant-root,apps.cozystack.io/v1alpha1,Kubernetes,dev,\
          spec.oidc.users[0].role,\"\"\"edit\"\" is not one of the allowed values admin, view; the chart's schema rejects it \
          (admin binds ClusterRole cluster-admin, view binds ClusterRole view).\",,\
          https://github.com/cozystack/cozystack-policies/blob/main/policies/oidc-config/README.md#rule-user-role"
    ), "{csv}");
}

#[test]
fn the_table_lists_totals_and_fixes() {
    let table = report(&[&data("openreports.yaml")], "");
    assert!(table.starts_with("3 findings (3 fail)\n"), "{table}");
    assert!(
        table.contains("by policy     securitygroup-validity 2 · upgrade-readiness 1\n"),
        "{table}"
    );
    assert!(
        table.contains("fix: remove apiGroup or set it to apps.cozystack.io\n"),
        "{table}"
    );
}

/// An element of the page: its attributes, its text (descendants'
/// included) and the ids of the elements around it.
struct Element {
    name: String,
    within: Vec<String>,
    attributes: BTreeMap<String, String>,
    text: String,
}

/// Parses the page as XML (its markup is well-formed on purpose), failing
/// on any error or entity other than the five HTML escapes use.
fn elements(page: &str) -> Vec<Element> {
    let mut reader = quick_xml::Reader::from_str(page);
    let mut open: Vec<Element> = Vec::new();
    let mut done = Vec::new();
    let element = |start: &quick_xml::events::BytesStart<'_>, open: &[Element]| Element {
        name: start.name().0.to_owned(),
        within: open
            .iter()
            .filter_map(|e| e.attributes.get("id").cloned())
            .collect(),
        attributes: start
            .attributes()
            .map(|a| {
                let a = a.unwrap();
                (
                    a.key.0.to_owned(),
                    a.normalized_value(quick_xml::XmlVersion::default())
                        .unwrap()
                        .into_owned(),
                )
            })
            .collect(),
        text: String::new(),
    };
    loop {
        match reader.read_event().unwrap() {
            Event::Start(start) => {
                let new = element(&start, &open);
                open.push(new);
            }
            Event::Empty(start) => done.push(element(&start, &open)),
            Event::End(_) => {
                let closed = open.pop().unwrap();
                if let Some(parent) = open.last_mut() {
                    parent.text.push_str(&closed.text);
                }
                done.push(closed);
            }
            Event::Text(text) => match open.last_mut() {
                Some(parent) => parent.text.push_str(&text.html_content()),
                None => assert!(text.html_content().trim().is_empty(), "text outside <html>"),
            },
            Event::GeneralRef(reference) => {
                let name = reference.into_inner();
                let c = match name.as_ref() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "#39" => "'",
                    other => panic!("unexpected entity &{other};"),
                };
                open.last_mut().unwrap().text.push_str(c);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(open.is_empty(), "unclosed elements");
    done
}

fn by_id<'a>(elements: &'a [Element], id: &str) -> &'a Element {
    elements
        .iter()
        .find(|e| e.attributes.get("id").map(String::as_str) == Some(id))
        .unwrap_or_else(|| panic!("no element #{id}"))
}

#[test]
fn the_html_page_parses_and_carries_totals_charts_and_rows() {
    let page = report(
        &[
            &data("policyreports.json"),
            "--since",
            &data("policyreports-previous.json"),
            "--format",
            "html",
        ],
        "",
    );
    let all = elements(&page);
    assert_eq!(by_id(&all, "total-findings").text, "6");
    assert_eq!(by_id(&all, "since-new").text, "1");
    assert_eq!(by_id(&all, "since-resolved").text, "1");
    assert!(by_id(&all, "by-namespace").text.contains("tenant-root3"));
    let bars = |chart: &str| {
        all.iter()
            .filter(|e| e.name == "rect" && e.within.iter().any(|id| id == chart))
            .count()
    };
    assert_eq!(bars("chart-policy"), 4);
    assert_eq!(bars("chart-namespace"), 3);
    let rows = all
        .iter()
        .filter(|e| e.name == "tr" && e.attributes.contains_key("class"))
        .count();
    assert_eq!(rows, 6 + 1, "findings and the resolved one");
    assert!(
        by_id(&all, "findings")
            .text
            .contains("\"edit\" is not one of the allowed values")
    );
    // Self-contained: nothing is loaded from anywhere.
    for element in &all {
        assert!(
            !element.attributes.contains_key("src"),
            "{} loads a resource",
            element.name
        );
        assert_ne!(element.name, "link");
    }
}

/// A report-only policy denies what it could not read, so audit-scanner
/// records `fail`; the report shows it as not checked, never as a verdict.
#[test]
fn a_rule_that_could_not_read_is_not_checked_not_failed() {
    let report_json = serde_json::json!({
        "apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
        "metadata": {"name": "r", "namespace": "tenant-foo"},
        "scope": {"apiVersion": "etcd.aenix.io/v1alpha1", "kind": "EtcdCluster", "name": "etcd", "namespace": "tenant-foo"},
        "results": [{
            "source": "kubewarden", "policy": "clusterwide-upgrade-gate", "result": "fail", "severity": "info",
            "properties": {"policy-name": "upgrade-gate"},
            "message": "[upgrade-gate/etcd-adoption-not-checked] not checked: the snapshot target of migration 50 could not be read: Policy has not been granted access to Kubernetes v1/Secret resources."
        }, {
            "source": "kubewarden", "policy": "clusterwide-upgrade-gate", "result": "fail", "severity": "info",
            "properties": {"policy-name": "upgrade-gate"},
            "message": "[upgrade-gate/etcd-adoption-target] Secret cozy-velero/cozy-backups-creds does not exist"
        }]
    });
    let output: Value = serde_json::from_str(&report(
        &["-", "--format", "json"],
        &report_json.to_string(),
    ))
    .unwrap();
    let results: Vec<&str> = output["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["result"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["not-checked", "fail"], "{output}");
    assert_eq!(
        output["totals"]["byResult"],
        serde_json::json!({"fail": 1, "not-checked": 1})
    );
}
