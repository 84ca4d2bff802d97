//! `snapshot-command`: the shell block that captures a cluster snapshot
//! ([`script`]).

mod script;

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::bundle::Modules;

/// Print the shell block that captures a cluster snapshot for
/// `preflight` and `check --cluster`: a `kubectl get` of each kind the
/// bundle's policies read and its checklist judges, a record of how
/// each read ended (forbidden, timeout, not installed), and Secrets
/// without their credentials. It exits 1 when a read failed.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub modules: Modules,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    print!(
        "{}",
        script::snapshot_command(&args.modules.load(root)?)?
    );
    Ok(ExitCode::SUCCESS)
}
