//! A policy's metadata, from its crate to its module:
//!
//! - [`metadata`]: the `metadata.yml` of a policy crate, checked as
//!   Kubewarden reads it, and which requests its webhook rules select;
//! - [`sections`]: the custom section where `kwctl annotate` keeps it in
//!   the module, read and written byte for byte.

pub mod metadata;
pub mod sections;

pub use metadata::Metadata;
