//! Kubernetes manifests on disk, and the admission requests a cluster would
//! see when they are applied.
//!
//! One tree: every object is a CREATE, as audit-scanner presents live
//! objects. Two trees (before and after a change): objects only in the new
//! tree are CREATE, objects in both that differ are UPDATE (with the old
//! object), objects only in the old tree are DELETE.

use reading::yaml::{self, Limit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use admission::{AdmissionRequest, Operation};
use anyhow::{Context, Result, bail};
use capabilities::snapshot::{Builder, Reads, Snapshot};
use rayon::prelude::*;
use reading::positions::{Place, Tree};
use serde_json::{Value, json};
use shared::FieldPath;
use shared::field::Segment;

pub mod vars;

use vars::Vars;

/// An object read from a manifest file.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub file: PathBuf,
    pub object: Value,
    /// Positions of the document the object is in.
    pub positions: Option<Arc<Tree>>,
    /// Where the object is in its document (`items[3]` of a `List`).
    pub prefix: Vec<Segment>,
    /// Fields that still hold a `${VAR}` placeholder, with the variables.
    pub unresolved: Vec<(FieldPath, Vec<String>)>,
}

impl Manifest {
    /// Where `field` (a path in the object) is written, or the closest
    /// written field above it.
    pub fn locate(&self, field: &FieldPath) -> Place {
        let path = self.prefix.iter().chain(field.segments());
        locate(self.positions.as_deref(), path)
    }
}

/// Where `path` is in a document's tree: the deepest field of it that is
/// written, else where the document starts; the top of the file when the
/// document has no tree.
fn locate<'a>(tree: Option<&Tree>, path: impl IntoIterator<Item = &'a Segment>) -> Place {
    tree.map_or(Place::TOP, |tree| {
        tree.locate(path)
            .map_or_else(|| tree.root(), |located| located.place)
    })
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
        let (group, version) = shared::apps::group_version(&api_version);
        Some(Self {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: text("/kind")?,
            namespace: text("/metadata/namespace").unwrap_or_default(),
            name: text("/metadata/name")?,
        })
    }

    /// `Kind namespace/name` for output.
    pub fn describe(&self) -> String {
        shared::request::describe(&self.kind, &self.namespace, &self.name)
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// A text manifests are read from, and the name findings give it.
#[derive(Debug, Clone)]
pub struct Source {
    pub file: PathBuf,
    pub text: String,
}

/// The name findings give standard input.
pub const STDIN: &str = "<stdin>";

/// Whether a file in a directory is read as manifests.
pub fn is_manifest_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
}

fn manifest_files(path: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for entry in entries {
            if entry.is_dir() || is_manifest_name(&entry) {
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

/// The texts of the files under `paths`, directories read recursively
/// (`*.yaml`, `*.yml`, `*.json`), `-` read from standard input.
pub fn read(paths: &[PathBuf]) -> Result<Vec<Source>> {
    let mut sources = Vec::new();
    for path in paths {
        if path == Path::new("-") {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .context("reading standard input")?;
            sources.push(Source {
                file: PathBuf::from(STDIN),
                text,
            });
            continue;
        }
        let mut files = Vec::new();
        manifest_files(path, &mut files)?;
        for file in files {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            sources.push(Source { file, text });
        }
    }
    Ok(sources)
}

/// How documents are loaded.
#[derive(Debug, Clone, Copy)]
pub struct Loading<'a> {
    /// Documents that are not Kubernetes objects are errors, not notices.
    pub strict: bool,
    pub vars: &'a Vars,
}

/// The objects of a set of sources, and what was skipped.
#[derive(Debug, Default)]
pub struct Loaded {
    pub manifests: Vec<Manifest>,
    /// One line per document that is not a Kubernetes object.
    pub skipped: Vec<String>,
}

/// Every object in `sources` (`List` kinds unpacked, `${VAR}` placeholders
/// filled). Documents without `apiVersion` and `kind` (kustomization
/// files, Helm values, CI configuration) are skipped with a notice, or
/// refused when `loading.strict`; objects without `metadata.name` are
/// refused.
///
/// The texts are parsed on every core; the objects keep the sources' order,
/// and an error is the one of the first failing source.
pub fn load(sources: Vec<Source>, loading: Loading<'_>) -> Result<Loaded> {
    let parsed: Vec<Result<Parsed>> = sources
        .par_iter()
        .map(|source| parse(&source.text, loading.vars))
        .collect();
    let mut loaded = Loaded::default();
    for (source, parsed) in sources.iter().zip(parsed) {
        parsed
            .and_then(|parsed| load_source(source, parsed, loading, &mut loaded))
            .with_context(|| format!("reading {}", source.file.display()))?;
    }
    Ok(loaded)
}

/// Documents with their positions.
type Documents = (Vec<Value>, Vec<Option<Arc<Tree>>>);

/// A source's documents as written and, when it has `${` placeholders and
/// substituting keeps its documents, as Flux would apply them.
struct Parsed {
    original: Documents,
    substituted: Option<Documents>,
}

/// The documents of a text and their positions; documents whose positions
/// cannot be read point at the top of the file.
fn documents(text: &str) -> Result<Documents> {
    let values: Vec<Value> = yaml::documents(text, Limit::Manifests)?;
    let mut trees = Tree::documents(text, Limit::Manifests)
        .ok()
        .filter(|trees| trees.len() == values.len())
        .unwrap_or_default()
        .into_iter()
        .map(Arc::new);
    let trees = values.iter().map(|_| trees.next()).collect();
    Ok((values, trees))
}

fn parse(text: &str, vars: &Vars) -> Result<Parsed> {
    let original = documents(text)?;
    // Flux substitutes in the text; a substitution that changes the
    // document structure (a value holding `---`) is not followed.
    let substituted = text
        .contains("${")
        .then(|| documents(&vars.substitute(text)))
        .transpose()?
        .filter(|(values, _)| values.len() == original.0.len());
    Ok(Parsed {
        original,
        substituted,
    })
}

fn load_source(
    source: &Source,
    parsed: Parsed,
    loading: Loading<'_>,
    loaded: &mut Loaded,
) -> Result<()> {
    let Parsed {
        original: (original, original_positions),
        substituted,
    } = parsed;
    for (index, before) in original.iter().enumerate() {
        let substitute = vars::enabled(before);
        let (object, document) = match &substituted {
            Some((values, found)) if substitute => (
                values.get(index).unwrap_or(before),
                found.get(index).or_else(|| original_positions.get(index)),
            ),
            _ => (before, original_positions.get(index)),
        };
        let document = document.cloned().flatten();
        let origin = Origin {
            file: &source.file,
            document,
            substitute,
        };
        unpack(&origin, loading, Vec::new(), object, before, loaded)?;
    }
    Ok(())
}

/// Where the documents being unpacked come from.
struct Origin<'a> {
    file: &'a Path,
    document: Option<Arc<Tree>>,
    substitute: bool,
}

fn unpack(
    origin: &Origin<'_>,
    loading: Loading<'_>,
    prefix: Vec<Segment>,
    object: &Value,
    before: &Value,
    loaded: &mut Loaded,
) -> Result<()> {
    let text = |key: &str| object.get(key).and_then(Value::as_str);
    let start = locate(origin.document.as_deref(), &prefix);
    match object {
        Value::Null => Ok(()),
        Value::Object(map) if map.is_empty() => Ok(()),
        _ if text("apiVersion").is_none() || text("kind").is_none() => {
            let notice = format!(
                "{}:{}:{}: not a Kubernetes object (no apiVersion and kind)",
                origin.file.display(),
                start.line,
                start.column
            );
            if loading.strict {
                bail!("{notice}; --strict refuses it");
            }
            loaded.skipped.push(notice);
            Ok(())
        }
        Value::Object(map) if text("kind").is_some_and(|k| k.ends_with("List")) => {
            let items = map.get("items").and_then(Value::as_array);
            let old_items = before.get("items").and_then(Value::as_array);
            for (i, item) in items.into_iter().flatten().enumerate() {
                let mut path = prefix.clone();
                path.extend([Segment::Key("items".into()), Segment::Index(i)]);
                let old = old_items.and_then(|o| o.get(i)).unwrap_or(item);
                unpack(origin, loading, path, item, old, loaded)?;
            }
            Ok(())
        }
        Value::Object(_) if ObjectKey::of(object).is_some() => {
            let unresolved = if origin.substitute {
                vars::unresolved_fields(loading.vars, before)
            } else {
                Vec::new()
            };
            loaded.manifests.push(Manifest {
                file: origin.file.to_owned(),
                object: object.clone(),
                positions: origin.document.clone(),
                prefix,
                unresolved,
            });
            Ok(())
        }
        _ => bail!(
            "{}:{}:{}: a {} without metadata.name is not a Kubernetes object one can apply",
            origin.file.display(),
            start.line,
            start.column,
            text("kind").unwrap_or_default()
        ),
    }
}

/// One admission request a change would cause.
#[derive(Debug, Clone)]
pub struct Change {
    pub key: ObjectKey,
    pub operation: Operation,
    /// The new object as read (the old one for DELETE): its file and
    /// the positions of its fields.
    pub manifest: Manifest,
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
    let subject = object.or(old).map(admission::object_fields);
    let mut body = subject.unwrap_or_default();
    for (request_field, field) in [("requestKind", "kind"), ("requestResource", "resource")] {
        if let Some(value) = body.get(field).cloned() {
            body.insert(request_field.to_owned(), value);
        }
    }
    let uid = format!(
        "offline-{}-{}-{}",
        operation.as_str().to_lowercase(),
        key.namespace,
        key.name
    );
    body.insert("uid".into(), json!(uid));
    body.insert("operation".into(), json!(operation));
    body.insert("userInfo".into(), offline_user());
    body.insert("dryRun".into(), json!(true));
    if let Some(object) = object {
        body.insert("object".into(), object.clone());
    }
    if let Some(old) = old {
        body.insert("oldObject".into(), old.clone());
    }
    Ok(AdmissionRequest::from_value(Value::Object(body))?)
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
                manifest: manifest.clone(),
                request: request(key, Operation::Create, Some(&manifest.object), None)?,
            }),
            Some(previous) if previous.object != manifest.object => changes.push(Change {
                key: key.clone(),
                operation: Operation::Update,
                manifest: manifest.clone(),
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
                manifest: manifest.clone(),
                request: request(key, Operation::Delete, None, Some(&manifest.object))?,
            });
        }
    }
    Ok(changes)
}

/// The objects of the files or directories of `kubectl get` output at
/// `paths` (`-`: standard input), as a cluster snapshot: read a document at
/// a time, Lists unpacked, documents that are not objects skipped, each
/// object kept as `reads` says the policies read it (whole without).
pub fn snapshot(paths: &[PathBuf], reads: Option<&Reads>) -> Result<Snapshot> {
    let mut builder = Builder::new(reads);
    for path in paths {
        if path == Path::new("-") {
            add_documents(std::io::BufReader::new(std::io::stdin()), &mut builder)
                .context("reading standard input")?;
            continue;
        }
        let mut files = Vec::new();
        manifest_files(path, &mut files)?;
        for file in files {
            let opened = std::fs::File::open(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            add_documents(std::io::BufReader::new(opened), &mut builder)
                .with_context(|| format!("reading {}", file.display()))?;
        }
    }
    Ok(builder.finish())
}

/// Every document of `reader` into `builder`.
fn add_documents(reader: impl std::io::BufRead + Send, builder: &mut Builder<'_>) -> Result<()> {
    yaml::for_each_document(reader, Limit::Manifests, |document: Value| {
        add_document(document, builder)
    })
    .map_err(|stopped| match stopped {
        yaml::Streamed::Yaml(error) => anyhow::Error::new(*error),
        yaml::Streamed::Each(error) => error,
    })
}

/// An object (a List's items) into `builder`; not an object: skipped.
fn add_document(document: Value, builder: &mut Builder<'_>) -> Result<()> {
    let text = |key: &str| document.get(key).and_then(Value::as_str);
    match (text("apiVersion"), text("kind")) {
        (Some(_), Some(kind)) if kind.ends_with("List") => {
            if let Some(Value::Array(items)) = document.get("items") {
                for item in items {
                    add_document(item.clone(), builder)?;
                }
            }
            Ok(())
        }
        (Some(_), Some(_)) => Ok(builder.add(document)?),
        _ => Ok(()),
    }
}

/// The snapshot `--cluster` names (paths under `root`), `None` without one;
/// each object kept as `reads` says.
pub fn cluster(
    root: &Path,
    paths: &[PathBuf],
    reads: Option<&Reads>,
) -> Result<Option<Arc<Snapshot>>> {
    if paths.is_empty() {
        return Ok(None);
    }
    let paths: Vec<PathBuf> = paths.iter().map(|p| layout::resolve(root, p)).collect();
    let snapshot = snapshot(&paths, reads).context("reading the cluster snapshot")?;
    Ok(Some(Arc::new(snapshot)))
}

/// The CREATE requests of the objects of `snapshot` (as it keeps them)
/// that `judged` keeps, each as a change of `file`; and how many it did
/// not keep. A snapshot's objects are judged as audit-scanner judges
/// stored objects.
pub fn snapshot_changes(
    snapshot: &Snapshot,
    file: &Path,
    judged: impl Fn(&AdmissionRequest) -> bool,
) -> Result<(Vec<Change>, usize)> {
    let mut changes = Vec::new();
    let mut unjudged = 0;
    for object in snapshot.objects() {
        let Some(key) = ObjectKey::of(&object) else {
            continue;
        };
        let request = request(&key, Operation::Create, Some(&object), None)?;
        if !judged(&request) {
            unjudged += 1;
            continue;
        }
        changes.push(Change {
            key,
            operation: Operation::Create,
            manifest: Manifest {
                file: file.to_owned(),
                object,
                positions: None,
                prefix: Vec::new(),
                unresolved: Vec::new(),
            },
            request,
        });
    }
    changes.sort_by(|a, b| a.key.cmp(&b.key));
    Ok((changes, unjudged))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str, class: &str) -> Manifest {
        Manifest {
            file: PathBuf::from(format!("{name}.yaml")),
            object: json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
                "metadata": {"name": name, "namespace": "tenant-foo"}, "spec": {"storageClass": class}}),
            positions: None,
            prefix: Vec::new(),
            unresolved: Vec::new(),
        }
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
