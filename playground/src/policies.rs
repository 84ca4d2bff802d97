//! The bundle's policies, by name, each run through the same functions its
//! waPC entry points call (`shared::settings::validate_settings` and
//! `shared::validate`), so the page judges with the policies' own code.

use shared::lookup::Offline;
use shared::sdk::response::ValidationResponse;
use shared::sdk::settings::SettingsValidationResponse;
use shared::{FieldError, Reading, Request, Validatable, Verdict};

/// What a policy answered: its settings refused, or its verdict.
#[derive(Debug)]
pub enum Answer {
    SettingsRefused(String),
    Validated(ValidationResponse),
}

/// A policy's `validate` answer that the page cannot read: a host fault,
/// as policy-server would report it with a 500.
#[derive(Debug)]
pub struct Fault(pub String);

macro_rules! policies {
    ($($name:literal => $krate:ident),* $(,)?) => {
        /// Every policy of the bundle, by directory name.
        pub const NAMES: &[&str] = &[$($name),*];

        /// Runs `name` over a `validate` payload after checking `settings`;
        /// `None` for a name that is not one of [`NAMES`].
        pub fn run(name: &str, settings: &[u8], payload: &[u8]) -> Option<Result<Answer, Fault>> {
            match name {
                $($name => Some(answer::<$krate::Settings>(
                    $name, $krate::READS, $krate::evaluate, settings, payload,
                )),)*
                _ => None,
            }
        }
    };
}

policies! {
    "chart-render" => chart_render,
    "harbor-retention" => harbor_retention,
    "no-delete" => no_delete,
    "oidc-config" => oidc_config,
    "securitygroup-validity" => securitygroup_validity,
    "storageclass-immutable" => storageclass_immutable,
    "upgrade-gate" => upgrade_gate,
    "upgrade-readiness" => upgrade_readiness,
    "values-schema" => values_schema,
}

/// Settings first, as policy-server checks them at start-up; then the
/// request, with no cluster to ask (context-aware rules keep their static
/// checks and say so in a warning, as `cozystack-policies check` does).
fn answer<S>(
    name: &'static str,
    reading: Reading,
    rule: fn(&Request<'_>, &S) -> Result<Verdict, FieldError>,
    settings: &[u8],
    payload: &[u8],
) -> Result<Answer, Fault>
where
    S: serde::de::DeserializeOwned + Default + Validatable,
{
    let checked = shared::settings::validate_settings::<S>(name, settings)
        .map_err(|e| Fault(e.to_string()))?;
    let checked: SettingsValidationResponse =
        serde_json::from_slice(&checked).map_err(|e| Fault(e.to_string()))?;
    if !checked.valid {
        return Ok(Answer::SettingsRefused(checked.message.unwrap_or_default()));
    }
    let response = shared::validate::<S, _>(name, payload, reading, &Offline, rule)
        .map_err(|e| Fault(e.to_string()))?;
    serde_json::from_slice(&response)
        .map(Answer::Validated)
        .map_err(|e| Fault(format!("cannot read the policy's response: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_directory_is_registered() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let found = layout::policy_names(std::path::Path::new(root)).unwrap();
        assert_eq!(found, NAMES);
    }

    #[test]
    fn unknown_policies_are_none() {
        assert!(run("nope", b"{}", b"{}").is_none());
    }
}
