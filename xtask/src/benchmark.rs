//! What both benchmarks (`bench`, `bench-server`) share: the modules they
//! measure, the floor those are set against, and how a run ends against
//! the budgets.

use std::path::PathBuf;
use std::process::ExitCode;

/// The modules measured and the floor they are set against.
#[derive(clap::Args)]
pub struct Measured {
    #[arg(long, default_value = "dist")]
    pub dist: PathBuf,
    /// The floor module, built with the policies' profile.
    #[arg(
        long,
        default_value = "target/wasm32-wasip1/policy-opt/floor_policy.wasm"
    )]
    pub floor: PathBuf,
}

/// A benchmark's exit: a failure that names each budget broken, success
/// when none is (a figure above its budget is not a failure, however it
/// compares with the last run).
pub fn within_budget(broken: &[String]) -> ExitCode {
    if broken.is_empty() {
        return ExitCode::SUCCESS;
    }
    eprintln!("over budget:");
    for line in broken {
        eprintln!("  {line}");
    }
    ExitCode::FAILURE
}
