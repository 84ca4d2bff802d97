//! Test cases as data, and how every runner's answer to them is judged:
//!
//! - [`case`]: one YAML file per case, judged the same way whichever
//!   runner evaluated it (native, our host, kwctl, policy-server);
//! - [`hostile`]: hostile requests built from each policy's cases, the
//!   same bytes for every runner;
//! - [`native`]: every case of a policy against its rule function, without
//!   wasm;
//! - [`rules`]: the rule ids a policy's findings may carry;
//! - [`settings_audit`]: every setting of a policy has a case that names it.
//!
//! The formats the cases use live in their own crates: admission requests
//! and responses in `admission`, recorded sessions and host calls in
//! `capabilities`, policy metadata in `wasm_meta`.

pub mod case;
pub mod hostile;
pub mod native;
pub mod rules;
pub mod settings_audit;

/// An error and each of its causes on one line, `: `-separated, as
/// anyhow's `{:#}` prints them: for callers that keep errors as text.
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(error) = cause {
        text.push_str(": ");
        text.push_str(&error.to_string());
        cause = error.source();
    }
    text
}
