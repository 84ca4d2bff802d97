//! Recorded host-capability sessions in kwctl's replay format.
//!
//! A session file is a YAML list of exchanges. Each request is itself a YAML
//! document tagged with the variant of policy-evaluator's
//! `CallbackRequestType` (`!KubernetesListResourceNamespace`, ...); the
//! response is the payload handed back to the guest or an error. Replay is
//! strict, as in kwctl: every host call must equal the next recorded request
//! field for field, in order.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A host-capability request, named and shaped as policy-evaluator's
/// `CallbackRequestType` so recorded sessions are interchangeable with kwctl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CapabilityRequest {
    KubernetesListResourceNamespace {
        api_version: String,
        kind: String,
        namespace: String,
        #[serde(default)]
        label_selector: Option<String>,
        #[serde(default)]
        field_selector: Option<String>,
        #[serde(default)]
        disable_cache: bool,
        #[serde(default)]
        field_masks: Option<BTreeSet<String>>,
    },
    KubernetesListResourceAll {
        api_version: String,
        kind: String,
        #[serde(default)]
        label_selector: Option<String>,
        #[serde(default)]
        field_selector: Option<String>,
        #[serde(default)]
        disable_cache: bool,
        #[serde(default)]
        field_masks: Option<BTreeSet<String>>,
    },
    KubernetesGetResource {
        api_version: String,
        kind: String,
        name: String,
        #[serde(default)]
        namespace: Option<String>,
        #[serde(default)]
        disable_cache: bool,
        #[serde(default)]
        field_masks: Option<BTreeSet<String>>,
    },
    KubernetesCanI {
        request: Value,
        #[serde(default)]
        disable_cache: bool,
    },
    OciManifestDigest {
        image: String,
    },
    DNSLookupHost {
        host: String,
    },
}

/// The guest-side request bodies of the Kubernetes capabilities (SDK field
/// names, snake_case).
#[derive(Deserialize)]
struct KubernetesQuery {
    api_version: String,
    kind: String,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    label_selector: Option<String>,
    #[serde(default)]
    field_selector: Option<String>,
    #[serde(default)]
    disable_cache: bool,
    #[serde(default)]
    field_masks: Option<BTreeSet<String>>,
}

impl CapabilityRequest {
    /// Decodes a guest `host_call` into the request policy-evaluator would
    /// build from it.
    pub fn from_host_call(
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Self, String> {
        let decode_error =
            |e: serde_json::Error| format!("cannot decode {namespace}/{operation} request: {e}");
        let query = || serde_json::from_slice::<KubernetesQuery>(payload).map_err(decode_error);
        match (namespace, operation) {
            ("kubernetes", "list_resources_by_namespace") => {
                let q = query()?;
                Ok(Self::KubernetesListResourceNamespace {
                    api_version: q.api_version,
                    kind: q.kind,
                    namespace: q.namespace.unwrap_or_default(),
                    label_selector: q.label_selector,
                    field_selector: q.field_selector,
                    disable_cache: q.disable_cache,
                    field_masks: q.field_masks,
                })
            }
            ("kubernetes", "list_resources_all") => {
                let q = query()?;
                Ok(Self::KubernetesListResourceAll {
                    api_version: q.api_version,
                    kind: q.kind,
                    label_selector: q.label_selector,
                    field_selector: q.field_selector,
                    disable_cache: q.disable_cache,
                    field_masks: q.field_masks,
                })
            }
            ("kubernetes", "get_resource") => {
                let q = query()?;
                Ok(Self::KubernetesGetResource {
                    api_version: q.api_version,
                    kind: q.kind,
                    name: q.name.unwrap_or_default(),
                    namespace: q.namespace,
                    disable_cache: q.disable_cache,
                    field_masks: q.field_masks,
                })
            }
            ("kubernetes", "can_i") => {
                let mut body: Value = serde_json::from_slice(payload).map_err(decode_error)?;
                let disable_cache = body
                    .get("disable_cache")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let request = body
                    .get_mut("subject_access_review")
                    .map(Value::take)
                    .unwrap_or(Value::Null);
                Ok(Self::KubernetesCanI {
                    request,
                    disable_cache,
                })
            }
            ("oci", "v1/manifest_digest") => Ok(Self::OciManifestDigest {
                image: serde_json::from_slice(payload).map_err(decode_error)?,
            }),
            ("net", "v1/dns_lookup_host") => Ok(Self::DNSLookupHost {
                host: serde_json::from_slice(payload).map_err(decode_error)?,
            }),
            _ => Err(format!("unknown host capability {namespace}/{operation}")),
        }
    }

    /// The `apiVersion`/`kind` a Kubernetes request reads, for the
    /// context-aware allow-list.
    pub fn kubernetes_resource(&self) -> Option<(&str, &str)> {
        match self {
            Self::KubernetesListResourceNamespace {
                api_version, kind, ..
            }
            | Self::KubernetesListResourceAll {
                api_version, kind, ..
            }
            | Self::KubernetesGetResource {
                api_version, kind, ..
            } => Some((api_version, kind)),
            _ => None,
        }
    }

    /// The field masks of a Kubernetes read (`None`: whole objects).
    pub fn field_masks(&self) -> Option<&BTreeSet<String>> {
        match self {
            Self::KubernetesListResourceNamespace { field_masks, .. }
            | Self::KubernetesListResourceAll { field_masks, .. }
            | Self::KubernetesGetResource { field_masks, .. } => field_masks.as_ref(),
            _ => None,
        }
    }

    /// `(namespace, name)` of a get (`""` for a cluster-scoped object).
    pub fn object_name(&self) -> Option<(&str, &str)> {
        match self {
            Self::KubernetesGetResource {
                name, namespace, ..
            } => Some((namespace.as_deref().unwrap_or_default(), name)),
            _ => None,
        }
    }

    /// A one-line description for logs and test failures.
    pub fn describe(&self) -> String {
        serde_saphyr::to_string(self)
            .map(|y| y.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| format!("{self:?}"))
    }
}

/// What the host answers a recorded request with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum RecordedResponse {
    Success { payload: String },
    Error { message: String },
}

/// One exchange as it appears in a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SessionEntry {
    Exchange {
        request: String,
        response: RecordedResponse,
    },
}

/// A recorded exchange with its request decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    pub request: CapabilityRequest,
    pub response: RecordedResponse,
}

/// A session being replayed.
#[derive(Debug, Clone, Default)]
pub struct Session {
    exchanges: Vec<Exchange>,
    next: usize,
}

/// A session file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("replay session exchange {index}: {message}")]
pub struct SessionError {
    pub index: usize,
    pub message: String,
}

impl Session {
    /// Decodes the entries of a session file.
    pub fn from_entries(entries: &[SessionEntry]) -> Result<Self, SessionError> {
        let exchanges = entries
            .iter()
            .enumerate()
            .map(|(index, SessionEntry::Exchange { request, response })| {
                serde_saphyr::from_str(request)
                    .map(|request| Exchange {
                        request,
                        response: response.clone(),
                    })
                    .map_err(|e| SessionError {
                        index,
                        message: e.to_string(),
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { exchanges, next: 0 })
    }

    /// Answers the next host call, which must equal the next recorded request.
    pub fn answer(&mut self, request: &CapabilityRequest) -> Result<Vec<u8>, String> {
        let Some(expected) = self.exchanges.get(self.next) else {
            return Err(format!(
                "Replay error: no recorded exchange left for {}",
                request.describe()
            ));
        };
        if &expected.request != request {
            return Err(format!(
                "Replay error: unexpected request {}; the session expects {} next",
                request.describe(),
                expected.request.describe()
            ));
        }
        self.next += 1;
        match &expected.response {
            RecordedResponse::Success { payload } => Ok(payload.clone().into_bytes()),
            RecordedResponse::Error { message } => Err(message.clone()),
        }
    }

    /// Recorded exchanges the evaluation never asked for.
    pub fn unused(&self) -> usize {
        self.exchanges.len().saturating_sub(self.next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: &str = r#"
- type: Exchange
  request: |
    !KubernetesListResourceNamespace
    api_version: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    namespace: tenant-foo
    label_selector: apps.cozystack.io/application.kind
    field_selector: null
    field_masks:
    - metadata.labels
  response:
    type: Success
    payload: '{"items":[]}'
"#;

    fn guest_payload() -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "api_version": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "namespace": "tenant-foo",
            "label_selector": "apps.cozystack.io/application.kind",
            "field_selector": null,
            "field_masks": ["metadata.labels"]
        }))
        .unwrap()
    }

    #[test]
    fn replays_a_matching_call_once() {
        let entries: Vec<SessionEntry> = serde_saphyr::from_str(SESSION).unwrap();
        let mut session = Session::from_entries(&entries).unwrap();
        let call = CapabilityRequest::from_host_call(
            "kubernetes",
            "list_resources_by_namespace",
            &guest_payload(),
        )
        .unwrap();
        assert_eq!(session.answer(&call).unwrap(), b"{\"items\":[]}");
        assert_eq!(session.unused(), 0);
        assert!(
            session
                .answer(&call)
                .unwrap_err()
                .contains("no recorded exchange left")
        );
    }

    #[test]
    fn refuses_a_call_that_differs_in_any_field() {
        let entries: Vec<SessionEntry> = serde_saphyr::from_str(SESSION).unwrap();
        let mut session = Session::from_entries(&entries).unwrap();
        let mut body: Value = serde_json::from_slice(&guest_payload()).unwrap();
        body["namespace"] = "tenant-bar".into();
        let call = CapabilityRequest::from_host_call(
            "kubernetes",
            "list_resources_by_namespace",
            &serde_json::to_vec(&body).unwrap(),
        )
        .unwrap();
        let error = session.answer(&call).unwrap_err();
        assert!(
            error.starts_with("Replay error: unexpected request"),
            "{error}"
        );
        assert_eq!(session.unused(), 1);
    }

    #[test]
    fn unknown_capabilities_are_refused() {
        assert!(CapabilityRequest::from_host_call("kubernetes", "watch", b"{}").is_err());
    }
}
