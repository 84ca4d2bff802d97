//! Files the tasks write from the sources they follow (the chart's, the
//! policies' README tables): written where they differ, or checked, with
//! the same words for every task.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

/// Generated files, relative to the repository root.
#[derive(Debug, Default)]
pub struct Generated {
    pub files: Vec<(PathBuf, String)>,
    /// Files no source gives any more (the chart's templates of a policy
    /// that is gone).
    pub removed: Vec<PathBuf>,
}

impl Generated {
    /// Writes the files that differ under `root`; the paths written.
    pub fn write(&self, root: &Path) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        let removed = |path: &PathBuf| self.removed.contains(path);
        for path in self.drift(root).into_iter().filter(|p| !removed(p)) {
            let text = self
                .files
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, text)| text)
                .context("a drifted file is one of the generated ones")?;
            let target = root.join(&path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::write(&target, text)
                .with_context(|| format!("writing {}", target.display()))?;
            written.push(path);
        }
        for path in &self.removed {
            let target = root.join(path);
            std::fs::remove_file(&target)
                .with_context(|| format!("removing {}", target.display()))?;
            written.push(path.clone());
        }
        Ok(written)
    }

    /// The files whose committed text under `root` differs.
    pub fn drift(&self, root: &Path) -> Vec<PathBuf> {
        self.files
            .iter()
            .filter(|(path, text)| {
                std::fs::read_to_string(root.join(path)).ok().as_ref() != Some(text)
            })
            .map(|(path, _)| path.clone())
            .chain(self.removed.iter().cloned())
            .collect()
    }

    /// A task's end: with `check`, names each file that differs and exits 1
    /// if one does; else writes them and names them.
    pub fn commit(&self, root: &Path, check: bool) -> Result<ExitCode> {
        if check {
            let drift = self.drift(root);
            for path in &drift {
                eprintln!("out of date: {}", path.display());
            }
            return Ok(if drift.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        for path in self.write(root)? {
            println!("wrote {}", path.display());
        }
        Ok(ExitCode::SUCCESS)
    }
}
