//! The JSON `cozystack-policies check --json` prints (`check::Report`, one
//! object per finding). Kept apart so a change of that output touches only
//! this reader.

use anyhow::{Context as _, Result};
use serde::Deserialize;
use serde_json::Value;

use super::finding::{self, Context, Finding, Object, Outcome};
use super::message;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CheckFinding {
    policy: String,
    severity: String,
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    field: String,
    #[serde(default)]
    message: String,
}

/// Whether a JSON list is `check` output: objects with a policy and a
/// `violation`/`warning` severity.
pub fn is_check_output(items: &[Value]) -> bool {
    items.first().is_some_and(|first| {
        first.get("policy").is_some_and(Value::is_string)
            && matches!(
                first.get("severity").and_then(Value::as_str),
                Some("violation" | "warning")
            )
    })
}

pub fn read(items: &[Value], out: &mut Vec<Finding>) -> Result<()> {
    for (index, item) in items.iter().enumerate() {
        let check = CheckFinding::deserialize(item)
            .with_context(|| format!("check output, finding {index}"))?;
        let result = if check.severity == "warning" {
            Outcome::Warn
        } else {
            Outcome::Fail
        };
        let context = Context {
            deployed_as: check.policy.clone(),
            result,
            severity: String::new(),
            category: String::new(),
            object: Object {
                api_version: check.api_version,
                kind: check.kind,
                namespace: check.namespace,
                name: check.name,
            },
        };
        // `check` splits the path off itself; the line is rebuilt so the
        // tag in front of it, if any, is read the same way as in a report.
        let line = if check.field.is_empty() || message::parse(&check.message).tag.is_some() {
            check.message
        } else {
            format!("{}: {}", check.field, check.message)
        };
        finding::from_message(&context, &line, out);
    }
    Ok(())
}
