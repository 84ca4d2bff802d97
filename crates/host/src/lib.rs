//! A policy-server-faithful host for Kubewarden waPC policies.
//!
//! It loads a built `.wasm` with wasmtime through the waPC host crates that
//! Kubewarden's policy-evaluator uses, validates settings before anything
//! else, runs each evaluation in a fresh instance, answers host calls from
//! recorded kwctl sessions, and turns traps into the 500 rejections a
//! policy-server would send; [`fuel`] runs the same evaluation under a
//! fuel budget instead of a deadline. [`policy_server`] starts Kubewarden's
//! own policy-server on loopback, so the same cases are also judged by it,
//! and [`one_shot`] posts the bodies it refuses before reading them whole.

pub mod answer;
pub mod front_door;
pub mod fuel;
pub mod one_shot;
pub mod policy;
pub mod policy_server;

/// A cause kept as it came, from wasmtime, the waPC host or serde.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

pub use admission::{AdmissionRequest, AdmissionResponse};
pub use capabilities::HostCapabilities;
pub use fuel::{FUEL_BUDGET, Metered};
pub use policy::{HostError, Policy, PolicyModule, WarmInstance, cache_compiled_modules};
pub use wasm_meta::Metadata;
