//! Every policy of the workspace, as its `metadata.yml` declares it: the
//! one list of the bundle's policies.
//!
//! The list is what crates/layout finds under `policies/` when this crate is
//! built, each policy's `metadata.yml` embedded: a new policy folder is in
//! the registry at the next build, with no list to edit. It links no policy
//! crate, so the users' CLI tells our findings from others' and fills in
//! each policy's severity and category without carrying the rules.
//! `crates/registry/linked` adds each policy's code (its settings type, rule
//! catalogue, what it reads of an object, its rule) for the tools that run
//! or describe the rules natively: the playground, fuzzing and the chart's
//! settings schema.
//!
//! What it is not: the modules. Which modules a command runs is decided
//! where they are loaded (dist/, the embedded bundle, `--policy`).

use std::sync::LazyLock;

use wasm_meta::Metadata;
use wasm_meta::metadata::{CATEGORY_ANNOTATION, MetadataError, SEVERITY_ANNOTATION};

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// One policy of the bundle, as its `metadata.yml` declares it.
#[derive(Debug)]
pub struct Declared {
    /// The folder, crate and module name.
    pub name: &'static str,
    /// How much a violation matters (`io.kubewarden.policy.severity`:
    /// `high`, `medium`...), as PolicyReports carry it.
    pub severity: String,
    /// What the policy protects (`io.kubewarden.policy.category`).
    pub category: String,
    pub metadata: Metadata,
}

/// An embedded `metadata.yml` that does not read as the registry needs it.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The file is not valid metadata.
    #[error("policies/{policy}/metadata.yml")]
    Metadata {
        policy: &'static str,
        #[source]
        source: MetadataError,
    },
    /// The metadata lacks an annotation every policy of the bundle carries.
    #[error("policies/{policy}/metadata.yml: annotation {annotation} is missing")]
    Missing {
        policy: &'static str,
        annotation: &'static str,
    },
}

static POLICIES: LazyLock<Result<Vec<Declared>, RegistryError>> = LazyLock::new(|| {
    EMBEDDED
        .iter()
        .map(|(name, text)| declared(name, text))
        .collect()
});

fn declared(name: &'static str, text: &str) -> Result<Declared, RegistryError> {
    let metadata =
        Metadata::from_yaml(text, &format!("policies/{name}/metadata.yml")).map_err(|source| {
            RegistryError::Metadata {
                policy: name,
                source,
            }
        })?;
    let annotation = |annotation: &'static str| {
        metadata
            .annotations
            .get(annotation)
            .cloned()
            .ok_or(RegistryError::Missing {
                policy: name,
                annotation,
            })
    };
    Ok(Declared {
        name,
        severity: annotation(SEVERITY_ANNOTATION)?,
        category: annotation(CATEGORY_ANNOTATION)?,
        metadata,
    })
}

/// Every policy of the bundle, in name order.
pub fn policies() -> Result<&'static [Declared], &'static RegistryError> {
    POLICIES.as_deref()
}

/// The names of the bundle's policies, in order, read without their
/// metadata.
pub fn names() -> impl Iterator<Item = &'static str> {
    EMBEDDED.iter().map(|(name, _)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    use layout::checkout as root;

    /// The registry is the folder: every policy crates/layout finds, and
    /// nothing else, each with the metadata its folder holds now.
    #[test]
    fn every_policy_folder_is_registered_with_its_metadata() {
        let found = layout::policy_names(&root()).unwrap();
        assert!(found.len() > 1, "{found:?}");
        assert_eq!(names().collect::<Vec<_>>(), found);
        for declared in policies().unwrap() {
            let folder = root().join(layout::POLICIES).join(declared.name);
            let metadata = Metadata::from_yaml_file(&folder.join("metadata.yml")).unwrap();
            assert_eq!(declared.metadata, metadata, "{}", declared.name);
            assert!(!declared.severity.is_empty() && !declared.category.is_empty());
        }
    }

    /// The manifests of the repository (and fuzz/'s own workspace), each
    /// with its parsed text, `target/` and hidden folders left out.
    fn manifests() -> Vec<(std::path::PathBuf, toml::Table)> {
        let mut found = Vec::new();
        let mut pending = vec![root().to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() && name != "target" && !name.starts_with('.') {
                    pending.push(path);
                } else if name == "Cargo.toml" {
                    let text = std::fs::read_to_string(&path).unwrap();
                    found.push((path, toml::from_str(&text).unwrap()));
                }
            }
        }
        found
    }

    /// The policy crates a manifest depends on, in any of its dependency
    /// tables, by the folder their `path` names.
    fn policy_dependencies(manifest: &std::path::Path, table: &toml::Table) -> Vec<String> {
        let mut tables: Vec<&toml::Table> =
            ["dependencies", "dev-dependencies", "build-dependencies"]
                .iter()
                .filter_map(|key| table.get(*key)?.as_table())
                .collect();
        if let Some(targets) = table.get("target").and_then(toml::Value::as_table) {
            for target in targets.values().filter_map(toml::Value::as_table) {
                for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
                    tables.extend(target.get(key).and_then(toml::Value::as_table));
                }
            }
        }
        let policies = root().join(layout::POLICIES).canonicalize().unwrap();
        let dir = manifest.parent().unwrap();
        tables
            .iter()
            .flat_map(|t| t.values())
            .filter_map(|dependency| dependency.get("path")?.as_str())
            .filter_map(|path| dir.join(path).canonicalize().ok())
            .filter_map(|path| Some(path.strip_prefix(&policies).ok()?.to_str()?.to_owned()))
            .filter(|name| !name.contains('/'))
            .collect()
    }

    /// Adding a policy is its folder, its line in the workspace's members
    /// and its line in crates/registry/linked/Cargo.toml (CONTRIBUTING.md:
    /// "Adding a policy"): the members list every policy, and no manifest but the
    /// linked registry's (and a policy's own helper crates) depends on a
    /// policy crate, so no other list of policies is kept by hand.
    #[test]
    fn adding_a_policy_is_its_folder_its_member_and_one_dependency_line() {
        let policies = layout::policy_names(&root()).unwrap();
        let workspace: toml::Table =
            toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
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
        let linked = root().join("crates/registry/linked/Cargo.toml");
        let policies_dir = root().join(layout::POLICIES).canonicalize().unwrap();
        let mut dependents = Vec::new();
        for (manifest, table) in manifests() {
            let found = policy_dependencies(&manifest, &table);
            let inside_a_policy = manifest.canonicalize().unwrap().starts_with(&policies_dir);
            if manifest == linked {
                let mut found = found;
                found.sort();
                assert_eq!(
                    found,
                    policies,
                    "{} must depend on every policy",
                    linked.display()
                );
            } else if !found.is_empty() && !inside_a_policy {
                dependents.push(format!("{}: {found:?}", manifest.display()));
            }
        }
        assert!(
            dependents.is_empty(),
            "only crates/registry/linked depends on the policies; use it instead: {dependents:?}"
        );
    }

    /// The users' CLI links no policy crate: it runs the modules, and reads
    /// the policies' metadata from this registry. Neither it nor any crate
    /// it depends on in the workspace depends on the linked registry.
    #[test]
    fn the_users_cli_links_no_policy() {
        let linked = root()
            .join("crates/registry/linked")
            .canonicalize()
            .unwrap();
        let mut pending = vec![root().join("cli")];
        let mut seen = Vec::new();
        while let Some(dir) = pending.pop() {
            let dir = dir.canonicalize().unwrap();
            if seen.contains(&dir) {
                continue;
            }
            assert_ne!(dir, linked, "the users' CLI reaches crates/registry/linked");
            let policies = root().join(layout::POLICIES).canonicalize().unwrap();
            assert!(
                !dir.starts_with(&policies),
                "the users' CLI reaches {}",
                dir.display()
            );
            let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            let table: toml::Table = toml::from_str(&text).unwrap();
            let workspace: toml::Table =
                toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap())
                    .unwrap();
            // Normal and build dependencies: what the binary links.
            for key in ["dependencies", "build-dependencies"] {
                let Some(deps) = table.get(key).and_then(toml::Value::as_table) else {
                    continue;
                };
                for (name, dep) in deps {
                    let path = match dep.get("path").and_then(toml::Value::as_str) {
                        Some(path) => Some(dir.join(path)),
                        // `name.workspace = true`: the workspace's entry.
                        None => workspace["workspace"]["dependencies"]
                            .get(name)
                            .and_then(|d| d.get("path"))
                            .and_then(toml::Value::as_str)
                            .map(|path| root().join(path)),
                    };
                    pending.extend(path);
                }
            }
            seen.push(dir);
        }
        assert!(seen.len() > 5, "{seen:?}");
    }

    #[test]
    fn metadata_without_a_severity_is_refused_naming_it() {
        let text = "rules:\n- apiGroups: [\"\"]\n  apiVersions: [v1]\n  resources: [pods]\n  \
                    operations: [CREATE]\nmutating: false\nannotations:\n  \
                    io.kubewarden.policy.title: p\n  io.kubewarden.policy.category: c\n";
        let error = declared("p", text).unwrap_err().to_string();
        assert_eq!(
            error,
            "policies/p/metadata.yml: annotation io.kubewarden.policy.severity is missing"
        );
    }
}
