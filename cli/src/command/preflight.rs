//! `preflight`: the Cozystack 1.6 upgrade checklist of a cluster snapshot.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use super::{Modules, snapshot};
use crate::workspace::resolve;
use crate::{check, preflight};

#[derive(clap::Args)]
pub struct Args {
    /// The snapshot (`snapshot-command` prints the command).
    #[arg(required = true)]
    pub snapshot: Vec<PathBuf>,
    /// `json` is what `report` renders (HTML included).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Exit 0 rather than 3 when no check failed but one was NOT CHECKED
    /// (the snapshot did not read what it needs): an incomplete run,
    /// accepted on purpose.
    #[arg(long)]
    pub allow_incomplete: bool,
    #[command(flatten)]
    pub modules: Modules,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let Args {
        snapshot: paths,
        format,
        allow_incomplete,
        modules,
    } = args;
    let bundle = modules
        .bundle(root)?
        .audited()
        .at_release(preflight::BEFORE_THE_UPGRADE, shared::Release::V1_5_4);
    let cluster = snapshot(root, &paths)?;
    let options = check::Options {
        cluster,
        paths: paths.iter().map(|p| resolve(root, p)).collect(),
        old: None,
        strict: false,
        vars: check::vars::Vars::load(&[], &[])?,
        format: match format {
            Format::Text => check::Format::Text,
            Format::Json => check::Format::Json,
        },
        fail_on: check::FailOn::Violation,
        baseline: None,
        write_baseline: None,
        checklist: true,
        allow_incomplete,
    };
    Ok(check::run(&options, &bundle)?.code())
}

/// Output of `preflight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}
