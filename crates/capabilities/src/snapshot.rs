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

mod capture;
mod mask;
mod selector;

use std::collections::BTreeSet;

use serde_json::{Value, json};

pub use capture::{
    API_VERSION as CAPTURE_API_VERSION, CAPTURED_KEYS, Capture, CaptureError, KIND as CAPTURE_KIND,
    REDACTED, Read, ReadResult,
};
use mask::masked;
use selector::{field_selector, label_selector};

use release::Found;
use shared::lookup::{Cluster, LookupError};

use crate::replay::CapabilityRequest;

/// The objects of a cluster, as captured, and what the capture read.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    objects: Vec<Value>,
    /// The capture's record; `None` for a snapshot that has none.
    capture: Option<Capture>,
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

/// Why a kind absent from a snapshot without a record is not empty.
const NO_RECORD: &str =
    "no capture record, and none of it in the snapshot: absent is unread, not empty";

fn text<'v>(object: &'v Value, pointer: &str) -> &'v str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn group_of(object: &Value) -> &str {
    shared::apps::group_version(text(object, "/apiVersion")).0
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

/// What captures a Secret: the capture block copies it without its
/// credentials, which a plain `kubectl get` would not.
const SNAPSHOT_COMMAND: &str = "the block `cozystack-policies snapshot-command` prints";

/// Why a read ended as it did, and kubectl's words for it.
fn reason(read: &Read) -> (String, String) {
    (read.result.as_str().to_owned(), read.message.clone())
}

impl Snapshot {
    /// The snapshot of these documents: objects (each with `apiVersion`,
    /// `kind` and `metadata.name`) and the capture's records, which are
    /// not objects of the cluster.
    pub fn new(documents: Vec<Value>) -> Result<Self, CaptureError> {
        let mut capture: Option<Capture> = None;
        let mut objects = Vec::with_capacity(documents.len());
        for document in documents {
            if Capture::is_record(&document) {
                let record = Capture::from_record(&document)?;
                match &mut capture {
                    Some(capture) => capture.merge(record),
                    None => capture = Some(record),
                }
            } else {
                objects.push(document);
            }
        }
        Ok(Self { objects, capture })
    }

    /// How many objects it holds.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether it holds no object.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// The capture's record, if the snapshot has one.
    pub fn capture(&self) -> Option<&Capture> {
        self.capture.as_ref()
    }

    /// Whether it holds an object of `kind` in API `group` (`""`: core)
    /// named `only` (`(namespace, name)`) if given.
    pub fn holds(&self, group: &str, kind: &str, only: Option<(&str, &str)>) -> bool {
        self.objects.iter().any(|o| {
            group_of(o) == group
                && text(o, "/kind") == kind
                && only.is_none_or(|(namespace, name)| {
                    text(o, "/metadata/namespace") == namespace && text(o, "/metadata/name") == name
                })
        })
    }

    /// What the snapshot can say of every object of `group`/`kind`.
    pub fn coverage(&self, group: &str, kind: &str) -> Coverage {
        let unread = |(why, detail): (String, String)| {
            let what = resource(group, kind);
            let command = if (group, kind) == ("", "Secret") {
                SNAPSHOT_COMMAND.to_owned()
            } else {
                format!("`kubectl get {what} --all-namespaces -o yaml`")
            };
            Coverage::Unread(Unread {
                what,
                why,
                detail,
                command,
            })
        };
        match &self.capture {
            Some(capture) => match capture.kind_read(group, kind) {
                Some(read) => match read.result {
                    ReadResult::Captured => Coverage::Read,
                    ReadResult::NotInstalled => Coverage::NotInstalled,
                    _ => unread(reason(read)),
                },
                None => unread(("its capture did not read it".to_owned(), String::new())),
            },
            None if self.holds(group, kind, None) => Coverage::Read,
            None => unread((NO_RECORD.to_owned(), String::new())),
        }
    }

    /// What the snapshot can say of the one object `namespace`/`name` (`""`
    /// for a cluster-scoped kind) of `group`/`kind`: every object of the
    /// kind read, that object read by name, or (without a record) the
    /// object present.
    pub fn object_coverage(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Coverage {
        let of_kind = self.coverage(group, kind);
        if !matches!(of_kind, Coverage::Unread(_)) {
            return of_kind;
        }
        let read = self
            .capture
            .as_ref()
            .and_then(|capture| capture.object_read(group, kind, namespace, name));
        if let Some(read) = read {
            return match read.result {
                ReadResult::Captured => Coverage::Read,
                ReadResult::NotInstalled => Coverage::NotInstalled,
                _ => unread_object(group, kind, namespace, name, reason(read)),
            };
        }
        if self.capture.is_none() && self.holds(group, kind, Some((namespace, name))) {
            return Coverage::Read;
        }
        let why = match of_kind {
            Coverage::Unread(unread) => (unread.why, unread.detail),
            _ => (String::new(), String::new()),
        };
        unread_object(group, kind, namespace, name, why)
    }
    fn of_kind<'s>(&'s self, group: &'s str, kind: &'s str) -> impl Iterator<Item = &'s Value> {
        self.objects
            .iter()
            .filter(move |o| group_of(o) == group && text(o, "/kind") == kind)
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
        let (group, _) = shared::apps::group_version(api_version);
        if let Coverage::Unread(unread) = self.coverage(group, kind) {
            return Err(unread.to_string());
        }
        let labels = labels.map(label_selector).transpose()?.unwrap_or_default();
        let fields = fields.map(field_selector).transpose()?.unwrap_or_default();
        let items: Vec<Value> = self
            .of_kind(group, kind)
            .filter(|o| namespace.is_none_or(|ns| text(o, "/metadata/namespace") == ns))
            .filter(|o| {
                let found = o.pointer("/metadata/labels").and_then(Value::as_object);
                labels.iter().all(|r| r.matches(found))
            })
            .filter(|o| {
                fields.iter().all(|(field, equal, value)| {
                    let pointer = format!("/{}", field.replace('.', "/"));
                    (text(o, &pointer) == value) == *equal
                })
            })
            .map(|o| masked(o, masks))
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
        if let Coverage::Unread(unread) = self.object_coverage(group, kind, scope, name) {
            return Err(unread.to_string());
        }
        let object = self
            .of_kind(group, kind)
            .find(|o| text(o, "/metadata/name") == name && text(o, "/metadata/namespace") == scope)
            .ok_or_else(|| shared::lookup::not_found(api_version, kind, name, namespace))?;
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
}

/// What a snapshot says of one object it did not read.
fn unread_object(
    group: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    (why, detail): (String, String),
) -> Coverage {
    let resource = resource(group, kind);
    let scope = if namespace.is_empty() {
        String::new()
    } else {
        format!(" --namespace {namespace}")
    };
    let command = if (group, kind) == ("", "Secret") {
        SNAPSHOT_COMMAND.to_owned()
    } else {
        format!("`kubectl get {resource}{scope} {name} -o yaml`")
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
    if (group_of(object), text(object, "/kind")) != ("", "Secret") {
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
            "the snapshot did not read statefulsets.apps (forbidden); capture it with \
             `kubectl get statefulsets.apps --all-namespaces -o yaml`"
        );
        assert_eq!(
            list_all(&captured, "v1", "ConfigMap").unwrap_err(),
            "the snapshot did not read configmaps (its capture did not read it); capture it with \
             `kubectl get configmaps --all-namespaces -o yaml`"
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
            bare.coverage("", "ResourceQuota"),
            Coverage::Unread(_)
        ));
        // A record that is not one is refused, not ignored.
        let broken = record(vec![
            json!({"apiVersion": "v1", "kind": "Node", "result": "maybe"}),
        ]);
        assert!(Snapshot::new(vec![broken]).is_err());
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
        let set = snapshot().objects[4].clone();
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
