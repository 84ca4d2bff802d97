//! Kubernetes manifests on disk, and the admission requests a cluster would
//! see when they are applied.
//!
//! One tree: every object is a CREATE, as audit-scanner presents live
//! objects. Two trees (before and after a change): objects only in the new
//! tree are CREATE, objects in both that differ are UPDATE (with the old
//! object), objects only in the old tree are DELETE.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use bundle::{AdmissionRequest, Operation};
use serde_json::{Value, json};
use shared::catalogue::{APPS_GROUP, app_kind};

/// An object read from a manifest file.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub file: PathBuf,
    pub object: Value,
}

/// What identifies an object in a cluster.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectKey {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    fn of(object: &Value) -> Option<Self> {
        let text = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let api_version = text("/apiVersion")?;
        let (group, version) = match api_version.split_once('/') {
            Some((group, version)) => (group.to_owned(), version.to_owned()),
            None => (String::new(), api_version),
        };
        Some(Self {
            group,
            version,
            kind: text("/kind")?,
            namespace: text("/metadata/namespace").unwrap_or_default(),
            name: text("/metadata/name")?,
        })
    }

    /// `Kind namespace/name` for output.
    pub fn describe(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// The plural resource name the apiserver serves a kind under.
pub fn plural(group: &str, kind: &str) -> String {
    if group == APPS_GROUP
        && let Some(app) = app_kind(kind)
    {
        return app.plural.to_owned();
    }
    let lower = kind.to_lowercase();
    if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        format!("{lower}es")
    } else if let Some(stem) = lower
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u']))
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

fn manifest_files(path: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for entry in entries {
            if entry.is_dir()
                || entry
                    .extension()
                    .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
            {
                manifest_files(&entry, found)?;
            }
        }
    } else if path.is_file() {
        found.push(path.to_owned());
    } else {
        bail!("{} does not exist", path.display());
    }
    Ok(())
}

/// Every object in the files under `paths` (`List` kinds unpacked,
/// documents without `apiVersion`/`kind` skipped, as kubectl ignores them
/// only if empty: anything else is an error).
pub fn load(paths: &[PathBuf]) -> Result<Vec<Manifest>> {
    let mut files = Vec::new();
    for path in paths {
        manifest_files(path, &mut files)?;
    }
    let mut manifests = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        let documents: Vec<Value> = serde_saphyr::from_multiple(&text)
            .with_context(|| format!("reading {}", file.display()))?;
        for (index, object) in documents.into_iter().enumerate() {
            unpack(&file, index, object, &mut manifests)?;
        }
    }
    Ok(manifests)
}

fn unpack(file: &Path, index: usize, object: Value, manifests: &mut Vec<Manifest>) -> Result<()> {
    match &object {
        Value::Null => Ok(()),
        Value::Object(map) if map.is_empty() => Ok(()),
        Value::Object(map)
            if map
                .get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| k.ends_with("List")) =>
        {
            for item in map
                .get("items")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                unpack(file, index, item.clone(), manifests)?;
            }
            Ok(())
        }
        Value::Object(_) if ObjectKey::of(&object).is_some() => {
            manifests.push(Manifest {
                file: file.to_owned(),
                object,
            });
            Ok(())
        }
        _ => bail!(
            "{}: document {} is not a Kubernetes object (apiVersion, kind and metadata.name are required)",
            file.display(),
            index + 1
        ),
    }
}

/// One admission request a change would cause.
#[derive(Debug, Clone)]
pub struct Change {
    pub key: ObjectKey,
    pub operation: Operation,
    /// The file of the new object (old one for DELETE).
    pub file: PathBuf,
    pub request: AdmissionRequest,
}

fn index(manifests: Vec<Manifest>) -> Result<BTreeMap<ObjectKey, Manifest>> {
    let mut indexed = BTreeMap::new();
    for manifest in manifests {
        let Some(key) = ObjectKey::of(&manifest.object) else {
            continue;
        };
        if let Some(previous) = indexed.insert(key.clone(), manifest) {
            bail!(
                "{} is defined twice (again in {})",
                key.describe(),
                previous.file.display()
            );
        }
    }
    Ok(indexed)
}

/// The user offline checks act as: an authenticated nobody, so no
/// exemption applies.
fn offline_user() -> Value {
    json!({"username": "cozystack-policies:offline-check", "groups": ["system:authenticated"]})
}

fn request(
    key: &ObjectKey,
    operation: Operation,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<AdmissionRequest> {
    let kind = json!({"group": key.group, "version": key.version, "kind": key.kind});
    let resource = json!({"group": key.group, "version": key.version, "resource": plural(&key.group, &key.kind)});
    let mut body = json!({
        "uid": format!("offline-{}-{}-{}", operation.to_string().to_lowercase(), key.namespace, key.name),
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": key.name,
        "operation": operation,
        "userInfo": offline_user(),
        "dryRun": true,
    });
    if let Some(map) = body.as_object_mut() {
        if !key.namespace.is_empty() {
            map.insert("namespace".into(), json!(key.namespace));
        }
        if let Some(object) = object {
            map.insert("object".into(), object.clone());
        }
        if let Some(old) = old {
            map.insert("oldObject".into(), old.clone());
        }
    }
    Ok(AdmissionRequest::from_value(body)?)
}

/// The requests applying `new` would cause, given `old` (empty when there is
/// no old tree).
pub fn changes(old: Vec<Manifest>, new: Vec<Manifest>) -> Result<Vec<Change>> {
    let old = index(old)?;
    let new = index(new)?;
    let mut changes = Vec::new();
    for (key, manifest) in &new {
        match old.get(key) {
            None => changes.push(Change {
                key: key.clone(),
                operation: Operation::Create,
                file: manifest.file.clone(),
                request: request(key, Operation::Create, Some(&manifest.object), None)?,
            }),
            Some(previous) if previous.object != manifest.object => changes.push(Change {
                key: key.clone(),
                operation: Operation::Update,
                file: manifest.file.clone(),
                request: request(
                    key,
                    Operation::Update,
                    Some(&manifest.object),
                    Some(&previous.object),
                )?,
            }),
            Some(_) => {}
        }
    }
    for (key, manifest) in &old {
        if !new.contains_key(key) {
            changes.push(Change {
                key: key.clone(),
                operation: Operation::Delete,
                file: manifest.file.clone(),
                request: request(key, Operation::Delete, None, Some(&manifest.object))?,
            });
        }
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str, class: &str) -> Manifest {
        Manifest {
            file: PathBuf::from(format!("{name}.yaml")),
            object: json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
                "metadata": {"name": name, "namespace": "tenant-foo"}, "spec": {"storageClass": class}}),
        }
    }

    #[test]
    fn plurals_follow_the_platform_and_english() {
        assert_eq!(plural("apps.cozystack.io", "Kubernetes"), "kuberneteses");
        assert_eq!(plural("", "ConfigMap"), "configmaps");
        assert_eq!(plural("networking.k8s.io", "Ingress"), "ingresses");
        assert_eq!(plural("", "Policy"), "policies");
        assert_eq!(
            plural("sdn.cozystack.io", "SecurityGroup"),
            "securitygroups"
        );
    }

    #[test]
    fn a_change_maps_to_create_update_and_delete() {
        let old = vec![
            manifest("kept", "a"),
            manifest("changed", "a"),
            manifest("gone", "a"),
        ];
        let new = vec![
            manifest("kept", "a"),
            manifest("changed", "b"),
            manifest("added", "a"),
        ];
        let changes = changes(old, new).unwrap();
        let summary: Vec<(String, Operation)> = changes
            .iter()
            .map(|c| (c.key.name.clone(), c.operation))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("added".into(), Operation::Create),
                ("changed".into(), Operation::Update),
                ("gone".into(), Operation::Delete)
            ]
        );
        let update = &changes[1].request;
        assert_eq!(update.resource.resource, "postgreses");
        assert_eq!(
            update.old_object.as_ref().unwrap()["spec"]["storageClass"],
            "a"
        );
        assert!(changes[2].request.object.is_none());
    }

    #[test]
    fn duplicates_are_refused() {
        assert!(changes(vec![], vec![manifest("x", "a"), manifest("x", "b")]).is_err());
    }
}
