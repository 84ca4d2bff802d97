//! Structured requests built from the policy's YAML cases, through the native case runner.
//! The policy is `FUZZ_POLICY`'s (see `fuzz/src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(init: cozystack_policies_fuzz::init("rule"), |data: &[u8]| {
    cozystack_policies_fuzz::rule(data);
});
