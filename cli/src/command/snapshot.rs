//! `snapshot-command`: the shell block that captures a cluster snapshot.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::Modules;
use crate::preflight;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub modules: Modules,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    print!(
        "{}",
        preflight::snapshot_command(&args.modules.load(root)?)?
    );
    Ok(ExitCode::SUCCESS)
}
