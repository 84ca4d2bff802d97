//! The policies of this repository as the tasks read them: their folders
//! ([`layout`]), and of each its metadata, version and benchmark budget.

use std::path::Path;

use anyhow::{Context, Result, bail};
use host::Metadata;

pub use layout::{Budget, PolicyDir};

/// What the tasks read of a policy crate besides its paths: its metadata,
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
