//! `wiring`: the first screen after `helm install`. Reads a snapshot
//! taken with `snapshot-command --wiring` and says, per policy of the
//! bundle, whether it is active, what its webhook covers, whether
//! audit-scanner audits it and on what (or why not, by the model of
//! audit-scanner's source, `models::audit_scanner`), whether the accounts
//! may read what it needs, and what reports it has ([`report`]).

mod report;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::manifests;

/// How the installed bundle is wired on the cluster, from a snapshot
/// taken with `snapshot-command --wiring`: per policy, active or not, the
/// resources its webhook covers, audited by audit-scanner or skipped and
/// why, what audit-scanner's and the PolicyServer's accounts may read,
/// the reports it has; and the PolicyServer, its disruption budget and
/// audit-scanner's last run.
///
/// Exits 0 when everything is wired, 1 when something is not (a policy
/// not active, audited nowhere though its kinds are served, a read an
/// account may not make), 3 when nothing failed but something could not
/// be told (the snapshot did not read it: INCOMPLETE), 2 on an error.
#[derive(clap::Args)]
pub struct Args {
    /// The snapshot (`snapshot-command --wiring` prints the command).
    #[arg(required = true)]
    pub snapshot: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// The Helm release the bundle is installed as (for the commands the
    /// report suggests).
    #[arg(long, default_value = "cozystack-policies")]
    pub release: String,
}

/// Output of `wiring`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let snapshot = manifests::snapshot(
        &args
            .snapshot
            .iter()
            .map(|p| layout::resolve(root, p))
            .collect::<Vec<_>>(),
        None,
    )?;
    let names: Vec<&str> = registry::names().collect();
    let wiring = report::Wiring::read(&snapshot, &names, &args.release);
    match args.format {
        Format::Text => print!("{}", wiring.text()),
        Format::Json => println!("{}", serde_json::to_string_pretty(&wiring)?),
    }
    Ok(ExitCode::from(wiring.exit_code()))
}
