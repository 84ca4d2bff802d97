//! What the bundle is made of besides its rules, for every host-side tool:
//!
//! - [`metadata`] and [`wasm_sections`]: a policy's `metadata.yml`, and its
//!   annotation into a module as `kwctl annotate` writes it;
//! - [`case`]: test cases as data, one YAML file per case, judged the same
//!   way whichever runner evaluated them;
//! - [`admission`], [`replay`] and [`capabilities`]: admission requests and
//!   responses as policy-server exchanges them, kwctl's recorded sessions,
//!   and how host calls are answered from them;
//! - [`hostile`]: hostile requests built from each policy's cases, the
//!   same bytes for every runner;
//! - [`native`]: every case of a policy against its rule function, without
//!   wasm;
//! - [`snapshot`]: a cluster as a snapshot of its objects, answering
//!   policies' Kubernetes reads offline;
//! - [`rules`]: the rule ids a policy's findings may carry.

pub mod admission;
pub mod capabilities;
pub mod case;
pub mod hostile;
pub mod metadata;
pub mod native;
pub mod replay;
pub mod rules;
pub mod settings_audit;
pub mod snapshot;
pub mod typed;
pub mod wasm_sections;

pub use admission::{AdmissionRequest, AdmissionResponse, Operation};
pub use capabilities::{HostCalls, HostCapabilities};
pub use metadata::Metadata;
