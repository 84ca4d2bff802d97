//! What the bundle's policies read of a cluster, kind by kind, as their
//! metadata declares it: the fields a snapshot keeps of each object, and
//! nothing else.
//!
//! Each policy's metadata says what its rules read of the objects they
//! judge (`io.cozystack-policies.reads`, its `READS`) and what its cluster
//! reads ask of each kind (`io.cozystack-policies.cluster-reads`, the field
//! masks of its reads; the Secrets it names in the secret annotations). The
//! capture block keeps exactly that of each kind (`snapshot-command`
//! generates its templates from [`Reads::fields`]), and a snapshot read
//! back keeps no more ([`Reads::keep`]), whatever the file holds.
//!
//! What the rules read is not always free of credentials: an application's
//! `spec` holds database passwords and S3 keys. Those fields are kept only
//! as whether they are set: a non-empty value becomes [`REDACTED`], as a
//! Secret's credential does. [`Reads::credentials`] names every field of an
//! object that carries a credential, for `preflight` to warn about a
//! snapshot that holds one.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use wasm_meta::metadata::{ClusterRead, Metadata, SecretRead, WebhookRule};

use super::capture::{CAPTURED_KEYS, REDACTED};
use crate::replay::CapabilityRequest;

/// What a snapshot keeps of every object, whatever the rules read: what
/// names it, its labels (which label selectors filter on), its age and
/// owner (which checks of stored objects need), and whether it is being
/// deleted.
pub const ALWAYS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "metadata.labels",
    "metadata.creationTimestamp",
    "metadata.deletionTimestamp",
    "metadata.ownerReferences.apiVersion",
    "metadata.ownerReferences.kind",
    "metadata.ownerReferences.name",
    "metadata.ownerReferences.controller",
];

/// What the snapshot itself reads, beyond the rules: which versions a
/// CustomResourceDefinition serves, an APIService's service and verdict,
/// and the migration version the checklist reads the cluster's release
/// from.
const OWN: &[(&str, &str, &[&str])] = &[
    (
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        &[
            "spec.group",
            "spec.names.plural",
            "spec.versions.name",
            "spec.versions.served",
        ],
    ),
    (
        "apiregistration.k8s.io/v1",
        "APIService",
        &[
            "spec.group",
            "spec.version",
            "spec.service.name",
            "spec.service.namespace",
            "status.conditions",
        ],
    ),
    ("v1", "ConfigMap", &["data.version"]),
];

/// Annotations never kept: kubectl's copy of the whole object as last
/// applied, credentials included.
pub const DROPPED_ANNOTATIONS: &[&str] = &["kubectl.kubernetes.io/last-applied-configuration"];

/// Keys whose string value is a credential, wherever they are: the
/// passwords, keys and tokens of the applications' values
/// (`values.schema.json` of every application at v1.5.4 and v1.6.2: a
/// test holds this list to them), the AWS keys of backup Secrets, the
/// `auth` of a registry configuration, and a file's `content`.
pub const CREDENTIAL_KEYS: &[&str] = &[
    "password",
    "resticPassword",
    "s3AccessKey",
    "s3SecretKey",
    "accessKeyId",
    "secretAccessKey",
    "token",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "privateKey",
    "auth",
    "content",
];

/// Keys whose value is free-form values for a chart (an addon's
/// `valuesOverride`): every string in it may be a credential, so a
/// snapshot keeps its structure and numbers, and each string only as
/// whether it is set.
pub const FREE_FORM_KEYS: &[&str] = &["valuesOverride"];

/// The fields kept of an object: every member below, or only some.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fields {
    /// The whole value.
    Whole,
    /// These members of an object (of each object of a list), each as its
    /// own fields say.
    Members(BTreeMap<String, Fields>),
}

impl Default for Fields {
    fn default() -> Self {
        Fields::Members(BTreeMap::new())
    }
}

impl Fields {
    /// The fields at these dotted paths (lists traversed, as field masks
    /// traverse them).
    pub fn of<'p>(paths: impl IntoIterator<Item = &'p str>) -> Self {
        let mut fields = Fields::default();
        for path in paths {
            fields.add(path);
        }
        fields
    }

    /// Keeps the value at the dotted `path` too.
    pub fn add(&mut self, path: &str) {
        let Fields::Members(members) = self else {
            return;
        };
        match path.split_once('.') {
            None => {
                members.insert(path.to_owned(), Fields::Whole);
            }
            Some((first, rest)) => members.entry(first.to_owned()).or_default().add(rest),
        }
    }

    /// The members kept, `None` when the whole value is.
    pub fn members(&self) -> Option<&BTreeMap<String, Fields>> {
        match self {
            Fields::Whole => None,
            Fields::Members(members) => Some(members),
        }
    }

    /// Whether `path` (dotted) is kept: at or below a kept field.
    pub fn covers(&self, path: &str) -> bool {
        let mut fields = self;
        for key in path.split('.') {
            match fields {
                Fields::Whole => return true,
                Fields::Members(members) => match members.get(key) {
                    Some(below) => fields = below,
                    None => return false,
                },
            }
        }
        matches!(fields, Fields::Whole)
    }

    /// What of `value` is kept, as the host prunes an object to field
    /// masks: members absent are left out, each item of a list is pruned
    /// (to `{}` when nothing of it is kept); `None` when nothing is.
    pub fn keep(&self, value: &Value) -> Option<Value> {
        let Fields::Members(members) = self else {
            return Some(value.clone());
        };
        match value {
            Value::Object(map) => {
                let kept: Map<String, Value> = members
                    .iter()
                    .filter_map(|(key, fields)| {
                        let below = map.get(key)?;
                        Some((key.clone(), fields.keep(below)?))
                    })
                    .collect();
                (!kept.is_empty()).then_some(Value::Object(kept))
            }
            Value::Array(items) => Some(Value::Array(
                items
                    .iter()
                    .map(|item| self.keep(item).unwrap_or_else(|| json!({})))
                    .collect(),
            )),
            _ => None,
        }
    }
}

/// Whether a webhook rule's list (`apiGroups`, `apiVersions`,
/// `resources`) names `value`.
fn names(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

/// Whether `rule` judges objects of `group`/`version`/`resource`.
fn judges(rule: &WebhookRule, group: &str, version: &str, resource: &str) -> bool {
    names(&rule.api_groups, group)
        && names(&rule.api_versions, version)
        && names(&rule.resources, resource)
}

/// What a whole bundle reads of a cluster.
#[derive(Debug, Clone, Default)]
pub struct Reads {
    /// Each policy's webhook rules, with what its rules read of the
    /// objects they judge.
    judged: Vec<(WebhookRule, Vec<String>)>,
    cluster: Vec<ClusterRead>,
    secrets: Vec<SecretRead>,
}

impl Reads {
    /// What the policies of this metadata read.
    pub fn of<'m>(metadata: impl IntoIterator<Item = &'m Metadata>) -> Result<Self, String> {
        let mut reads = Reads::default();
        for metadata in metadata {
            let judged = metadata.reads();
            reads.judged.extend(
                metadata
                    .rules
                    .iter()
                    .map(|rule| (rule.clone(), judged.clone())),
            );
            reads.cluster.extend(metadata.cluster_reads()?);
            for read in metadata.secret_reads()? {
                match reads
                    .secrets
                    .iter_mut()
                    .find(|r| (&r.namespace, &r.name) == (&read.namespace, &read.name))
                {
                    Some(known) => {
                        known.values.extend(read.values);
                        known.credentials.extend(read.credentials);
                    }
                    None => reads.secrets.push(read),
                }
            }
        }
        for secret in &mut reads.secrets {
            for keys in [&mut secret.values, &mut secret.credentials] {
                keys.sort();
                keys.dedup();
            }
        }
        Ok(reads)
    }

    /// What a snapshot keeps of objects of `kind` at `api_version`: what it
    /// keeps of every object, what the rules that judge the kind read, what
    /// the cluster reads ask of it, and what the snapshot itself reads.
    /// Secrets are [`Reads::secret`]'s.
    pub fn fields(&self, api_version: &str, kind: &str) -> Fields {
        let (group, version) = shared::apps::group_version(api_version);
        let resource = shared::apps::plural(group, kind);
        let mut fields = Fields::of(ALWAYS.iter().copied());
        for (rule, paths) in &self.judged {
            if judges(rule, group, version, &resource) {
                paths.iter().for_each(|path| fields.add(path));
            }
        }
        for read in &self.cluster {
            if (
                read.resource.api_version.as_str(),
                read.resource.kind.as_str(),
            ) == (api_version, kind)
            {
                read.paths.iter().for_each(|path| fields.add(path));
            }
        }
        for (own_version, own_kind, paths) in OWN {
            if (*own_version, *own_kind) == (api_version, kind) {
                paths.iter().for_each(|path| fields.add(path));
            }
        }
        fields
    }

    /// The Secrets the policies read, each with every key they read of it.
    pub fn secrets(&self) -> &[SecretRead] {
        &self.secrets
    }

    /// What the policies read of Secret `namespace`/`name`, if they read it.
    pub fn secret(&self, namespace: &str, name: &str) -> Option<&SecretRead> {
        self.secrets
            .iter()
            .find(|r| (r.namespace.as_str(), r.name.as_str()) == (namespace, name))
    }

    /// `object` as a snapshot keeps it: the fields of its kind
    /// ([`Reads::fields`]), every credential among them only as whether it
    /// is set, no annotation of [`DROPPED_ANNOTATIONS`]; a Secret with the
    /// data keys the policies read of it that the copy holds, its
    /// credentials likewise, and the list of them ([`CAPTURED_KEYS`]).
    pub fn keep(&self, object: &Value, fields: &Fields) -> Value {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
        let api_version = text("/apiVersion").unwrap_or_default();
        let kind = text("/kind").unwrap_or_default();
        let mut kept = fields.keep(object).unwrap_or_else(|| json!({}));
        if let Some(kept) = kept.as_object_mut() {
            kept.insert("apiVersion".into(), api_version.into());
            kept.insert("kind".into(), kind.into());
        }
        if let Some(annotations) = kept
            .pointer_mut("/metadata/annotations")
            .and_then(Value::as_object_mut)
        {
            for dropped in DROPPED_ANNOTATIONS {
                annotations.remove(*dropped);
            }
        }
        redact(&mut kept, false);
        if (api_version, kind) == ("v1", "Secret") {
            self.keep_secret_data(object, &mut kept);
        }
        kept
    }

    /// A Secret's data as the capture block copies it.
    fn keep_secret_data(&self, object: &Value, kept: &mut Value) {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
        let read = self.secret(
            text("/metadata/namespace").unwrap_or_default(),
            text("/metadata/name").unwrap_or_default(),
        );
        let data = object.get("data").and_then(Value::as_object);
        // What a copy says it examined: the capture's list; every key of a
        // Secret as the API server returns it (it has a `type`); none of
        // one an older capture copied by name alone.
        let already = object
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(CAPTURED_KEYS))
            .and_then(Value::as_str)
            .or_else(|| object.get("type").is_none().then_some(""));
        let mut examined: Vec<&str> = Vec::new();
        let mut copied = Map::new();
        if let Some(read) = read {
            for (key, credential) in read
                .values
                .iter()
                .map(|k| (k, false))
                .chain(read.credentials.iter().map(|k| (k, true)))
            {
                // A copy already through the capture keeps what it examined.
                if already.is_some_and(|list| !list.split_whitespace().any(|k| k == key)) {
                    continue;
                }
                examined.push(key);
                match data.and_then(|d| d.get(key)).and_then(Value::as_str) {
                    Some("") | None => {}
                    Some(_) if credential => {
                        copied.insert(key.clone(), REDACTED.into());
                    }
                    Some(value) => {
                        copied.insert(key.clone(), value.into());
                    }
                }
            }
        }
        examined.sort_unstable();
        if let Some(kept) = kept.as_object_mut() {
            kept.insert("data".into(), Value::Object(copied));
            let metadata = kept
                .entry("metadata")
                .or_insert_with(|| json!({}))
                .as_object_mut();
            if let Some(metadata) = metadata {
                let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
                if let Some(annotations) = annotations.as_object_mut() {
                    annotations.insert(CAPTURED_KEYS.into(), examined.join(" ").into());
                }
            }
        }
    }

    /// Where `object` carries a credential: each field (a dotted path) that
    /// holds a value a snapshot must never hold.
    pub fn credentials(&self, object: &Value) -> Vec<String> {
        let mut found = Vec::new();
        walk(object, "", false, &mut found);
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
        if let Some(annotations) = object
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
        {
            for dropped in DROPPED_ANNOTATIONS {
                if annotations.contains_key(*dropped) {
                    found.push(format!("metadata.annotations[{dropped:?}]"));
                }
            }
        }
        if (text("/apiVersion"), text("/kind")) == (Some("v1"), Some("Secret")) {
            let read = self.secret(
                text("/metadata/namespace").unwrap_or_default(),
                text("/metadata/name").unwrap_or_default(),
            );
            for field in ["data", "stringData"] {
                for (key, value) in object
                    .get(field)
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    let compared = read.is_some_and(|r| r.values.contains(key));
                    if !compared && is_set(value) {
                        found.push(format!("{field}.{key}"));
                    }
                }
            }
        }
        found.sort();
        found.dedup();
        found
    }

    /// Why a cluster read asks for more than the policy's metadata says it
    /// reads, if it does: every read must name field masks, each at or
    /// below a path of [`wasm_meta::metadata::CLUSTER_READS_ANNOTATION`]
    /// for its kind (of a Secret, its name and the data keys the secret
    /// annotations name).
    pub fn undeclared(metadata: &Metadata, request: &CapabilityRequest) -> Option<String> {
        let (api_version, kind) = request.kubernetes_resource()?;
        let Some(masks) = request.field_masks() else {
            return Some(format!(
                "a read of {api_version}/{kind} names no field masks: it would read whole objects"
            ));
        };
        let declared = if (api_version, kind) == ("v1", "Secret") {
            let name = request.object_name().unwrap_or_default();
            let mut paths = vec!["metadata.name".to_owned()];
            if let Ok(reads) = metadata.secret_reads()
                && let Some(read) = reads
                    .iter()
                    .find(|r| (r.namespace.as_str(), r.name.as_str()) == name)
            {
                paths.extend(
                    read.values
                        .iter()
                        .chain(&read.credentials)
                        .map(|key| format!("data.{key}")),
                );
            }
            Fields::of(paths.iter().map(String::as_str))
        } else {
            let reads = metadata.cluster_reads().ok()?;
            Fields::of(
                reads
                    .iter()
                    .filter(|r| {
                        (r.resource.api_version.as_str(), r.resource.kind.as_str())
                            == (api_version, kind)
                    })
                    .flat_map(|r| r.paths.iter().map(String::as_str)),
            )
        };
        let undeclared: Vec<&str> = masks
            .iter()
            .map(String::as_str)
            .filter(|mask| !declared.covers(mask))
            .collect();
        (!undeclared.is_empty()).then(|| {
            format!(
                "a read of {api_version}/{kind} asks for {} , which metadata.yml does not declare \
                 (io.cozystack-policies.cluster-reads, or the secret annotations for a Secret)",
                undeclared.join(", ")
            )
        })
    }
}

/// Whether a value is set: anything but an empty string, `null` or an
/// empty map or list.
fn is_set(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::String(text) => !text.is_empty() && text != REDACTED,
        Value::Array(items) => !items.is_empty(),
        Value::Object(members) => !members.is_empty(),
        _ => true,
    }
}

/// Every credential of `value` (below a free-form key, every string) as
/// whether it is set.
fn redact(value: &mut Value, free_form: bool) {
    match value {
        Value::Object(members) => {
            for (key, member) in members.iter_mut() {
                if CREDENTIAL_KEYS.contains(&key.as_str()) && member.is_string() {
                    if is_set(member) {
                        *member = REDACTED.into();
                    }
                } else {
                    redact(member, free_form || FREE_FORM_KEYS.contains(&key.as_str()));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| redact(item, free_form)),
        Value::String(text) if free_form && !text.is_empty() => *value = REDACTED.into(),
        _ => {}
    }
}

/// The credentials below `value`, at `path`.
fn walk(value: &Value, path: &str, free_form: bool, found: &mut Vec<String>) {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                let credential = CREDENTIAL_KEYS.contains(&key.as_str()) && member.is_string();
                // A container's `env[].value`, which holds whatever the
                // workload is given.
                let env_value = key == "value"
                    && path
                        .rsplit_once('[')
                        .is_some_and(|(list, _)| list == "env" || list.ends_with(".env"));
                if (credential || env_value) && is_set(member) {
                    found.push(at(key));
                } else {
                    walk(
                        member,
                        &at(key),
                        free_form || FREE_FORM_KEYS.contains(&key.as_str()),
                        found,
                    );
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, &format!("{path}[{i}]"), free_form, found);
            }
        }
        Value::String(_) if free_form && is_set(value) => found.push(path.to_owned()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_paths_through_lists() {
        let fields = Fields::of(["metadata.name", "spec.containers.name", "spec.x"]);
        assert!(fields.covers("metadata.name"));
        assert!(fields.covers("spec.containers.name"));
        assert!(fields.covers("spec.x.y"));
        assert!(!fields.covers("spec"));
        assert!(!fields.covers("metadata"));
        let object = json!({"metadata": {"name": "a", "uid": "u"},
            "spec": {"containers": [{"name": "c", "image": "i"}, {"image": "j"}], "x": {"y": 1}, "z": 2}});
        assert_eq!(
            fields.keep(&object),
            Some(json!({"metadata": {"name": "a"},
                "spec": {"containers": [{"name": "c"}, {}], "x": {"y": 1}}}))
        );
        assert_eq!(Fields::of(["spec.x"]).keep(&json!({"spec": "text"})), None);
    }

    #[test]
    fn credentials_are_kept_as_whether_they_are_set() {
        let mut value = json!({"users": {"a": {"password": "p"}, "b": {"password": ""}},
            "addons": {"x": {"valuesOverride": {"k": {"token": "t", "n": 1, "s": "v"}}}},
            "backup": {"s3AccessKey": "AK", "enabled": true}});
        redact(&mut value, false);
        assert_eq!(
            value,
            json!({"users": {"a": {"password": REDACTED}, "b": {"password": ""}},
                "addons": {"x": {"valuesOverride": {"k": {"token": REDACTED, "n": 1, "s": REDACTED}}}},
                "backup": {"s3AccessKey": REDACTED, "enabled": true}})
        );
        let reads = Reads::default();
        let found = reads.credentials(&json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "spec": {"template": {"spec": {"containers": [{"env": [{"name": "PASSWORD", "value": "x"},
                {"name": "EMPTY", "value": ""}]}]}}}}));
        assert_eq!(found, ["spec.template.spec.containers[0].env[0].value"]);
        let secret = reads.credentials(&json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "n"}, "data": {"key": "eA==", "marked": REDACTED}}));
        assert_eq!(secret, ["data.key"]);
    }

    /// The application schemas name no credential the lists miss: every
    /// property of every application's values (v1.5.4 and v1.6.2) whose
    /// name speaks of a secret is a credential key, a free-form subtree,
    /// or known not to hold one.
    #[test]
    fn every_credential_of_the_applications_is_known() {
        /// Names that speak of a secret without holding one: references to
        /// Secrets and their keys, flags, public keys, a fault domain.
        const NOT_CREDENTIALS: &[&str] = &[
            "s3CredentialsSecret",
            "accessKeyIDKey",
            "secretAccessKeyKey",
            "bucketKey",
            "endpointKey",
            "regionKey",
            "s3PathOverride",
            "credentials",
            "key",
            "certManager",
            "secretRef",
            "authEnabled",
            "sshKeys",
        ];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
        let mut unknown = std::collections::BTreeSet::new();
        let mut seen = 0;
        for release in ["cozystack-v1.5.4", "cozystack-v1.6.2"] {
            let dir = root.join(release).join("application-definitions");
            let Ok(entries) = std::fs::read_dir(&dir) else {
                panic!("{} is missing", dir.display());
            };
            for entry in entries.flatten() {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                let definition: Value = serde_saphyr::from_str(&text).unwrap_or_default();
                let Some(schema) = definition
                    .pointer("/spec/application/openAPISchema")
                    .and_then(Value::as_str)
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
                else {
                    continue;
                };
                seen += 1;
                walk_schema(&schema, &mut |name| {
                    let lower = name.to_lowercase();
                    let speaks = [
                        "pass", "secret", "token", "key", "cred", "auth", "private", "override",
                    ]
                    .iter()
                    .any(|word| lower.contains(word));
                    if speaks
                        && !CREDENTIAL_KEYS.contains(&name)
                        && !FREE_FORM_KEYS.contains(&name)
                        && !NOT_CREDENTIALS.contains(&name)
                    {
                        unknown.insert(name.to_owned());
                    }
                });
            }
        }
        assert!(seen > 40, "{seen} schemas");
        assert!(
            unknown.is_empty(),
            "properties that may hold credentials: {unknown:?}"
        );
    }

    fn walk_schema(schema: &Value, each: &mut impl FnMut(&str)) {
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, below) in properties {
                each(name);
                walk_schema(below, each);
            }
        }
        for key in ["items", "additionalProperties"] {
            if let Some(below) = schema.get(key) {
                walk_schema(below, each);
            }
        }
    }
}
