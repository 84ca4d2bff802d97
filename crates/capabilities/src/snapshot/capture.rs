//! What a snapshot says about its own capture: which kinds and objects its
//! script read, from which context, when, and how each read ended.
//!
//! The script `cozystack-policies snapshot-command` prints writes this
//! record as the last document of the snapshot (kind [`KIND`]), after
//! every object. A `kubectl get` that was forbidden, timed out or failed
//! leaves no objects behind, exactly as an empty list does; only the
//! record tells them apart, so a snapshot that lacks it (plain `kubectl get
//! … -o yaml` output, a GitOps directory, a capture cut short) is read as
//! holding exactly the kinds it shows objects of.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The API version of the record.
pub const API_VERSION: &str = "cozystack-policies.io/v1alpha1";
/// The kind of the record.
pub const KIND: &str = "SnapshotCapture";

/// The annotation the capture script puts on a Secret it copies: the data
/// keys it examined, space-separated. Each of them that the Secret holds
/// non-empty is in the copy, a credential replaced by [`REDACTED`]; keys
/// it does not list are not in the copy, whatever the Secret holds.
pub const CAPTURED_KEYS: &str = "cozystack-policies.io/captured-keys";

/// What the script writes instead of a credential it must not copy
/// (base64 of `(redacted)`): non-empty, as the credential was.
pub const REDACTED: &str = "KHJlZGFjdGVkKQ==";

/// How one read of the capture ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadResult {
    /// kubectl answered: every object (or the named one, if it exists) is
    /// in the snapshot.
    Captured,
    /// The cluster does not serve the kind (its CRD is not installed):
    /// there is no object of it.
    NotInstalled,
    /// The credentials that ran the script may not read the kind.
    Forbidden,
    /// The API server, or the aggregated API that serves the kind, said it
    /// cannot answer now (503, "the server is currently unable to handle
    /// the request", an APIService not Available).
    Unavailable,
    /// No API server listened where the kubeconfig points.
    Refused,
    /// The API server did not answer in time.
    Timeout,
    /// Any other failure: the message says which.
    Failed,
}

impl ReadResult {
    /// Whether the read says what the cluster holds.
    pub fn is_read(self) -> bool {
        matches!(self, ReadResult::Captured | ReadResult::NotInstalled)
    }

    /// How the record spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReadResult::Captured => "captured",
            ReadResult::NotInstalled => "not-installed",
            ReadResult::Forbidden => "forbidden",
            ReadResult::Unavailable => "unavailable",
            ReadResult::Refused => "refused",
            ReadResult::Timeout => "timeout",
            ReadResult::Failed => "failed",
        }
    }
}

/// One `kubectl get` of the capture: a whole kind across namespaces, or
/// one object by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Read {
    pub api_version: String,
    pub kind: String,
    /// The resource as kubectl was given it (`statefulsets.apps`).
    pub resource: String,
    /// For a read of one object: its namespace (absent when
    /// cluster-scoped) and name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub result: ReadResult,
    /// kubectl's own error line (not a klog line before it), for a read
    /// that failed or found the kind not installed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl Read {
    /// The API group of the kind read.
    pub fn group(&self) -> &str {
        shared::apps::group_version(&self.api_version).0
    }

    /// The version of the kind read.
    pub fn version(&self) -> &str {
        shared::apps::group_version(&self.api_version).1
    }
}

/// The record of one capture.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capture {
    /// The kubeconfig context the script ran with.
    #[serde(default)]
    pub context: String,
    /// When it ran (RFC 3339, UTC).
    #[serde(default)]
    pub captured_at: String,
    #[serde(default)]
    pub reads: Vec<Read>,
}

/// Why a snapshot's record cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The record does not read as one.
    #[error("the snapshot's {KIND} record cannot be read")]
    Unreadable(#[source] serde_json::Error),
    /// Two records: the snapshot mixes two captures, and neither record
    /// says what the other read.
    #[error(
        "the snapshot holds two {KIND} records, {first} and {second}: it mixes two captures, so \
         neither says what was read; capture again into an empty file, or give one capture"
    )]
    Twice { first: String, second: String },
}

impl Capture {
    /// Whether `object` is a capture record.
    pub fn is_record(object: &Value) -> bool {
        object.get("apiVersion").and_then(Value::as_str) == Some(API_VERSION)
            && object.get("kind").and_then(Value::as_str) == Some(KIND)
    }

    /// The record `object` holds (one of [`Capture::is_record`]).
    pub fn from_record(object: &Value) -> Result<Self, CaptureError> {
        let mut fields = object.clone();
        if let Some(map) = fields.as_object_mut() {
            for envelope in ["apiVersion", "kind", "metadata"] {
                map.remove(envelope);
            }
        }
        serde_json::from_value(fields).map_err(CaptureError::Unreadable)
    }

    /// `the capture of <context> at <time>`, as an error names it.
    pub fn describe(&self) -> String {
        let or = |text: &str, unknown: &'static str| {
            if text.is_empty() {
                unknown.to_owned()
            } else {
                format!("{text:?}")
            }
        };
        format!(
            "the capture of {} at {}",
            or(&self.context, "an unnamed context"),
            or(&self.captured_at, "an unknown time")
        )
    }

    /// The read of every object of `group`/`kind`, if the capture made one.
    pub fn kind_read(&self, group: &str, kind: &str) -> Option<&Read> {
        self.reads
            .iter()
            .find(|r| r.name.is_none() && r.group() == group && r.kind == kind)
    }

    /// The read of the one object `namespace`/`name` of `group`/`kind`, if
    /// the capture made one.
    pub fn object_read(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<&Read> {
        self.reads.iter().find(|r| {
            r.group() == group
                && r.kind == kind
                && r.name.as_deref() == Some(name)
                && r.namespace.as_deref().unwrap_or_default() == namespace
        })
    }
}
