//! Kubernetes reads through the host's context-aware capabilities.
//!
//! The SDK is built without its `cluster-context` feature (k8s-openapi
//! models none of the CRDs we read, and would cost module size), so this
//! module speaks the host protocol itself: the request body is the SDK's
//! `ListResourcesByNamespaceRequest`, field for field, sent as
//! `host_call("kubewarden", "kubernetes", "list_resources_by_namespace")`;
//! the answer is read lazily with [`crate::json`], like the admission
//! request.
//!
//! Context-aware calls are what make a policy-server slow, and a call can
//! fail for reasons that say nothing about the object (the kind was not
//! granted in `contextAwareResources`, no cluster offline, a replay
//! mismatch). So a rule makes at most one call per kind it needs, asks
//! only for the fields it reads (`field_masks`), and treats a
//! [`LookupError`] as "not checked", never as a verdict about the object.

use std::borrow::Cow;

use serde::Serialize;

use crate::field::Field;
use crate::json::Json;

/// A `list_resources_by_namespace` request: the SDK's
/// `ListResourcesByNamespaceRequest`, borrowed. Replay sessions compare
/// every field, so a rule should build it the same way each time.
#[derive(Debug, Clone, Serialize)]
pub struct ListByNamespace<'a> {
    /// `v1`, `helm.toolkit.fluxcd.io/v2`, ...
    pub api_version: &'a str,
    /// The kind, e.g. `HelmRelease`.
    pub kind: &'a str,
    pub namespace: &'a str,
    /// A label selector (`app`, `app=x`, `app in (a,b)`); `None` lists all.
    pub label_selector: Option<&'a str>,
    pub field_selector: Option<&'a str>,
    /// Dotted paths the host keeps of each object (`metadata.labels`);
    /// `None` returns whole objects.
    pub field_masks: Option<&'a [&'a str]>,
}

/// Why a lookup gave no answer: the host's reason, without waPC's
/// `Host error: ` prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupError(pub String);

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LookupError {}

impl LookupError {
    /// An error from the host's message: its first line, without the
    /// wrappers waPC (`Host error: `) and policy-server (`Callback
    /// evaluation failure: `, then a stack backtrace) put around the reason.
    fn from_host(message: &str) -> Self {
        let first = crate::warnings::one_line(message);
        let mut reason = first.as_str();
        for wrapper in ["Host error:", "Callback evaluation failure:"] {
            reason = reason.strip_prefix(wrapper).unwrap_or(reason).trim();
        }
        Self(if reason.is_empty() {
            "the host gave no reason".to_owned()
        } else {
            reason.to_owned()
        })
    }
}

/// Where cluster reads go: the policy-server ([`Host`]) or, in tests, a
/// stand-in.
pub trait Cluster {
    /// The raw answer to a `list_resources_by_namespace` call.
    fn list_by_namespace(&self, request: &ListByNamespace<'_>) -> Result<Vec<u8>, LookupError>;
}

/// The policy-server, through waPC `host_call`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Host;

impl Cluster for Host {
    fn list_by_namespace(&self, request: &ListByNamespace<'_>) -> Result<Vec<u8>, LookupError> {
        let body = serde_json::to_vec(request)
            .map_err(|e| LookupError(format!("cannot encode the request: {e}")))?;
        crate::sdk::wapc_guest::host_call(
            "kubewarden",
            "kubernetes",
            "list_resources_by_namespace",
            &body,
        )
        .map_err(|e| LookupError::from_host(&e.to_string()))
    }
}

/// The objects of a list answer (`{"items": [...]}`), each rooted at
/// `items[i]`. Reading them is lazy: an object's fields are scanned only
/// when asked for.
pub fn list_items(answer: &[u8]) -> Result<Vec<Field<'_>>, LookupError> {
    let unreadable = |detail: String| LookupError(format!("unreadable list answer: {detail}"));
    let document = Json::parse_lazy(answer).map_err(|e| unreadable(e.to_string()))?;
    Field::root(Some(document))
        .field("items")
        .and_then(|items| items.items()?.collect())
        .map_err(|e| unreadable(e.to_string()))
}

/// The label `key` of a listed object, `None` when it has none.
pub fn label<'a>(object: &Field<'a>, key: &str) -> Result<Option<Cow<'a, str>>, LookupError> {
    object
        .field("metadata")
        .and_then(|metadata| metadata.field("labels"))
        .and_then(|labels| labels.field(key))
        .and_then(|value| value.string())
        .map_err(|e| LookupError(format!("unreadable list answer: {e}")))
}

/// `metadata.name` of a listed object, `None` when it has none.
pub fn name<'a>(object: &Field<'a>) -> Result<Option<Cow<'a, str>>, LookupError> {
    object
        .field("metadata")
        .and_then(|metadata| metadata.field("name"))
        .and_then(|value| value.string())
        .map_err(|e| LookupError(format!("unreadable list answer: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_have_the_sdk_shape() {
        let masks = ["metadata.labels"];
        let request = ListByNamespace {
            api_version: "helm.toolkit.fluxcd.io/v2",
            kind: "HelmRelease",
            namespace: "tenant-foo",
            label_selector: Some("apps.cozystack.io/application.kind"),
            field_selector: None,
            field_masks: Some(&masks),
        };
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            serde_json::json!({
                "api_version": "helm.toolkit.fluxcd.io/v2",
                "kind": "HelmRelease",
                "namespace": "tenant-foo",
                "label_selector": "apps.cozystack.io/application.kind",
                "field_selector": null,
                "field_masks": ["metadata.labels"],
            })
        );
    }

    #[test]
    fn reads_items_labels_and_names() {
        let answer = br#"{"apiVersion": "v1", "kind": "List", "metadata": {},
            "items": [
              {"metadata": {"name": "postgres-db", "labels": {"apps.cozystack.io/application.kind": "Postgres"}}},
              {"metadata": {}},
              {}
            ]}"#;
        let items = list_items(answer).unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(
            label(&items[0], "apps.cozystack.io/application.kind")
                .unwrap()
                .unwrap(),
            "Postgres"
        );
        assert_eq!(name(&items[0]).unwrap().unwrap(), "postgres-db");
        assert_eq!(label(&items[1], "x").unwrap(), None);
        assert_eq!(name(&items[2]).unwrap(), None);
        assert!(list_items(br#"{"items": null}"#).unwrap().is_empty());
        assert!(list_items(br#"{}"#).unwrap().is_empty());
    }

    #[test]
    fn unreadable_answers_are_errors_not_panics() {
        for bad in [
            &b"not json"[..],
            b"[]",
            b"{\"items\": {}}",
            b"",
            b"{\"items\": [1,",
        ] {
            assert!(
                list_items(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let items = list_items(br#"{"items": [{"metadata": {"labels": {"k": 1}}}, 7]}"#).unwrap();
        assert!(
            label(&items[0], "k")
                .unwrap_err()
                .0
                .contains("must be a string")
        );
        assert!(name(&items[1]).is_err());
    }

    #[test]
    fn host_errors_lose_the_wapc_prefix() {
        assert_eq!(
            LookupError::from_host("Host error: Policy has not been granted access").0,
            "Policy has not been granted access"
        );
        assert_eq!(
            LookupError::from_host("Host error: ").0,
            "the host gave no reason"
        );
        // kwctl and policy-server wrap the reason and append a backtrace.
        assert_eq!(
            LookupError::from_host(
                "Host error: Callback evaluation failure: Replay error: cluster unreachable\n\nStack backtrace:\n   0: <unknown>"
            )
            .0,
            "Replay error: cluster unreachable"
        );
        // Off wasm the SDK's stubs answer every call with an empty error.
        let error = Host
            .list_by_namespace(&ListByNamespace {
                api_version: "v1",
                kind: "ConfigMap",
                namespace: "a",
                label_selector: None,
                field_selector: None,
                field_masks: None,
            })
            .unwrap_err();
        assert_eq!(error.0, "the host gave no reason");
    }
}
