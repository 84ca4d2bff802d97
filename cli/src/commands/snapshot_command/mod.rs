//! `snapshot-command`: the shell block that captures a cluster snapshot
//! ([`script`]), its go-templates generated from what the rules read
//! ([`template`]).

mod script;
mod template;

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::bundle::Modules;

/// Print the shell block that captures a cluster snapshot for
/// `preflight` and `check --cluster`: a `kubectl get` of each kind the
/// bundle's policies read and its checklist judges, of each object only
/// the fields the rules read (credentials only as whether they are set),
/// and a record of how each read ended (forbidden, unavailable, refused,
/// timeout, not installed). It exits 1 when a read failed.
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
