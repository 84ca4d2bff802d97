//! Reads the report's inputs: JSON or multi-document YAML, holding
//! PolicyReports, OpenReports, `List`s of them (as `kubectl get -o json`
//! prints), the JSON of `check`, or a report's own JSON output.

use anyhow::{Context as _, Result, bail};
use reading::yaml::{self, Limit};
use serde_json::Value;

use super::identify::Ours;
use super::{message, output, policy_report};
use crate::check_json::CheckJson;
use crate::checklist::CheckOutcome;
use crate::finding::Finding;

/// What one input holds: findings, ours or not, and the upgrade checklist
/// of `preflight --format json`.
#[derive(Debug, Default)]
pub struct Input {
    pub findings: Vec<Finding>,
    pub checklist: Vec<CheckOutcome>,
}

/// Every finding in one input text, ours or not; `source` names the input
/// in errors.
#[cfg(test)]
pub fn read(text: &str, source: &str) -> Result<Vec<Finding>> {
    Ok(read_input(text, source, Ours::load()?)?.findings)
}

/// Every finding and the checklist of one input text.
pub fn read_input(text: &str, source: &str, ours: Ours) -> Result<Input> {
    let documents: Vec<Value> = match text.trim_start().chars().next() {
        Some('{' | '[') => {
            vec![serde_json::from_str(text).with_context(|| format!("reading {source} as JSON"))?]
        }
        _ => yaml::documents(text, Limit::Reports)
            .with_context(|| format!("reading {source} as YAML"))?,
    };
    let mut input = Input::default();
    for (index, document) in documents.iter().enumerate() {
        walk(document, ours, &mut input)
            .with_context(|| format!("{source}, document {}", index + 1))?;
    }
    Ok(input)
}

fn walk(value: &Value, ours: Ours, input: &mut Input) -> Result<()> {
    let out = &mut input.findings;
    match value {
        Value::Null => Ok(()),
        Value::Array(items) => items.iter().try_for_each(|item| walk(item, ours, input)),
        Value::Object(map) => {
            let field = |key| map.get(key).and_then(Value::as_str).unwrap_or_default();
            let (api_version, kind) = (field("apiVersion"), field("kind"));
            if policy_report::is_report(api_version, kind) {
                policy_report::read(value, ours, out)
            } else if kind == output::KIND {
                let (findings, checklist) = output::read_back(value)?;
                out.extend(findings);
                input.checklist.extend(checklist);
                Ok(())
            } else if CheckJson::is_check_json(map) {
                // `check --format json` and `preflight --format json`.
                let check = CheckJson::read(value)?;
                out.extend(
                    check
                        .findings
                        .into_iter()
                        .map(|finding| message::from_check(finding, ours)),
                );
                input.checklist.extend(check.checklist);
                Ok(())
            } else if let Some(items) = map.get("items").filter(|_| kind.ends_with("List")) {
                walk(items, ours, input)
            } else {
                bail!(
                    "{} {kind:?} is neither a PolicyReport, ClusterPolicyReport, \
                     openreports.io Report or ClusterReport, a List of them, nor the \
                     JSON of `check` or `report --format json`",
                    if api_version.is_empty() {
                        "kind"
                    } else {
                        api_version
                    }
                )
            }
        }
        other => bail!("expected an object or a list, found {other}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;
    use crate::finding::Outcome;

    const POLICY_REPORTS: &str = include_str!("../../../tests/data/report/policyreports.json");
    const OPEN_REPORTS: &str = include_str!("../../../tests/data/report/openreports.yaml");
    const CHECK: &str = include_str!("../../../tests/data/report/check.json");

    fn summary(f: &Finding) -> (String, &str, &str, String, &str) {
        (
            f.rule.to_string(),
            f.outcome().name(),
            f.severity.as_str(),
            f.object.label(),
            f.field.as_str(),
        )
    }

    #[test]
    fn a_kubectl_list_of_policy_reports_gives_every_failed_line() {
        let found = read(POLICY_REPORTS, "test").unwrap();
        let ours: Vec<_> = found.iter().filter(|f| f.ours).map(summary).collect();
        assert_eq!(
            ours,
            [
                (
                    "oidc-config/custom-config-exclusive".into(),
                    "fail",
                    "medium",
                    "Kubernetes tenant-root/dev".into(),
                    "spec.oidc.customConfig"
                ),
                (
                    "oidc-config/user-role".into(),
                    "fail",
                    "medium",
                    "Kubernetes tenant-root/dev".into(),
                    "spec.oidc.users[0].role"
                ),
                (
                    "chart-render/removed-version".into(),
                    "fail",
                    "info",
                    "Kubernetes tenant-root/dev".into(),
                    "spec.version"
                ),
                (
                    "chart-render/fixed-name".into(),
                    "fail",
                    "info",
                    "Etcd tenant-dev/db".into(),
                    "metadata.name"
                ),
                (
                    "no-delete/protected-delete".into(),
                    "fail",
                    "high",
                    "Pod tenant-dev/debug".into(),
                    "metadata.labels[\"platform.cozystack.io/no-delete\"]"
                ),
                (
                    "upgrade-readiness/installer-keep-pin".into(),
                    "fail",
                    "info",
                    "Namespace cozy-system".into(),
                    "metadata.annotations[\"helm.sh/resource-policy\"]"
                ),
            ]
        );
        let foreign: Vec<_> = found.iter().filter(|f| !f.ours).collect();
        assert_eq!(foreign.len(), 2, "pod-privileged and the errored policy");
        assert_eq!(foreign[0].rule.policy, "pod-privileged");
        assert_eq!(foreign[1].outcome(), Outcome::Error);
        assert_eq!(
            foreign[1].message,
            "internal error: policy-server returned 500"
        );
    }

    #[test]
    fn a_namespaced_policy_is_known_by_its_policy_name_property() {
        let found = read(POLICY_REPORTS, "test").unwrap();
        let guard = found.iter().find(|f| f.rule.policy == "no-delete").unwrap();
        assert_eq!(guard.deployed_as, "no-delete");
        assert_eq!(
            guard.fix,
            "kubectl label pods debug --namespace tenant-dev platform.cozystack.io/no-delete-"
        );
    }

    #[test]
    fn without_the_property_the_unique_name_is_unpacked() {
        let text = r#"{"apiVersion":"wgpolicyk8s.io/v1alpha2","kind":"PolicyReport",
            "scope":{"kind":"ConfigMap","namespace":"a-b","name":"c"},
            "results":[
              {"policy":"namespaced-a-b-no-delete","result":"fail","message":"blocked"},
              {"policy":"clusterwide-oidc-config","result":"fail","message":"spec.oidc: bad"},
              {"policy":"clusterwide-oidc-config","result":"pass"}]}"#;
        let found = read(text, "test").unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|f| (f.rule.policy.as_str(), f.ours))
            .collect();
        assert_eq!(names, [("no-delete", true), ("oidc-config", true)]);
        assert_eq!(
            found[1].rule.to_string(),
            "oidc-config/unknown",
            "a message of a bundle before rule ids"
        );
        assert_eq!(
            found[1].category, "Authentication",
            "from our metadata when the report has none"
        );
    }

    #[test]
    fn open_reports_in_yaml_are_recognised_by_their_tags() {
        let found = read(OPEN_REPORTS, "test").unwrap();
        let all: Vec<_> = found
            .iter()
            .map(|f| (f.rule.to_string(), f.deployed_as.as_str(), f.ours))
            .collect();
        assert_eq!(
            all,
            [
                (
                    "securitygroup-validity/duplicate-attachment".into(),
                    "cozy-sg",
                    true
                ),
                (
                    "securitygroup-validity/foreign-api-group".into(),
                    "cozy-sg",
                    true
                ),
                ("require-labels".into(), "require-labels", false),
                (
                    "upgrade-readiness/installer-keep-pin".into(),
                    "cozy-upgrade",
                    true
                ),
            ]
        );
        assert_eq!(found[1].field, "spec.attachments[2].apiGroup");
        assert_eq!(
            found[1].fix,
            "remove apiGroup or set it to apps.cozystack.io"
        );
        assert_eq!(found[3].object.label(), "Namespace cozy-system");
    }

    #[test]
    fn check_output_keeps_its_fields_and_rules() {
        let found = read(CHECK, "test").unwrap();
        let all: Vec<_> = found.iter().map(summary).collect();
        assert_eq!(
            all,
            [
                (
                    "no-delete/protected-delete".into(),
                    "fail",
                    "high",
                    "ConfigMap cozy-system/cozystack-version".into(),
                    "metadata.labels[\"platform.cozystack.io/no-delete\"]"
                ),
                (
                    "chart-render/external-without-tls".into(),
                    "warn",
                    "medium",
                    "Kafka tenant-dev/events".into(),
                    "spec.external"
                ),
                (
                    "oidc-config/custom-config-exclusive".into(),
                    "fail",
                    "medium",
                    "Kubernetes tenant-root/dev".into(),
                    "spec.oidc.customConfig"
                ),
            ]
        );
        assert_eq!(found[1].category, "Resource validation");
    }

    #[test]
    fn the_report_json_reads_back_as_its_findings() {
        let findings = read(POLICY_REPORTS, "test").unwrap();
        let report = super::super::output::Report::new(findings.clone(), Vec::new(), false);
        let again = read(&serde_json::to_string(&report).unwrap(), "test").unwrap();
        assert_eq!(again, findings);
    }

    #[test]
    fn other_objects_and_broken_input_are_errors_that_say_where() {
        let error = read("apiVersion: v1\nkind: ConfigMap\n", "in.yaml").unwrap_err();
        let text = format!("{error:#}");
        assert!(text.contains("in.yaml, document 1"), "{text}");
        assert!(
            text.contains("\"ConfigMap\" is neither a PolicyReport"),
            "{text}"
        );
        let error = read("{\"kind\": ", "in.json").unwrap_err();
        assert!(format!("{error:#}").contains("reading in.json as JSON"));
        let error = read(
            r#"{"apiVersion":"wgpolicyk8s.io/v1alpha2","kind":"PolicyReport","results":{}}"#,
            "x",
        )
        .unwrap_err();
        assert!(format!("{error:#}").contains("`results` is not a list"));
    }

    #[test]
    fn thousands_of_yaml_documents_are_read() {
        let report = "apiVersion: wgpolicyk8s.io/v1alpha2\nkind: PolicyReport\n\
                      scope: {kind: ConfigMap, name: c}\n\
                      results: [{policy: clusterwide-no-delete, result: fail, message: blocked}]\n";
        let text = vec![report; 3000].join("---\n");
        assert_eq!(read(&text, "x").unwrap().len(), 3000);
    }

    #[test]
    fn empty_inputs_have_no_findings() {
        assert!(read("[]", "x").unwrap().is_empty());
        assert!(read("", "x").unwrap().is_empty());
        assert!(
            read(r#"{"apiVersion":"v1","kind":"List","items":[]}"#, "x")
                .unwrap()
                .is_empty()
        );
    }
}
