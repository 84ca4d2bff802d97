//! The policies' allocator (`shared/src/heap.rs`) in the modules of
//! `dist/`: a request far larger than the initial linear memory is judged
//! as its small self is, and an instance kept for many evaluations reuses
//! its memory instead of running out of it.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use host::case::{Case, case_files};
use host::{AdmissionRequest, HostCapabilities, PolicyModule};
use serde_json::{Value, json};

const POLICIES: [&str; 5] = [
    "harbor-retention",
    "no-delete",
    "oidc-config",
    "securitygroup-validity",
    "storageclass-immutable",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn module(policy: &str) -> PolicyModule {
    let path = root().join("dist").join(format!("{policy}.wasm"));
    PolicyModule::from_file(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run `make dist` first", path.display()))
}

/// The policy's benchmark case: a request of its own kind that it reads.
fn benchmark_case(policy: &str) -> Case {
    case_files(&root().join("policies").join(policy).join("tests/cases"))
        .unwrap()
        .iter()
        .map(|file| Case::load(file).unwrap())
        .find(|case| case.benchmark)
        .unwrap()
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
    for policy in POLICIES {
        let module = module(policy);
        let case = benchmark_case(policy);
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
    for policy in POLICIES {
        let module = module(policy);
        let configured = module.configure(json!({})).unwrap();
        let payload = configured.payload(&request).unwrap();
        let instance = configured.warm_instance().unwrap();
        // 4.4 GB in all: a heap that kept what it freed would run out of
        // 32-bit memory long before the last call.
        for call in 0..550 {
            assert!(instance.validate(&payload), "{policy}: call {call} failed");
        }
    }
}
