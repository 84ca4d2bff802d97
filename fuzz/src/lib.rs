//! The fuzz targets' common part: the policies under fuzz, the properties
//! every answer must have, and the inputs each target builds.
//!
//! Every target works on one policy, named by `FUZZ_POLICY` (`tools/fuzz`
//! sets it; `FUZZ_POLICY=oidc-config cargo fuzz run rule` by hand), so three
//! binaries serve every policy and each policy keeps its own corpus.
//!
//! - `rule`: a case of the policy's `tests/cases/` (the seed corpus), picked
//!   and mutated as the input says, through the native case runner
//!   (`testkit::native`): the same settings check, payload and
//!   `shared::validate` as `cargo test`.
//! - `payload`: the input as the raw `validate` payload, into
//!   `shared::validate`, as the module's `validate` entry point calls it.
//! - `settings`: the input as the raw `validate_settings` payload; settings
//!   it accepts must then also work for `validate`.
//!
//! The properties ([`check_response`]): the answer is a `ValidationResponse`;
//! a rejection has a non-empty message, one finding per line, and a code of
//! 400, 403 or 422 (never 500: the rule must not fail on any request);
//! warnings stay within `shared::warnings`'s limits; a refusal of settings
//! names the policy and the problem; the same input gives the same answer
//! twice; a request the policy's rules do not match is allowed.
//!
//! Environment, read once: `FUZZ_POLICY` (required), `FUZZ_SEEDS_TO=<dir>`
//! (write the target's seed corpus from the cases and exit),
//! `FUZZ_DICT_TO=<file>` (write a libFuzzer dictionary of the cases' keys
//! and strings and exit), `FUZZ_CASE_TO=<file>` (run each input once and
//! write it as a YAML case instead of checking it: a failing input becomes a
//! regression case).

mod corpus;
mod mutation;
mod payload;
mod properties;
mod rule;
mod settings;
mod target;

#[cfg(feature = "wasm")]
pub mod wasm;

pub use corpus::init;
pub use payload::payload;
pub use properties::check_response;
pub use rule::rule;
pub use settings::settings;
pub use target::{Fuzzed, Target, registry, target};
