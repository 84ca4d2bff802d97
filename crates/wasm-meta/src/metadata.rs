//! Policy metadata: the `metadata.yml` of a policy crate and the JSON that
//! `kwctl annotate` embeds in the module.
//!
//! The field names follow Kubewarden's own metadata type (camelCase); unknown
//! fields are refused so a typo in `metadata.yml` fails the build instead of
//! silently dropping a rule.

use reading::yaml::{self, Limit};
use std::collections::BTreeMap;
use std::path::Path;

use serde::de::{Error as _, IntoDeserializer};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::sections::{self, METADATA_SECTION, SectionError};
use admission::{AdmissionRequest, Operation};

/// The annotation under which `kwctl annotate -u README.md` stores usage.
pub const USAGE_ANNOTATION: &str = "io.kubewarden.policy.usage";
/// The policy version annotation, mirrored from the crate version.
pub const VERSION_ANNOTATION: &str = "io.kubewarden.policy.version";
/// The policy title (also the resource name `kwctl scaffold manifest` uses).
pub const TITLE_ANNOTATION: &str = "io.kubewarden.policy.title";
/// The policy's home page, whose README documents its rules.
pub const URL_ANNOTATION: &str = "io.kubewarden.policy.url";
/// The policy's source repository.
pub const SOURCE_ANNOTATION: &str = "io.kubewarden.policy.source";
/// The OCI repository the policy's module is published to.
pub const OCI_URL_ANNOTATION: &str = "io.kubewarden.policy.ociUrl";
/// How much a violation of the policy matters (`high`, `medium`, ...), as
/// PolicyReports carry it.
pub const SEVERITY_ANNOTATION: &str = "io.kubewarden.policy.severity";
/// What the policy protects (`Data protection`, ...).
pub const CATEGORY_ANNOTATION: &str = "io.kubewarden.policy.category";
/// Where every module of the bundle is published: each policy's
/// [`OCI_URL_ANNOTATION`] is `<MODULE_REGISTRY>/<policy>`, the chart pulls
/// from it, and `push --chart` puts the chart under it by default.
pub const MODULE_REGISTRY: &str = "ghcr.io/cozystack/cozystack-policies";
/// The Secrets a policy reads, as `namespace/name`, comma-separated: a
/// policy that names `v1/Secret` in `contextAwareResources` reads these
/// and no other, by name (`get`). The RBAC of `deploy/` and the snapshot
/// command grant and capture exactly these.
pub const SECRETS_ANNOTATION: &str = "io.cozystack-policies.secrets";
/// Data keys of those Secrets whose values a policy compares (none of them
/// a credential): `namespace/name: key key; namespace/name: key`. The
/// snapshot command copies them.
pub const SECRET_VALUES_ANNOTATION: &str = "io.cozystack-policies.secret-values";
/// Data keys of those Secrets that hold credentials, which a policy only
/// checks are non-empty, in the same form. The snapshot command records
/// which of them are non-empty and never copies their values.
pub const SECRET_CREDENTIALS_ANNOTATION: &str = "io.cozystack-policies.secret-credentials";
/// The objects of other kinds of `contextAwareResources` a policy reads
/// only by name (`get`), never listing the kind:
/// `<apiVersion>/<Kind> [namespace/]name`, comma-separated
/// (`v1/ConfigMap cozy-system/cozystack-version`). The PolicyServer's RBAC
/// grants exactly these names of such a kind.
pub const READ_BY_NAME_ANNOTATION: &str = "io.cozystack-policies.read-by-name";

/// An object a policy reads by name ([`READ_BY_NAME_ANNOTATION`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NamedRead {
    pub api_version: String,
    pub kind: String,
    /// `None` for a cluster-scoped kind.
    pub namespace: Option<String>,
    pub name: String,
}

/// The paths (dotted, lists traversed) a policy's rules read of each object
/// they judge, space-separated: the policy's `READS`. The snapshot command
/// captures these of every kind the policy judges.
pub const READS_ANNOTATION: &str = "io.cozystack-policies.reads";
/// What a policy's cluster reads ask of each kind of its
/// `contextAwareResources` (Secrets aside, which the secret annotations
/// describe): `apiVersion/Kind: path path; apiVersion/Kind: path`, the
/// field masks of its reads. Every read of the policy names field masks
/// within these (its native tests hold it to that), and the snapshot
/// command captures these and nothing else.
pub const CLUSTER_READS_ANNOTATION: &str = "io.cozystack-policies.cluster-reads";

/// What a policy's cluster reads ask of one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterRead {
    pub resource: ContextAwareResource,
    /// Dotted paths, as field masks name them.
    pub paths: Vec<String>,
}

/// What a policy reads of one Secret: its name, the keys whose values it
/// compares, the credentials it checks are non-empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretRead {
    pub namespace: String,
    pub name: String,
    pub values: Vec<String>,
    pub credentials: Vec<String>,
}

/// The operations a webhook rule selects: one, or every one (`*`).
///
/// The operation itself is the request's [`Operation`], so the two cannot
/// drift apart; only the wildcard is the rule's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleOperation {
    Only(Operation),
    All,
}

impl RuleOperation {
    fn covers(self, operation: Operation) -> bool {
        match self {
            RuleOperation::All => true,
            RuleOperation::Only(only) => only == operation,
        }
    }
}

impl Serialize for RuleOperation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RuleOperation::All => serializer.serialize_str("*"),
            RuleOperation::Only(operation) => operation.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for RuleOperation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        if name == "*" {
            return Ok(RuleOperation::All);
        }
        let operation: Result<Operation, serde::de::value::Error> =
            Operation::deserialize(name.as_str().into_deserializer());
        operation.map(RuleOperation::Only).map_err(D::Error::custom)
    }
}

/// One webhook rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookRule {
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub operations: Vec<RuleOperation>,
}

fn matches_name(patterns: &[String], value: &str) -> bool {
    patterns.iter().any(|p| p == "*" || p == value)
}

impl WebhookRule {
    /// Whether the apiserver would send this request to a webhook with
    /// this rule (exact match policy, no subresources).
    pub fn matches(&self, request: &AdmissionRequest) -> bool {
        let resource = &request.resource;
        let sub = request.sub_resource.as_deref().unwrap_or_default();
        let resource_name = if sub.is_empty() {
            resource.resource.clone()
        } else {
            format!("{}/{sub}", resource.resource)
        };
        matches_name(&self.api_groups, &resource.group)
            && matches_name(&self.api_versions, &resource.version)
            && (matches_name(&self.resources, &resource_name)
                || (!sub.is_empty() && self.resources.iter().any(|r| r == "*/*")))
            && self
                .operations
                .iter()
                .any(|op| op.covers(request.operation))
    }
}

/// A Kubernetes kind a context-aware policy may read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextAwareResource {
    pub api_version: String,
    pub kind: String,
}

fn default_true() -> bool {
    true
}

fn default_execution_mode() -> String {
    "kubewarden-wapc".to_owned()
}

fn default_policy_type() -> String {
    "kubernetes".to_owned()
}

/// A policy's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    pub rules: Vec<WebhookRule>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    pub mutating: bool,
    #[serde(default = "default_true")]
    pub background_audit: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_aware_resources: Vec<ContextAwareResource>,
    #[serde(default = "default_execution_mode")]
    pub execution_mode: String,
    #[serde(default = "default_policy_type")]
    pub policy_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_kubewarden_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_capabilities: Option<Vec<String>>,
}

/// Metadata that cannot be read or does not hold together.
#[derive(Debug, thiserror::Error)]
pub enum MetadataError {
    #[error("cannot read {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    Yaml {
        path: String,
        error: Box<serde_saphyr::Error>,
    },
    #[error("metadata section is not valid JSON")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Wasm(#[from] SectionError),
    #[error("invalid metadata: {0}")]
    Invalid(String),
}

impl Metadata {
    /// Reads and checks a `metadata.yml`.
    pub fn from_yaml_file(path: &Path) -> Result<Self, MetadataError> {
        let text = std::fs::read_to_string(path).map_err(|error| MetadataError::Io {
            path: path.display().to_string(),
            error,
        })?;
        Self::from_yaml(&text, &path.display().to_string())
    }

    /// Reads and checks the text of a `metadata.yml`; `path` names it in
    /// errors.
    pub fn from_yaml(text: &str, path: &str) -> Result<Self, MetadataError> {
        let metadata: Metadata =
            yaml::document(text, Limit::Cases).map_err(|error| MetadataError::Yaml {
                path: path.to_owned(),
                error,
            })?;
        metadata.check()?;
        Ok(metadata)
    }

    /// The metadata embedded in an annotated module, if any.
    pub fn from_wasm(wasm: &[u8]) -> Result<Option<Self>, MetadataError> {
        match sections::read_custom_section(wasm, METADATA_SECTION)? {
            Some(json) => Ok(Some(serde_json::from_slice(json)?)),
            None => Ok(None),
        }
    }

    /// The checks `kwctl annotate` performs before it writes metadata.
    pub fn check(&self) -> Result<(), MetadataError> {
        let invalid = |m: String| Err(MetadataError::Invalid(m));
        if self.rules.is_empty() {
            return invalid("at least one rule is required".to_owned());
        }
        for (i, rule) in self.rules.iter().enumerate() {
            for (field, values) in [
                ("apiGroups", &rule.api_groups),
                ("apiVersions", &rule.api_versions),
                ("resources", &rule.resources),
            ] {
                if values.is_empty() {
                    return invalid(format!("rules[{i}].{field} must not be empty"));
                }
                if values.len() > 1 && values.iter().any(|v| v == "*") {
                    return invalid(format!("rules[{i}].{field}: '*' must stand alone"));
                }
            }
            if rule.operations.is_empty() {
                return invalid(format!("rules[{i}].operations must not be empty"));
            }
            if rule.operations.len() > 1 && rule.operations.contains(&RuleOperation::All) {
                return invalid(format!("rules[{i}].operations: '*' must stand alone"));
            }
        }
        if self.execution_mode != "kubewarden-wapc" {
            return invalid(format!(
                "executionMode {:?} is not supported here",
                self.execution_mode
            ));
        }
        if let Some(version) = &self.protocol_version
            && version != "v1"
        {
            return invalid(format!("protocolVersion {version:?} is not v1"));
        }
        if self
            .annotations
            .get(TITLE_ANNOTATION)
            .is_none_or(String::is_empty)
        {
            return invalid(format!("annotation {TITLE_ANNOTATION} is required"));
        }
        let reads_secrets = self
            .context_aware_resources
            .iter()
            .any(|r| r.api_version == "v1" && r.kind == "Secret");
        if let Err(message) = self.secret_reads() {
            return invalid(message);
        }
        match self.cluster_reads() {
            Err(message) => return invalid(message),
            Ok(reads) => {
                for resource in self
                    .context_aware_resources
                    .iter()
                    .filter(|r| !(r.api_version == "v1" && r.kind == "Secret"))
                {
                    if !reads.iter().any(|read| &read.resource == resource) {
                        return invalid(format!(
                            "annotation {CLUSTER_READS_ANNOTATION} does not say what the policy reads of {}/{}",
                            resource.api_version, resource.kind
                        ));
                    }
                }
            }
        }
        if let Err(message) = self.reads_by_name() {
            return invalid(message);
        }
        match (reads_secrets, self.secrets()) {
            (_, Err(message)) => return invalid(message),
            (true, Ok(names)) if names.is_empty() => {
                return invalid(format!(
                    "a policy that reads v1/Secret names the Secrets in annotation {SECRETS_ANNOTATION}"
                ));
            }
            (false, Ok(names)) if !names.is_empty() => {
                return invalid(format!(
                    "annotation {SECRETS_ANNOTATION} names Secrets, but contextAwareResources has no v1/Secret"
                ));
            }
            _ => {}
        }
        Ok(())
    }

    /// The paths the policy's rules read of each object they judge
    /// ([`READS_ANNOTATION`]).
    pub fn reads(&self) -> Vec<String> {
        self.annotations
            .get(READS_ANNOTATION)
            .map(|list| list.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// What the policy's cluster reads ask of each kind
    /// ([`CLUSTER_READS_ANNOTATION`]); each kind must be one of its
    /// `contextAwareResources`.
    pub fn cluster_reads(&self) -> Result<Vec<ClusterRead>, String> {
        let Some(list) = self.annotations.get(CLUSTER_READS_ANNOTATION) else {
            return Ok(Vec::new());
        };
        list.split(';')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                let malformed = || {
                    format!(
                        "annotation {CLUSTER_READS_ANNOTATION}: {entry:?} is not `apiVersion/Kind: path path`"
                    )
                };
                let (resource, paths) = entry.split_once(':').ok_or_else(malformed)?;
                let (api_version, kind) =
                    resource.trim().rsplit_once('/').ok_or_else(malformed)?;
                let resource = ContextAwareResource {
                    api_version: api_version.to_owned(),
                    kind: kind.to_owned(),
                };
                if !self.context_aware_resources.contains(&resource) {
                    return Err(format!(
                        "annotation {CLUSTER_READS_ANNOTATION}: {api_version}/{kind} is not one of contextAwareResources"
                    ));
                }
                let paths: Vec<String> = paths.split_whitespace().map(str::to_owned).collect();
                if paths.is_empty() {
                    return Err(malformed());
                }
                Ok(ClusterRead { resource, paths })
            })
            .collect()
    }

    /// The Secrets the policy reads ([`SECRETS_ANNOTATION`]), as
    /// `(namespace, name)`.
    pub fn secrets(&self) -> Result<Vec<(String, String)>, String> {
        let Some(list) = self.annotations.get(SECRETS_ANNOTATION) else {
            return Ok(Vec::new());
        };
        list.split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                entry
                    .split_once('/')
                    .filter(|(ns, name)| !ns.is_empty() && !name.is_empty() && !name.contains('/'))
                    .map(|(ns, name)| (ns.to_owned(), name.to_owned()))
                    .ok_or_else(|| {
                        format!("annotation {SECRETS_ANNOTATION}: {entry:?} is not namespace/name")
                    })
            })
            .collect()
    }

    /// The objects of other kinds the policy reads only by name
    /// ([`READ_BY_NAME_ANNOTATION`]), each of a kind of its
    /// `contextAwareResources` and none a Secret (those are
    /// [`SECRETS_ANNOTATION`]'s).
    pub fn reads_by_name(&self) -> Result<Vec<NamedRead>, String> {
        let Some(list) = self.annotations.get(READ_BY_NAME_ANNOTATION) else {
            return Ok(Vec::new());
        };
        let mut reads = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let malformed = || {
                format!(
                    "annotation {READ_BY_NAME_ANNOTATION}: {entry:?} is not `<apiVersion>/<Kind> [namespace/]name`"
                )
            };
            let (kind, object) = entry.split_once(' ').ok_or_else(malformed)?;
            let (api_version, kind) = kind.rsplit_once('/').ok_or_else(malformed)?;
            let object = object.trim();
            let (namespace, name) = match object.split_once('/') {
                Some((namespace, name)) => (Some(namespace.to_owned()), name),
                None => (None, object),
            };
            if api_version.is_empty()
                || kind.is_empty()
                || name.is_empty()
                || name.contains('/')
                || namespace.as_deref() == Some("")
            {
                return Err(malformed());
            }
            if (api_version, kind) == ("v1", "Secret") {
                return Err(format!(
                    "annotation {READ_BY_NAME_ANNOTATION}: Secrets are named in {SECRETS_ANNOTATION}"
                ));
            }
            if !self
                .context_aware_resources
                .iter()
                .any(|r| r.api_version == api_version && r.kind == kind)
            {
                return Err(format!(
                    "annotation {READ_BY_NAME_ANNOTATION}: {api_version}/{kind} is not in contextAwareResources"
                ));
            }
            reads.push(NamedRead {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
                namespace,
                name: name.to_owned(),
            });
        }
        Ok(reads)
    }

    /// What the policy reads of each Secret it names: the keys of
    /// [`SECRET_VALUES_ANNOTATION`] and [`SECRET_CREDENTIALS_ANNOTATION`]
    /// for each Secret of [`SECRETS_ANNOTATION`].
    pub fn secret_reads(&self) -> Result<Vec<SecretRead>, String> {
        let mut reads: Vec<SecretRead> = self
            .secrets()?
            .into_iter()
            .map(|(namespace, name)| SecretRead {
                namespace,
                name,
                ..SecretRead::default()
            })
            .collect();
        for (annotation, credentials) in [
            (SECRET_VALUES_ANNOTATION, false),
            (SECRET_CREDENTIALS_ANNOTATION, true),
        ] {
            let Some(list) = self.annotations.get(annotation) else {
                continue;
            };
            for entry in list.split(';').map(str::trim).filter(|e| !e.is_empty()) {
                let (secret, keys) = entry.split_once(':').ok_or_else(|| {
                    format!("annotation {annotation}: {entry:?} is not `namespace/name: key key`")
                })?;
                let read = reads
                    .iter_mut()
                    .find(|r| format!("{}/{}", r.namespace, r.name) == secret.trim())
                    .ok_or_else(|| {
                        format!(
                            "annotation {annotation}: {} is not a Secret of {SECRETS_ANNOTATION}",
                            secret.trim()
                        )
                    })?;
                let keys = keys.split_whitespace().map(str::to_owned);
                if credentials {
                    read.credentials.extend(keys);
                } else {
                    read.values.extend(keys);
                }
            }
        }
        Ok(reads)
    }

    /// Whether a webhook configured from these rules receives the request.
    pub fn matches(&self, request: &AdmissionRequest) -> bool {
        self.rules.iter().any(|rule| rule.matches(request))
    }

    /// The policy title.
    pub fn title(&self) -> &str {
        self.annotations
            .get(TITLE_ANNOTATION)
            .map_or("", String::as_str)
    }

    /// The webhook timeout the bundle gives the policy, in seconds: 10 for
    /// a context-aware policy, whose evaluation waits for the API server,
    /// 5 otherwise.
    pub fn timeout_seconds(&self) -> u8 {
        if self.context_aware_resources.is_empty() {
            5
        } else {
            10
        }
    }

    /// The policy version annotation.
    pub fn version(&self) -> Option<&str> {
        self.annotations.get(VERSION_ANNOTATION).map(String::as_str)
    }

    /// Embeds this metadata into `wasm` as `kwctl annotate` does: protocol
    /// version `v1`, the usage text as an annotation, JSON in the
    /// `io.kubewarden.metadata` custom section.
    pub fn annotate(&self, wasm: &[u8], usage: Option<&str>) -> Result<Vec<u8>, MetadataError> {
        let mut annotated = self.clone();
        annotated.protocol_version = Some("v1".to_owned());
        if let Some(usage) = usage {
            annotated
                .annotations
                .insert(USAGE_ANNOTATION.to_owned(), usage.to_owned());
        }
        annotated.check()?;
        let json = serde_json::to_vec(&annotated)?;
        Ok(sections::replace_custom_section(
            wasm,
            METADATA_SECTION,
            &json,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const YAML: &str = r#"
rules:
- apiGroups: ["apps.cozystack.io"]
  apiVersions: ["v1alpha1"]
  resources: ["postgreses"]
  operations: ["UPDATE"]
mutating: false
backgroundAudit: false
annotations:
  io.kubewarden.policy.title: storageclass-immutable
"#;

    fn request(resource: &str, operation: &str) -> AdmissionRequest {
        AdmissionRequest::from_value(json!({
            "uid": "u", "kind": {"group": "apps.cozystack.io", "version": "v1alpha1", "kind": "Postgres"},
            "resource": {"group": "apps.cozystack.io", "version": "v1alpha1", "resource": resource},
            "operation": operation, "userInfo": {}
        }))
        .unwrap()
    }

    #[test]
    fn rules_match_like_the_apiserver() {
        let metadata: Metadata = serde_saphyr::from_str(YAML).unwrap();
        assert!(metadata.matches(&request("postgreses", "UPDATE")));
        assert!(!metadata.matches(&request("postgreses", "DELETE")));
        assert!(!metadata.matches(&request("redises", "UPDATE")));
    }

    #[test]
    fn rule_operations_read_and_write_as_kubewarden_spells_them() {
        let read: Vec<RuleOperation> = serde_json::from_value(json!(["*", "DELETE"])).unwrap();
        assert_eq!(
            read,
            [RuleOperation::All, RuleOperation::Only(Operation::Delete)]
        );
        assert_eq!(serde_json::to_value(&read).unwrap(), json!(["*", "DELETE"]));
        let typo = serde_json::from_value::<RuleOperation>(json!("DELTE")).unwrap_err();
        assert!(
            typo.to_string().contains("unknown variant `DELTE`"),
            "{typo}"
        );
    }

    #[test]
    fn refuses_unknown_fields_and_lonely_wildcards() {
        let typo = YAML.replace("backgroundAudit", "backgroundAduit");
        assert!(serde_saphyr::from_str::<Metadata>(&typo).is_err());
        let mut metadata: Metadata = serde_saphyr::from_str(YAML).unwrap();
        metadata.rules[0].operations =
            vec![RuleOperation::All, RuleOperation::Only(Operation::Create)];
        assert!(
            metadata
                .check()
                .unwrap_err()
                .to_string()
                .contains("stand alone")
        );
    }

    #[test]
    fn annotation_round_trips_through_the_module() {
        let metadata: Metadata = serde_saphyr::from_str(YAML).unwrap();
        let module = b"\0asm\x01\0\0\0".to_vec();
        let annotated = metadata.annotate(&module, Some("# usage")).unwrap();
        let read = Metadata::from_wasm(&annotated).unwrap().unwrap();
        assert_eq!(read.protocol_version.as_deref(), Some("v1"));
        assert_eq!(
            read.annotations.get(USAGE_ANNOTATION).map(String::as_str),
            Some("# usage")
        );
        assert_eq!(read.rules, metadata.rules);
        let json: serde_json::Value = serde_json::from_slice(
            sections::read_custom_section(&annotated, METADATA_SECTION)
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(json["protocolVersion"], "v1");
        assert_eq!(json["executionMode"], "kubewarden-wapc");
        assert_eq!(json["backgroundAudit"], false);
    }

    #[test]
    fn cluster_reads_name_each_context_aware_kind() {
        let mut metadata: Metadata = serde_saphyr::from_str(YAML).unwrap();
        assert!(metadata.cluster_reads().unwrap().is_empty());
        metadata
            .annotations
            .insert(READS_ANNOTATION.into(), "spec metadata.labels".into());
        assert_eq!(metadata.reads(), ["spec", "metadata.labels"]);
        metadata.context_aware_resources.push(ContextAwareResource {
            api_version: "helm.toolkit.fluxcd.io/v2".into(),
            kind: "HelmRelease".into(),
        });
        let error = metadata.check().unwrap_err().to_string();
        assert!(
            error.contains(
                "does not say what the policy reads of helm.toolkit.fluxcd.io/v2/HelmRelease"
            ),
            "{error}"
        );
        metadata.annotations.insert(
            CLUSTER_READS_ANNOTATION.into(),
            "helm.toolkit.fluxcd.io/v2/HelmRelease: metadata.name spec.values.x".into(),
        );
        metadata.check().unwrap();
        let reads = metadata.cluster_reads().unwrap();
        assert_eq!(reads.len(), 1);
        assert_eq!(reads[0].resource.kind, "HelmRelease");
        assert_eq!(reads[0].paths, ["metadata.name", "spec.values.x"]);
        for wrong in [
            "v1/ConfigMap: metadata.name",
            "HelmRelease: x",
            "helm.toolkit.fluxcd.io/v2/HelmRelease:",
        ] {
            metadata
                .annotations
                .insert(CLUSTER_READS_ANNOTATION.into(), wrong.into());
            assert!(metadata.check().is_err(), "{wrong}");
        }
    }

    #[test]
    fn secrets_are_named_exactly_where_they_are_read() {
        let mut metadata: Metadata = serde_saphyr::from_str(YAML).unwrap();
        assert_eq!(metadata.secrets().unwrap(), Vec::<(String, String)>::new());
        metadata.context_aware_resources.push(ContextAwareResource {
            api_version: "v1".into(),
            kind: "Secret".into(),
        });
        assert!(
            metadata
                .check()
                .unwrap_err()
                .to_string()
                .contains(SECRETS_ANNOTATION)
        );
        metadata.annotations.insert(
            SECRETS_ANNOTATION.into(),
            "cozy-velero/cozy-backups-creds, cozy-system/patch-containerd".into(),
        );
        metadata.check().unwrap();
        assert_eq!(
            metadata.secrets().unwrap(),
            vec![
                ("cozy-velero".into(), "cozy-backups-creds".into()),
                ("cozy-system".into(), "patch-containerd".into())
            ]
        );
        metadata
            .annotations
            .insert(SECRETS_ANNOTATION.into(), "patch-containerd".into());
        assert!(
            metadata
                .check()
                .unwrap_err()
                .to_string()
                .contains("is not namespace/name")
        );
        metadata.context_aware_resources.clear();
        metadata
            .annotations
            .insert(SECRETS_ANNOTATION.into(), "a/b".into());
        assert!(
            metadata
                .check()
                .unwrap_err()
                .to_string()
                .contains("has no v1/Secret")
        );
    }

    #[test]
    fn objects_read_by_name_are_of_context_aware_kinds() {
        let mut metadata: Metadata = serde_saphyr::from_str(YAML).unwrap();
        assert_eq!(metadata.reads_by_name().unwrap(), Vec::new());
        metadata.context_aware_resources.push(ContextAwareResource {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
        });
        metadata.context_aware_resources.push(ContextAwareResource {
            api_version: "apiextensions.k8s.io/v1".into(),
            kind: "CustomResourceDefinition".into(),
        });
        metadata.annotations.insert(
            READ_BY_NAME_ANNOTATION.into(),
            "v1/ConfigMap cozy-system/cozystack-version, \
             apiextensions.k8s.io/v1/CustomResourceDefinition bucketclaims.objectstorage.k8s.io"
                .into(),
        );
        metadata.annotations.insert(
            CLUSTER_READS_ANNOTATION.into(),
            "v1/ConfigMap: data.version; \
             apiextensions.k8s.io/v1/CustomResourceDefinition: metadata.name"
                .into(),
        );
        metadata.check().unwrap();
        assert_eq!(
            metadata.reads_by_name().unwrap(),
            vec![
                NamedRead {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    namespace: Some("cozy-system".into()),
                    name: "cozystack-version".into(),
                },
                NamedRead {
                    api_version: "apiextensions.k8s.io/v1".into(),
                    kind: "CustomResourceDefinition".into(),
                    namespace: None,
                    name: "bucketclaims.objectstorage.k8s.io".into(),
                },
            ]
        );
        for (annotation, problem) in [
            ("v1/Pod a/b", "is not in contextAwareResources"),
            ("v1/Secret a/b", "are named in"),
            ("ConfigMap a/b", "is not `<apiVersion>/<Kind>"),
            ("v1/ConfigMap", "is not `<apiVersion>/<Kind>"),
            ("v1/ConfigMap /b", "is not `<apiVersion>/<Kind>"),
        ] {
            metadata
                .annotations
                .insert(READ_BY_NAME_ANNOTATION.into(), annotation.into());
            let error = metadata.check().unwrap_err().to_string();
            assert!(error.contains(problem), "{annotation}: {error}");
        }
    }

    #[test]
    fn secret_keys_are_values_or_credentials_of_named_secrets() {
        let mut metadata: Metadata = serde_saphyr::from_str(YAML).unwrap();
        metadata.context_aware_resources.push(ContextAwareResource {
            api_version: "v1".into(),
            kind: "Secret".into(),
        });
        metadata.annotations.insert(
            SECRETS_ANNOTATION.into(),
            "cozy-velero/cozy-backups-creds, cozy-system/patch-containerd".into(),
        );
        metadata.annotations.insert(
            SECRET_VALUES_ANNOTATION.into(),
            "cozy-velero/cozy-backups-creds: endpoint bucketName".into(),
        );
        metadata.annotations.insert(
            SECRET_CREDENTIALS_ANNOTATION.into(),
            "cozy-velero/cozy-backups-creds: AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY".into(),
        );
        metadata.check().unwrap();
        let reads = metadata.secret_reads().unwrap();
        assert_eq!(
            reads,
            [
                SecretRead {
                    namespace: "cozy-velero".into(),
                    name: "cozy-backups-creds".into(),
                    values: vec!["endpoint".into(), "bucketName".into()],
                    credentials: vec!["AWS_ACCESS_KEY_ID".into(), "AWS_SECRET_ACCESS_KEY".into()],
                },
                SecretRead {
                    namespace: "cozy-system".into(),
                    name: "patch-containerd".into(),
                    ..SecretRead::default()
                },
            ]
        );
        metadata.annotations.insert(
            SECRET_VALUES_ANNOTATION.into(),
            "cozy-velero/other: endpoint".into(),
        );
        let error = metadata.check().unwrap_err().to_string();
        assert!(
            error.contains("cozy-velero/other is not a Secret of"),
            "{error}"
        );
        metadata
            .annotations
            .insert(SECRET_VALUES_ANNOTATION.into(), "endpoint".into());
        let error = metadata.check().unwrap_err().to_string();
        assert!(
            error.contains("is not `namespace/name: key key`"),
            "{error}"
        );
    }
}
