//! `preflight`: the Cozystack 1.6 upgrade checklist of a cluster snapshot,
//! which is `check --cluster SNAPSHOT --checklist SNAPSHOT` with the
//! policies audit-scanner runs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use layout::resolve;

use crate::bundle::Modules;
use crate::checklist;
use crate::engine::{self, FailOn, Options};
use crate::manifests::{self, vars::Vars};

/// The Cozystack 1.6 upgrade checklist of a cluster snapshot: every
/// object of it judged as audit-scanner would (a CREATE, through the
/// policies with background audit), the policies' cluster reads
/// answered from it, and the findings sorted into the release notes'
/// checks: pass, fail, warn, not checked, not applicable or by hand.
///
/// The same as `check --cluster SNAPSHOT --checklist SNAPSHOT` with
/// those policies, reading the file once. Exits 1 when a check fails (a
/// finding of any rule fails the last check), 3 when none failed but one
/// was not checked (INCOMPLETE: the snapshot did not read what it needs),
/// 4 when the cluster has run the 1.6 migrations already, 0 when every
/// check was made and none failed, 2 on an error.
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
    let bundle = checklist::configure(modules.bundle(root)?.audited());
    let cluster = manifests::cluster(root, &paths, Some(&bundle.reads()?))?;
    let options = Options {
        cluster,
        paths: paths.iter().map(|p| resolve(root, p)).collect(),
        old: None,
        strict: false,
        vars: Vars::default(),
        format: match format {
            Format::Text => engine::Format::Text,
            Format::Json => engine::Format::Json,
        },
        fail_on: FailOn::Violation,
        baseline: None,
        write_baseline: None,
        checklist: true,
        allow_incomplete,
        judge_snapshot: true,
        // The preflight judges a cluster: it lists every finding.
        verbose: true,
    };
    Ok(engine::check(&options, &bundle)?.code())
}

/// Output of `preflight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}
