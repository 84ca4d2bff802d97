//! Where the repository keeps its policies.
//!
//! A policy is a crate in a directory of its own under `policies/`; its
//! directory name is its crate, module and policy name. Every tool that
//! needs the list of policies (the CLI, its build script, the test runners,
//! the playground's tests, the checks of the lists kept by hand) asks
//! [`policies`], so a new policy directory is found everywhere at once.

use std::io;
use std::path::{Path, PathBuf};

/// The folder of the policy crates, under the repository's root.
pub const POLICIES: &str = "policies";

/// One policy crate under `policies/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyDir {
    /// Directory name, which is also the crate, module and policy name.
    pub name: String,
    pub dir: PathBuf,
}

impl PolicyDir {
    pub fn manifest_path(&self) -> PathBuf {
        self.dir.join("Cargo.toml")
    }

    pub fn metadata_path(&self) -> PathBuf {
        self.dir.join("metadata.yml")
    }

    pub fn readme_path(&self) -> PathBuf {
        self.dir.join("README.md")
    }

    pub fn cases_dir(&self) -> PathBuf {
        self.dir.join("tests/cases")
    }

    /// The file cargo writes for this crate (`no-delete` → `no_delete.wasm`).
    pub fn cargo_artifact(&self, wasm_dir: &Path) -> PathBuf {
        wasm_dir.join(format!("{}.wasm", self.name.replace('-', "_")))
    }

    /// The annotated module in a distribution directory.
    pub fn module_path(&self, dist: &Path) -> PathBuf {
        dist.join(format!("{}.wasm", self.name))
    }
}

/// Every policy crate under `<root>/policies` (a directory with a
/// `Cargo.toml`), sorted by name. An unreadable folder is an error; a
/// folder without policies is an empty list, which callers refuse.
pub fn policies(root: &Path) -> io::Result<Vec<PolicyDir>> {
    let folder = root.join(POLICIES);
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&folder)
        .map_err(|e| io::Error::new(e.kind(), format!("reading {}: {e}", folder.display())))?
    {
        let dir = entry?.path();
        if !dir.join("Cargo.toml").is_file() {
            continue;
        }
        if let Some(name) = dir.file_name().and_then(|n| n.to_str()) {
            found.push(PolicyDir {
                name: name.to_owned(),
                dir: dir.clone(),
            });
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// The names of [`policies`].
pub fn policy_names(root: &Path) -> io::Result<Vec<String>> {
    Ok(policies(root)?.into_iter().map(|p| p.name).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_directories_with_a_manifest_are_policies_and_they_come_sorted() {
        let root = std::env::temp_dir().join(format!("layout-test-{}", std::process::id()));
        let make = |name: &str, manifest: bool| {
            let dir = root.join(POLICIES).join(name);
            std::fs::create_dir_all(&dir).unwrap();
            if manifest {
                std::fs::write(dir.join("Cargo.toml"), "").unwrap();
            }
        };
        make("zeta", true);
        make("alpha", true);
        make("notes", false);
        std::fs::write(root.join(POLICIES).join("README.md"), "").unwrap();
        let names = policy_names(&root).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(names, ["alpha", "zeta"]);
    }

    #[test]
    fn a_missing_folder_is_an_error_that_names_it() {
        let error = policies(Path::new("/nonexistent-root")).unwrap_err();
        assert!(
            error.to_string().contains("/nonexistent-root/policies"),
            "{error}"
        );
    }

    #[test]
    fn paths_follow_the_crate_name() {
        let policy = PolicyDir {
            name: "no-delete".to_owned(),
            dir: PathBuf::from("/r/policies/no-delete"),
        };
        assert_eq!(
            policy.cargo_artifact(Path::new("/w")),
            Path::new("/w/no_delete.wasm")
        );
        assert_eq!(
            policy.module_path(Path::new("/d")),
            Path::new("/d/no-delete.wasm")
        );
        assert_eq!(
            policy.cases_dir(),
            Path::new("/r/policies/no-delete/tests/cases")
        );
    }
}
