//! The bundle's policies, by name, each run through the same functions its
//! waPC entry points call (`shared::settings::validate_settings` and
//! `shared::validate`), so the page judges with the policies' own code.
//! Which policies there are is the registry's list ([`linked`]).

use linked::{Linked, Settings, Visitor};
use shared::lookup::Offline;
use shared::sdk::response::ValidationResponse;
use shared::sdk::settings::SettingsValidationResponse;

pub use linked::NAMES;

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

/// Runs `name` over a `validate` payload after checking `settings`; `None`
/// for a name that is not one of [`NAMES`].
pub fn run(name: &str, settings: &[u8], payload: &[u8]) -> Option<Result<Answer, Fault>> {
    linked::visit(name, &mut Run { settings, payload })
}

/// One evaluation: settings first, as policy-server checks them at
/// start-up; then the request, with no cluster to ask (context-aware rules
/// keep their static checks and say so in a warning, as
/// `cozystack-policies check` does).
struct Run<'a> {
    settings: &'a [u8],
    payload: &'a [u8],
}

impl Visitor for Run<'_> {
    type Output = Result<Answer, Fault>;

    fn visit<S: Settings>(&mut self, policy: Linked<S>) -> Self::Output {
        let checked = shared::settings::validate_settings::<S>(policy.name, self.settings)
            .map_err(|e| Fault(e.to_string()))?;
        let checked: SettingsValidationResponse =
            serde_json::from_slice(&checked).map_err(|e| Fault(e.to_string()))?;
        if !checked.valid {
            return Ok(Answer::SettingsRefused(checked.message.unwrap_or_default()));
        }
        let response = shared::validate::<S, _>(
            policy.name,
            self.payload,
            policy.reads,
            &Offline,
            policy.evaluate,
        )
        .map_err(|e| Fault(e.to_string()))?;
        serde_json::from_slice(&response)
            .map(Answer::Validated)
            .map_err(|e| Fault(format!("cannot read the policy's response: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_policies_are_none() {
        assert!(run("nope", b"{}", b"{}").is_none());
    }
}
