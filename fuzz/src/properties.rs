//! The properties every answer must have ([`check_response`], and the
//! settings and `validate` answers), and how a run stops on one that fails.

use admission::{AdmissionRequest, AdmissionResponse};
use capabilities::Evaluation;
use serde_json::Value;
use shared::sdk::response::ValidationResponse;
use shared::sdk::settings::SettingsValidationResponse;
use shared::sdk::wapc_guest::CallResult;
use testkit::case::SettingsAnswer;
use wasm_meta::metadata::Metadata;

use crate::mutation::Built;
use crate::target::Target;

/// The properties every `validate` answer has; `Err` says which failed.
pub fn check_response(response: &AdmissionResponse) -> Result<(), String> {
    let message = response.message();
    let code = response.code();
    if response.allowed {
        if message.is_some() || code.is_some() {
            return Err(format!(
                "allowed with a message or code: {message:?} {code:?}"
            ));
        }
    } else {
        let Some(message) = message else {
            return Err(format!("rejected without a message (code {code:?})"));
        };
        if message.trim().is_empty() {
            return Err(format!("rejected with an empty message (code {code:?})"));
        }
        if let Some(line) = message.lines().find(|l| l.trim().is_empty()) {
            return Err(format!(
                "rejection message has an empty line {line:?}: {message:?}"
            ));
        }
        match code {
            Some(400 | 403 | 422) => {}
            Some(500) => return Err(format!("the policy failed (500): {message}")),
            other => {
                return Err(format!(
                    "rejected with code {other:?}, not 400, 403 or 422: {message}"
                ));
            }
        }
    }
    testkit::case::check_warning_limits(response.warnings())
}

/// The properties of a `validate_settings` answer, parsed.
pub(crate) fn check_settings_answer(
    policy: &str,
    answer: &CallResult,
) -> Result<SettingsAnswer, String> {
    let bytes = match answer {
        Ok(bytes) => bytes,
        Err(e) => return Err(format!("validate_settings failed: {e}")),
    };
    let response: SettingsValidationResponse = serde_json::from_slice(bytes).map_err(|e| {
        format!(
            "validate_settings answered no SettingsValidationResponse ({e}): {}",
            String::from_utf8_lossy(bytes)
        )
    })?;
    if response.valid {
        return Ok(SettingsAnswer::Accepted);
    }
    let message = response.message.unwrap_or_default();
    let prefix = format!("{policy} settings: ");
    match message.strip_prefix(&prefix) {
        Some(problem) if !problem.trim().is_empty() => Ok(SettingsAnswer::Refused(message)),
        _ => Err(format!(
            "a settings refusal must read `{prefix}<problem>`: {message:?}"
        )),
    }
}

/// A `validate` answer as policy-server maps it, its properties checked.
pub(crate) fn check_validate_answer(answer: &CallResult) -> Result<AdmissionResponse, String> {
    let bytes = answer
        .as_ref()
        .map_err(|e| format!("validate failed (500): {e}"))?;
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("validate answered no JSON ({e})"))?;
    if !value.get("accepted").is_some_and(Value::is_boolean) {
        return Err(format!("validate answered without `accepted`: {value}"));
    }
    let response: ValidationResponse = serde_json::from_value(value)
        .map_err(|e| format!("validate answered no ValidationResponse ({e})"))?;
    let response = AdmissionResponse::from_validation("fuzz", response);
    check_response(&response)?;
    Ok(response)
}

pub(crate) fn same_answer(first: &CallResult, second: &CallResult) -> bool {
    match (first, second) {
        (Ok(a), Ok(b)) => a == b,
        (Err(a), Err(b)) => a.to_string() == b.to_string(),
        _ => false,
    }
}

/// Stops the run on a property failure: libFuzzer keeps the input as a
/// crash artifact (`tools/fuzz case` turns it into a YAML case).
pub(crate) fn fail(target: &str, policy: &str, problem: &str, detail: &str) -> ! {
    eprintln!("\n=== {target}/{policy}: property failed: {problem}\n{detail}\n");
    panic!("{target}/{policy}: {problem}");
}

/// Evaluates a request twice through one runner: the answer must be
/// well-formed and the same both times, host calls included, as a
/// policy-server that rehydrates a fresh instance per request would see.
pub(crate) fn evaluate_twice(evaluate: impl Fn() -> Evaluation) -> Result<Evaluation, String> {
    let first = evaluate();
    check_response(&first.response)?;
    let second = evaluate();
    if first.response != second.response {
        return Err(format!(
            "two evaluations differ:\n{:?}\n{:?}",
            first.response, second.response
        ));
    }
    if first.host_calls != second.host_calls {
        return Err("two evaluations made different host calls".to_owned());
    }
    Ok(first)
}

/// A rejection of a request that no rule of the policy matches is a
/// finding: a webhook never sends it, kwctl does. policy-server itself
/// refuses JSON nested deeper than 128 levels, so such a request never
/// reaches a policy, in scope or not.
pub(crate) fn check_scope(
    t: &Target,
    built: &Built,
    request: &AdmissionRequest,
    response: &AdmissionResponse,
) -> Result<(), String> {
    if !response.allowed && depth(&built.request) < 128 && out_of_scope(&t.metadata, request) {
        return Err(format!(
            "rejected a request whose group and operation no rule of the policy matches (a webhook never sends it, kwctl does): {:?}",
            response.message()
        ));
    }
    Ok(())
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Whether no rule of the policy matches the request's group and
/// operation, whatever its resource and version are called (audit-scanner
/// sends the kind as the resource, and rules judge kinds, not versions).
/// Only for a request whose `kind.group` is its `resource.group`, as the
/// API server sends them.
fn out_of_scope(metadata: &Metadata, request: &AdmissionRequest) -> bool {
    if request.kind.group != request.resource.group {
        return false;
    }
    !metadata.rules.iter().any(|rule| {
        let mut probe = request.clone();
        probe.sub_resource = None;
        rule.api_versions.iter().any(|version| {
            probe.resource.version = version.clone();
            rule.resources.iter().any(|resource| {
                probe.resource.resource = resource.clone();
                rule.matches(&probe)
            })
        })
    })
}
