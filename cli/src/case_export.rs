//! `case-files`: a case split into the files `kwctl run` takes, to run one
//! case by hand (the kwctl suite, e2e/tests/kwctl.rs, writes the same files).

use std::path::Path;

use anyhow::Result;
use bundle::case::{Case, Runner};

/// Writes `request.json`, `settings.json`, `session.yml` (when the case has
/// one) and `expect.json` (what `runner` must answer) into `out`.
pub fn export(case_path: &Path, out: &Path, runner: Runner) -> Result<()> {
    Case::load(case_path)?.write_files(out, runner)?;
    Ok(())
}
