//! The validation library every cozystack policy is built on.
//!
//! A policy is a pure function from a [`Request`] and its settings to a
//! [`Verdict`]; this crate does the rest:
//!
//! - [`request`]: the admission request, read with serde_json in one pass,
//!   keeping of each object only the subtrees the rule reads ([`Reads`]);
//! - [`field`]: every value a rule reads, addressed by the path that
//!   messages quote;
//! - [`rule`]: stable rule ids and each policy's catalogue of them;
//! - [`verdict`] and [`warnings`]: findings tagged with their rule, refusals and the SDK's
//!   response, with warnings fitted to what the API server passes on;
//! - [`settings`]: exact settings validation and exemptions;
//! - [`apps`] and [`validators`]: platform facts and Kubernetes syntax
//!   (the releases the bundle knows are the `release` crate's);
//! - [`migration`]: the migration version as the platform chart reads it
//!   (with Sprig's `int`, the `sprig` crate's);
//! - [`first_seen`]: earlier entries of a list by key, without rescanning it;
//! - [`lookup`]: cluster reads through the host's context-aware capabilities;
//! - [`policy!`]: the waPC entry points, built only with the policy crate's
//!   `wapc` feature (the wasm modules); without it a policy is a plain
//!   library, which native tests and the browser build link.

pub mod apps;
pub mod field;
pub mod findings;
pub mod first_seen;
pub mod lookup;
pub mod migration;
pub mod request;
pub mod rule;
mod select;
pub mod settings;
mod strict;
pub mod validators;
pub mod verdict;
pub mod warnings;

pub use field::{Field, FieldError, FieldPath, Kind};
pub use findings::Findings;
pub use kubewarden_policy_sdk as sdk;
pub use kubewarden_policy_sdk::settings::Validatable;
pub use lookup::Cluster;
pub use request::{Operation, Request, User};
pub use rule::{Catalogue, Level, NOT_CHECKED_SUFFIX, Rule, is_not_checked};
pub use select::{Reads, Selection};
pub use serde_json::Value;
pub use settings::{Exemptions, RuleIds};
pub use verdict::{Finding, FindingKind, ParsedLine, Refusal, Review, Tag, Verdict};

use kubewarden_policy_sdk::wapc_guest::CallResult;
use serde::de::DeserializeOwned;

/// A policy's rule, as its crate exports it (`evaluate`): the verdict on a
/// request under the policy's settings, or the field that stopped it.
pub type Evaluate<S> = fn(&Request<'_>, &S) -> Result<Verdict, FieldError>;

/// Runs `rule` of `policy` over a `validate` payload, reading of the
/// objects what `reading` says and sending cluster reads to `cluster`.
///
/// A payload that is not an admission request, or a rule that stops on a
/// malformed field, is a 400 rejection naming the field. Settings were
/// validated when the policy-server started; if they no longer decode, that
/// is a host fault and surfaces as an error (500).
pub fn validate<S, R>(
    policy: &'static str,
    payload: &[u8],
    reading: Selection,
    cluster: &dyn Cluster,
    rule: R,
) -> CallResult
where
    S: DeserializeOwned + Default,
    R: FnOnce(&Request<'_>, &S) -> Result<Verdict, FieldError>,
{
    let malformed_request = |error: String| {
        let rule = Rule::malformed_request(policy);
        Verdict::malformed(Finding::new(rule, FieldPath::root(), error)).into_response()
    };
    let parsed = match request::read(payload, reading, cluster) {
        Ok(parsed) => parsed,
        Err(error) => return malformed_request(error.to_string()),
    };
    let settings: S = match parsed.settings {
        Some(raw) => settings::decode(raw.get().as_bytes())
            .map_err(|e| format!("settings no longer decode: {e}"))?,
        None => S::default(),
    };
    let answer = rule(&parsed.request, &settings);
    // The rule judged an object it could not read as absent: its answer
    // does not stand.
    if let Some(error) = parsed.request.unreadable() {
        return malformed_request(error.to_owned());
    }
    match answer {
        Ok(verdict) => verdict.into_response(),
        Err(error) => Verdict::malformed_field(policy, &error).into_response(),
    }
}

/// Defines the waPC entry points of a policy crate when its `wapc` feature
/// is on: `validate` runs the rule through [`validate`] over the subtrees
/// `$reads` names, with cluster reads going to the policy-server;
/// `validate_settings` checks `$settings` exactly; `protocol_version`
/// answers `v1`.
///
/// ```ignore
/// /// What the rule reads of each object.
/// pub const READS: shared::Selection = shared::Selection::Paths(&["metadata.labels"]);
/// shared::policy!(Settings, evaluate, READS);
/// ```
#[macro_export]
macro_rules! policy {
    ($settings:ty, $rule:path, $reads:expr) => {
        #[cfg(feature = "wapc")]
        mod __wapc {
            use super::*;

            fn validate(payload: &[u8]) -> $crate::sdk::wapc_guest::CallResult {
                $crate::validate::<$settings, _>(
                    env!("CARGO_PKG_NAME"),
                    payload,
                    $reads,
                    &$crate::lookup::Host,
                    $rule,
                )
            }

            fn validate_settings(payload: &[u8]) -> $crate::sdk::wapc_guest::CallResult {
                $crate::settings::validate_settings::<$settings>(env!("CARGO_PKG_NAME"), payload)
            }

            /// waPC entry point: registers the policy's handlers.
            #[allow(unsafe_code)] // `no_mangle` is how the host finds `wapc_init`.
            #[unsafe(no_mangle)]
            pub extern "C" fn wapc_init() {
                $crate::sdk::wapc_guest::register_function("validate", validate);
                $crate::sdk::wapc_guest::register_function("validate_settings", validate_settings);
                $crate::sdk::wapc_guest::register_function(
                    "protocol_version",
                    $crate::sdk::protocol_version_guest,
                );
            }
        }
    };
}
