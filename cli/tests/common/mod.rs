//! Running the CLI from the tests: from the repository root, as a CI job in
//! a checkout runs it, so files are named relative to the root.

// Each test binary includes this module and uses only part of it.
#![allow(dead_code)]

pub mod apiserver;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The repository root.
pub use layout::checkout as root;

/// The user's cache directory the tests give the CLI (compiled modules
/// end up there), so that no test writes into the real home.
pub fn cache_home() -> &'static Path {
    Path::new(concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"))
}

/// The CLI with `args`, run from the repository root.
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cozystack-policies"));
    command
        .current_dir(root())
        .args(args)
        .env("XDG_CACHE_HOME", cache_home());
    command
}

/// Runs the CLI with `input` on standard input.
pub fn run_with_stdin(args: &[&str], input: &str) -> Output {
    let mut child = command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// `check` over the README's example change, in JSON: what the main job
/// prints, and what `report` reads back.
pub const CHECK_THE_EXAMPLE_CHANGE: &[&str] = &[
    "check",
    "--format",
    "json",
    "--old",
    "examples/before",
    "examples/after",
];
