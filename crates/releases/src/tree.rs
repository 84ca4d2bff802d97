//! A Cozystack release's files, in the layout of the reference data
//! (`../shared/data/README.md`), and a Cozystack source tree turned into it.
//!
//! The layout: `apps/<group>-<chart>/values.schema.json` (each application
//! chart's schema, `packages/<group>/<chart>/values.schema.json`
//! upstream), `application-definitions/<name>.yaml` (from
//! `packages/system/<name>-rd/cozyrds/`), and `charts/<group>/<chart>/`,
//! every chart as Helm loads it (symlinked subcharts as directories; tests,
//! hack, logos, Makefiles and image build contexts left out, the images'
//! `*.tag` files kept).

use std::path::{Path, PathBuf};

/// The groups whose charts serve applications.
pub const APP_GROUPS: &[&str] = &["apps", "extra"];

/// The groups of `packages/` a release's data keeps under `charts/`.
const CHART_GROUPS: &[&str] = &["apps", "extra", "library", "system"];

/// Names never copied from a source tree.
const LEFT_OUT: &[&str] = &["tests", "hack", "logos", ".git", "Makefile"];

/// A release's files in the reference data's layout.
#[derive(Debug, Clone)]
pub struct Tree {
    pub root: PathBuf,
}

/// Whether `dir` is a Cozystack source tree (it has `packages/`) rather
/// than the reference data's layout.
pub fn is_source(dir: &Path) -> bool {
    dir.join("packages").join("apps").is_dir()
}

impl Tree {
    /// The tree at `root`, which must have the data layout.
    pub fn at(root: &Path) -> Result<Tree, String> {
        for needed in ["apps", "application-definitions", "charts"] {
            if !root.join(needed).is_dir() {
                return Err(format!(
                    "{} is not in the reference data's layout: it has no {needed}/",
                    root.display()
                ));
            }
        }
        Ok(Tree {
            root: root.to_owned(),
        })
    }

    /// `charts/<chart>` (`apps/kubernetes`).
    pub fn chart(&self, chart: &str) -> PathBuf {
        self.root.join("charts").join(chart)
    }

    /// Whether the tree holds the system charts (`charts/system/`).
    pub fn has_system_charts(&self) -> bool {
        self.root.join("charts").join("system").is_dir()
    }

    /// The application charts' schema files: `(<group>-<chart>, text)`,
    /// sorted.
    pub fn schemas(&self) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        for dir in sorted_dir(&self.root.join("apps"))? {
            let name = file_name(&dir)?;
            out.push((name, read(&dir.join("values.schema.json"))?));
        }
        Ok(out)
    }

    /// The ApplicationDefinitions: `(file name, text)`, sorted.
    pub fn definitions(&self) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        for file in sorted_dir(&self.root.join("application-definitions"))? {
            if file.extension().is_some_and(|e| e == "yaml") {
                out.push((file_name(&file)?, read(&file)?));
            }
        }
        Ok(out)
    }

    /// The application charts, `<group>/<chart>`, sorted.
    pub fn app_charts(&self) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for group in APP_GROUPS {
            let dir = self.root.join("charts").join(group);
            if !dir.is_dir() {
                continue;
            }
            for chart in sorted_dir(&dir)? {
                if chart.join("Chart.yaml").is_file() {
                    out.push(format!("{group}/{}", file_name(&chart)?));
                }
            }
        }
        Ok(out)
    }
}

/// Writes the release files of the Cozystack source tree `source` into
/// `target` in the data layout; `target` must not exist yet.
pub fn from_source(source: &Path, target: &Path) -> Result<Tree, String> {
    if target.exists() {
        return Err(format!("{} exists already", target.display()));
    }
    let packages = source.join("packages");
    for group in CHART_GROUPS {
        let from = packages.join(group);
        if from.is_dir() {
            copy_tree(&from, &target.join("charts").join(group))?;
        }
    }
    copy_tree(
        &packages.join("core").join("platform"),
        &target.join("charts").join("core").join("platform"),
    )?;
    for group in APP_GROUPS.iter().filter(|g| packages.join(g).is_dir()) {
        for chart in sorted_dir(&packages.join(group))? {
            let schema = chart.join("values.schema.json");
            if schema.is_file() {
                let dir = target
                    .join("apps")
                    .join(format!("{group}-{}", file_name(&chart)?));
                create_dir(&dir)?;
                copy_file(&schema, &dir.join("values.schema.json"))?;
            }
        }
    }
    let definitions = target.join("application-definitions");
    create_dir(&definitions)?;
    let systems = packages.join("system");
    let systems = if systems.is_dir() {
        sorted_dir(&systems)?
    } else {
        Vec::new()
    };
    for system in systems {
        let cozyrds = system.join("cozyrds");
        if !file_name(&system)?.ends_with("-rd") || !cozyrds.is_dir() {
            continue;
        }
        for file in sorted_dir(&cozyrds)? {
            if file.extension().is_some_and(|e| e == "yaml") {
                copy_file(&file, &definitions.join(file_name(&file)?))?;
            }
        }
    }
    Tree::at(target)
}

/// Copies `from` into `to`, following symlinks, leaving out [`LEFT_OUT`]
/// and every image build context but the `*.tag` files.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    create_dir(to)?;
    for entry in sorted_dir(from)? {
        let name = file_name(&entry)?;
        if LEFT_OUT.contains(&name.as_str()) {
            continue;
        }
        // `metadata` follows symlinks: a symlinked subchart is copied whole.
        let metadata = std::fs::metadata(&entry)
            .map_err(|e| format!("cannot read {}: {e}", entry.display()))?;
        if metadata.is_dir() {
            if name == "images" {
                create_dir(&to.join("images"))?;
                for image in sorted_dir(&entry)? {
                    if image.extension().is_some_and(|e| e == "tag") {
                        copy_file(&image, &to.join("images").join(file_name(&image)?))?;
                    }
                }
            } else {
                copy_tree(&entry, &to.join(&name))?;
            }
        } else {
            copy_file(&entry, &to.join(&name))?;
        }
    }
    Ok(())
}

fn create_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

fn copy_file(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// The entries of `dir`, sorted.
pub fn sorted_dir(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    entries.sort();
    Ok(entries)
}

/// The text of `path`.
pub fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn file_name(path: &Path) -> Result<String, String> {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{} has no file name", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_tree_becomes_the_data_layout() {
        let base = std::env::temp_dir().join(format!("releases-tree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let source = base.join("source");
        let write = |path: &str, text: &str| {
            let path = source.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("packages/apps/postgres/Chart.yaml", "name: postgres\n");
        write("packages/apps/postgres/values.schema.json", "{}");
        write("packages/apps/postgres/templates/db.yaml", "x");
        write("packages/apps/postgres/tests/t.yaml", "x");
        write("packages/apps/postgres/images/postgres.tag", "v1");
        write(
            "packages/apps/postgres/images/postgres/Dockerfile",
            "FROM x",
        );
        write("packages/library/cozy-lib/Chart.yaml", "name: cozy-lib\n");
        write("packages/core/platform/Chart.yaml", "name: platform\n");
        write(
            "packages/system/postgres-rd/cozyrds/postgres.yaml",
            "kind: X\n",
        );
        write(
            "packages/system/postgres-rd/Chart.yaml",
            "name: postgres-rd\n",
        );
        std::fs::create_dir_all(source.join("packages/apps/postgres/charts")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            "../../../library/cozy-lib",
            source.join("packages/apps/postgres/charts/cozy-lib"),
        )
        .unwrap();
        assert!(is_source(&source));
        let tree = from_source(&source, &base.join("data")).unwrap();
        assert_eq!(tree.app_charts().unwrap(), ["apps/postgres"]);
        assert_eq!(tree.schemas().unwrap()[0].0, "apps-postgres");
        assert_eq!(tree.definitions().unwrap()[0].0, "postgres.yaml");
        let chart = tree.chart("apps/postgres");
        assert!(chart.join("templates/db.yaml").is_file());
        assert!(!chart.join("tests").exists());
        assert!(chart.join("images/postgres.tag").is_file());
        assert!(!chart.join("images/postgres").exists());
        #[cfg(unix)]
        assert!(chart.join("charts/cozy-lib/Chart.yaml").is_file());
        assert!(tree.has_system_charts());
        assert!(from_source(&source, &base.join("data")).is_err());
        let _ = std::fs::remove_dir_all(&base);
    }
}
