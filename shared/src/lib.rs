//! The validation library every cozystack policy is built on.
//!
//! A policy is a pure function from a [`Request`] and its settings to a
//! [`Verdict`]; this crate does the rest:
//!
//! - [`json`] and [`field`]: read only the fields a rule needs from the
//!   request, each addressed by the path that messages quote;
//! - [`request`]: the admission request (operation, kind, user, objects);
//! - [`verdict`]: findings, refusals and the SDK response;
//! - [`warnings`]: warnings fitted to what the API server passes on;
//! - [`message`]: message text without `core::fmt`;
//! - [`settings`]: exact settings validation and exemptions;
//! - [`catalogue`] and [`validators`]: platform facts and Kubernetes syntax;
//! - [`lookup`]: cluster reads through the host's context-aware capabilities;
//! - [`policy!`]: the waPC entry points;
//! - `heap` (wasm only): the global allocator, which touches no more
//!   linear memory than an evaluation allocates.

pub mod catalogue;
pub mod field;
#[cfg(any(target_arch = "wasm32", test))]
mod heap;
pub mod json;
pub mod lookup;
pub mod message;
pub mod request;
pub mod settings;
pub mod validators;
pub mod verdict;
pub mod warnings;

pub use field::{Field, FieldError, FieldPath, Items};
pub use kubewarden_policy_sdk as sdk;
pub use kubewarden_policy_sdk::settings::Validatable;
pub use request::{Operation, Request, User};
pub use settings::Exemptions;
pub use verdict::{Finding, Refusal, Review, Verdict};

use kubewarden_policy_sdk::wapc_guest::CallResult;
use serde::de::DeserializeOwned;

/// Runs `rule` over a `validate` payload.
///
/// An unreadable request, or a rule that stops on a malformed field, is a
/// 400 rejection naming the field. Settings were validated when the
/// policy-server started; if they no longer decode, that is a host fault and
/// surfaces as an error (500).
pub fn validate<S, R>(payload: &[u8], rule: R) -> CallResult
where
    S: DeserializeOwned + Default,
    R: FnOnce(&Request<'_>, &S) -> Result<Verdict, FieldError>,
{
    let parsed = match request::Payload::parse(payload) {
        Ok(parsed) => parsed,
        Err(error) => return Verdict::malformed(&error.0).into_response(),
    };
    let settings: S = match parsed.settings {
        Some(raw) => raw
            .deserialize()
            .map_err(|e| format!("settings no longer decode: {e}"))?,
        None => S::default(),
    };
    match rule(&parsed.request, &settings) {
        Ok(verdict) => verdict.into_response(),
        Err(error) => Verdict::malformed(&error).into_response(),
    }
}

/// Defines the waPC entry points of a policy crate: `validate` runs the
/// rule through [`validate`], `validate_settings` checks `$settings`
/// exactly, `protocol_version` answers `v1`.
///
/// ```ignore
/// shared::policy!(Settings, rule::evaluate);
/// ```
#[macro_export]
macro_rules! policy {
    ($settings:ty, $rule:path) => {
        fn __policy_validate(payload: &[u8]) -> $crate::sdk::wapc_guest::CallResult {
            $crate::validate::<$settings, _>(payload, $rule)
        }

        fn __policy_validate_settings(payload: &[u8]) -> $crate::sdk::wapc_guest::CallResult {
            $crate::settings::validate_settings::<$settings>(env!("CARGO_PKG_NAME"), payload)
        }

        /// waPC entry point: registers the policy's handlers.
        #[allow(unsafe_code)] // `no_mangle` is how the host finds `wapc_init`.
        #[unsafe(no_mangle)]
        pub extern "C" fn wapc_init() {
            $crate::sdk::wapc_guest::register_function("validate", __policy_validate);
            $crate::sdk::wapc_guest::register_function(
                "validate_settings",
                __policy_validate_settings,
            );
            $crate::sdk::wapc_guest::register_function(
                "protocol_version",
                $crate::sdk::protocol_version_guest,
            );
        }
    };
}
