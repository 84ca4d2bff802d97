//! A cluster as a snapshot of its objects: the answers a policy-server
//! would give to a policy's Kubernetes reads, offline.
//!
//! `check --cluster` reads `kubectl get … -o json|yaml` output into a
//! [`Snapshot`] and answers `list_resources_by_namespace`,
//! `list_resources_all` and `get_resource` from it as policy-server answers
//! them from a live cluster: label selectors (`key`, `!key`, `key=value`,
//! `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`, joined by
//! commas) and field selectors on `metadata.name` and `metadata.namespace`
//! as the API server applies them, `field_masks` as the host prunes
//! objects, and a get of a missing object failing with the reason
//! policy-server gives ([`shared::lookup::not_found`]).
//!
//! A snapshot answers only for what it read. Its [`Capture`] record says
//! which kinds and objects the script read and how each read ended; a
//! snapshot without one is taken to hold exactly the kinds it has objects
//! of. A read of anything else fails with the reason and the command that
//! would capture it ([`Unread`]), so a rule says it did not check, never
//! that the cluster holds nothing: an unread kind is not an empty one.
//!
//! Nor is the record believed blindly. A kind is read at one version: a
//! record or objects of it at another version (no rule reads) leave it
//! unread. A kind recorded as not installed is unread when every Cozystack
//! management cluster serves it, when the aggregated API serving it is not
//! Available, or when its CustomResourceDefinition is there
//! ([`cozystack`]); an object every such cluster holds (the `cozy-system`
//! Namespace, a Node) that a captured read did not find leaves the read
//! unbelieved; two records are an error.
//!
//! A snapshot read with the bundle's [`Reads`] ([`Builder`]) keeps of each
//! object only what the policies read, every credential among it only as
//! whether it is set, and names each credential the file carried.

mod capture;
pub mod cozystack;
mod mask;
pub mod reads;
mod selector;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

pub use capture::{
    API_VERSION as CAPTURE_API_VERSION, CAPTURED_KEYS, Capture, CaptureError, KIND as CAPTURE_KIND,
    REDACTED, Read, ReadResult,
};
use mask::masked;
pub use reads::{Fields, Reads};
use selector::{field_selector, label_selector};

use release::Found;
use shared::lookup::{Cluster, LookupError};

use crate::replay::CapabilityRequest;

/// The objects of a cluster, as captured, and what the capture read.
#[derive(Debug, Default)]
pub struct Snapshot {
    objects: Vec<Stored>,
    /// The objects of each `(group, kind)`, by namespace.
    index: HashMap<(String, String), BTreeMap<String, Vec<usize>>>,
    /// Each list's answer, once made: the policies make the same list for
    /// every object they judge (policy-server caches them too).
    lists: Mutex<HashMap<String, Answer>>,
    /// The capture's record; `None` for a snapshot that has none.
    capture: Option<Capture>,
    /// Each field of an object that carried a credential, which the
    /// snapshot did not keep: `Kind namespace/name: field`.
    credentials: Vec<String>,
}

/// What a snapshot can say of a kind, or of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coverage {
    /// The snapshot holds every object of it there is (perhaps none).
    Read,
    /// The cluster does not serve the kind: there is no object of it.
    NotInstalled,
    /// The snapshot cannot say what the cluster holds.
    Unread(Unread),
}

/// A kind, or an object, the snapshot did not read: why, and how to read it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Unread {
    /// As kubectl names it: `statefulsets.apps`, `secrets cozy-velero/x`.
    pub what: String,
    /// How its read ended (`forbidden`, `timeout`, `failed`), or why the
    /// snapshot lacks it.
    pub why: String,
    /// kubectl's words for a failed read; empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// What captures it: a `kubectl get` in backquotes, or the capture
    /// block for what must not be copied whole.
    pub command: String,
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the snapshot did not read {} ({}); capture it with {}",
            self.what, self.why, self.command
        )
    }
}

/// A read's answer, or the reason the host gives.
type Answer = Result<Arc<[u8]>, String>;

/// One object as the snapshot holds it: what reads select it by, and the
/// object itself as compact JSON, read again only when a read answers with
/// it (a `Value` costs ten times its text).
#[derive(Debug)]
struct Stored {
    api_version: Box<str>,
    kind: Box<str>,
    namespace: Box<str>,
    name: Box<str>,
    labels: serde_json::Map<String, Value>,
    json: Box<str>,
}

impl Stored {
    fn of(object: &Value) -> Self {
        Self {
            api_version: text(object, "/apiVersion").into(),
            kind: text(object, "/kind").into(),
            namespace: text(object, "/metadata/namespace").into(),
            name: text(object, "/metadata/name").into(),
            labels: object
                .pointer("/metadata/labels")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            json: object.to_string().into(),
        }
    }

    /// The object.
    fn value(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or_default()
    }
}

/// Why a kind absent from a snapshot without a record is not empty.
const NO_RECORD: &str =
    "no capture record, and none of it in the snapshot: absent is unread, not empty";

fn text<'v>(object: &'v Value, pointer: &str) -> &'v str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A kind as kubectl names it unambiguously: `configmaps`,
/// `etcdclusters.etcd.aenix.io`.
pub fn resource(group: &str, kind: &str) -> String {
    let plural = shared::apps::plural(group, kind);
    if group.is_empty() {
        plural
    } else {
        format!("{plural}.{group}")
    }
}

/// A kind at one version, as kubectl names it: `nodes`,
/// `kubeadmconfigtemplates.v1beta1.bootstrap.cluster.x-k8s.io` (the group
/// alone would get the version the API server prefers).
pub fn versioned_resource(api_version: &str, kind: &str) -> String {
    let (group, version) = shared::apps::group_version(api_version);
    let plural = shared::apps::plural(group, kind);
    if group.is_empty() {
        plural
    } else {
        format!("{plural}.{version}.{group}")
    }
}

/// What captures what the snapshot lacks: the block, which keeps of each
/// object only what the rules read.
const SNAPSHOT_COMMAND: &str = "the block `cozystack-policies snapshot-command` prints";

/// Why a read ended as it did, and kubectl's words for it.
fn reason(read: &Read) -> (String, String) {
    (read.result.as_str().to_owned(), read.message.clone())
}

/// Whether an APIService is Available, and if not, why.
fn availability(service: &Value) -> Result<(), String> {
    let available = service
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| text(c, "/type") == "Available");
    match available {
        Some(c) if text(c, "/status") == "True" => Ok(()),
        Some(c) => Err(format!("{}: {}", text(c, "/reason"), text(c, "/message"))),
        None => Err("no Available condition".to_owned()),
    }
}

/// Reads a snapshot document by document: objects kept as [`Reads`] says
/// (all of them without one), the capture's record.
#[derive(Debug, Default)]
pub struct Builder<'r> {
    reads: Option<&'r Reads>,
    /// What is kept of each kind, worked out once.
    fields: HashMap<(String, String), Fields>,
    snapshot: Snapshot,
}

impl<'r> Builder<'r> {
    /// A snapshot that keeps of each object what `reads` says the policies
    /// read, or everything without `reads`.
    pub fn new(reads: Option<&'r Reads>) -> Self {
        Self {
            reads,
            ..Self::default()
        }
    }

    /// Adds one document: an object (with `apiVersion`, `kind` and
    /// `metadata.name`) or the capture's record, which may come once.
    pub fn add(&mut self, document: Value) -> Result<(), CaptureError> {
        if Capture::is_record(&document) {
            let record = Capture::from_record(&document)?;
            if let Some(first) = &self.snapshot.capture {
                return Err(CaptureError::Twice {
                    first: first.describe(),
                    second: record.describe(),
                });
            }
            self.snapshot.capture = Some(record);
            return Ok(());
        }
        let object = match self.reads {
            None => document,
            Some(reads) => {
                let api_version = text(&document, "/apiVersion").to_owned();
                let kind = text(&document, "/kind").to_owned();
                for field in reads.credentials(&document) {
                    self.snapshot
                        .credentials
                        .push(format!("{kind} {}: {field}", name_of(&document)));
                }
                let fields = self
                    .fields
                    .entry((api_version, kind))
                    .or_insert_with_key(|(api_version, kind)| reads.fields(api_version, kind));
                reads.keep(&document, fields)
            }
        };
        let snapshot = &mut self.snapshot;
        let stored = Stored::of(&object);
        let (group, _) = shared::apps::group_version(&stored.api_version);
        snapshot
            .index
            .entry((group.to_owned(), stored.kind.to_string()))
            .or_default()
            .entry(stored.namespace.to_string())
            .or_default()
            .push(snapshot.objects.len());
        snapshot.objects.push(stored);
        Ok(())
    }

    pub fn finish(self) -> Snapshot {
        self.snapshot
    }
}

/// `namespace/name`, or the name of a cluster-scoped object.
fn name_of(object: &Value) -> String {
    let namespace = text(object, "/metadata/namespace");
    let name = text(object, "/metadata/name");
    if namespace.is_empty() {
        name.to_owned()
    } else {
        format!("{namespace}/{name}")
    }
}

impl Snapshot {
    /// The snapshot of these documents, kept whole: objects (each with
    /// `apiVersion`, `kind` and `metadata.name`) and the capture's record,
    /// which is not an object of the cluster.
    pub fn new(documents: Vec<Value>) -> Result<Self, CaptureError> {
        let mut builder = Builder::new(None);
        for document in documents {
            builder.add(document)?;
        }
        Ok(builder.finish())
    }

    /// How many objects it holds.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether it holds no object.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Its objects, as kept, in the order read.
    pub fn objects(&self) -> impl Iterator<Item = Value> + '_ {
        self.objects.iter().map(Stored::value)
    }

    /// Its objects of `kind` at `api_version`.
    pub fn objects_of<'s>(
        &'s self,
        api_version: &'s str,
        kind: &'s str,
    ) -> impl Iterator<Item = Value> + 's {
        let (group, _) = shared::apps::group_version(api_version);
        self.of_kind(group, kind, None)
            .filter(move |o| &*o.api_version == api_version)
            .map(Stored::value)
    }

    /// The capture's record, if the snapshot has one.
    pub fn capture(&self) -> Option<&Capture> {
        self.capture.as_ref()
    }

    /// Each field that carried a credential (`Kind namespace/name: field`),
    /// which the snapshot did not keep.
    pub fn credentials(&self) -> &[String] {
        &self.credentials
    }

    /// Its objects of `kind` in API `group` (`""`: core), at any version.
    pub fn objects_of_kind<'s>(
        &'s self,
        group: &'s str,
        kind: &'s str,
    ) -> impl Iterator<Item = Value> + 's {
        self.of_kind(group, kind, None).map(Stored::value)
    }

    /// The objects of `group`/`kind` (any version), in `namespace` if given.
    fn of_kind<'s>(
        &'s self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> impl Iterator<Item = &'s Stored> + 's {
        let by_namespace = self.index.get(&(group.to_owned(), kind.to_owned()));
        let indices: Vec<usize> = match (by_namespace, namespace) {
            (None, _) => Vec::new(),
            (Some(all), None) => all.values().flatten().copied().collect(),
            (Some(all), Some(namespace)) => all.get(namespace).cloned().unwrap_or_default(),
        };
        indices.into_iter().filter_map(|i| self.objects.get(i))
    }

    /// The versions of `group` the snapshot holds objects of `kind` at.
    fn versions(&self, group: &str, kind: &str) -> BTreeSet<String> {
        self.of_kind(group, kind, None)
            .map(|o| shared::apps::group_version(&o.api_version).1.to_owned())
            .collect()
    }

    /// Whether it holds an object of `kind` at `api_version`, named `only`
    /// (`(namespace, name)`) if given.
    pub fn holds(&self, api_version: &str, kind: &str, only: Option<(&str, &str)>) -> bool {
        let (group, _) = shared::apps::group_version(api_version);
        self.of_kind(group, kind, only.map(|(namespace, _)| namespace))
            .any(|o| {
                &*o.api_version == api_version && only.is_none_or(|(_, name)| &*o.name == name)
            })
    }

    /// What the snapshot can say of every object of `kind` at
    /// `api_version`.
    pub fn coverage(&self, api_version: &str, kind: &str) -> Coverage {
        let (group, version) = shared::apps::group_version(api_version);
        let unread = |(why, detail): (String, String)| {
            Coverage::Unread(Unread {
                what: resource(group, kind),
                why,
                detail,
                command: kind_command(api_version, kind),
            })
        };
        let elsewhere = || {
            let versions = self.versions(group, kind);
            (!versions.is_empty() && !versions.contains(version)).then(|| {
                format!(
                    "the snapshot holds it at {} only, which no rule reads",
                    versions.into_iter().collect::<Vec<_>>().join(", ")
                )
            })
        };
        match &self.capture {
            Some(capture) => match capture.kind_read(group, kind) {
                Some(read) if read.version() != version => unread((
                    format!("captured at {}, which no rule reads", read.api_version),
                    String::new(),
                )),
                Some(read) => match read.result {
                    ReadResult::Captured => {
                        match (elsewhere(), self.missing(api_version, kind, None)) {
                            (Some(why), _) | (None, Some(why)) => unread((why, String::new())),
                            (None, None) => Coverage::Read,
                        }
                    }
                    ReadResult::NotInstalled => match self.not_absent(api_version, kind) {
                        Some(why) => unread((why, read.message.clone())),
                        None => Coverage::NotInstalled,
                    },
                    _ => unread(reason(read)),
                },
                None => unread(("its capture did not read it".to_owned(), String::new())),
            },
            None if self.holds(api_version, kind, None) => Coverage::Read,
            None => unread((
                elsewhere().unwrap_or_else(|| NO_RECORD.to_owned()),
                String::new(),
            )),
        }
    }

    /// Why a captured kind that every Cozystack management cluster holds
    /// objects of (or the one object `only`) cannot be as the snapshot has
    /// it, if it cannot.
    fn missing(&self, api_version: &str, kind: &str, only: Option<(&str, &str)>) -> Option<String> {
        let (group, _) = shared::apps::group_version(api_version);
        let held = cozystack::HELD
            .iter()
            .any(|(g, k, named)| (*g, *k) == (group, kind) && (named.is_none() || *named == only));
        (held && !self.holds(api_version, kind, only)).then(|| {
            let what = match only {
                Some(_) => "it",
                None => "no object of it",
            };
            format!(
                "the capture says it read {what}, yet the snapshot lacks it, and every Cozystack \
                 management cluster has {}",
                if only.is_some() { "it" } else { "one" }
            )
        })
    }

    /// Why a kind the capture recorded as not installed is not absent, if
    /// it is not: every Cozystack management cluster serves it, its API
    /// service is not Available, or its CustomResourceDefinition is there.
    fn not_absent(&self, api_version: &str, kind: &str) -> Option<String> {
        let (group, version) = shared::apps::group_version(api_version);
        if cozystack::served(group, kind) {
            return Some(
                "recorded as not installed, but every Cozystack management cluster serves it: the read \
                 failed (an API that does not answer reads as absent)"
                    .to_owned(),
            );
        }
        if let Some(why) = self.unavailable(group, version) {
            return Some(why);
        }
        let crd = format!("{}.{group}", shared::apps::plural(group, kind));
        let definition = self
            .of_kind("apiextensions.k8s.io", "CustomResourceDefinition", None)
            .find(|o| *o.name == crd)?
            .value();
        let served: Vec<&str> = definition
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
            .map(|v| text(v, "/name"))
            .collect();
        Some(if served.contains(&version) || served.is_empty() {
            format!("recorded as not installed, but CustomResourceDefinition {crd} is installed")
        } else {
            format!(
                "the cluster serves it at {} only, which no rule reads",
                served
                    .iter()
                    .map(|v| format!("{group}/{v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }

    /// Why the aggregated API serving `group`/`version` did not answer, if
    /// it may not have: its APIService is not Available, or (for
    /// cozystack-api's groups) the APIServices were not read.
    fn unavailable(&self, group: &str, version: &str) -> Option<String> {
        let name = format!("{version}.{group}");
        let read = match &self.capture {
            Some(capture) => capture
                .kind_read("apiregistration.k8s.io", "APIService")
                .is_some_and(|read| read.result == ReadResult::Captured),
            None => self.holds("apiregistration.k8s.io/v1", "APIService", None),
        };
        if !read {
            return cozystack::AGGREGATED.contains(&group).then(|| {
                format!(
                    "recorded as not installed, but {group} is served by an aggregated API, and the \
                     APIServices were not read to tell whether it answered"
                )
            });
        }
        let service = self
            .of_kind("apiregistration.k8s.io", "APIService", None)
            .find(|o| *o.name == name)?
            .value();
        availability(&service)
            .err()
            .map(|why| format!("unavailable: APIService {name} is not Available ({why})"))
    }

    /// What the snapshot can say of the one object `namespace`/`name` (`""`
    /// for a cluster-scoped kind) of `kind` at `api_version`: every object
    /// of the kind read, that object read by name, or (without a record)
    /// the object present.
    pub fn object_coverage(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Coverage {
        let (group, version) = shared::apps::group_version(api_version);
        let missing = |coverage: Coverage| match coverage {
            Coverage::Read => match self.missing(api_version, kind, Some((namespace, name))) {
                Some(why) => {
                    unread_object(api_version, kind, namespace, name, (why, String::new()))
                }
                None => Coverage::Read,
            },
            other => other,
        };
        let of_kind = self.coverage(api_version, kind);
        if !matches!(of_kind, Coverage::Unread(_)) {
            return missing(of_kind);
        }
        let read = self
            .capture
            .as_ref()
            .and_then(|capture| capture.object_read(group, kind, namespace, name));
        if let Some(read) = read {
            if read.version() != version {
                let why = format!("captured at {}, which no rule reads", read.api_version);
                return unread_object(api_version, kind, namespace, name, (why, String::new()));
            }
            return match read.result {
                ReadResult::Captured => missing(Coverage::Read),
                ReadResult::NotInstalled => match self.not_absent(api_version, kind) {
                    Some(why) => unread_object(
                        api_version,
                        kind,
                        namespace,
                        name,
                        (why, read.message.clone()),
                    ),
                    None => Coverage::NotInstalled,
                },
                _ => unread_object(api_version, kind, namespace, name, reason(read)),
            };
        }
        if self.capture.is_none() && self.holds(api_version, kind, Some((namespace, name))) {
            return Coverage::Read;
        }
        let why = match of_kind {
            Coverage::Unread(unread) => (unread.why, unread.detail),
            _ => (String::new(), String::new()),
        };
        unread_object(api_version, kind, namespace, name, why)
    }

    fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        labels: Option<&str>,
        fields: Option<&str>,
        masks: Option<&BTreeSet<String>>,
    ) -> Result<Vec<u8>, String> {
        let key = serde_json::to_string(&(api_version, kind, namespace, labels, fields, masks))
            .map_err(|e| e.to_string())?;
        let known = self
            .lists
            .lock()
            .ok()
            .and_then(|lists| lists.get(&key).cloned());
        let answer = match known {
            Some(answer) => answer,
            None => {
                let answer = self
                    .answer_list(api_version, kind, namespace, labels, fields, masks)
                    .map(Arc::from);
                if let Ok(mut lists) = self.lists.lock() {
                    lists.insert(key, answer.clone());
                }
                answer
            }
        };
        answer.map(|bytes| bytes.to_vec())
    }

    fn answer_list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        labels: Option<&str>,
        fields: Option<&str>,
        masks: Option<&BTreeSet<String>>,
    ) -> Result<Vec<u8>, String> {
        let (group, _) = shared::apps::group_version(api_version);
        if let Coverage::Unread(unread) = self.coverage(api_version, kind) {
            return Err(unread.to_string());
        }
        let labels = labels.map(label_selector).transpose()?.unwrap_or_default();
        let fields = fields.map(field_selector).transpose()?.unwrap_or_default();
        let items: Vec<Value> = self
            .of_kind(group, kind, namespace)
            .filter(|o| &*o.api_version == api_version)
            .filter(|o| labels.iter().all(|r| r.matches(Some(&o.labels))))
            .filter(|o| {
                fields.iter().all(|(field, equal, value)| {
                    let found = match field.as_str() {
                        "metadata.name" => &o.name,
                        _ => &o.namespace,
                    };
                    (&**found == value) == *equal
                })
            })
            .map(|o| masked(&o.value(), masks))
            .collect();
        serde_json::to_vec(
            &json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}),
        )
        .map_err(|e| e.to_string())
    }

    fn get(
        &self,
        api_version: &str,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        masks: Option<&BTreeSet<String>>,
    ) -> Result<Vec<u8>, String> {
        let (group, _) = shared::apps::group_version(api_version);
        let scope = namespace.unwrap_or_default();
        if let Coverage::Unread(unread) = self.object_coverage(api_version, kind, scope, name) {
            return Err(unread.to_string());
        }
        let object = self
            .of_kind(group, kind, Some(scope))
            .find(|o| &*o.api_version == api_version && &*o.name == name)
            .ok_or_else(|| shared::lookup::not_found(api_version, kind, name, namespace))?
            .value();
        let object = &object;
        if let Some(unread) = uncaptured_data(object, masks) {
            let what = format!("secrets {scope}/{name}");
            return Err(Unread {
                what,
                why: unread,
                detail: String::new(),
                command: SNAPSHOT_COMMAND.to_owned(),
            }
            .to_string());
        }
        serde_json::to_vec(&masked(object, masks)).map_err(|e| e.to_string())
    }

    /// The answer to one Kubernetes read, or the reason the host gives.
    pub fn answer(&self, request: &CapabilityRequest) -> Result<Vec<u8>, String> {
        match request {
            CapabilityRequest::KubernetesListResourceNamespace {
                api_version,
                kind,
                namespace,
                label_selector,
                field_selector,
                field_masks,
                ..
            } => self.list(
                api_version,
                kind,
                Some(namespace),
                label_selector.as_deref(),
                field_selector.as_deref(),
                field_masks.as_ref(),
            ),
            CapabilityRequest::KubernetesListResourceAll {
                api_version,
                kind,
                label_selector,
                field_selector,
                field_masks,
                ..
            } => self.list(
                api_version,
                kind,
                None,
                label_selector.as_deref(),
                field_selector.as_deref(),
                field_masks.as_ref(),
            ),
            CapabilityRequest::KubernetesGetResource {
                api_version,
                kind,
                name,
                namespace,
                field_masks,
                ..
            } => self.get(
                api_version,
                kind,
                name,
                namespace.as_deref(),
                field_masks.as_ref(),
            ),
            other => Err(format!(
                "a cluster snapshot answers Kubernetes reads only, not {}",
                other.describe()
            )),
        }
    }
}

/// How to capture every object of `kind` at `api_version`: the capture
/// block, whose read of it is this.
fn kind_command(api_version: &str, kind: &str) -> String {
    if (api_version, kind) == ("v1", "Secret") {
        return SNAPSHOT_COMMAND.to_owned();
    }
    format!(
        "{SNAPSHOT_COMMAND} (its read: `kubectl get {} --all-namespaces`)",
        versioned_resource(api_version, kind)
    )
}

/// A snapshot answers a module's reads as policy-server would
/// ([`Snapshot::answer`]), and the same reads made by the bundle's own
/// code: the release the cluster records ([`Snapshot::cozystack_release`]).
impl Cluster for Snapshot {
    fn call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, LookupError> {
        let request = CapabilityRequest::from_host_call("kubernetes", operation, request)
            .map_err(LookupError)?;
        self.answer(&request).map_err(LookupError)
    }
}

impl Snapshot {
    /// The Cozystack release the cluster records and whether the bundle
    /// knows it, as the policies read it with `cozystackVersion: cluster`;
    /// an error when the snapshot did not capture the Deployment that
    /// records it (the preflight and the wiring report print either).
    pub fn cozystack_release(&self) -> Result<Found, LookupError> {
        Found::read(self)
    }

    /// [`Snapshot::cozystack_release`] in one line, for the head of the
    /// preflight and of the wiring report.
    pub fn release_line(&self) -> String {
        match self.cozystack_release() {
            Ok(found) => format!("The cluster runs {found}"),
            Err(error) if error.0.starts_with(shared::lookup::NOT_FOUND) => format!(
                "The cluster's Cozystack release was not read: the snapshot holds no Deployment \
                 {}/{}, which records it; rules bound to a release judge by their setting's default, \
                 and say so",
                release::OPERATOR_NAMESPACE,
                release::OPERATOR
            ),
            Err(error) => format!(
                "The cluster's Cozystack release was not read ({error}): rules bound to a release judge by \
                 their setting's default, and say so"
            ),
        }
    }
}

/// What a snapshot says of one object it did not read.
fn unread_object(
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    (why, detail): (String, String),
) -> Coverage {
    let (group, _) = shared::apps::group_version(api_version);
    let resource = resource(group, kind);
    let scope = if namespace.is_empty() {
        String::new()
    } else {
        format!(" --namespace {namespace}")
    };
    let command = if (group, kind) == ("", "Secret") {
        SNAPSHOT_COMMAND.to_owned()
    } else {
        format!(
            "{SNAPSHOT_COMMAND} (its read: `kubectl get {}{scope} {name}`)",
            versioned_resource(api_version, kind)
        )
    };
    let what = if namespace.is_empty() {
        format!("{resource} {name}")
    } else {
        format!("{resource} {namespace}/{name}")
    };
    Coverage::Unread(Unread {
        what,
        why,
        detail,
        command,
    })
}

/// Why the snapshot cannot answer the `data` keys `masks` ask of a Secret,
/// if it cannot: the capture script copies only the keys it lists in
/// [`CAPTURED_KEYS`], and a Secret captured by name alone (no `type`, which
/// every Secret the API server returns has) holds none of its data.
fn uncaptured_data(object: &Value, masks: Option<&BTreeSet<String>>) -> Option<String> {
    if (text(object, "/apiVersion"), text(object, "/kind")) != ("v1", "Secret") {
        return None;
    }
    let asked: Vec<&str> = match masks {
        Some(masks) => masks
            .iter()
            .filter_map(|m| m.strip_prefix("data."))
            .collect(),
        None => vec!["(every key)"],
    };
    if asked.is_empty() {
        return None;
    }
    let captured = object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(CAPTURED_KEYS))
        .and_then(Value::as_str);
    let missing: Vec<&str> = match captured {
        Some(list) => {
            let listed: Vec<&str> = list.split_whitespace().collect();
            asked
                .into_iter()
                .filter(|key| !listed.contains(key))
                .collect()
        }
        None if object.get("type").is_some() => Vec::new(),
        None => asked,
    };
    if missing.is_empty() {
        None
    } else {
        Some(format!(
            "captured without its key(s) {}",
            missing.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn snapshot() -> Snapshot {
        Snapshot::new(vec![
            json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": "tenant-foo", "namespace": "tenant-root",
                    "labels": {"apps.cozystack.io/application.kind": "Tenant", "apps.cozystack.io/application.group": "apps.cozystack.io"}},
                "spec": {"values": {"resourceQuotas": {"cpu": "8"}, "host": "foo.example.org"}}}),
            json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": "postgres-db", "namespace": "tenant-foo",
                    "labels": {"apps.cozystack.io/application.kind": "Postgres"}}}),
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "cozy-backups-creds", "namespace": "cozy-velero"}}),
            json!({"apiVersion": "cozystack.io/v1alpha1", "kind": "Package",
                "metadata": {"name": "cozystack.cozystack-platform"}, "spec": {"variant": "isp-full"}}),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": "seaweedfs-volume", "namespace": "tenant-foo"},
                "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b"}]}}}}),
        ])
        .unwrap()
    }

    fn masks(paths: &[&str]) -> Option<BTreeSet<String>> {
        Some(paths.iter().map(|p| (*p).to_owned()).collect())
    }

    fn answer(request: CapabilityRequest) -> Result<Value, String> {
        snapshot()
            .answer(&request)
            .map(|bytes| serde_json::from_slice(&bytes).unwrap())
    }

    #[test]
    fn lists_select_by_namespace_labels_and_fields_and_prune_to_the_masks() {
        let all = answer(CapabilityRequest::KubernetesListResourceAll {
            api_version: "helm.toolkit.fluxcd.io/v2".into(),
            kind: "HelmRelease".into(),
            label_selector: Some(
                "apps.cozystack.io/application.kind=Tenant,apps.cozystack.io/application.group=apps.cozystack.io".into(),
            ),
            field_selector: None,
            disable_cache: false,
            field_masks: masks(&["metadata.name", "spec.values.resourceQuotas"]),
        })
        .unwrap();
        assert_eq!(
            all["items"],
            json!([{"metadata": {"name": "tenant-foo"}, "spec": {"values": {"resourceQuotas": {"cpu": "8"}}}}])
        );
        let listed = |namespace: &str, labels: Option<&str>, fields: Option<&str>| {
            answer(CapabilityRequest::KubernetesListResourceNamespace {
                api_version: "helm.toolkit.fluxcd.io/v2".into(),
                kind: "HelmRelease".into(),
                namespace: namespace.into(),
                label_selector: labels.map(str::to_owned),
                field_selector: fields.map(str::to_owned),
                disable_cache: false,
                field_masks: masks(&["metadata.name"]),
            })
            .map(|a| a["items"].as_array().unwrap().len())
        };
        assert_eq!(
            listed(
                "tenant-foo",
                Some("apps.cozystack.io/application.kind"),
                None
            ),
            Ok(1)
        );
        assert_eq!(
            listed(
                "tenant-foo",
                Some("!apps.cozystack.io/application.kind"),
                None
            ),
            Ok(0)
        );
        assert_eq!(
            listed(
                "tenant-foo",
                Some("apps.cozystack.io/application.kind in (Tenant, Postgres)"),
                None
            ),
            Ok(1)
        );
        assert_eq!(
            listed(
                "tenant-foo",
                Some("apps.cozystack.io/application.kind notin (Postgres)"),
                None
            ),
            Ok(0)
        );
        assert_eq!(
            listed(
                "tenant-foo",
                Some("apps.cozystack.io/application.kind!=Tenant"),
                None
            ),
            Ok(1)
        );
        assert_eq!(
            listed("tenant-foo", None, Some("metadata.name=postgres-db")),
            Ok(1)
        );
        assert_eq!(
            listed("tenant-foo", None, Some("metadata.name!=postgres-db")),
            Ok(0)
        );
        assert_eq!(listed("tenant-bar", None, None), Ok(0));
        assert!(
            listed("tenant-foo", None, Some("spec.x=1"))
                .unwrap_err()
                .contains("field label not supported")
        );
        assert!(
            listed("tenant-foo", Some("a in b"), None)
                .unwrap_err()
                .contains("unable to parse")
        );
    }

    fn read(api_version: &str, kind: &str, result: ReadResult) -> Value {
        json!({"apiVersion": api_version, "kind": kind,
            "resource": resource(shared::apps::group_version(api_version).0, kind),
            "result": result, "message": if result.is_read() { "" } else { "Error from server (Forbidden): no" }})
    }

    fn record(reads: Vec<Value>) -> Value {
        json!({"apiVersion": CAPTURE_API_VERSION, "kind": CAPTURE_KIND,
            "metadata": {"name": "snapshot"}, "context": "admin@cozy",
            "capturedAt": "2026-12-05T00:00:00Z", "reads": reads})
    }

    fn list_all(snapshot: &Snapshot, api_version: &str, kind: &str) -> Result<usize, String> {
        snapshot
            .answer(&CapabilityRequest::KubernetesListResourceAll {
                api_version: api_version.into(),
                kind: kind.into(),
                label_selector: None,
                field_selector: None,
                disable_cache: false,
                field_masks: None,
            })
            .map(|bytes| {
                let list: Value = serde_json::from_slice(&bytes).unwrap();
                list["items"].as_array().unwrap().len()
            })
    }

    /// An empty list, a kind the cluster does not serve, a forbidden kind
    /// and a kind the capture never read: only the record tells them apart.
    #[test]
    fn a_kind_the_capture_did_not_read_is_unread_not_empty() {
        let captured = Snapshot::new(vec![
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data1-seaweedfs-volume-0", "namespace": "tenant-foo"}}),
            record(vec![
                read("v1", "PersistentVolumeClaim", ReadResult::Captured),
                read("v1", "ResourceQuota", ReadResult::Captured),
                read(
                    "objectstorage.k8s.io/v1alpha1",
                    "BucketClaim",
                    ReadResult::NotInstalled,
                ),
                read("apps/v1", "StatefulSet", ReadResult::Forbidden),
            ]),
        ])
        .unwrap();
        assert_eq!(captured.len(), 1, "the record is not an object");
        assert_eq!(captured.capture().unwrap().context, "admin@cozy");
        assert_eq!(list_all(&captured, "v1", "PersistentVolumeClaim"), Ok(1));
        assert_eq!(list_all(&captured, "v1", "ResourceQuota"), Ok(0));
        assert_eq!(
            list_all(&captured, "objectstorage.k8s.io/v1alpha1", "BucketClaim"),
            Ok(0)
        );
        assert_eq!(
            list_all(&captured, "apps/v1", "StatefulSet").unwrap_err(),
            "the snapshot did not read statefulsets.apps (forbidden); capture it with the block \
             `cozystack-policies snapshot-command` prints (its read: `kubectl get statefulsets.v1.apps \
             --all-namespaces`)"
        );
        assert_eq!(
            list_all(&captured, "v1", "ConfigMap").unwrap_err(),
            "the snapshot did not read configmaps (its capture did not read it); capture it with the \
             block `cozystack-policies snapshot-command` prints (its read: `kubectl get configmaps \
             --all-namespaces`)"
        );
        // Without a record, the kinds of the objects it holds are read.
        let bare = Snapshot::new(vec![
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "a", "namespace": "tenant-foo"}}),
        ])
        .unwrap();
        assert_eq!(list_all(&bare, "v1", "PersistentVolumeClaim"), Ok(1));
        let error = list_all(&bare, "v1", "ResourceQuota").unwrap_err();
        assert!(error.contains("unread, not empty"), "{error}");
        assert!(matches!(
            bare.coverage("v1", "ResourceQuota"),
            Coverage::Unread(_)
        ));
        // A record that is not one is refused, not ignored.
        let broken = record(vec![
            json!({"apiVersion": "v1", "kind": "Node", "result": "maybe"}),
        ]);
        assert!(Snapshot::new(vec![broken]).is_err());
    }

    fn why(coverage: Coverage) -> String {
        match coverage {
            Coverage::Unread(unread) => unread.why,
            other => panic!("{other:?} is not unread"),
        }
    }

    /// A kind is read at one version: a record or objects of another are
    /// no reading of it.
    #[test]
    fn a_kind_at_another_version_is_unread() {
        let template = |version: &str| {
            json!({"apiVersion": format!("bootstrap.cluster.x-k8s.io/{version}"), "kind": "KubeadmConfigTemplate",
                "metadata": {"name": "t", "namespace": "tenant-foo"}})
        };
        let wanted = "bootstrap.cluster.x-k8s.io/v1beta1";
        let plain = Snapshot::new(vec![template("v1beta2")]).unwrap();
        assert_eq!(
            why(plain.coverage(wanted, "KubeadmConfigTemplate")),
            "the snapshot holds it at v1beta2 only, which no rule reads"
        );
        assert!(!plain.holds(wanted, "KubeadmConfigTemplate", None));
        let recorded = Snapshot::new(vec![
            template("v1beta2"),
            record(vec![read(
                "bootstrap.cluster.x-k8s.io/v1beta2",
                "KubeadmConfigTemplate",
                ReadResult::Captured,
            )]),
        ])
        .unwrap();
        let Coverage::Unread(unread) = recorded.coverage(wanted, "KubeadmConfigTemplate") else {
            panic!("read");
        };
        assert_eq!(
            unread.why,
            "captured at bootstrap.cluster.x-k8s.io/v1beta2, which no rule reads"
        );
        assert!(
            unread
                .command
                .contains("`kubectl get kubeadmconfigtemplates.v1beta1.bootstrap.cluster.x-k8s.io --all-namespaces`"),
            "{}",
            unread.command
        );
        // Not installed at v1beta1, while its CRD serves v1beta2 only.
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io"},
            "spec": {"versions": [{"name": "v1beta1", "served": false}, {"name": "v1beta2", "served": true}]}});
        let elsewhere = Snapshot::new(vec![
            crd,
            record(vec![
                read(wanted, "KubeadmConfigTemplate", ReadResult::NotInstalled),
                read(
                    "apiextensions.k8s.io/v1",
                    "CustomResourceDefinition",
                    ReadResult::Captured,
                ),
            ]),
        ])
        .unwrap();
        assert_eq!(
            why(elsewhere.coverage(wanted, "KubeadmConfigTemplate")),
            "the cluster serves it at bootstrap.cluster.x-k8s.io/v1beta2 only, which no rule reads"
        );
    }

    /// What every Cozystack cluster serves and holds cannot be absent: a
    /// record that says so is a failed read; an aggregated API whose
    /// APIService is not Available is unavailable, not absent.
    #[test]
    fn the_record_is_checked_against_what_every_cluster_has() {
        let apps = "apps.cozystack.io/v1alpha1";
        let service = |status: &str| {
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                "metadata": {"name": "v1alpha1.apps.cozystack.io"},
                "spec": {"service": {"name": "cozystack-api", "namespace": "cozy-system"}},
                "status": {"conditions": [{"type": "Available", "status": status,
                    "reason": "FailedDiscoveryCheck", "message": "503"}]}})
        };
        let snapshot = |available: &str| {
            Snapshot::new(vec![
                service(available),
                record(vec![
                    read(apps, "Tenant", ReadResult::NotInstalled),
                    read(apps, "Kubernetes", ReadResult::NotInstalled),
                    read("v1", "Node", ReadResult::Captured),
                    read(
                        "apiregistration.k8s.io/v1",
                        "APIService",
                        ReadResult::Captured,
                    ),
                ]),
            ])
            .unwrap()
        };
        let down = snapshot("False");
        assert!(why(down.coverage(apps, "Tenant")).starts_with(
            "recorded as not installed, but every Cozystack management cluster serves it"
        ));
        assert_eq!(
            why(down.coverage(apps, "Kubernetes")),
            "unavailable: APIService v1alpha1.apps.cozystack.io is not Available (FailedDiscoveryCheck: 503)"
        );
        assert!(
            why(down.coverage("v1", "Node")).contains("every Cozystack management cluster has one"),
            "captured, but no Node"
        );
        // With the API available, a Kubernetes kind absent is absent (the
        // iaas bundle is optional).
        assert_eq!(
            snapshot("True").coverage(apps, "Kubernetes"),
            Coverage::NotInstalled
        );
        // The cozy-system Namespace, read by name and not found.
        let mut named = read("v1", "Namespace", ReadResult::Captured);
        named["name"] = json!("cozy-system");
        let lacking = Snapshot::new(vec![record(vec![named])]).unwrap();
        assert!(
            why(lacking.object_coverage("v1", "Namespace", "", "cozy-system"))
                .contains("the snapshot lacks it, and every Cozystack management cluster has it")
        );
        // Two records are an error naming both.
        let two = Snapshot::new(vec![record(vec![]), record(vec![])]).unwrap_err();
        assert!(
            two.to_string().starts_with(
                "the snapshot holds two SnapshotCapture records, the capture of \"admin@cozy\" at \
                 \"2026-12-05T00:00:00Z\" and the capture of \"admin@cozy\""
            ),
            "{two}"
        );
    }

    /// A snapshot read with the bundle's reads keeps only what they read,
    /// every credential as whether it is set, and names what it dropped.
    #[test]
    fn a_snapshot_keeps_only_what_the_rules_read() {
        let metadata: wasm_meta::Metadata = serde_saphyr::from_str(
            r#"
rules:
- {apiGroups: [apps.cozystack.io], apiVersions: [v1alpha1], resources: [etcds], operations: [CREATE]}
mutating: false
contextAwareResources:
- {apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease}
annotations:
  io.kubewarden.policy.title: p
  io.cozystack-policies.reads: spec
  io.cozystack-policies.cluster-reads: "helm.toolkit.fluxcd.io/v2/HelmRelease: spec.values.resourceQuotas"
"#,
        )
        .unwrap();
        let reads = Reads::of([&metadata]).unwrap();
        let mut builder = Builder::new(Some(&reads));
        builder
            .add(json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Etcd",
                "metadata": {"name": "etcd", "namespace": "tenant-foo", "uid": "u", "managedFields": [{}],
                    "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"s3SecretKey\": \"x\"}"}},
                "spec": {"replicas": 3, "backup": {"s3AccessKey": "AKIA", "s3SecretKey": "", "enabled": false}},
                "status": {"ready": true}}))
            .unwrap();
        builder
            .add(json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": "postgres-db", "namespace": "tenant-foo"},
                "spec": {"values": {"users": {"app": {"password": "hunter2"}}, "resourceQuotas": {"cpu": "2"}}}}))
            .unwrap();
        let snapshot = builder.finish();
        let objects: Vec<Value> = snapshot.objects().collect();
        assert_eq!(
            objects[0],
            json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Etcd",
                "metadata": {"name": "etcd", "namespace": "tenant-foo"},
                "spec": {"replicas": 3, "backup": {"s3AccessKey": REDACTED, "s3SecretKey": "", "enabled": false}}})
        );
        assert_eq!(
            objects[1],
            json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": "postgres-db", "namespace": "tenant-foo"},
                "spec": {"values": {"resourceQuotas": {"cpu": "2"}}}})
        );
        assert_eq!(
            snapshot.credentials(),
            [
                "Etcd tenant-foo/etcd: metadata.annotations[\"kubectl.kubernetes.io/last-applied-configuration\"]",
                "Etcd tenant-foo/etcd: spec.backup.s3AccessKey",
                "HelmRelease tenant-foo/postgres-db: spec.values.users.app.password",
            ]
        );
    }

    fn get(
        snapshot: &Snapshot,
        kind: &str,
        namespace: &str,
        name: &str,
        masks: &[&str],
    ) -> Result<Value, String> {
        snapshot
            .answer(&CapabilityRequest::KubernetesGetResource {
                api_version: "v1".into(),
                kind: kind.into(),
                name: name.into(),
                namespace: Some(namespace.into()),
                disable_cache: false,
                field_masks: Some(masks.iter().map(|m| (*m).to_owned()).collect()),
            })
            .map(|bytes| serde_json::from_slice(&bytes).unwrap())
    }

    /// One object read by name answers for itself, absent or present; a
    /// Secret's data answers only for the keys the capture copied.
    #[test]
    fn objects_read_by_name_and_the_keys_of_secrets() {
        let named = |kind: &str, namespace: &str, name: &str, result: ReadResult| {
            let mut read = read("v1", kind, result);
            read["namespace"] = json!(namespace);
            read["name"] = json!(name);
            read
        };
        let snapshot = Snapshot::new(vec![
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "cozy-backups-creds",
                "namespace": "cozy-velero", "annotations": {CAPTURED_KEYS: "AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY bucketName"}},
                "data": {"AWS_ACCESS_KEY_ID": REDACTED, "bucketName": "Y296eS1iYWNrdXBz"}}),
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "patch-containerd", "namespace": "cozy-system"}}),
            record(vec![
                named("ConfigMap", "cozy-system", "cozystack-version", ReadResult::Captured),
                named("Secret", "cozy-velero", "cozy-backups-creds", ReadResult::Captured),
                named("Secret", "cozy-system", "patch-containerd", ReadResult::Captured),
                named("Secret", "cozy-system", "other", ReadResult::Timeout),
            ]),
        ])
        .unwrap();
        let missing = get(
            &snapshot,
            "ConfigMap",
            "cozy-system",
            "cozystack-version",
            &["metadata.name"],
        );
        assert!(missing.unwrap_err().starts_with("Cannot find v1/ConfigMap"));
        let other = get(
            &snapshot,
            "ConfigMap",
            "cozy-system",
            "other",
            &["metadata.name"],
        );
        assert!(other.unwrap_err().contains("configmaps cozy-system/other"));
        let creds = get(
            &snapshot,
            "Secret",
            "cozy-velero",
            "cozy-backups-creds",
            &[
                "data.AWS_ACCESS_KEY_ID",
                "data.AWS_SECRET_ACCESS_KEY",
                "data.bucketName",
            ],
        )
        .unwrap();
        assert_eq!(
            creds["data"],
            json!({"AWS_ACCESS_KEY_ID": REDACTED, "bucketName": "Y296eS1iYWNrdXBz"})
        );
        let endpoint = get(
            &snapshot,
            "Secret",
            "cozy-velero",
            "cozy-backups-creds",
            &["data.endpoint"],
        );
        assert!(
            endpoint
                .unwrap_err()
                .contains("captured without its key(s) endpoint")
        );
        // Captured by name alone: its name answers, its data does not.
        assert!(
            get(
                &snapshot,
                "Secret",
                "cozy-system",
                "patch-containerd",
                &["metadata.name"]
            )
            .is_ok()
        );
        let data = get(
            &snapshot,
            "Secret",
            "cozy-system",
            "patch-containerd",
            &["data.x"],
        )
        .unwrap_err();
        assert!(
            data.contains("the block `cozystack-policies snapshot-command` prints"),
            "{data}"
        );
        let timed_out = get(
            &snapshot,
            "Secret",
            "cozy-system",
            "other",
            &["metadata.name"],
        )
        .unwrap_err();
        assert!(
            timed_out.contains("secrets cozy-system/other (timeout"),
            "{timed_out}"
        );
    }

    #[test]
    fn masks_traverse_lists() {
        let set = snapshot().objects().nth(4).unwrap();
        assert_eq!(
            masked(
                &set,
                masks(&["spec.template.spec.containers.name", "metadata.name"]).as_ref()
            ),
            json!({"metadata": {"name": "seaweedfs-volume"},
                "spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}}})
        );
    }

    #[test]
    fn gets_find_one_object_or_fail_as_policy_server_does() {
        let get = |name: &str, namespace: Option<&str>| {
            answer(CapabilityRequest::KubernetesGetResource {
                api_version: "v1".into(),
                kind: "Secret".into(),
                name: name.into(),
                namespace: namespace.map(str::to_owned),
                disable_cache: false,
                field_masks: masks(&["metadata.name"]),
            })
        };
        assert_eq!(
            get("cozy-backups-creds", Some("cozy-velero")).unwrap(),
            json!({"metadata": {"name": "cozy-backups-creds"}})
        );
        let missing = get("cozy-backups-creds", Some("tenant-root")).unwrap_err();
        assert_eq!(
            missing,
            "Cannot find v1/Secret named 'cozy-backups-creds' inside of namespace 'Some(\"tenant-root\")'"
        );
        let package = answer(CapabilityRequest::KubernetesGetResource {
            api_version: "cozystack.io/v1alpha1".into(),
            kind: "Package".into(),
            name: "cozystack.cozystack-platform".into(),
            namespace: None,
            disable_cache: false,
            field_masks: None,
        })
        .unwrap();
        assert_eq!(package["spec"]["variant"], "isp-full");
        assert!(
            snapshot()
                .answer(&CapabilityRequest::DNSLookupHost { host: "a".into() })
                .unwrap_err()
                .contains("Kubernetes reads only")
        );
    }

    #[test]
    fn a_snapshot_names_the_release_its_cluster_records() {
        let operator = |image: &str| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "cozystack-operator", "namespace": "cozy-system"},
                   "spec": {"template": {"spec": {"containers": [
                       {"name": "cozystack-operator", "image": image}]}}}})
        };
        let found = Snapshot::new(vec![operator(
            "ghcr.io/cozystack/cozystack/cozystack-operator:v1.5.1@sha256:0",
        )])
        .unwrap()
        .cozystack_release()
        .unwrap();
        assert_eq!(found.recorded, "v1.5.1");
        assert_eq!(found.known, release::Release::parse("v1.5.1"));
        assert!(
            found.to_string().ends_with("a release the bundle knows"),
            "{found}"
        );
        let newer = Snapshot::new(vec![operator("cozystack-operator:v1.9.0")])
            .unwrap()
            .cozystack_release()
            .unwrap();
        assert_eq!(newer.known, None);
        assert!(
            newer
                .to_string()
                .contains("a release the bundle does not know"),
            "{newer}"
        );
        let error = Snapshot::new(Vec::new())
            .unwrap()
            .cozystack_release()
            .unwrap_err();
        assert!(error.0.contains("the snapshot did not read"), "{error}");
    }
}
