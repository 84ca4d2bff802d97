//! The settings `check` configures each policy with, so CI judges with the
//! settings the cluster uses: `--settings` (a file mapping policy names to
//! settings, or `POLICY=FILE` for one policy) and `--from-deploy` (the
//! ClusterAdmissionPolicy and AdmissionPolicy manifests a cluster is given:
//! the module reference names the policy, `spec.settings` its settings).
//! Later sources override earlier ones: `--from-deploy`, then `--settings`
//! in the order given.

use reading::yaml::{self, Limit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// Settings by policy name.
pub type Settings = BTreeMap<String, Value>;

/// The kinds whose `spec.settings` configure a policy.
const POLICY_KINDS: [&str; 2] = ["ClusterAdmissionPolicy", "AdmissionPolicy"];

/// Settings from every `--from-deploy` path, then every `--settings` value.
pub fn collect(root: &Path, from_deploy: &[PathBuf], settings: &[String]) -> Result<Settings> {
    let mut all = Settings::new();
    for path in from_deploy {
        all.extend(from_deploy_path(&layout::resolve(root, path))?);
    }
    for arg in settings {
        all.extend(from_settings_arg(root, arg)?);
    }
    Ok(all)
}

/// One `--settings` value: `POLICY=FILE`, or a FILE holding a map from
/// policy name to settings.
fn from_settings_arg(root: &Path, arg: &str) -> Result<Settings> {
    if let Some((policy, file)) = arg.split_once('=') {
        let value = read_yaml(&layout::resolve(root, Path::new(file)))?;
        return Ok(Settings::from([(policy.to_owned(), value)]));
    }
    let path = layout::resolve(root, Path::new(arg));
    match read_yaml(&path)? {
        Value::Object(map) => Ok(map.into_iter().collect()),
        Value::Null => Ok(Settings::new()),
        _ => bail!(
            "--settings {}: expected a map from policy name to its settings \
             (or POLICY=FILE for one policy)",
            path.display()
        ),
    }
}

fn read_yaml(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    yaml::document(&text, Limit::Settings).with_context(|| format!("parsing {}", path.display()))
}

/// The settings of every policy manifest in a file or, recursively, a
/// directory's `.yaml`/`.yml` files; other kinds (PolicyServer, RBAC,
/// kustomization.yaml) are passed over.
fn from_deploy_path(path: &Path) -> Result<Settings> {
    let mut files = Vec::new();
    yaml_files(path, &mut files)?;
    let mut settings = Settings::new();
    let mut found = 0;
    for file in &files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let documents: Vec<Value> = yaml::documents(&text, Limit::Settings)
            .with_context(|| format!("parsing {}", file.display()))?;
        for document in &documents {
            if let Some((policy, value)) = policy_settings(document)
                .with_context(|| format!("--from-deploy {}", file.display()))?
            {
                settings.insert(policy, value);
                found += 1;
            }
        }
    }
    if found == 0 {
        bail!(
            "--from-deploy {}: no ClusterAdmissionPolicy or AdmissionPolicy found",
            path.display()
        );
    }
    Ok(settings)
}

/// The policy a manifest configures and its settings; `None` for any other
/// kind of document.
fn policy_settings(document: &Value) -> Result<Option<(String, Value)>> {
    let kind = document.get("kind").and_then(Value::as_str);
    if !kind.is_some_and(|k| POLICY_KINDS.contains(&k)) {
        return Ok(None);
    }
    let name = document
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("(unnamed)");
    let module = document
        .pointer("/spec/module")
        .and_then(Value::as_str)
        .with_context(|| format!("{name}: spec.module is missing"))?;
    let policy = policy_of_module(module)
        .with_context(|| format!("{name}: spec.module {module:?} names no policy"))?;
    let settings = document
        .pointer("/spec/settings")
        .cloned()
        .unwrap_or(Value::Null);
    Ok(Some((policy, settings)))
}

/// The policy name in a module URL: the last path segment without tag or
/// digest (`registry://ghcr.io/cozystack/cozystack-policies/no-delete:v0.1.0`
/// and `file:///modules/no-delete.wasm` both name `no-delete`).
fn policy_of_module(module: &str) -> Option<String> {
    let without_digest = module.split('@').next().unwrap_or(module);
    let last = without_digest.rsplit('/').next()?;
    let name = last.split(':').next()?;
    let name = name.strip_suffix(".wasm").unwrap_or(name);
    (!name.is_empty()).then(|| name.to_owned())
}

fn yaml_files(path: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading {}", path.display()))?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<std::io::Result<_>>()
            .with_context(|| format!("reading {}", path.display()))?;
        entries.sort();
        for entry in entries {
            if entry.is_dir() || entry.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                yaml_files(&entry, files)?;
            }
        }
        Ok(())
    } else if path.is_file() {
        files.push(path.to_owned());
        Ok(())
    } else {
        bail!(
            "--from-deploy {}: no such file or directory",
            path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    // A test: a panic is a failing assertion.
    #![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn module_urls_name_their_policy() {
        for (url, policy) in [
            (
                "registry://ghcr.io/cozystack/cozystack-policies/no-delete:v0.1.0",
                "no-delete",
            ),
            (
                "registry://127.0.0.1:5000/p/oidc-config:v1@sha256:00ff",
                "oidc-config",
            ),
            ("file:///modules/values-schema.wasm", "values-schema"),
        ] {
            assert_eq!(policy_of_module(url).as_deref(), Some(policy), "{url}");
        }
        assert_eq!(policy_of_module("registry://host/"), None);
    }

    #[test]
    fn the_repository_deploy_tree_gives_every_policy_its_settings() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let settings = from_deploy_path(&root.join("deploy")).unwrap();
        let policies: Vec<&str> = settings.keys().map(String::as_str).collect();
        assert!(policies.contains(&"no-delete"), "{policies:?}");
        assert!(policies.contains(&"oidc-config"), "{policies:?}");
        assert_eq!(
            settings["oidc-config"],
            serde_json::json!({"cozystackVersion": "cluster"})
        );
    }

    #[test]
    fn a_settings_file_maps_policies_and_later_sources_win() {
        let dir = std::env::temp_dir().join(format!("cozystack-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let map = dir.join("settings.yaml");
        std::fs::write(
            &map,
            "oidc-config: {platformOidcEnabled: true}\nno-delete: {}\n",
        )
        .unwrap();
        let one = dir.join("one.yaml");
        std::fs::write(&one, "platformOidcEnabled: false\n").unwrap();
        let list = dir.join("list.yaml");
        std::fs::write(&list, "- oidc-config\n").unwrap();
        let arg = |path: &Path| path.to_string_lossy().into_owned();

        let settings = collect(
            &dir,
            &[],
            &[arg(&map), format!("oidc-config={}", arg(&one))],
        )
        .unwrap();
        assert_eq!(settings["no-delete"], serde_json::json!({}));
        assert_eq!(
            settings["oidc-config"],
            serde_json::json!({"platformOidcEnabled": false}),
            "POLICY=FILE given later wins over the map"
        );
        let error = format!("{:#}", collect(&dir, &[], &[arg(&list)]).unwrap_err());
        assert!(error.contains("expected a map from policy name"), "{error}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_policy_manifest_without_a_module_is_an_error_naming_it() {
        let document = serde_json::json!({
            "kind": "ClusterAdmissionPolicy",
            "metadata": {"name": "broken"},
            "spec": {"settings": {}}
        });
        let error = policy_settings(&document).unwrap_err().to_string();
        assert!(error.contains("broken: spec.module is missing"), "{error}");
        let other = serde_json::json!({"kind": "PolicyServer"});
        assert!(policy_settings(&other).unwrap().is_none());
    }
}
