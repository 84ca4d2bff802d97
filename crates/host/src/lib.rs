//! A policy-server-faithful host for Kubewarden waPC policies: the runtime
//! the users' CLI and the team's tools evaluate the modules with, and
//! nothing of the tests (the cases and how they are judged are testkit's;
//! Kubewarden's own programs are started by the e2e crate).
//!
//! It loads a built `.wasm` with wasmtime through the waPC host crates that
//! Kubewarden's policy-evaluator uses, validates settings before anything
//! else, runs each evaluation in a fresh instance, answers host calls as
//! the [`HostCapabilities`] say, and turns traps into the 500 rejections a
//! policy-server would send; [`fuel`] runs the same evaluation under a
//! fuel budget instead of a deadline.

pub mod fuel;
pub mod policy;

/// A cause kept as it came, from wasmtime, the waPC host or serde.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

pub use admission::{AdmissionRequest, AdmissionResponse};
pub use capabilities::{Evaluation, HostCapabilities};
pub use fuel::{FUEL_BUDGET, Metered};
pub use policy::{HostError, Policy, PolicyModule, WarmInstance, cache_compiled_modules};
pub use wasm_meta::Metadata;
