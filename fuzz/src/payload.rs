//! `payload`: raw bytes into `shared::validate`, as the module's `validate`
//! entry point calls it.

use serde_json::Value;
use shared::lookup::Offline;
use testkit::case::SettingsAnswer;

use crate::corpus::write_case;
use crate::properties::{check_settings_answer, check_validate_answer, fail, same_answer};
use crate::target::{Target, target};

/// The `payload` target: `data` as the `validate` payload.
pub fn payload(data: &[u8]) {
    let t = target();
    if let Some(to) = &t.case_to {
        if let Ok(Value::Object(mut doc)) = serde_json::from_slice::<Value>(data) {
            let request = doc.remove("request").unwrap_or_default();
            let settings = doc.remove("settings").unwrap_or_default();
            write_case(t, to, request, settings, 0);
        } else {
            eprintln!("not a JSON payload: no case written");
        }
        return;
    }
    if let Err(problem) = run_payload(t, data) {
        let detail = format!("payload: {}", String::from_utf8_lossy(data));
        fail("payload", t.policy.name(), &problem, &detail);
    }
}

fn run_payload(t: &Target, data: &[u8]) -> Result<(), String> {
    let first = t.policy.validate(data, &Offline);
    let second = t.policy.validate(data, &Offline);
    if !same_answer(&first, &second) {
        return Err("two evaluations differ".to_owned());
    }
    if let Err(error) = &first {
        // policy-server validated the settings at start; settings it would
        // have refused may fail here (500), others must not.
        let settings = serde_json::from_slice::<Value>(data)
            .ok()
            .and_then(|mut v| v.get_mut("settings").map(Value::take));
        if let Some(settings) = settings {
            let bytes = serde_json::to_vec(&settings).map_err(|e| e.to_string())?;
            let answer = t.policy.validate_settings(&bytes);
            if check_settings_answer(t.policy.name(), &answer)? == SettingsAnswer::Accepted {
                return Err(format!(
                    "validate_settings accepts the settings, validate fails with them: {error}"
                ));
            }
        }
        return Ok(());
    }
    check_validate_answer(&first).map(|_| ())
}
