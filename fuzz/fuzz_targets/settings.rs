//! Raw bytes as the `validate_settings` payload; accepted settings must work for `validate`.
//! The policy is `FUZZ_POLICY`'s (see `fuzz/src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(init: cozystack_policies_fuzz::init("settings"), |data: &[u8]| {
    cozystack_policies_fuzz::settings(data);
});
