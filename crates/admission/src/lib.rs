//! Admission requests and responses as the host sees them.
//!
//! The request type mirrors what kwctl and policy-server accept: a bare
//! `AdmissionRequest` or a whole `AdmissionReview`, with `uid`, `kind`,
//! `resource`, `operation` and `userInfo` required and every other field
//! optional. It is re-serialised with absent fields omitted, which is the
//! payload a policy receives from policy-server.

use std::collections::BTreeMap;

use kubewarden_policy_sdk::response::ValidationResponse;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub use shared::Operation;

/// Group, version and kind of an object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupVersionKind {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    pub kind: String,
}

/// Group, version and plural resource name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupVersionResource {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    pub resource: String,
}

/// The requesting user, as the apiserver authenticated it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<BTreeMap<String, Vec<String>>>,
}

/// The fields of a request the API server takes from the object it is
/// about: `kind` and `resource` (the plural [`shared::apps::plural`]
/// gives) from its `apiVersion` and `kind`, `name` and `namespace` from its
/// metadata. What the object lacks is left out. `check` and the playground
/// build their requests from manifests with it, so both send a policy the
/// same header for the same object.
pub fn object_fields(object: &Value) -> Map<String, Value> {
    let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
    let mut fields = Map::new();
    if let Some(kind) = text("/kind") {
        let api_version = text("/apiVersion").unwrap_or_default();
        let (group, version) = shared::apps::group_version(api_version);
        let resource = shared::apps::plural(group, kind);
        fields.insert(
            "kind".to_owned(),
            json!({"group": group, "version": version, "kind": kind}),
        );
        fields.insert(
            "resource".to_owned(),
            json!({"group": group, "version": version, "resource": resource}),
        );
    }
    for (field, pointer) in [
        ("name", "/metadata/name"),
        ("namespace", "/metadata/namespace"),
    ] {
        if let Some(value) = text(pointer).filter(|value| !value.is_empty()) {
            fields.insert(field.to_owned(), json!(value));
        }
    }
    fields
}

/// An admission request in the shape policy-server forwards to a policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    pub uid: String,
    pub kind: GroupVersionKind,
    pub resource: GroupVersionResource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<GroupVersionKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<GroupVersionResource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sub_resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub operation: Operation,
    pub user_info: UserInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_object: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

/// Why a document is not an admission request.
#[derive(Debug, thiserror::Error)]
#[error("not an AdmissionRequest or AdmissionReview")]
pub struct RequestError(#[from] serde_json::Error);

impl AdmissionRequest {
    /// Reads a bare request or the `request` of an `AdmissionReview`, as
    /// `kwctl run --request-path` does.
    pub fn from_value(document: Value) -> Result<Self, RequestError> {
        let request = match document {
            Value::Object(mut map)
                if map.get("kind").and_then(Value::as_str) == Some("AdmissionReview") =>
            {
                map.remove("request").unwrap_or(Value::Null)
            }
            other => other,
        };
        Ok(serde_json::from_value(request)?)
    }

    /// The object the request is about: `object`, or `oldObject` on DELETE.
    pub fn subject(&self) -> Option<&Value> {
        self.object
            .as_ref()
            .filter(|v| !v.is_null())
            .or(self.old_object.as_ref())
    }
}

/// The outcome of one evaluation, as policy-server answers the apiserver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    pub uid: String,
    pub allowed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(default)]
    pub audit_annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
}

/// `status` of a rejection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

impl AdmissionResponse {
    /// policy-server's answer when the guest traps or returns an error.
    pub fn internal_server_error(uid: &str, error: &str) -> Self {
        Self {
            uid: uid.to_owned(),
            allowed: false,
            status: Some(Status {
                message: Some(format!("internal server error: {error}")),
                code: Some(500),
            }),
            audit_annotations: None,
            warnings: None,
        }
    }

    /// The rejection message, if any.
    pub fn message(&self) -> Option<&str> {
        self.status.as_ref().and_then(|s| s.message.as_deref())
    }

    /// The rejection code, if any.
    pub fn code(&self) -> Option<u16> {
        self.status.as_ref().and_then(|s| s.code)
    }

    /// Warnings, empty when there are none.
    pub fn warnings(&self) -> &[String] {
        self.warnings.as_deref().unwrap_or_default()
    }
}

impl AdmissionResponse {
    /// Maps a policy's answer (the SDK's `ValidationResponse`) onto an
    /// AdmissionResponse the way policy-evaluator does for a validating
    /// (non-mutating) policy in protect mode: a mutation attempt is a
    /// rejection.
    pub fn from_validation(uid: &str, response: ValidationResponse) -> Self {
        let audit_annotations = response
            .audit_annotations
            .map(|annotations| annotations.into_iter().collect());
        if response.accepted && response.mutated_object.is_some() {
            return AdmissionResponse {
                uid: uid.to_owned(),
                allowed: false,
                status: Some(Status {
                    message: Some(
                        "Request rejected by policy: the policy attempted to mutate the request, \
                         but it is currently configured to not allow mutations"
                            .to_owned(),
                    ),
                    code: None,
                }),
                audit_annotations,
                warnings: response.warnings,
            };
        }
        let status = (response.message.is_some() || response.code.is_some()).then_some(Status {
            message: response.message,
            code: response.code,
        });
        AdmissionResponse {
            uid: uid.to_owned(),
            allowed: response.accepted,
            status,
            audit_annotations,
            warnings: response.warnings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_fields_are_what_the_api_server_fills() {
        let postgres = json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
            "metadata": {"name": "db", "namespace": "tenant-a"}});
        assert_eq!(
            Value::Object(object_fields(&postgres)),
            json!({
                "kind": {"group": "apps.cozystack.io", "version": "v1alpha1", "kind": "Postgres"},
                "resource": {"group": "apps.cozystack.io", "version": "v1alpha1", "resource": "postgreses"},
                "name": "db", "namespace": "tenant-a",
            })
        );
        let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "namespace": ""}});
        let fields = object_fields(&namespace);
        assert_eq!(
            fields["resource"],
            json!({"group": "", "version": "v1", "resource": "namespaces"})
        );
        assert!(!fields.contains_key("namespace"));
        assert!(object_fields(&json!({"metadata": {}})).is_empty());
    }

    fn bare() -> Value {
        json!({
            "uid": "1",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "operation": "DELETE",
            "userInfo": {},
            "oldObject": {"metadata": {"name": "a"}}
        })
    }

    #[test]
    fn reads_bare_request_and_review_alike() {
        let direct = AdmissionRequest::from_value(bare()).unwrap();
        let review = AdmissionRequest::from_value(
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": bare()}),
        )
        .unwrap();
        assert_eq!(direct, review);
        assert_eq!(direct.operation, Operation::Delete);
    }

    #[test]
    fn omits_absent_fields_when_forwarded() {
        let request = AdmissionRequest::from_value(bare()).unwrap();
        let forwarded = serde_json::to_value(&request).unwrap();
        assert!(forwarded.get("object").is_none());
        assert!(forwarded.get("namespace").is_none());
        assert_eq!(forwarded["oldObject"]["metadata"]["name"], "a");
    }

    #[test]
    fn refuses_requests_without_required_fields() {
        let mut missing_uid = bare();
        missing_uid.as_object_mut().unwrap().remove("uid");
        let error = AdmissionRequest::from_value(missing_uid).unwrap_err();
        assert_eq!(
            error.to_string(),
            "not an AdmissionRequest or AdmissionReview"
        );
        let cause = std::error::Error::source(&error).unwrap().to_string();
        assert!(cause.contains("uid"), "{cause}");
        let bad_operation = json!({"uid": "1", "kind": {"kind": "X"}, "resource": {"resource": "x"},
            "operation": "PATCH", "userInfo": {}});
        assert!(AdmissionRequest::from_value(bad_operation).is_err());
    }

    #[test]
    fn mutation_from_a_validating_policy_is_rejected() {
        let response = AdmissionResponse::from_validation(
            "u",
            ValidationResponse {
                accepted: true,
                message: None,
                code: None,
                mutated_object: Some(json!({})),
                audit_annotations: None,
                warnings: None,
            },
        );
        assert!(!response.allowed);
        assert!(response.message().unwrap().contains("mutate"));
    }
}
