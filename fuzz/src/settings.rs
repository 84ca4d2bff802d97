//! `settings`: raw settings documents into `validate_settings`; settings it
//! accepts must then work for `validate`.

use admission::AdmissionRequest;
use serde_json::Value;
use shared::lookup::Offline;
use testkit::case::SettingsAnswer;

use crate::corpus::write_case;
use crate::properties::{check_settings_answer, check_validate_answer, fail, same_answer};
use crate::target::{Target, target};

/// The `settings` target: `data` as the `validate_settings` payload.
pub fn settings(data: &[u8]) {
    let t = target();
    if let Some(to) = &t.case_to {
        let settings = serde_json::from_slice::<Value>(data).unwrap_or_default();
        let seed = data.len() % t.seeds.len();
        let request = t.seeds[seed].case.request.clone();
        return write_case(t, to, request, settings, seed);
    }
    if let Err(problem) = run_settings(t, data) {
        let detail = format!("settings: {}", String::from_utf8_lossy(data));
        fail("settings", t.policy.name(), &problem, &detail);
    }
}

fn run_settings(t: &Target, data: &[u8]) -> Result<(), String> {
    let first = t.policy.validate_settings(data);
    let second = t.policy.validate_settings(data);
    if !same_answer(&first, &second) {
        return Err("two answers differ".to_owned());
    }
    if check_settings_answer(t.policy.name(), &first)? != SettingsAnswer::Accepted {
        return Ok(());
    }
    // Accepted settings must work for `validate`, spliced in as sent.
    let text =
        std::str::from_utf8(data).map_err(|e| format!("accepted non-UTF-8 settings: {e}"))?;
    let seed = data.len() % t.seeds.len();
    let Ok(request) = AdmissionRequest::from_value(t.seeds[seed].case.request.clone()) else {
        return Ok(());
    };
    let request = serde_json::to_string(&request).map_err(|e| e.to_string())?;
    let payload = format!("{{\"request\":{request},\"settings\":{text}}}");
    let answer = t.policy.validate(payload.as_bytes(), &Offline);
    check_validate_answer(&answer).map(|_| ())
}
