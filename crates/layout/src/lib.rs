//! Where the repository keeps its policies.
//!
//! A policy is a crate in a directory of its own under `policies/`; its
//! directory name is its crate, module and policy name. Every tool that
//! needs the list of policies (the registry's build scripts, the CLI's, the
//! xtask, the test runners) asks [`policies`], so a new policy directory is
//! found everywhere at once; the shell scripts ask its `policies` binary. [`PolicyDir::manifest`] is
//! the one reader of what a policy's `Cargo.toml` says to the tools, and
//! [`resolve`] places a path a user gives under the repository's root.

use std::io;
use std::path::{Path, PathBuf};

/// The folder of the policy crates, under the repository's root.
pub const POLICIES: &str = "policies";

/// The checkout these crates were compiled from (`crates/layout/../..`):
/// the root the tests and the team's tools read the policies, cases and
/// documents of. A path on the machine that built them; what users run
/// takes its root from its arguments.
pub fn checkout() -> PathBuf {
    let layout = Path::new(env!("CARGO_MANIFEST_DIR"));
    layout
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| layout.to_owned(), Path::to_owned)
}

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

    /// The Helm template of the policy's ClusterAdmissionPolicy: its
    /// traffic (selectors, conditions), timeout and failure policy, decided
    /// beside its rule; `make chart` writes it into the chart's
    /// `templates/policies/<policy>.yaml`.
    pub fn admission_template_path(&self) -> PathBuf {
        self.dir.join("cluster-admission-policy.yaml")
    }

    pub fn cases_dir(&self) -> PathBuf {
        self.dir.join("tests/cases")
    }

    /// Reads the crate's `Cargo.toml`.
    pub fn manifest(&self) -> io::Result<Manifest> {
        let path = self.manifest_path();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("reading {}: {e}", path.display())))?;
        Manifest::parse(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("parsing {}: {e}", path.display()),
            )
        })
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

/// The profile a policy's module is built with unless its manifest names
/// another (`[package.metadata.cozystack-policies] profile`).
pub const DEFAULT_PROFILE: &str = "policy";

/// What the tools read of a policy's `Cargo.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// `package.version`.
    pub version: String,
    /// The release profile tools/build-modules builds the module with.
    pub profile: String,
    /// The benchmarks' budget for the module.
    pub budget: Budget,
}

/// What a policy's module may cost, as the benchmarks report it. Every
/// policy has the bundle's budget unless its crate states a larger one
/// (values-schema carries every chart's schema, compiled).
///
/// The budgets are guards, not goals: a benchmark fails only below them,
/// and the figures above them move by ±5 % between runs on a shared
/// machine, so work to raise a figure that is within budget is not asked.
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
            module_bytes: 300_000,
            median_ratio: 1.6,
            server_ratio: 0.85,
        }
    }
}

#[derive(serde::Deserialize)]
struct CargoToml {
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

#[derive(Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OurMetadata {
    profile: Option<String>,
    budget: Option<Budget>,
}

impl Manifest {
    /// Reads a policy's manifest from its text.
    pub fn parse(text: &str) -> Result<Self, toml::de::Error> {
        let CargoToml { package } = toml::from_str(text)?;
        let ours = package
            .metadata
            .and_then(|m| m.cozystack_policies)
            .unwrap_or_default();
        Ok(Self {
            version: package.version,
            profile: ours.profile.unwrap_or_else(|| DEFAULT_PROFILE.to_owned()),
            budget: ours.budget.unwrap_or_default(),
        })
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

/// `path` under the repository `root`; as given when it is absolute or
/// `root` is the working directory, so output names files as the user
/// wrote them.
pub fn resolve(root: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() || root == Path::new(".") {
        path.to_owned()
    } else {
        root.join(path)
    }
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
    fn a_manifest_gives_the_default_profile_and_budget_unless_it_names_its_own() {
        let plain = Manifest::parse("[package]\nname = \"p\"\nversion = \"1.2.3\"\n").unwrap();
        assert_eq!(
            plain,
            Manifest {
                version: "1.2.3".to_owned(),
                profile: DEFAULT_PROFILE.to_owned(),
                budget: Budget::default(),
            }
        );
        let own = Manifest::parse(
            "[package]\nversion = \"0.1.0\"\n\
             [package.metadata.cozystack-policies]\nprofile = \"policy-lean\"\n\
             [package.metadata.cozystack-policies.budget]\nmodule-bytes = 400_000\n",
        )
        .unwrap();
        assert_eq!(own.profile, "policy-lean");
        assert_eq!(own.budget.module_bytes, 400_000);
        assert_eq!(own.budget.server_ratio, Budget::default().server_ratio);
        let unknown = "[package]\nversion = \"0.1.0\"\n\
             [package.metadata.cozystack-policies]\nprofle = \"x\"\n";
        assert!(
            Manifest::parse(unknown).is_err(),
            "a misspelt key is refused"
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
