//! `bench-server`: throughput and added latency through policy-server, held
//! to the budget.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::benchmark::{Measured, within_budget};
use crate::workspace;
use layout::resolve;

mod measure;

/// Throughput and latency through Kubewarden's own policy-server, each
/// policy next to the accept-all floor and the reading floor, under load
/// from `hey`.
#[derive(clap::Args)]
pub struct Args {
    /// Seconds of load per module and round.
    #[arg(long, default_value_t = 2.5)]
    pub seconds: f64,
    /// Rounds: more and shorter rounds make the paired ratio steadier
    /// on a machine whose speed drifts. The budget is judged on the
    /// median of at least 8.
    #[arg(long, default_value_t = 8)]
    pub rounds: usize,
    /// Concurrent connections.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    #[command(flatten)]
    pub measured: Measured,
    /// The reading floor: reads the request as every policy does and
    /// accepts, so that each policy's ratio splits into what the shared
    /// reading costs and what its rule costs.
    #[arg(
        long,
        default_value = "target/wasm32-wasip1/policy-opt/reading_floor.wasm"
    )]
    pub reading_floor: PathBuf,
    /// A Sigstore trust configuration for policy-server (offline start).
    #[arg(long, env = "SIGSTORE_TRUST_CONFIG")]
    pub sigstore_trust_config: Option<PathBuf>,
    /// Only these policies.
    pub policies: Vec<String>,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let Args {
        seconds,
        rounds,
        concurrency,
        measured: Measured { dist, floor },
        reading_floor,
        sigstore_trust_config,
        policies,
    } = args;
    let setup = measure::Setup {
        policy_server: e2e::policy_server::find_program("policy-server")
            .context("policy-server is not on PATH: `make setup` installs it")?,
        trust_config: sigstore_trust_config,
        dist: resolve(root, &dist),
        floor: resolve(root, &floor),
        reading_floor: resolve(root, &reading_floor),
        work: root.join("target/bench-server"),
    };
    let load = measure::Load {
        duration: std::time::Duration::from_secs_f64(seconds),
        rounds,
        concurrency,
    };
    let selected = workspace::select(workspace::policies(root)?, &policies)?;
    let report = measure::measure(&selected, &setup, &load)?;
    print!("{}", measure::render(&report));
    let below: Vec<String> = report
        .measurements
        .iter()
        .filter_map(measure::Measurement::below_budget)
        .collect();
    Ok(within_budget(&below))
}
