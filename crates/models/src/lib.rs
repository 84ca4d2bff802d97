//! Models of the cluster components this repository cannot run: Go
//! programs, built nowhere here (no Go module proxy). Each is written from
//! its source, every branch we depend on cited by file and line in a doc
//! comment and held by a test of its own, so a claim about what the
//! component does is the model's answer, not a guess:
//!
//! - [`audit_scanner`]: which policies Kubewarden's audit-scanner audits,
//!   on which resources of which namespaces, and why it skips or errors
//!   the others;
//! - [`label_selector`]: apimachinery's label selectors, as audit-scanner
//!   (a policy's `namespaceSelector`) and kube-controller-manager (RBAC
//!   aggregation) apply them.
//!
//! They read objects already fetched (a snapshot, a rendering): no client,
//! no network.

pub mod audit_scanner;
pub mod label_selector;
