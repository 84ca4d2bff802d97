//! The reading floor: a policy whose rule accepts everything, so that it
//! costs what every policy pays before its rule runs. It reads the request
//! through `shared` (the header with serde_json, `metadata.name` and
//! `metadata.namespace` of the objects, the settings) and answers through
//! the SDK's response, as the policies do.
//!
//! Next to the accept-all floor (`bench/floor-policy`, which reads nothing)
//! it measures what the shared foundation costs each policy; next to a
//! policy, what the policy's rule costs by itself. `bench-server` serves
//! all three and prints both ratios; `bench --floor` takes it in place of
//! the accept-all floor.

use serde::Deserialize;
use shared::{FieldError, Request, Selection, Validatable, Value, Verdict};

/// The settings of whichever policy the floor stands in for: decoded, as
/// every policy decodes its own, then ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(transparent)]
pub struct AnySettings(pub Value);

impl Validatable for AnySettings {
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// No subtree beyond the name and namespace every reading keeps.
pub const READS: Selection = Selection::Paths(&[]);

shared::policy!(AnySettings, evaluate, READS);

/// Accepts: everything this floor costs is in reading the request.
pub fn evaluate(_request: &Request<'_>, _settings: &AnySettings) -> Result<Verdict, FieldError> {
    Ok(Verdict::allow())
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::lookup::Offline;

    fn accepted(payload: &str) -> bool {
        let response = shared::validate::<AnySettings, _>(
            "reading-floor",
            payload.as_bytes(),
            READS,
            &Offline,
            evaluate,
        )
        .expect("a response");
        let response: Value = serde_json::from_slice(&response).expect("JSON");
        response["accepted"] == Value::Bool(true)
    }

    #[test]
    fn accepts_a_request_whatever_the_settings() {
        let request = r#"{"operation": "DELETE", "kind": {"kind": "ConfigMap"},
            "oldObject": {"metadata": {"name": "a", "labels": {"x": "y"}}}}"#;
        assert!(accepted(&format!(
            r#"{{"request": {request}, "settings": {{}}}}"#
        )));
        assert!(accepted(&format!(
            r#"{{"request": {request}, "settings": {{"ignore": ["missing-target"], "deny": ["x"]}}}}"#
        )));
    }

    #[test]
    fn reads_the_request_as_policies_do() {
        assert!(!accepted(r#"{"settings": {}}"#), "no request");
        assert!(!accepted(r#"{"request": {"operation": "PATCH"}}"#));
    }
}
