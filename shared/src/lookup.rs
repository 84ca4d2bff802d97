//! Kubernetes reads through the host's context-aware capabilities.
//!
//! The SDK is used without its `cluster-context` feature (k8s-openapi
//! models none of the CRDs we read, and would cost module size), so this
//! module speaks the host protocol itself: the request bodies are the SDK's
//! `ListResourcesByNamespaceRequest`, `ListAllResourcesRequest` (for
//! cluster-scoped kinds) and `GetResourceRequest`, field for field, sent
//! through waPC `host_call("kubewarden", "kubernetes", ...)`; answers are
//! read with serde_json and their fields as [`Field`]s.
//!
//! Context-aware calls are what make a policy-server slow, and a call can
//! fail for reasons that say nothing about the object (the kind was not
//! granted in `contextAwareResources`, no cluster offline, a replay
//! mismatch). So a rule makes at most one call per kind it needs, asks
//! only for the fields it reads (`field_masks`), and treats a
//! [`LookupError`] as "not checked", never as a verdict about the object.

use serde::Serialize;
use serde_json::Value;

use crate::field::Field;

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

/// A `list_resources_all` request: the SDK's `ListAllResourcesRequest`,
/// borrowed. It lists a cluster-scoped kind (or a namespaced one across
/// all namespaces, which policies here avoid: it is the costliest call).
#[derive(Debug, Clone, Serialize)]
pub struct ListAll<'a> {
    /// `cozystack.io/v1alpha1`, ...
    pub api_version: &'a str,
    /// The kind, e.g. `ApplicationDefinition`.
    pub kind: &'a str,
    pub label_selector: Option<&'a str>,
    pub field_selector: Option<&'a str>,
    /// Dotted paths the host keeps of each object (`spec.application.kind`);
    /// `None` returns whole objects.
    pub field_masks: Option<&'a [&'a str]>,
}

/// A `get_resource` request: the SDK's `GetResourceRequest`, borrowed.
#[derive(Debug, Clone, Serialize)]
pub struct GetResource<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    /// `None` for a cluster-scoped kind.
    pub namespace: Option<&'a str>,
    pub disable_cache: bool,
    pub field_masks: Option<&'a [&'a str]>,
}

/// Why a lookup gave no answer: the host's reason, on one line.
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
    pub fn from_host(message: &str) -> Self {
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

/// The host's operation that lists a kind in one namespace.
pub const LIST_BY_NAMESPACE: &str = "list_resources_by_namespace";
/// The host's operation that lists a kind in the whole cluster.
pub const LIST_ALL: &str = "list_resources_all";
/// The host's operation that gets one object.
pub const GET: &str = "get_resource";

/// Where cluster reads go: the policy-server ([`Host`]), nowhere
/// ([`Offline`]) or, in tests, a recorded session.
///
/// One operation, as the host protocol has it: the typed reads
/// (`list_by_namespace`, `list_all`, `get`, on `dyn Cluster`) write their
/// request and call it. A module then carries the writing of only the
/// reads it makes: a trait method per read would put all three in every
/// module's table of [`Host`]'s methods.
pub trait Cluster {
    /// The raw answer to `operation` ([`LIST_BY_NAMESPACE`], [`LIST_ALL`],
    /// [`GET`]) with `request`, the SDK's request of that operation as
    /// JSON.
    fn call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, LookupError>;
}

impl dyn Cluster + '_ {
    /// The raw answer to a `list_resources_by_namespace` call.
    pub fn list_by_namespace(&self, request: &ListByNamespace<'_>) -> Result<Vec<u8>, LookupError> {
        self.send(LIST_BY_NAMESPACE, request)
    }

    /// The raw answer to a `get_resource` call.
    pub fn get(&self, request: &GetResource<'_>) -> Result<Vec<u8>, LookupError> {
        self.send(GET, request)
    }

    /// The raw answer to a `list_resources_all` call.
    pub fn list_all(&self, request: &ListAll<'_>) -> Result<Vec<u8>, LookupError> {
        self.send(LIST_ALL, request)
    }

    fn send(&self, operation: &str, request: &impl Serialize) -> Result<Vec<u8>, LookupError> {
        let body = serde_json::to_vec(request)
            .map_err(|e| LookupError(format!("cannot encode the request: {e}")))?;
        self.call(operation, &body)
    }
}

/// The policy-server, through waPC `host_call`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Host;

impl Cluster for Host {
    fn call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, LookupError> {
        crate::sdk::wapc_guest::host_call("kubewarden", "kubernetes", operation, request)
            .map_err(|e| LookupError::from_host(&e.to_string()))
    }
}

/// No cluster: every read fails, so rules keep their static checks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offline;

const OFFLINE: &str = "no cluster to ask";

impl Cluster for Offline {
    fn call(&self, _: &str, _: &[u8]) -> Result<Vec<u8>, LookupError> {
        Err(LookupError(OFFLINE.to_owned()))
    }
}

/// How a `get_resource` of an object that does not exist fails, as
/// policy-evaluator's Kubernetes client words it: `Cannot find
/// <apiVersion>/<kind> named '<name>' inside of namespace '<namespace>'`
/// (`Cannot find resource <apiVersion>/<kind>` for a kind the cluster does
/// not serve, where no such object can exist either), or the API server's
/// own answer through kube-rs, `ApiError: <resource> "<name>" not found:
/// NotFound`.
pub const NOT_FOUND: &str = "Cannot find ";
const API_NOT_FOUND: (&str, &str) = ("ApiError: ", ": NotFound");

/// Whether a lookup failed because the object does not exist.
pub fn is_not_found(error: &LookupError) -> bool {
    let reason = error.0.as_str();
    reason.starts_with(NOT_FOUND)
        || (reason.starts_with(API_NOT_FOUND.0) && reason.ends_with(API_NOT_FOUND.1))
}

/// The reason policy-server gives for a `get_resource` of an object that
/// does not exist, word for word (the namespace in Rust's `{:?}` of an
/// `Option`), for hosts that answer as it does.
pub fn not_found(api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> String {
    format!("{NOT_FOUND}{api_version}/{kind} named '{name}' inside of namespace '{namespace:?}'")
}

/// The object a `get_resource` call finds, or `None` when the host says
/// there is none ([`is_not_found`]); any other failure is an error, never an
/// absence.
pub fn get_optional(
    cluster: &dyn Cluster,
    request: &GetResource<'_>,
) -> Result<Option<Value>, LookupError> {
    match cluster.get(request) {
        Ok(answer) => object(&answer).map(Some),
        Err(error) if is_not_found(&error) => Ok(None),
        Err(error) => Err(error),
    }
}

/// The objects of a list answer (`{"items": [...]}`; absent or null items
/// are none).
pub fn list_items(answer: &[u8]) -> Result<Vec<Value>, LookupError> {
    let unreadable = |detail: String| LookupError(format!("unreadable list answer: {detail}"));
    let mut document = json(answer).map_err(unreadable)?;
    // The answer must be an object whose items, if any, are a list.
    Field::root(Some(&document))
        .field("items")
        .and_then(|items| items.items().map(|_| ()))
        .map_err(|e| unreadable(e.to_string()))?;
    Ok(match document.get_mut("items").map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    })
}

/// An object of a `get_resource` answer.
pub fn object(answer: &[u8]) -> Result<Value, LookupError> {
    json(answer).map_err(|e| LookupError(format!("unreadable answer: {e}")))
}

/// An answer as JSON, read as text as requests and settings are: the
/// module then carries one copy of serde_json's `Value` reader, not a
/// second one for byte slices.
fn json(answer: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(answer).map_err(|e| e.to_string())?;
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// A string at `dotted` (`metadata.name`) of a listed object, `None` when
/// absent.
pub fn text<'v>(object: &'v Value, dotted: &str) -> Result<Option<&'v str>, LookupError> {
    Field::root(Some(object))
        .at(dotted)
        .and_then(|field| field.string())
        .map_err(|e| LookupError(format!("unreadable answer: {e}")))
}

/// The label `key` of a listed object, `None` when it has none.
pub fn label<'v>(object: &'v Value, key: &str) -> Result<Option<&'v str>, LookupError> {
    Field::root(Some(object))
        .at("metadata.labels")
        .and_then(|labels| labels.field(key)?.string())
        .map_err(|e| LookupError(format!("unreadable answer: {e}")))
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
        let get = GetResource {
            api_version: "cozystack.io/v1alpha1",
            kind: "Package",
            name: "cozystack.tenant-application",
            namespace: None,
            disable_cache: false,
            field_masks: None,
        };
        assert_eq!(
            serde_json::to_value(&get).unwrap(),
            serde_json::json!({"api_version": "cozystack.io/v1alpha1", "kind": "Package",
                "name": "cozystack.tenant-application", "namespace": null,
                "disable_cache": false, "field_masks": null})
        );
        let masks = ["spec.application.kind"];
        let all = ListAll {
            api_version: "cozystack.io/v1alpha1",
            kind: "ApplicationDefinition",
            label_selector: None,
            field_selector: None,
            field_masks: Some(&masks),
        };
        // The SDK's ListAllResourcesRequest has exactly these fields.
        assert_eq!(
            serde_json::to_value(&all).unwrap(),
            serde_json::json!({"api_version": "cozystack.io/v1alpha1",
                "kind": "ApplicationDefinition", "label_selector": null,
                "field_selector": null, "field_masks": ["spec.application.kind"]})
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
            label(&items[0], "apps.cozystack.io/application.kind").unwrap(),
            Some("Postgres")
        );
        assert_eq!(
            text(&items[0], "metadata.name").unwrap(),
            Some("postgres-db")
        );
        assert_eq!(label(&items[1], "x").unwrap(), None);
        assert_eq!(text(&items[2], "metadata.name").unwrap(), None);
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
            let error = list_items(bad).unwrap_err();
            assert!(error.0.starts_with("unreadable list answer"), "{error}");
        }
        let items = list_items(br#"{"items": [{"metadata": {"labels": {"k": 1}}}, 7]}"#).unwrap();
        assert!(
            label(&items[0], "k")
                .unwrap_err()
                .0
                .contains("must be a string")
        );
        assert!(text(&items[1], "metadata.name").is_err());
    }

    #[test]
    fn host_errors_lose_their_wrappers() {
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
    }

    #[test]
    fn a_get_that_finds_nothing_is_an_absence_not_an_error() {
        struct Answers(Result<&'static str, String>);
        impl Cluster for Answers {
            fn call(&self, operation: &str, _: &[u8]) -> Result<Vec<u8>, LookupError> {
                assert_eq!(operation, GET);
                self.0
                    .clone()
                    .map(|a| a.as_bytes().to_vec())
                    .map_err(|e| LookupError::from_host(&e))
            }
        }
        let get = GetResource {
            api_version: "v1",
            kind: "Secret",
            name: "cozy-backups-creds",
            namespace: Some("cozy-velero"),
            disable_cache: false,
            field_masks: None,
        };
        let missing = not_found("v1", "Secret", "cozy-backups-creds", Some("cozy-velero"));
        assert_eq!(
            missing,
            "Cannot find v1/Secret named 'cozy-backups-creds' inside of namespace 'Some(\"cozy-velero\")'"
        );
        let wrapped =
            format!("Host error: Callback evaluation failure: {missing}\n\nStack backtrace:");
        assert_eq!(get_optional(&Answers(Err(wrapped)), &get).unwrap(), None);
        assert_eq!(
            get_optional(&Answers(Ok(r#"{"metadata": {"name": "x"}}"#)), &get)
                .unwrap()
                .unwrap()["metadata"]["name"],
            "x"
        );
        let api = r#"Host error: ApiError: secrets "cozy-backups-creds" not found: NotFound"#;
        assert_eq!(get_optional(&Answers(Err(api.into())), &get).unwrap(), None);
        let refused = get_optional(&Answers(Err("Host error: forbidden".into())), &get);
        assert_eq!(refused.unwrap_err().0, "forbidden");
    }

    #[test]
    fn offline_refuses_every_read() {
        let get = GetResource {
            api_version: "v1",
            kind: "Namespace",
            name: "a",
            namespace: None,
            disable_cache: false,
            field_masks: None,
        };
        let offline: &dyn Cluster = &Offline;
        assert_eq!(offline.get(&get).unwrap_err().0, "no cluster to ask");
        let all = ListAll {
            api_version: "cozystack.io/v1alpha1",
            kind: "ApplicationDefinition",
            label_selector: None,
            field_selector: None,
            field_masks: None,
        };
        assert_eq!(offline.list_all(&all).unwrap_err().0, "no cluster to ask");
    }

    #[test]
    fn each_read_sends_its_operation_and_the_sdk_s_request() {
        /// Echoes the operation and the request it is called with.
        struct Echo;
        impl Cluster for Echo {
            fn call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, LookupError> {
                Ok([operation.as_bytes(), b" ", request].concat())
            }
        }
        let cluster: &dyn Cluster = &Echo;
        let masks = ["metadata.name"];
        let list = ListByNamespace {
            api_version: "v1",
            kind: "Secret",
            namespace: "a",
            label_selector: None,
            field_selector: None,
            field_masks: Some(&masks),
        };
        assert_eq!(
            String::from_utf8(cluster.list_by_namespace(&list).unwrap()).unwrap(),
            r#"list_resources_by_namespace {"api_version":"v1","kind":"Secret","namespace":"a","label_selector":null,"field_selector":null,"field_masks":["metadata.name"]}"#
        );
        let all = ListAll {
            api_version: "v1",
            kind: "Node",
            label_selector: None,
            field_selector: None,
            field_masks: None,
        };
        assert!(
            String::from_utf8(cluster.list_all(&all).unwrap())
                .unwrap()
                .starts_with("list_resources_all {")
        );
    }
}
