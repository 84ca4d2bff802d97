//! How the bundle's tools read what they are given. Every tool that reads
//! YAML (the CLI, the test runners, the playground) reads it here, with the
//! limit of the kind of input it reads: [`yaml::Limit`]; and where each
//! field of it is written: [`positions`]; a manifest read as the type that
//! models it, all of it: [`typed`].

pub mod positions;
pub mod typed;
pub mod yaml;
