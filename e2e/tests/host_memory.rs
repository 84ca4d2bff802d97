//! Linear memory in the modules of `dist/`: a request far larger than the
//! initial linear memory is judged as its small self is, and an instance
//! kept for many evaluations reuses its memory instead of running out of it.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use host::{AdmissionRequest, HostCapabilities, PolicyModule};
use serde_json::{Value, json};
use testkit::case::benchmark_case;

/// Every policy of the workspace, with its built module and benchmark case
/// (a request of its own kind that it reads).
fn policies() -> Vec<(String, PolicyModule, testkit::case::Case)> {
    let root = e2e::root();
    e2e::policies()
        .unwrap()
        .into_iter()
        .map(|name| {
            let module = e2e::load_module(&name).unwrap();
            let dir = root.join(layout::POLICIES).join(&name).join("tests/cases");
            let (_, case) = benchmark_case(&dir).unwrap();
            (name, module, case)
        })
        .collect()
}

/// `request` with an annotation of `bytes` bytes on each object it carries.
fn padded(request: &Value, bytes: usize) -> AdmissionRequest {
    let mut request = request.clone();
    for object in ["object", "oldObject"] {
        if let Some(metadata) = request[object].get_mut("metadata") {
            let annotations = metadata
                .as_object_mut()
                .unwrap()
                .entry("annotations")
                .or_insert_with(|| json!({}));
            annotations["example.org/padding"] = json!("x".repeat(bytes));
        }
    }
    AdmissionRequest::from_value(request).unwrap()
}

#[test]
fn a_request_larger_than_the_initial_memory_is_judged_like_a_small_one() {
    for (policy, module, case) in policies() {
        let configured = module.configure(case.settings.clone()).unwrap();
        let judge = |bytes| {
            configured
                .evaluate(&padded(&case.request, bytes), HostCapabilities::offline())
                .response
        };
        // 4 MiB per object: many times the 1 MiB stack and data a module
        // starts with, so the heap must grow the memory.
        let (small, large) = (judge(16), judge(4 << 20));
        assert_eq!(
            (large.allowed, &large.status, &large.warnings),
            (small.allowed, &small.status, &small.warnings),
            "{policy}"
        );
    }
}

#[test]
fn an_instance_kept_for_many_evaluations_reuses_its_memory() {
    // A kind no policy reads past the request header: each call is little
    // more than its 8 MiB payload arriving in a block of the heap.
    let request = AdmissionRequest::from_value(json!({
        "uid": "memory-1",
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "name": "big",
        "namespace": "tenant-foo",
        "operation": "CREATE",
        "userInfo": {"username": "alice"},
        "object": {"metadata": {"name": "big"}, "data": {"blob": "x".repeat(8 << 20)}}
    }))
    .unwrap();
    // One thread per policy: each instance is on its own, and the copying
    // keeps a core busy for a few seconds per policy.
    std::thread::scope(|scope| {
        for (policy, module, _) in policies() {
            let request = &request;
            scope.spawn(move || {
                let configured = module.configure(json!({})).unwrap();
                let payload = configured.payload(request).unwrap();
                let instance = configured
                    .warm_instance(HostCapabilities::offline())
                    .unwrap();
                // 4.4 GB in all: a heap that kept what it freed would run
                // out of 32-bit memory long before the last call.
                for call in 0..550 {
                    assert!(instance.validate(&payload), "{policy}: call {call} failed");
                }
            });
        }
    });
}
