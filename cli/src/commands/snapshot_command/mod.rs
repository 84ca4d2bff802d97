//! `snapshot-command`: the shell block that captures a cluster snapshot
//! ([`script`]), its go-templates generated from what the rules read
//! ([`template`]), with `--wiring` also how the installed bundle is wired
//! ([`wiring`]).

mod script;
mod template;
mod wiring;

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::bundle::Modules;

/// Print the shell block that captures a cluster snapshot for
/// `preflight` and `check --cluster`: a `kubectl get` of each kind the
/// bundle's policies read and its checklist judges, of each object only
/// the fields the rules read (credentials only as whether they are set),
/// and a record of how each read ended (forbidden, unavailable, refused,
/// timeout, not installed). It exits 1 when a read failed. With
/// `--wiring`, the snapshot also holds what `wiring` reads: the installed
/// policies, their webhooks, the PolicyServer, what the cluster serves,
/// what audit-scanner's and the PolicyServer's accounts may read, the
/// last audit run and the reports.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub modules: Modules,
    #[command(flatten)]
    pub place: wiring::Where,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    print!(
        "{}",
        script::snapshot_command(&args.modules.load(root)?, &args.place)?
    );
    Ok(ExitCode::SUCCESS)
}
