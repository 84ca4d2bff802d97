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
//! policy-server gives ([`shared::lookup::not_found`]). The snapshot is the
//! whole cluster: a kind it holds no object of has none.

use serde_json::{Map, Value, json};

use crate::replay::CapabilityRequest;

/// The objects of a cluster, as captured.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    objects: Vec<Value>,
}

/// One term of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Exists(String),
    Absent(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

impl Requirement {
    fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let value = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        match self {
            Requirement::Exists(key) => value(key).is_some(),
            Requirement::Absent(key) => value(key).is_none(),
            Requirement::In(key, values) => {
                value(key).is_some_and(|v| values.iter().any(|x| x == v))
            }
            Requirement::NotIn(key, values) => {
                value(key).is_none_or(|v| !values.iter().any(|x| x == v))
            }
        }
    }
}

/// The terms of a label selector, split at the commas outside `( )`.
fn terms(selector: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0_usize, 0);
    for (at, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.extend(selector.get(start..at));
                start = at + 1;
            }
            _ => {}
        }
    }
    terms.extend(selector.get(start..));
    terms
        .into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn label_selector(selector: &str) -> Result<Vec<Requirement>, String> {
    let invalid =
        |term: &str| format!("unable to parse requirement {term:?} of label selector {selector:?}");
    terms(selector)
        .into_iter()
        .map(|term| {
            let set = |rest: &str| -> Option<Vec<String>> {
                let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
                Some(inner.split(',').map(|v| v.trim().to_owned()).collect())
            };
            if let Some((key, rest)) = term.split_once(" notin ") {
                return set(rest)
                    .map(|values| Requirement::NotIn(key.trim().to_owned(), values))
                    .ok_or_else(|| invalid(term));
            }
            if let Some((key, rest)) = term.split_once(" in ") {
                return set(rest)
                    .map(|values| Requirement::In(key.trim().to_owned(), values))
                    .ok_or_else(|| invalid(term));
            }
            if let Some((key, value)) = term.split_once("!=") {
                return Ok(Requirement::NotIn(
                    key.trim().to_owned(),
                    vec![value.trim().to_owned()],
                ));
            }
            if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
                return Ok(Requirement::In(
                    key.trim().to_owned(),
                    vec![value.trim().to_owned()],
                ));
            }
            if let Some(key) = term.strip_prefix('!') {
                return Ok(Requirement::Absent(key.trim().to_owned()));
            }
            if term.contains(char::is_whitespace) {
                return Err(invalid(term));
            }
            Ok(Requirement::Exists(term.to_owned()))
        })
        .collect()
}

/// A field selector: `metadata.name` or `metadata.namespace`, `=`, `==`
/// or `!=`, joined by commas, as the API server takes them for every kind.
fn field_selector(selector: &str) -> Result<Vec<(String, bool, String)>, String> {
    terms(selector)
        .into_iter()
        .map(|term| {
            let (field, equal, value) = match term.split_once("!=") {
                Some((field, value)) => (field, false, value),
                None => {
                    let (field, value) = term
                        .split_once("==")
                        .or_else(|| term.split_once('='))
                        .ok_or_else(|| format!("invalid field selector {selector:?}"))?;
                    (field, true, value)
                }
            };
            let field = field.trim();
            if field != "metadata.name" && field != "metadata.namespace" {
                return Err(format!(
                    "field label not supported: {field} (the snapshot selects on metadata.name and metadata.namespace)"
                ));
            }
            Ok((field.to_owned(), equal, value.trim().to_owned()))
        })
        .collect()
}

fn text<'v>(object: &'v Value, pointer: &str) -> &'v str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `value` pruned to `path`, arrays traversed implicitly; `None` when the
/// path is absent.
fn pick(value: &Value, path: &[&str]) -> Option<Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(value.clone());
    };
    match value {
        Value::Object(map) => {
            let kept = pick(map.get(*first)?, rest)?;
            Some(Value::Object(Map::from_iter([((*first).to_owned(), kept)])))
        }
        Value::Array(items) => Some(Value::Array(
            items
                .iter()
                .map(|item| pick(item, path).unwrap_or_else(|| json!({})))
                .collect(),
        )),
        _ => None,
    }
}

/// `more` merged into `into`: maps key by key, lists item by item.
fn merge(into: &mut Value, more: Value) {
    match (into, more) {
        (Value::Object(into), Value::Object(more)) => {
            for (key, value) in more {
                match into.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        into.insert(key, value);
                    }
                }
            }
        }
        (Value::Array(into), Value::Array(more)) => {
            for (existing, value) in into.iter_mut().zip(more) {
                merge(existing, value);
            }
        }
        (into, more) => *into = more,
    }
}

/// `object` as the host returns it for `masks` (dotted paths).
fn masked(object: &Value, masks: Option<&std::collections::BTreeSet<String>>) -> Value {
    let Some(masks) = masks else {
        return object.clone();
    };
    let mut kept = json!({});
    for mask in masks {
        let path: Vec<&str> = mask.split('.').collect();
        if let Some(part) = pick(object, &path) {
            merge(&mut kept, part);
        }
    }
    kept
}

impl Snapshot {
    /// The snapshot of these objects (each with `apiVersion`, `kind` and
    /// `metadata.name`).
    pub fn new(objects: Vec<Value>) -> Self {
        Self { objects }
    }

    /// How many objects it holds.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether it holds no object.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Whether it holds an object of `kind` in API `group` (`""`: core)
    /// named `only` (`(namespace, name)`) if given.
    pub fn holds(&self, group: &str, kind: &str, only: Option<(&str, &str)>) -> bool {
        self.objects.iter().any(|o| {
            let api_version = text(o, "/apiVersion");
            let (object_group, _) = shared::catalogue::group_version(api_version);
            object_group == group
                && text(o, "/kind") == kind
                && only.is_none_or(|(namespace, name)| {
                    text(o, "/metadata/namespace") == namespace && text(o, "/metadata/name") == name
                })
        })
    }

    fn of_kind<'s>(
        &'s self,
        api_version: &'s str,
        kind: &'s str,
    ) -> impl Iterator<Item = &'s Value> {
        self.objects
            .iter()
            .filter(move |o| text(o, "/apiVersion") == api_version && text(o, "/kind") == kind)
    }

    fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        labels: Option<&str>,
        fields: Option<&str>,
        masks: Option<&std::collections::BTreeSet<String>>,
    ) -> Result<Vec<u8>, String> {
        let labels = labels.map(label_selector).transpose()?.unwrap_or_default();
        let fields = fields.map(field_selector).transpose()?.unwrap_or_default();
        let items: Vec<Value> = self
            .of_kind(api_version, kind)
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
            } => self
                .of_kind(api_version, kind)
                .find(|o| {
                    text(o, "/metadata/name") == name
                        && text(o, "/metadata/namespace")
                            == namespace.as_deref().unwrap_or_default()
                })
                .map(|o| masked(o, field_masks.as_ref()))
                .ok_or_else(|| {
                    shared::lookup::not_found(api_version, kind, name, namespace.as_deref())
                })
                .and_then(|o| serde_json::to_vec(&o).map_err(|e| e.to_string())),
            other => Err(format!(
                "a cluster snapshot answers Kubernetes reads only, not {}",
                other.describe()
            )),
        }
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
}
