//! The policies of this repository: where their sources, metadata and
//! modules are.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use host::Metadata;

/// One policy crate under `policies/`.
#[derive(Debug, Clone)]
pub struct PolicyDir {
    /// Directory name, which is also the crate and module name.
    pub name: String,
    pub dir: PathBuf,
}

impl PolicyDir {
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

    pub fn metadata(&self) -> Result<Metadata> {
        Ok(Metadata::from_yaml_file(&self.metadata_path())?)
    }

    /// `package.version` of the crate.
    pub fn crate_version(&self) -> Result<String> {
        Ok(self.manifest()?.package.version)
    }

    /// The benchmark budgets of the policy: the bundle's, or what its
    /// `[package.metadata.cozystack-policies.budget]` allows instead.
    pub fn budget(&self) -> Result<Budget> {
        Ok(self
            .manifest()?
            .package
            .metadata
            .and_then(|m| m.cozystack_policies)
            .and_then(|c| c.budget)
            .unwrap_or_default())
    }

    fn manifest(&self) -> Result<Manifest> {
        let path = self.dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }
}

#[derive(serde::Deserialize)]
struct Manifest {
    package: Package,
}

#[derive(serde::Deserialize)]
struct Package {
    version: String,
    metadata: Option<PackageMetadata>,
}

#[derive(serde::Deserialize)]
struct PackageMetadata {
    #[serde(rename = "cozystack-policies")]
    cozystack_policies: Option<OurMetadata>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OurMetadata {
    /// The release profile; tools/build-modules reads it.
    #[serde(rename = "profile")]
    _profile: Option<String>,
    budget: Option<Budget>,
}

/// What a policy's module may cost, as the benchmarks report it. Every
/// policy has the bundle's budget unless its crate states a larger one
/// (values-schema carries every chart's schema, compiled).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Budget {
    /// Size of the module without its metadata section.
    pub module_bytes: usize,
    /// Median fresh-instance evaluation time over the floor's (`bench`).
    pub median_ratio: f64,
    /// Throughput through policy-server over the floor's (`bench-server`).
    pub server_ratio: f64,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            module_bytes: 250_000,
            median_ratio: 1.5,
            server_ratio: 0.9,
        }
    }
}

/// Every policy crate under `<root>/policies`, by name.
pub fn policies(root: &Path) -> Result<Vec<PolicyDir>> {
    let dir = root.join("policies");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.join("Cargo.toml").is_file() {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            found.push(PolicyDir { name, dir: path });
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    if found.is_empty() {
        bail!("no policy crates under {}", dir.display());
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
                    bundle::metadata::VERSION_ANNOTATION,
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
