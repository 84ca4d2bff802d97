//! Raw bytes as the `validate` payload, into `shared::validate`.
//! The policy is `FUZZ_POLICY`'s (see `fuzz/src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(init: cozystack_policies_fuzz::init("payload"), |data: &[u8]| {
    cozystack_policies_fuzz::payload(data);
});
