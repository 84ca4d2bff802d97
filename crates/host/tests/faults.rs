//! The host answers faulty guests the way policy-server does: a trap, a
//! guest error or a runaway loop becomes `allowed: false`, code 500,
//! `internal server error: ...`; a guest that cannot validate its settings
//! is refused before any evaluation.
//!
//! The same holds under the fuel-metered engine (`Policy::evaluate_metered`),
//! where the budget rather than the clock stops a runaway guest.
//!
//! The guests are tiny waPC modules written in WebAssembly text.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::{Duration, Instant};

use host::{AdmissionRequest, FUEL_BUDGET, HostCapabilities, HostError, Metered, PolicyModule};
use serde_json::json;

/// A guest that answers `validate_settings` with `{"valid":true}` and runs
/// `on_validate` when asked to `validate` (the only operation whose name is
/// 8 bytes long).
fn guest(on_validate: &str) -> String {
    let answer = r#"{"valid":true,"message":null}"#;
    format!(
        r#"(module
  (import "wapc" "__guest_response" (func $respond (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "{escaped}")
  (func (export "__guest_call") (param $op_len i32) (param $msg_len i32) (result i32)
    (if (i32.eq (local.get $op_len) (i32.const 8)) (then {on_validate}))
    (call $respond (i32.const 16) (i32.const {len}))
    (i32.const 1)))"#,
        escaped = answer.replace('"', "\\\""),
        len = answer.len(),
    )
}

fn request() -> AdmissionRequest {
    AdmissionRequest::from_value(json!({
        "uid": "fault-1",
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "operation": "CREATE",
        "userInfo": {},
        "object": {"metadata": {"name": "x"}}
    }))
    .unwrap()
}

fn compile(name: &str, text: &str) -> PolicyModule {
    PolicyModule::from_bytes(name.into(), &wat::parse_str(text).unwrap()).unwrap()
}

fn evaluate(module_text: &str) -> host::AdmissionResponse {
    let module = compile("fault", module_text);
    let policy = module.configure(json!({})).unwrap();
    policy
        .evaluate(&request(), HostCapabilities::offline())
        .response
}

fn evaluate_metered(module_text: &str) -> Metered {
    let module = compile("fault", module_text);
    let policy = module.configure(json!({})).unwrap();
    policy.evaluate_metered(&request(), HostCapabilities::offline())
}

#[test]
fn a_trap_is_a_500_rejection() {
    let response = evaluate(&guest("unreachable"));
    assert!(!response.allowed);
    assert_eq!(response.code(), Some(500));
    assert_eq!(response.uid, "fault-1");
    let message = response.message().unwrap();
    assert!(message.starts_with("internal server error: "), "{message}");
    // As in policy-server, the text is the guest failure with its wasm backtrace.
    assert!(message.contains("wasm backtrace"), "{message}");
}

#[test]
fn a_guest_error_is_a_500_rejection() {
    // Returning 0 without an error message is a failed call.
    let response = evaluate(&guest("(return (i32.const 0))"));
    assert!(!response.allowed);
    assert_eq!(response.code(), Some(500));
    assert!(
        response
            .message()
            .unwrap()
            .starts_with("internal server error: ")
    );
}

#[test]
fn a_runaway_guest_is_interrupted_at_the_deadline() {
    let started = Instant::now();
    let response = evaluate(&guest("(loop $forever (br $forever))"));
    let elapsed = started.elapsed();
    assert!(!response.allowed);
    assert_eq!(response.code(), Some(500));
    assert!(
        response.message().unwrap().contains("deadline exceeded"),
        "{:?}",
        response.message()
    );
    // Two epoch ticks of one second, as policy-server's default timeout.
    assert!(
        elapsed >= Duration::from_secs(1) && elapsed < Duration::from_secs(5),
        "{elapsed:?}"
    );
}

#[test]
fn settings_that_cannot_be_validated_are_refused() {
    let trapping = r#"(module
  (memory (export "memory") 1)
  (func (export "__guest_call") (param i32 i32) (result i32) unreachable))"#;
    let module = compile("fault", trapping);
    match module.configure(json!({})) {
        Err(HostError::InvalidSettings { message }) => {
            assert!(
                message.starts_with("Error invoking settings validation callback"),
                "{message}"
            )
        }
        other => panic!("expected refused settings, got {other:?}"),
    }
    assert!(matches!(
        module.configure(json!(["not", "a", "map"])),
        Err(HostError::SettingsShape { .. })
    ));
}

#[test]
fn each_evaluation_gets_a_fresh_instance() {
    // The guest counts calls in a global; a reused instance would see 2.
    let counting = r#"(module
  (import "wapc" "__guest_response" (func $respond (param i32 i32)))
  (memory (export "memory") 1)
  (global $calls (mut i32) (i32.const 0))
  (data (i32.const 16) "{\"valid\":true,\"message\":null}")
  (data (i32.const 64) "{\"accepted\":true}")
  (func (export "__guest_call") (param $op_len i32) (param i32) (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (if (i32.gt_s (global.get $calls) (i32.const 1)) (then unreachable))
    (if (i32.eq (local.get $op_len) (i32.const 8))
      (then (call $respond (i32.const 64) (i32.const 17)))
      (else (call $respond (i32.const 16) (i32.const 29))))
    (i32.const 1)))"#;
    let module = compile("counter", counting);
    let policy = module.configure(json!({})).unwrap();
    for _ in 0..3 {
        let response = policy
            .evaluate(&request(), HostCapabilities::offline())
            .response;
        assert!(response.allowed, "{response:?}");
    }
}

#[test]
fn a_runaway_guest_is_stopped_by_its_fuel_budget() {
    // The metering engine has no epoch deadline: only fuel can end the loop.
    let started = Instant::now();
    let metered = evaluate_metered(&guest("(loop $forever (br $forever))"));
    let elapsed = started.elapsed();
    let response = metered.evaluation.response;
    assert!(!response.allowed);
    assert_eq!(response.code(), Some(500));
    assert_eq!(response.uid, "fault-1");
    let message = response.message().unwrap();
    assert!(message.starts_with("internal server error: "), "{message}");
    assert!(message.contains("fuel budget exhausted"), "{message}");
    assert!(message.contains(&FUEL_BUDGET.to_string()), "{message}");
    assert_eq!(metered.fuel, FUEL_BUDGET);
    // The figure docs/performance.md derives the budget from.
    println!(
        "a hot loop burnt {FUEL_BUDGET} fuel in {elapsed:?}: {:.0} fuel/s",
        f64::from(u32::try_from(FUEL_BUDGET / 1000).unwrap()) * 1000.0 / elapsed.as_secs_f64()
    );
}

#[test]
fn a_metered_evaluation_answers_as_the_deadline_one() {
    let accepting = r#"(module
  (import "wapc" "__guest_response" (func $respond (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "{\"valid\":true,\"message\":null}")
  (data (i32.const 64) "{\"accepted\":true}")
  (func (export "__guest_call") (param $op_len i32) (param i32) (result i32)
    (if (i32.eq (local.get $op_len) (i32.const 8))
      (then (call $respond (i32.const 64) (i32.const 17)))
      (else (call $respond (i32.const 16) (i32.const 29))))
    (i32.const 1)))"#;
    let module = compile("accepting", accepting);
    let policy = module.configure(json!({})).unwrap();
    let metered = policy.evaluate_metered(&request(), HostCapabilities::offline());
    assert!(metered.evaluation.response.allowed, "{metered:?}");
    assert_eq!(
        metered.evaluation.response,
        policy
            .evaluate(&request(), HostCapabilities::offline())
            .response
    );
    assert!(metered.fuel > 0 && metered.fuel < 100, "{}", metered.fuel);

    let trapped = evaluate_metered(&guest("unreachable")).evaluation.response;
    assert_eq!(trapped.code(), Some(500));
    let message = trapped.message().unwrap();
    assert!(message.starts_with("internal server error: "), "{message}");
    assert!(!message.contains("fuel"), "{message}");
}

#[test]
fn a_guest_pointing_outside_its_memory_traps_without_a_host_panic() {
    // `validate` answers with bytes that run past its one page of memory.
    let metered = evaluate_metered(&guest(
        "(call $respond (i32.const 65530) (i32.const 100)) (return (i32.const 1))",
    ));
    let response = metered.evaluation.response;
    assert_eq!(response.code(), Some(500));
    let message = response.message().unwrap();
    assert!(message.contains("outside its memory"), "{message}");
}

#[test]
fn load_errors_keep_their_causes() {
    use std::error::Error as _;
    let missing = std::env::temp_dir().join("no-such-module-here.wasm");
    let Err(error) = PolicyModule::from_file(&missing) else {
        panic!("{} was loaded", missing.display());
    };
    let cause = error.source().expect("the io error is kept");
    assert_eq!(
        cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind),
        Some(std::io::ErrorKind::NotFound)
    );
    assert_eq!(
        testkit::with_causes(&error),
        format!("cannot read {}: {cause}", missing.display())
    );

    // A module whose import nothing provides: wasmtime refuses to link it.
    let unlinkable = wat::parse_str(r#"(module (import "nowhere" "f" (func)))"#).unwrap();
    let Err(error) = PolicyModule::from_bytes("garbage".to_owned(), &unlinkable) else {
        panic!("an unlinkable module was loaded");
    };
    assert!(matches!(error, HostError::Load { .. }), "{error:?}");
    assert!(error.source().is_some(), "wasmtime's reason is kept");
    assert!(
        testkit::with_causes(&error).starts_with("cannot load module garbage: "),
        "{}",
        testkit::with_causes(&error)
    );
}
