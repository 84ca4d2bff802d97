//! Requests built from every policy's cases, through the built modules
//! (`dist/*.wasm`) in our wasmtime host; the input picks the policy.
//! See `fuzz/src/wasm.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(init: cozystack_policies_fuzz::wasm::init(), |data: &[u8]| {
    cozystack_policies_fuzz::wasm::wasm(data);
});
