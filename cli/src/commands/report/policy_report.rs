//! PolicyReports and ClusterPolicyReports (`wgpolicyk8s.io/v1alpha2`) and
//! the OpenReports kinds (`openreports.io/v1alpha1` Report, ClusterReport),
//! as Kubewarden's audit-scanner writes them: one report per scanned
//! object (`scope`), one result per policy, the rejection message in
//! `message`, the policy's unique name (`clusterwide-<name>`,
//! `namespaced-<ns>-<name>`) in `policy` and its plain name in the
//! `policy-name` property. Both kinds share that shape.

use anyhow::{Result, bail};
use serde_json::Value;

use super::identify::Ours;
use super::message::{self, Context};
use crate::finding::{Answered, Finding, Object};

/// Whether `object` is one of the four report kinds.
pub fn is_report(api_version: &str, kind: &str) -> bool {
    let group = api_version.split('/').next().unwrap_or_default();
    matches!(
        (group, kind),
        ("wgpolicyk8s.io", "PolicyReport" | "ClusterPolicyReport")
            | ("openreports.io", "Report" | "ClusterReport")
    )
}

/// The findings of one report: its `fail`, `warn` and `error` results.
pub fn read(report: &Value, ours: Ours, out: &mut Vec<Finding>) -> Result<()> {
    let object = subject(report);
    let Some(results) = report.get("results") else {
        return Ok(());
    };
    let Some(results) = results.as_array() else {
        bail!("{}: `results` is not a list", object.label());
    };
    for result in results {
        let answered = match text(result, "result") {
            "fail" => Answered::Violation,
            "warn" => Answered::Warning,
            "error" => Answered::Error,
            _ => continue,
        };
        let context = Context {
            deployed_as: deployed_name(result, ours),
            answered,
            severity: text(result, "severity").to_owned(),
            category: text(result, "category").to_owned(),
            object: result_subject(result).unwrap_or_else(|| object.clone()),
        };
        message::findings(&context, text(result, "message"), ours, out);
    }
    Ok(())
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The scanned object: `scope`, else the report's owner, else its own
/// namespace.
fn subject(report: &Value) -> Object {
    let metadata = report.get("metadata").unwrap_or(&Value::Null);
    let from = |value: &Value, namespace: &str| Object {
        api_version: text(value, "apiVersion").to_owned(),
        kind: text(value, "kind").to_owned(),
        namespace: namespace.to_owned(),
        name: text(value, "name").to_owned(),
    };
    if let Some(scope) = report.get("scope").filter(|s| s.is_object()) {
        return from(scope, text(scope, "namespace"));
    }
    let namespace = text(metadata, "namespace");
    match metadata
        .get("ownerReferences")
        .and_then(Value::as_array)
        .and_then(|owners| owners.first())
    {
        Some(owner) => from(owner, namespace),
        None => Object {
            namespace: namespace.to_owned(),
            name: text(metadata, "name").to_owned(),
            ..Object::default()
        },
    }
}

/// Reports of other tools may name the object per result (`resources`).
fn result_subject(result: &Value) -> Option<Object> {
    let first = result.get("resources")?.as_array()?.first()?;
    Some(Object {
        api_version: text(first, "apiVersion").to_owned(),
        kind: text(first, "kind").to_owned(),
        namespace: text(first, "namespace").to_owned(),
        name: text(first, "name").to_owned(),
    })
}

/// The policy's own name: the `policy-name` property audit-scanner writes,
/// else the unique name without its `clusterwide-` or `namespaced-<ns>-`
/// prefix (a namespace may contain dashes, so the one of our names it ends
/// with, if any).
fn deployed_name(result: &Value, ours: Ours) -> String {
    let properties = result.get("properties").unwrap_or(&Value::Null);
    let name = text(properties, "policy-name");
    if !name.is_empty() {
        return name.to_owned();
    }
    let unique = text(result, "policy");
    if let Some(name) = unique.strip_prefix("clusterwide-") {
        return name.to_owned();
    }
    if let Some(rest) = unique.strip_prefix("namespaced-") {
        let named = ours
            .all()
            .iter()
            .find(|p| rest.ends_with(&format!("-{}", p.name)));
        if let Some(policy) = named {
            return policy.name.to_owned();
        }
    }
    unique.to_owned()
}
