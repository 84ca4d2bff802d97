//! `case-files`: a case split into the files `kwctl run` takes, so the same
//! cases run through kwctl in `e2e/kwctl.bats`.

use std::path::Path;

use anyhow::{Context, Result};
use bundle::case::{Case, Runner};

/// Writes `request.json`, `settings.json`, `session.yml` (when the case has
/// one) and `expect.json` (what `runner` must answer) into `out`.
pub fn export(case_path: &Path, out: &Path, runner: Runner) -> Result<()> {
    let case = Case::load(case_path)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let write = |name: &str, contents: String| {
        let path = out.join(name);
        std::fs::write(&path, contents).with_context(|| format!("writing {}", path.display()))
    };
    write("request.json", serde_json::to_string_pretty(&case.request)?)?;
    let settings = if case.settings.is_null() {
        serde_json::json!({})
    } else {
        case.settings.clone()
    };
    write("settings.json", serde_json::to_string(&settings)?)?;
    if !case.session.is_empty() {
        write("session.yml", serde_saphyr::to_string(&case.session)?)?;
    }
    write(
        "expect.json",
        serde_json::to_string_pretty(case.expectation(runner))?,
    )?;
    Ok(())
}
