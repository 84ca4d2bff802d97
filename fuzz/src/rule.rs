//! `rule`: structured requests built from the cases, through the native
//! case runner.

use admission::AdmissionRequest;
use arbitrary::Unstructured;
use capabilities::HostCapabilities;
use testkit::case::SettingsAnswer;

use crate::corpus::write_case;
use crate::mutation::{Built, build};
use crate::properties::{check_scope, check_settings_answer, evaluate_twice, fail};
use crate::target::{Target, target};

/// The `rule` target: one structured input.
pub fn rule(data: &[u8]) {
    let t = target();
    let mut u = Unstructured::new(data);
    let Ok(built) = build(&mut u, t) else {
        return;
    };
    if let Some(to) = &t.case_to {
        return write_case(t, to, built.request, built.settings, built.seed);
    }
    let name = t.policy.name();
    if let Err(problem) = run_rule(t, &built) {
        let detail = format!(
            "seed: {}\nsettings: {}\nrequest: {}",
            t.seeds[built.seed].file.display(),
            built.settings,
            built.request
        );
        fail("rule", name, &problem, &detail);
    }
}

fn run_rule(t: &Target, built: &Built) -> Result<(), String> {
    let Ok(request) = AdmissionRequest::from_value(built.request.clone()) else {
        // Not an AdmissionRequest: the host refuses it before any policy.
        return Ok(());
    };
    let native = t.policy.native();
    match native.validate_settings(&built.settings)? {
        SettingsAnswer::Refused(message) => {
            // Refused: policy-server would not start. Check the refusal.
            let payload = serde_json::to_vec(&built.settings).map_err(|e| e.to_string())?;
            let answer = t.policy.validate_settings(&payload);
            if check_settings_answer(t.policy.name(), &answer)? == SettingsAnswer::Accepted {
                return Err(
                    "the native runner says refused, validate_settings says valid".to_owned(),
                );
            }
            return if message.is_empty() {
                Err("settings refused without a message".to_owned())
            } else {
                Ok(())
            };
        }
        SettingsAnswer::Accepted => {}
    }
    let session = &t.seeds[built.seed].session;
    let first = evaluate_twice(|| {
        native.evaluate(
            &request,
            &built.settings,
            HostCapabilities::Replay(session.clone()),
        )
    })?;
    check_scope(t, built, &request, &first.response)
}
