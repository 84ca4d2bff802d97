//! No code: this crate's dependencies pin features the host crates' builds
//! and tests must resolve alike (see its Cargo.toml).
