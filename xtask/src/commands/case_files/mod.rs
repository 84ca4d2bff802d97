//! `case-files`: a case split into the files `kwctl run` takes, to run one
//! case by hand (the kwctl suite, e2e/tests/kwctl.rs, writes the same files
//! through `testkit::case::Case::write_files`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use testkit::case::{Case, Runner};

use layout::resolve;

/// Split a case file into the files `kwctl run` takes, to run it by hand.
#[derive(clap::Args)]
pub struct Args {
    pub case: PathBuf,
    pub out: PathBuf,
    /// Whose expectation to write: host, kwctl or policy-server.
    #[arg(long, default_value = "kwctl")]
    pub runner: Runner,
}

/// Writes `request.json`, `settings.json`, `session.yml` (when the case has
/// one) and `expect.json` (what `runner` must answer) into `out`.
pub fn run(root: &Path, Args { case, out, runner }: Args) -> Result<ExitCode> {
    Case::load(&resolve(root, &case))?.write_files(&resolve(root, &out), runner)?;
    Ok(ExitCode::SUCCESS)
}
