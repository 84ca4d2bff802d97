//! `bench`: each module's size and evaluation time next to the floor, held
//! to its budget.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::benchmark::{Measured, within_budget};
use crate::workspace;
use layout::resolve;

mod hostile;
mod measure;

/// Median evaluation time of each module next to the accept-all floor,
/// then each policy's slowest hostile case and its fuel.
#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value_t = 2000)]
    pub rounds: usize,
    #[command(flatten)]
    pub measured: Measured,
    /// Evaluations of each hostile case whose median is reported
    /// after the table.
    #[arg(long, default_value_t = 5)]
    pub hostile_runs: usize,
    /// Start every timed call from cold caches, as in policy-server;
    /// the hostile cases are skipped.
    #[arg(long)]
    pub cold: bool,
    /// Only these policies.
    pub policies: Vec<String>,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let Args {
        rounds,
        measured: Measured { dist, floor },
        hostile_runs,
        cold,
        policies,
    } = args;
    let dist = resolve(root, &dist);
    let floor = resolve(root, &floor);
    let floor = host::PolicyModule::from_file(&floor)
        .with_context(|| format!("reading {}; run `make floors` first", floor.display()))?;
    let selected = workspace::select(workspace::policies(root)?, &policies)?;
    let caches = if cold {
        measure::Caches::Cold
    } else {
        measure::Caches::Warm
    };
    let measurements = selected
        .iter()
        .map(|policy| measure::measure(policy, &dist, &floor, rounds, caches))
        .collect::<Result<Vec<_>>>()?;
    print!(
        "{}",
        measure::render(&measurements, floor.size(), rounds, caches)
    );
    if !cold {
        let mut hostile = Vec::new();
        for policy in &selected {
            hostile.extend(hostile::measure(policy, &dist, hostile_runs)?);
        }
        print!("{}", hostile::render(&hostile, hostile_runs));
    }
    let over: Vec<String> = measurements
        .iter()
        .flat_map(|m| m.over_budget(caches))
        .collect();
    Ok(within_budget(&over))
}
