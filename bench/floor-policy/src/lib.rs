//! The cheapest policy the Kubewarden SDK can express: it registers the three
//! waPC functions every policy registers and accepts every request without
//! reading it. Built with the same profile as the real policies, it measures
//! what the host costs per evaluation (fresh instance, `wapc_init`, payload
//! transfer, response), so a policy's own cost is its time minus this one.
//! It keeps the toolchain's allocator (wasi-libc's `malloc`), as the
//! policies do.

use kubewarden_policy_sdk::wapc_guest::{self as guest, CallResult};
use kubewarden_policy_sdk::{accept_request, protocol_version_guest};

fn validate(_payload: &[u8]) -> CallResult {
    accept_request()
}

fn validate_settings(_payload: &[u8]) -> CallResult {
    Ok(br#"{"valid":true,"message":null}"#.to_vec())
}

/// waPC entry point: registers the handlers.
#[allow(unsafe_code)] // `no_mangle` is how the host finds `wapc_init`.
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    guest::register_function("validate", validate);
    guest::register_function("validate_settings", validate_settings);
    guest::register_function("protocol_version", protocol_version_guest);
}
