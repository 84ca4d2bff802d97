//! How the bundle's tools read what they are given. Every tool that reads
//! YAML (the CLI, the test runners, the playground) reads it here, with the
//! limit of the kind of input it reads: [`yaml::Limit`].

pub mod yaml;
