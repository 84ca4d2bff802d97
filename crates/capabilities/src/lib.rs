//! The host side of `host_call`: what a policy may ask of the host during
//! one evaluation, and what it gets back.
//!
//! Like policy-server, the host answers `kubewarden/tracing/log` always,
//! checks Kubernetes reads against the policy's `contextAwareResources`, and
//! refuses everything else. Cluster reads are answered from a recorded
//! session (tests), from a snapshot of a cluster (`check --cluster`), or
//! refused (offline checks), never from a live cluster.
//! Our wasm host and the native case runner both answer through
//! [`HostCalls`], so a policy sees the same answers under either, and both
//! give back an [`Evaluation`]: the answer with what the policy asked.

pub mod replay;
pub mod snapshot;

use std::sync::Arc;

use crate::replay::{CapabilityRequest, Session};
use crate::snapshot::Snapshot;
use admission::AdmissionResponse;
use wasm_meta::metadata::ContextAwareResource;

/// How cluster reads are answered during an evaluation.
#[derive(Debug, Clone)]
pub enum HostCapabilities {
    /// Every capability call fails with this reason, as on a policy-server
    /// that cannot reach the cluster or has not granted the capability.
    Denied(String),
    /// Calls are answered from a recorded session, strictly in order.
    Replay(Session),
    /// Kubernetes reads are answered from the objects of a cluster
    /// snapshot, as policy-server answers them from the live cluster.
    Snapshot(Arc<Snapshot>),
}

impl HostCapabilities {
    /// The answer offline checks give: no cluster to read from.
    pub fn offline() -> Self {
        Self::Denied(
            "no cluster connection: context-aware lookups are not available offline".to_owned(),
        )
    }
}

/// A line the guest logged through `kubewarden/tracing/log`.
pub type GuestLog = String;

/// What one evaluation asked of the host, and how it is answered.
#[derive(Debug)]
pub struct HostCalls {
    allowed: Vec<ContextAwareResource>,
    capabilities: HostCapabilities,
    /// Lines logged through `kubewarden/tracing/log`.
    pub logs: Vec<GuestLog>,
    /// Capability calls, in order.
    pub calls: Vec<CapabilityRequest>,
}

impl HostCalls {
    /// Calls answered as `capabilities` says, for a policy granted the
    /// Kubernetes kinds `allowed`.
    pub fn new(allowed: Vec<ContextAwareResource>, capabilities: HostCapabilities) -> Self {
        Self {
            allowed,
            capabilities,
            logs: Vec::new(),
            calls: Vec::new(),
        }
    }

    /// Recorded exchanges left unused (always 0 when calls are denied).
    pub fn unused_exchanges(&self) -> usize {
        match &self.capabilities {
            HostCapabilities::Replay(session) => session.unused(),
            HostCapabilities::Denied(_) | HostCapabilities::Snapshot(_) => 0,
        }
    }

    /// The answer to one `host_call`, or the error text the guest gets.
    pub fn answer(
        &mut self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        if binding != "kubewarden" {
            return Err(format!("unknown binding: {binding}"));
        }
        if (namespace, operation) == ("tracing", "log") {
            self.logs
                .push(String::from_utf8_lossy(payload).into_owned());
            return Ok(Vec::new());
        }
        let request = CapabilityRequest::from_host_call(namespace, operation, payload)?;
        self.calls.push(request.clone());
        if let Some((api_version, kind)) = request.kubernetes_resource()
            && !self
                .allowed
                .iter()
                .any(|r| r.api_version == api_version && r.kind == kind)
        {
            return Err(format!(
                "Policy has not been granted access to Kubernetes {api_version}/{kind} resources. \
                 The violation has been reported."
            ));
        }
        let answer = match &mut self.capabilities {
            HostCapabilities::Denied(reason) => Err(reason.clone()),
            HostCapabilities::Replay(session) => session.answer(&request),
            HostCapabilities::Snapshot(snapshot) => snapshot.answer(&request),
        };
        answer.map_err(|reason| callback_failure(&reason))
    }
}

/// One evaluation's answer and what the policy asked of the host on the way.
#[derive(Debug)]
pub struct Evaluation {
    pub response: AdmissionResponse,
    /// Lines logged through `kubewarden/tracing/log`.
    pub logs: Vec<GuestLog>,
    /// Capability calls, in order.
    pub host_calls: Vec<CapabilityRequest>,
    /// Recorded exchanges nobody asked for.
    pub unused_exchanges: usize,
}

impl HostCalls {
    /// The evaluation that answered `response` after these calls.
    pub fn evaluation(&self, response: AdmissionResponse) -> Evaluation {
        Evaluation {
            response,
            logs: self.logs.clone(),
            host_calls: self.calls.clone(),
            unused_exchanges: self.unused_exchanges(),
        }
    }
}

/// A failed cluster read as policy-server and kwctl report it to the guest:
/// policy-evaluator formats the `anyhow` error with `{:?}`, which appends a
/// stack backtrace. The host does the same, so every runner hands policies
/// the same multi-line text to make sense of.
fn callback_failure(reason: &str) -> String {
    format!(
        "Callback evaluation failure: {reason}\n\nStack backtrace:\n   0: <unknown>\n   1: <unknown>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_are_always_answered() {
        let mut record = HostCalls::new(vec![], HostCapabilities::offline());
        assert_eq!(
            record
                .answer("kubewarden", "tracing", "log", b"{\"msg\":1}")
                .unwrap(),
            b""
        );
        assert_eq!(record.logs, vec!["{\"msg\":1}".to_owned()]);
    }

    #[test]
    fn kinds_outside_the_allow_list_are_refused() {
        let mut record = HostCalls::new(vec![], HostCapabilities::Replay(Session::default()));
        let payload = br#"{"api_version":"v1","kind":"Secret","namespace":"a"}"#;
        let error = record
            .answer(
                "kubewarden",
                "kubernetes",
                "list_resources_by_namespace",
                payload,
            )
            .unwrap_err();
        assert!(
            error.contains("not been granted access to Kubernetes v1/Secret"),
            "{error}"
        );
    }

    #[test]
    fn offline_denies_with_its_reason() {
        let allowed = vec![ContextAwareResource {
            api_version: "v1".into(),
            kind: "Secret".into(),
        }];
        let mut record = HostCalls::new(allowed, HostCapabilities::offline());
        let payload = br#"{"api_version":"v1","kind":"Secret","namespace":"a"}"#;
        let error = record
            .answer(
                "kubewarden",
                "kubernetes",
                "list_resources_by_namespace",
                payload,
            )
            .unwrap_err();
        assert!(
            error.starts_with("Callback evaluation failure: no cluster connection"),
            "{error}"
        );
        assert!(error.contains("\n\nStack backtrace:\n"), "{error}");
        assert_eq!(record.calls.len(), 1);
    }

    #[test]
    fn a_snapshot_answers_granted_reads() {
        let allowed = vec![ContextAwareResource {
            api_version: "v1".into(),
            kind: "Secret".into(),
        }];
        let snapshot = Snapshot::new(vec![
            serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "a"}}),
        ])
        .unwrap();
        let mut record = HostCalls::new(allowed, HostCapabilities::Snapshot(Arc::new(snapshot)));
        let answer = record
            .answer(
                "kubewarden",
                "kubernetes",
                "list_resources_by_namespace",
                br#"{"api_version":"v1","kind":"Secret","namespace":"a","field_masks":["metadata.name"]}"#,
            )
            .unwrap();
        let answer: serde_json::Value = serde_json::from_slice(&answer).unwrap();
        assert_eq!(answer["items"][0]["metadata"]["name"], "s");
        let refused = record
            .answer(
                "kubewarden",
                "kubernetes",
                "get_resource",
                br#"{"api_version":"v1","kind":"ConfigMap","name":"c","namespace":"a"}"#,
            )
            .unwrap_err();
        assert!(refused.contains("not been granted"), "{refused}");
    }

    #[test]
    fn other_bindings_are_refused() {
        let mut record = HostCalls::new(vec![], HostCapabilities::offline());
        assert!(record.answer("other", "tracing", "log", b"").is_err());
    }
}
