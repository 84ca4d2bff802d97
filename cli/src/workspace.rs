//! The policies of this repository: where their sources, metadata and
//! modules are.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use host::Metadata;

pub use layout::{Budget, PolicyDir};

/// What the CLI reads of a policy crate besides its paths: its metadata,
/// and from its `Cargo.toml` its version and benchmark budget.
pub trait PolicyCrate {
    fn metadata(&self) -> Result<Metadata>;
    /// `package.version` of the crate.
    fn crate_version(&self) -> Result<String>;
    /// The benchmark budgets of the policy: the bundle's, or what its
    /// `[package.metadata.cozystack-policies.budget]` allows instead.
    fn budget(&self) -> Result<Budget>;
}

impl PolicyCrate for PolicyDir {
    fn metadata(&self) -> Result<Metadata> {
        Ok(Metadata::from_yaml_file(&self.metadata_path())?)
    }

    fn crate_version(&self) -> Result<String> {
        Ok(self.manifest()?.version)
    }

    fn budget(&self) -> Result<Budget> {
        Ok(self.manifest()?.budget)
    }
}

/// `path` under `root`; as given when it is absolute or `root` is the
/// working directory, so output names files as the user wrote them.
pub fn resolve(root: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() || root == Path::new(".") {
        path.to_owned()
    } else {
        root.join(path)
    }
}

/// Every policy crate under `<root>/policies`, by name ([`layout::policies`]);
/// none is an error.
pub fn policies(root: &Path) -> Result<Vec<PolicyDir>> {
    let found = layout::policies(root)?;
    if found.is_empty() {
        bail!(
            "no policy crates under {}",
            root.join(layout::POLICIES).display()
        );
    }
    Ok(found)
}

/// Picks the named policies, or all of them when none are named.
pub fn select(all: Vec<PolicyDir>, names: &[String]) -> Result<Vec<PolicyDir>> {
    if names.is_empty() {
        return Ok(all);
    }
    names
        .iter()
        .map(|name| {
            all.iter()
                .find(|p| &p.name == name)
                .cloned()
                .with_context(|| format!("no policy called {name:?}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The policies named in a manifest's `[dependencies]` by their path
    /// (`../policies/<name>`).
    fn path_dependencies(root: &Path, manifest: &str) -> Vec<String> {
        let text = std::fs::read_to_string(root.join(manifest)).unwrap();
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        let mut names: Vec<String> = parsed["dependencies"]
            .as_table()
            .unwrap()
            .values()
            .filter_map(|dependency| dependency.get("path")?.as_str())
            .filter_map(|path| path.strip_prefix("../policies/"))
            .map(str::to_owned)
            .collect();
        names.sort();
        names
    }

    /// The lists of policies kept by hand name every policy of
    /// `policies/`: a new policy cannot go unfuzzed, missing from the
    /// playground, the chart's settings schemas or the workspace.
    #[test]
    fn every_hand_kept_list_names_every_policy() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let policies = layout::policy_names(root).unwrap();
        assert!(policies.len() > 1, "{policies:?}");
        for manifest in ["fuzz/Cargo.toml", "playground/Cargo.toml", "cli/Cargo.toml"] {
            assert_eq!(
                path_dependencies(root, manifest),
                policies,
                "{manifest} must depend on every policy of policies/"
            );
        }
        let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let workspace: toml::Table = toml::from_str(&text).unwrap();
        let mut members: Vec<String> = workspace["workspace"]["members"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|member| member.as_str()?.strip_prefix("policies/"))
            // A policy's own helper crates sit deeper (values-schema/tree).
            .filter(|member| !member.contains('/'))
            .map(str::to_owned)
            .collect();
        members.sort();
        assert_eq!(
            members, policies,
            "Cargo.toml's members must list every policy"
        );
    }

    /// One version per policy: the crate's, mirrored in the metadata (the
    /// tag `v<version>` and ArtifactHub read it) and in the release tag.
    #[test]
    fn every_policy_version_matches_its_crate() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let mut drift = Vec::new();
        for policy in policies(root).unwrap() {
            let version = policy.crate_version().unwrap();
            let metadata = policy.metadata().unwrap();
            if metadata.version() != Some(version.as_str()) {
                drift.push(format!(
                    "{}: {} is {:?}, Cargo.toml says {version}",
                    policy.name,
                    wasm_meta::metadata::VERSION_ANNOTATION,
                    metadata.version()
                ));
            }
            let tag = format!("{}/v{version}", policy.name);
            match metadata.annotations.get("com.github.release.tag") {
                Some(found) if *found != tag => drift.push(format!(
                    "{}: com.github.release.tag is {found:?}, expected {tag:?}",
                    policy.name
                )),
                _ => {}
            }
        }
        assert!(drift.is_empty(), "{}", drift.join("\n"));
    }
}
