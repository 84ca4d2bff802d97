//! `chart`: the files of the Helm chart (`charts/cozystack-policies/`) that
//! follow from the policies themselves, written from them so that the
//! chart cannot drift from the modules it installs.
//!
//! - `files/policies.yaml`: what each policy's `metadata.yml` declares and
//!   its ClusterAdmissionPolicy must repeat (rules, `mutating`,
//!   `backgroundAudit`, `contextAwareResources`, severity, category,
//!   version), and, for each context-aware resource, the plural the
//!   PolicyServer's ClusterRole grants. The templates read it with
//!   `.Files.Get`; a kind a policy starts to look up reaches the manifest and
//!   the RBAC with no template edit.
//! - `values.schema.json`: every value of the chart, each policy's
//!   `settings` as its settings type decodes them (schemars reads the same
//!   serde attributes: names, `deny_unknown_fields`, optional fields, enum
//!   spellings), so `helm install` refuses a misspelt or mistyped setting
//!   instead of the policy-server crash-looping on it; every key values.yaml
//!   sets is required, so a `null` cannot remove a value the templates need.
//! - `templates/policies/<policy>.yaml`: each policy's ClusterAdmissionPolicy
//!   template, kept in its folder (`cluster-admission-policy.yaml`) beside
//!   the rule whose traffic it decides, so a new policy needs no edit in the
//!   chart; a template whose policy is gone is removed.
//!
//! `make chart` writes them (and renders `deploy/` from the chart); a test
//! fails while the committed files differ from what this writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::generated::Generated;
use linked::{Linked, Visitor};
use registry::Declared;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde_json::{Value, json};
use shared::sdk::settings::SettingsValidationResponse;
use wasm_meta::metadata::{
    ContextAwareResource, MODULE_REGISTRY, OCI_URL_ANNOTATION, RuleOperation, WebhookRule,
};

/// The chart, relative to the repository root.
const CHART_DIR: &str = "charts/cozystack-policies";

const POLICIES_HEADER: &str = "\
# What each policy's metadata.yml declares, for the chart's templates: written
# by `cargo xtask chart` (make chart) from policies/*/metadata.yml; do not
# edit, regenerate. `reads` are the plurals of contextAwareResources, the
# PolicyServer's ClusterRole grants get, list and watch on them.
";

/// One policy as the chart's templates read it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ChartPolicy {
    version: String,
    severity: String,
    category: String,
    rules: Vec<WebhookRule>,
    mutating: bool,
    background_audit: bool,
    context_aware_resources: Vec<ContextAwareResource>,
    reads: Vec<Read>,
    /// The webhook's timeout: 10 s for a context-aware policy, whose
    /// evaluation waits for the API server, 5 s otherwise.
    timeout_seconds: u8,
    /// The kind behind each resource of the rules, by group and resource:
    /// Helm's `.Capabilities.APIVersions` lists what a cluster serves by
    /// kind (`apps.cozystack.io/v1alpha1/Postgres`), the rules name it by
    /// resource.
    kinds: BTreeMap<String, BTreeMap<String, String>>,
    /// Whether the settings take `cozystackVersion`, which the chart's
    /// value of that name fills in when the policy's settings leave it out.
    release_setting: bool,
}

/// The setting that selects the Cozystack release a policy judges for.
const RELEASE_SETTING: &str = "cozystackVersion";

/// The kinds of the resources the policies' rules name outside
/// `apps.cozystack.io` (whose kinds are `shared::apps::APP_KINDS`), each
/// found by its plural (`shared::apps::plural`).
const RULE_KINDS: &[&str] = &[
    "APIService",
    "ConfigMap",
    "EtcdBackup",
    "EtcdBackupSchedule",
    "EtcdCluster",
    "KubeadmConfigTemplate",
    "Namespace",
    "Node",
    "Package",
    "SecurityGroup",
    "StorageClass",
];

/// The application kinds of every release of `releases/`, candidates
/// included (whose new kinds `shared::apps` leaves out), by plural.
fn release_app_kinds() -> &'static BTreeMap<String, String> {
    static KINDS: std::sync::OnceLock<BTreeMap<String, String>> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| {
        let entries = releases::read_all(&layout::checkout()).unwrap_or_default();
        entries
            .iter()
            .filter_map(|entry| releases::charts_of(&entries, &entry.version).ok())
            .flat_map(|charts| &charts.facts.kinds)
            .map(|kind| (kind.plural.clone(), kind.kind.clone()))
            .collect()
    })
}

/// The kind served as `resource` of `group`, for Helm's capabilities.
fn rule_kind(group: &str, resource: &str) -> Option<String> {
    if group == shared::apps::APPS_GROUP {
        return shared::apps::app_kind_by_plural(resource)
            .map(|app| app.kind.to_owned())
            .or_else(|| release_app_kinds().get(resource).cloned());
    }
    RULE_KINDS
        .iter()
        .find(|kind| shared::apps::plural(group, kind) == resource)
        .map(|kind| (*kind).to_owned())
}

/// The kind of every resource `rules` name, by group and resource; a rule
/// with CREATE names one group and one version (the chart splits its
/// resources by what the cluster serves, which needs both).
fn rule_kinds(name: &str, rules: &[WebhookRule]) -> Result<BTreeMap<String, BTreeMap<String, String>>> {
    let mut kinds: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for rule in rules {
        if rule.api_groups.iter().chain(&rule.resources).any(|item| item == "*") {
            continue;
        }
        // audit-scanner looks for CREATE itself: `*` is not it.
        let creates = rule
            .operations
            .contains(&RuleOperation::Only(shared::Operation::Create));
        if creates && (rule.api_groups.len() != 1 || rule.api_versions.len() != 1) {
            bail!(
                "{name}: a rule with CREATE names one API group and one version, so the chart can keep \
                 what the cluster serves audited (audit-scanner errors a policy on an unserved resource)"
            );
        }
        for group in &rule.api_groups {
            for resource in &rule.resources {
                let kind = rule_kind(group, resource).with_context(|| {
                    format!(
                        "{name}: the kind of {resource} ({group:?}) is unknown: add it to RULE_KINDS \
                         (xtask/src/commands/chart/generate.rs)"
                    )
                })?;
                kinds
                    .entry(group.clone())
                    .or_default()
                    .insert(resource.clone(), kind);
            }
        }
    }
    Ok(kinds)
}

/// A resource the PolicyServer's service account may read: get, list and
/// watch, or get of the objects a policy reads by name (Secrets, whose
/// existence it checks and of which it reads nothing else, and the objects
/// of `io.cozystack-policies.read-by-name`).
#[derive(Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
struct Read {
    api_group: String,
    resource: String,
    /// The objects read by name (`io.cozystack-policies.secrets`,
    /// `io.cozystack-policies.read-by-name`); empty for a kind read whole.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    names: Vec<String>,
}

/// The schema of a policy's settings type, with every subschema inline (the
/// chart's schema holds eight of them side by side) and no `$schema`.
fn settings_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema: Schema = generator.into_root_schema_for::<T>();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
    }
    schema.to_value()
}

/// A policy's settings schema, from its settings type ([`linked`]), with the
/// rule ids its settings `deny` and `ignore` may list as their items'
/// `enum`: the settings type holds plain strings (one shared type for every
/// policy), and the policy's `validate_settings` refuses the rest, but a
/// `helm install` should refuse them first.
struct SettingsSchema;

impl Visitor for SettingsSchema {
    type Output = Value;

    fn visit<S: linked::Settings>(&mut self, policy: Linked<S>) -> Value {
        let mut schema = settings_schema::<S>();
        for setting in ["deny", "ignore"] {
            if let Some(items) = schema.pointer_mut(&format!("/properties/{setting}/items")) {
                *items = json!({"type": "string", "enum": listable::<S>(&policy, setting)});
            }
        }
        schema
    }
}

/// The rule ids the setting `setting` (`deny`, `ignore`) may list, in the
/// catalogue's order: those the policy's own `validate_settings` accepts
/// there, asked one id at a time, so the chart's enum and the policy cannot
/// disagree.
fn listable<S: linked::Settings>(policy: &Linked<S>, setting: &str) -> Vec<&'static str> {
    policy
        .rules
        .rules()
        .into_iter()
        .map(|rule| rule.id)
        .filter(|id| {
            let settings = json!({ setting: [id] }).to_string();
            shared::settings::validate_settings::<S>(policy.name, settings.as_bytes())
                .ok()
                .and_then(|answer| serde_json::from_slice::<SettingsValidationResponse>(&answer).ok())
                .is_some_and(|answer| answer.valid)
        })
        .collect()
}

/// A policy's entry of `files/policies.yaml`, checking that its module is
/// published where the chart pulls it from.
fn chart_policy(policy: &Declared) -> Result<ChartPolicy> {
    let metadata = &policy.metadata;
    let oci_url = metadata
        .annotations
        .get(OCI_URL_ANNOTATION)
        .with_context(|| format!("{}: annotation {OCI_URL_ANNOTATION} is missing", policy.name))?;
    let expected = format!("{MODULE_REGISTRY}/{}", policy.name);
    if *oci_url != expected {
        bail!(
            "{}: {OCI_URL_ANNOTATION} is {oci_url}, but the chart pulls {expected} \
             (modules.registry and the policy's name)",
            policy.name
        );
    }
    let mut reads: Vec<Read> = metadata
        .context_aware_resources
        .iter()
        .map(|resource| {
            let group = resource
                .api_version
                .rsplit_once('/')
                .map_or("", |(group, _)| group);
            Read {
                api_group: group.to_owned(),
                resource: shared::apps::plural(group, &resource.kind),
                names: Vec::new(),
            }
        })
        .collect();
    let secrets = metadata
        .secrets()
        .map_err(|problem| anyhow::anyhow!("{}: {problem}", policy.name))?;
    for read in reads
        .iter_mut()
        .filter(|r| r.api_group.is_empty() && r.resource == "secrets")
    {
        read.names = secrets.iter().map(|(_, name)| name.clone()).collect();
        read.names.sort();
        read.names.dedup();
        if read.names.is_empty() {
            anyhow::bail!(
                "{}: contextAwareResources names Secrets but io.cozystack-policies.secrets names none: \
                 the policy server would read every Secret",
                policy.name
            );
        }
    }
    let by_name = metadata
        .reads_by_name()
        .map_err(|problem| anyhow::anyhow!("{}: {problem}", policy.name))?;
    for (read, resource) in reads.iter_mut().zip(&metadata.context_aware_resources) {
        read.names.extend(
            by_name
                .iter()
                .filter(|named| named.api_version == resource.api_version && named.kind == resource.kind)
                .map(|named| named.name.clone()),
        );
        read.names.sort();
        read.names.dedup();
    }
    reads.sort();
    reads.dedup();
    Ok(ChartPolicy {
        version: metadata
            .version()
            .with_context(|| format!("{}: the version annotation is missing", policy.name))?
            .to_owned(),
        severity: policy.severity.clone(),
        category: policy.category.clone(),
        rules: metadata.rules.clone(),
        mutating: metadata.mutating,
        background_audit: metadata.background_audit,
        context_aware_resources: metadata.context_aware_resources.clone(),
        reads,
        timeout_seconds: metadata.timeout_seconds(),
        kinds: rule_kinds(policy.name, &metadata.rules)?,
        release_setting: false,
    })
}

/// `monitor` or `protect`, as a ClusterAdmissionPolicy's `spec.mode`.
fn mode_schema(description: &str) -> Value {
    json!({"type": "string", "enum": ["monitor", "protect"], "description": description})
}

/// One policy's values: `enabled`, `mode`, `settings`, `module`, and its
/// webhook's failure policy, timeouts and namespaces.
fn policy_values_schema(policy: &SchemaPolicy) -> Value {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    let SchemaPolicy {
        name,
        description,
        settings,
        timeout_seconds,
    } = policy;
    json!({
        "type": "object",
        "additionalProperties": false,
        "description": format!("{name}: {description}"),
        "properties": {
            "enabled": {"type": "boolean", "description": "Install this policy's ClusterAdmissionPolicy."},
            "mode": mode_schema("This policy's mode; the chart's `mode` when unset (monitor for the report-only upgrade-gate and upgrade-readiness)."),
            "failurePolicy": {"type": "string", "enum": ["Fail", "Ignore"], "description": "What the API server does when the policy-server does not answer: Fail rejects the request, Ignore lets it through. Unset, it follows the policy's mode: Ignore in monitor, Fail in protect."},
            "timeoutSeconds": timeout_schema(&format!("The webhook's timeout; {timeout_seconds} when unset (10 for a context-aware policy, whose evaluation waits for the API server, 5 otherwise).")),
            "timeoutEvalSeconds": timeout_schema("The timeout of the evaluation in policy-server, after which the failure policy applies: at most timeoutSeconds (Kubewarden refuses more); one second below timeoutSeconds when unset, at least 2."),
            "skipNamespaces": {"type": "array", "items": namespace_schema(), "description": "More namespaces this policy leaves out, besides the chart's `skipNamespaces` and Kubewarden's namespace."},
            "namespaceSelector": kubernetes_schema::<LabelSelector>(),
            "settings": settings,
            "module": {
                "type": "object",
                "additionalProperties": false,
                "description": "Where the module is pulled from: registry://<registry>/<policy>:<tag>[@<digest>].",
                "properties": {
                    "registry": {"type": "string", "minLength": 1, "description": "Replaces `modules.registry` for this policy."},
                    "tag": {"type": "string", "pattern": TAG_PATTERN, "description": "The tag; v<the policy's version> when unset."},
                    "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$", "description": "Pins the module by digest (what `push` prints)."},
                },
            },
        },
        "allOf": evaluation_within_timeout(*timeout_seconds),
    })
}

/// An OCI tag (the distribution spec's `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`).
const TAG_PATTERN: &str = "^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$";

/// Where the values schema keeps [`evaluation_within_webhook`].
const EVALUATION_WITHIN_WEBHOOK: &str = "evaluationWithinWebhook";

/// What a policy's values say when its `timeoutEvalSeconds` is above its
/// `timeoutSeconds`, which Kubewarden's webhook refuses
/// (`api/policies/v1/policy_validation.go:314-332`): JSON Schema cannot
/// compare two values, so one `if`/`then` for each timeout, kept once in
/// the schema's `$defs`.
fn evaluation_within_webhook() -> Value {
    let conditions: Vec<Value> = (TIMEOUT_MINIMUM..TIMEOUT_MAXIMUM)
        .map(|timeout| {
            json!({
                "if": {"required": ["timeoutSeconds"], "properties": {"timeoutSeconds": {"const": timeout}}},
                "then": {"properties": {"timeoutEvalSeconds": {"maximum": timeout}}},
            })
        })
        .collect();
    json!({
        "description": "timeoutEvalSeconds at most timeoutSeconds, which Kubewarden's webhook refuses otherwise.",
        "allOf": conditions,
    })
}

/// [`evaluation_within_webhook`], and the same for a policy whose
/// `timeoutSeconds` is unset (`default`).
fn evaluation_within_timeout(default: u8) -> Value {
    json!([
        {"$ref": format!("#/$defs/{EVALUATION_WITHIN_WEBHOOK}")},
        {
            "if": {"not": {"required": ["timeoutSeconds"]}},
            "then": {"properties": {"timeoutEvalSeconds": {"maximum": default}}},
        },
    ])
}

/// The range of the ClusterAdmissionPolicy CRD for both timeouts.
const TIMEOUT_MINIMUM: u8 = 2;
const TIMEOUT_MAXIMUM: u8 = 30;

/// A webhook timeout: the ClusterAdmissionPolicy CRD's range for both
/// `timeoutSeconds` and `timeoutEvalSeconds`.
fn timeout_schema(description: &str) -> Value {
    json!({"type": "integer", "minimum": TIMEOUT_MINIMUM, "maximum": TIMEOUT_MAXIMUM, "description": description})
}

/// A namespace's name: a DNS-1123 label.
fn namespace_schema() -> Value {
    json!({"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63})
}

/// The name of a ConfigMap, Secret or ServiceAccount: a DNS-1123
/// subdomain; empty where the value is optional.
fn object_name_schema(description: &str, optional: bool) -> Value {
    let name = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
    let pattern = if optional {
        format!("^({name})?$")
    } else {
        format!("^{name}$")
    };
    json!({"type": "string", "pattern": pattern, "maxLength": 253, "description": description})
}

/// A Kubernetes type's schema from k8s-openapi (generated from the API's
/// OpenAPI document), inline, with every object closed to the fields it
/// declares: the API server would prune the others without a word.
fn kubernetes_schema<T: JsonSchema>() -> Value {
    fn close(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                    map.insert("additionalProperties".to_owned(), Value::Bool(false));
                }
                map.values_mut().for_each(close);
            }
            Value::Array(items) => items.iter_mut().for_each(close),
            _ => {}
        }
    }
    let mut schema = settings_schema::<T>();
    close(&mut schema);
    schema
}

/// policy-server's verification configuration (`--verification-path`, the
/// `verification-config` key of the ConfigMap a PolicyServer's
/// `verificationConfig` names), as policy-fetcher's
/// `verify/config.rs` reads it (`VersionedVerificationConfig` v1, every
/// struct `deny_unknown_fields`).
fn verification_schema() -> Value {
    let annotations = json!({"type": "object", "additionalProperties": {"type": "string"}});
    let signature = json!({
        "oneOf": [
            {
                "type": "object",
                "additionalProperties": false,
                "required": ["kind", "key"],
                "properties": {
                    "kind": {"const": "pubKey"},
                    "owner": {"type": "string"},
                    "key": {"type": "string", "pattern": "-----BEGIN PUBLIC KEY-----", "description": "The PEM public key (cosign.pub)."},
                    "annotations": annotations,
                },
            },
            {
                "type": "object",
                "additionalProperties": false,
                "required": ["kind", "issuer", "subject"],
                "properties": {
                    "kind": {"const": "genericIssuer"},
                    "issuer": {"type": "string"},
                    "subject": {
                        "type": "object",
                        "additionalProperties": false,
                        "minProperties": 1,
                        "maxProperties": 1,
                        "properties": {"equal": {"type": "string"}, "urlPrefix": {"type": "string"}},
                    },
                    "annotations": annotations,
                },
            },
            {
                "type": "object",
                "additionalProperties": false,
                "required": ["kind", "owner"],
                "properties": {
                    "kind": {"const": "githubAction"},
                    "owner": {"type": "string"},
                    "repo": {"type": "string"},
                    "annotations": annotations,
                },
            },
        ],
    });
    json!({
        "type": "object",
        "additionalProperties": false,
        "description": "policy-server's verification configuration: when set, the chart writes it into a ConfigMap and the PolicyServer refuses to start with a module whose signatures do not satisfy it. Empty: no verification.",
        "properties": {
            "apiVersion": {"const": "v1"},
            "allOf": {"type": "array", "items": signature},
            "anyOf": {
                "type": "object",
                "additionalProperties": false,
                "required": ["signatures"],
                "properties": {
                    "minimumMatches": {"type": "integer", "minimum": 1, "maximum": 255},
                    "signatures": {"type": "array", "minItems": 1, "items": signature},
                },
            },
        },
        "dependentRequired": {"allOf": ["apiVersion"], "anyOf": ["apiVersion"]},
    })
}

/// The values of the PolicyServer the policies run on: the fields of the
/// PolicyServer CRD (`policies.kubewarden.io_policyservers.yaml`), each
/// Kubernetes type as k8s-openapi declares it.
fn policy_server_schema() -> Value {
    use k8s_openapi::api::core::v1::{
        Affinity, EnvVar, PodSecurityContext, SecurityContext, Toleration,
    };
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    let quantities = kubernetes_schema::<BTreeMap<String, Quantity>>();
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 50, "description": "The PolicyServer's name; Kubewarden's controller names its Deployment and Service policy-server-<name>. Kubewarden never moves a policy to another PolicyServer: renaming it needs the release uninstalled first."},
            "image": {
                "type": "object",
                "additionalProperties": false,
                "description": "policy-server's image: <registry>/<repository>:<tag>[@<digest>].",
                "properties": {
                    "registry": {"type": "string", "minLength": 1, "description": "The registry (a mirror's, for an air-gapped cluster)."},
                    "repository": {"type": "string", "pattern": "^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$"},
                    "tag": {"type": "string", "pattern": TAG_PATTERN},
                    "digest": {"type": "string", "pattern": "^(sha256:[0-9a-f]{64})?$", "description": "Pins the image by digest; empty for none."},
                },
            },
            "replicas": {"type": "integer", "minimum": 1},
            "maxUnavailable": {"description": "Of the chart's PodDisruptionBudget (unhealthyPodEvictionPolicy AlwaysAllow: a pod that is not ready is always evicted): how many ready pods a drain may evict at once, at least 1 or 1%, so that the budget never blocks a drain.", "type": ["integer", "string"], "minimum": 1, "pattern": "^([1-9][0-9]?|100)%$"},
            "minAvailable": {"description": "Instead of maxUnavailable: how many ready pods a drain keeps, below replicas (the chart refuses more) or a percentage below 100%; empty for maxUnavailable.", "type": ["integer", "string"], "minimum": 0, "pattern": "^(([0-9]|[1-9][0-9])%)?$"},
            "resources": {
                "type": "object",
                "additionalProperties": false,
                "properties": {"requests": quantities, "limits": quantities},
            },
            "affinity": kubernetes_schema::<Affinity>(),
            "tolerations": {"type": "array", "items": kubernetes_schema::<Toleration>()},
            "priorityClassName": {"type": "string"},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Annotations of the policy-server pods."},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Labels of the policy-server Deployment and pods (Kubewarden 1.37 or later); the controller's own win."},
            "namespacedPoliciesCapabilities": {"type": "array", "items": {"type": "string", "pattern": "^(\\*|[a-z0-9_-]+(/[a-z0-9_-]+)*(/\\*)?)$"}, "description": "The host capabilities namespaced policies on this PolicyServer may call (`*`, `oci/*`, `net/v1/dns_lookup_host`); empty for Kubewarden's default, all of them."},
            "ports": {
                "type": "object",
                "additionalProperties": false,
                "description": "policy-server's ports (Kubewarden 1.37 or later); Kubewarden's defaults when unset.",
                "properties": {
                    "webhook": {"type": "integer", "minimum": 1, "maximum": 65535, "description": "The webhook's (8443); the network policy admits this one."},
                    "readinessProbe": {"type": "integer", "minimum": 1, "maximum": 65535, "description": "The readiness probe's (8081)."},
                    "metrics": {"type": "integer", "minimum": 1, "maximum": 65535, "description": "The metrics Service's (the controller's, 8080)."},
                },
            },
            "env": {"type": "array", "items": kubernetes_schema::<EnvVar>(), "description": "Environment variables of the policy-server container."},
            "securityContexts": {
                "type": "object",
                "additionalProperties": false,
                "description": "The security contexts of the policy-server pods and container; the controller's defaults for the one left out.",
                "properties": {
                    "pod": kubernetes_schema::<PodSecurityContext>(),
                    "container": kubernetes_schema::<SecurityContext>(),
                },
            },
            "imagePullSecret": object_name_schema("A Secret (kubernetes.io/dockerconfigjson) in Kubewarden's namespace with the credentials of the registry the modules are pulled from; empty for none.", true),
            "sourceAuthorities": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string", "pattern": "-----BEGIN CERTIFICATE-----"}}, "description": "Registry -> the PEM certificates of the authorities that sign its TLS certificate."},
            "insecureSources": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Registries reached over plain HTTP or without verifying TLS."},
            "sigstoreTrustConfig": object_name_schema("A ConfigMap in Kubewarden's namespace whose `sigstore-trust-config` holds a Sigstore trust configuration (ClientTrustConfig JSON); empty for the public Sigstore.", true),
            "serviceAccount": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "create": {"type": "boolean", "description": "Create the service account and the ClusterRole that lets it read what the context-aware policies look up."},
                    "name": object_name_schema("The PolicyServer's service account.", false),
                    "readHelmReleases": {"type": "boolean", "description": "Let the PolicyServer read HelmReleases, whose values hold the tenants' application settings and passwords: securitygroup-validity and upgrade-gate need them; false, their checks that do report NOT CHECKED."},
                },
            },
            "verificationConfig": verification_schema(),
            "verificationConfigMap": object_name_schema("Instead of verificationConfig: a ConfigMap in Kubewarden's namespace whose `verification-config` holds policy-server's verification configuration; empty for none.", true),
        },
        "not": {
            "description": "verificationConfig and verificationConfigMap are one or the other.",
            "required": ["verificationConfig", "verificationConfigMap"],
            "properties": {"verificationConfig": {"minProperties": 1}, "verificationConfigMap": {"minLength": 1}},
        },
    })
}

/// audit-scanner's service account and the read access the chart grants it.
fn audit_scanner_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "description": "Kubewarden's audit-scanner: the account the chart lets read what the enabled policies audit.",
        "properties": {
            "rbac": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "create": {"type": "boolean", "description": "A ClusterRole and its binding: get, list and watch on the resources of every rule audit-scanner replays, nothing more."},
                },
            },
            "serviceAccount": {
                "type": "object",
                "additionalProperties": false,
                "description": "audit-scanner's service account: Kubewarden's chart's auditScanner.serviceAccountName, in the namespace Kubewarden is installed into.",
                "properties": {
                    "name": object_name_schema("The service account's name.", false),
                    "namespace": {"anyOf": [namespace_schema(), {"const": ""}], "description": "Its namespace; kubewardenNamespace when empty."},
                },
            },
        },
    })
}

/// What the values schema says of one policy.
struct SchemaPolicy {
    name: String,
    description: String,
    settings: Value,
    /// Its webhook's timeout when the values leave it unset.
    timeout_seconds: u8,
}

/// The chart's `values.schema.json` for `policies`.
fn values_schema(policies: &[SchemaPolicy]) -> Value {
    let per_policy: serde_json::Map<String, Value> = policies
        .iter()
        .map(|policy| (policy.name.clone(), policy_values_schema(policy)))
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": "Written by `cargo xtask chart` (make chart) from each policy's settings type: do not edit, regenerate.",
        "title": "Values of the cozystack-policies chart",
        "$defs": {EVALUATION_WITHIN_WEBHOOK: evaluation_within_webhook()},
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "global": {"type": "object", "description": "Helm's values shared with parent charts; unused."},
            "kubewardenNamespace": namespace_schema(),
            "skipNamespaces": {"type": "array", "items": namespace_schema(), "description": "Namespaces no policy but no-delete looks into, besides Kubewarden's."},
            "auditScanner": audit_scanner_schema(),
            "mode": mode_schema("The mode of every policy whose own `mode` is unset, but the report-only upgrade-gate and upgrade-readiness: monitor (nothing is rejected; the policy-server logs what would be, audit-scanner reports it, and an unanswered webhook lets the request through) or protect. Kubewarden allows monitor to protect, never back."),
            RELEASE_SETTING: {
                "type": "string",
                "enum": std::iter::once(release::FROM_CLUSTER)
                    .chain(release::Release::released().map(release::Release::as_str))
                    .collect::<Vec<_>>(),
                "description": "The Cozystack release whose charts the policies judge by: `cluster` (the release the cluster runs, as Deployment cozy-system/cozystack-operator records it; values-schema also judges by the schemas of the cluster's ApplicationDefinitions) or a release. It becomes the `cozystackVersion` setting of every policy that takes it and whose settings leave it out.",
            },
            "modules": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "registry": {"type": "string", "minLength": 1, "description": "Registry and namespace of the modules: registry://<registry>/<policy>."},
                },
            },
            "policies": {
                "type": "object",
                "additionalProperties": false,
                "properties": per_policy,
            },
            "policyServer": policy_server_schema(),
            "networkPolicy": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "enabled": {"type": "boolean", "description": "The CiliumNetworkPolicy that admits the webhook's callers to the policy-server pods."},
                    "namespaces": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Namespaces whose pods may call the webhook, besides the release's (audit-scanner, the controller): cozystack-api's."},
                },
            },
        },
    })
}

/// `schema` with every key `defaults` (values.yaml) sets required where it
/// is set. Helm drops a key a user sets to `null` before it checks the
/// values against the schema, so without this `mode: null` would pass and
/// render an empty mode (which Kubewarden reads as protect), and
/// `policyServer.resources: null` would fail the render on a nil pointer; a
/// value is emptied with `{}`, `[]` or `""` instead.
fn require_defaults(schema: &mut Value, defaults: &Value) {
    let Value::Object(defaults) = defaults else {
        return;
    };
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    let mut required = Vec::new();
    for (key, value) in defaults {
        if let Some(property) = properties.get_mut(key) {
            require_defaults(property, value);
            required.push(key.clone());
        }
    }
    if required.is_empty() {
        return;
    }
    if let Some(object) = schema.as_object_mut() {
        let mut all: Vec<String> = object
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|key| key.as_str().map(str::to_owned))
            .chain(required)
            .collect();
        all.sort();
        all.dedup();
        object.insert("required".to_owned(), json!(all));
    }
}

/// Where each policy's ClusterAdmissionPolicy template goes, in the chart.
const TEMPLATES_DIR: &str = "templates/policies";

/// Both generated files for the bundle's policies ([`registry`], their
/// settings types from [`linked`]), with the values.yaml of the chart under
/// `root` (which says which values are required).
pub fn generate(root: &Path) -> Result<Generated> {
    let mut chart_policies = BTreeMap::new();
    let mut schemas = Vec::new();
    for policy in registry::policies()? {
        let mut entry = chart_policy(policy)?;
        let settings = linked::visit(policy.name, &mut SettingsSchema)
            .with_context(|| format!("{}: a policy of the registry is not linked", policy.name))?;
        entry.release_setting = settings
            .pointer(&format!("/properties/{RELEASE_SETTING}"))
            .is_some();
        let description = policy
            .metadata
            .annotations
            .get("io.kubewarden.policy.description")
            .map(|text| text.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        schemas.push(SchemaPolicy {
            name: policy.name.to_owned(),
            description,
            settings,
            timeout_seconds: entry.timeout_seconds,
        });
        chart_policies.insert(policy.name, entry);
    }
    let policies_yaml = format!(
        "{POLICIES_HEADER}{}",
        serde_saphyr::to_string(&chart_policies)?
    );
    let dir = PathBuf::from(CHART_DIR);
    let values_path = root.join(&dir).join("values.yaml");
    let values_text = std::fs::read_to_string(&values_path)
        .with_context(|| format!("reading {}", values_path.display()))?;
    let defaults: Value = reading::yaml::document(&values_text, reading::yaml::Limit::Settings)
        .with_context(|| format!("reading {}", values_path.display()))?;
    let mut schema = values_schema(&schemas);
    require_defaults(&mut schema, &defaults);
    let mut schema = serde_json::to_string_pretty(&schema)?;
    schema.push('\n');
    let mut files = vec![
        (dir.join("files/policies.yaml"), policies_yaml),
        (dir.join("values.schema.json"), schema),
    ];
    let templates = dir.join(TEMPLATES_DIR);
    for policy in layout::policies(root)? {
        let source = policy.admission_template_path();
        let text = std::fs::read_to_string(&source).with_context(|| {
            format!(
                "reading {}: every policy's folder holds the template of its ClusterAdmissionPolicy \
                 (`cargo xtask scaffold-deploy {}` prints a starting spec)",
                source.display(),
                policy.name
            )
        })?;
        let relative = source.strip_prefix(root).unwrap_or(&source).display().to_string();
        files.push((
            templates.join(format!("{}.yaml", policy.name)),
            format!("{{{{- /* Written by `cargo xtask chart` (make chart) from {relative}: edit that file. */ -}}}}\n{text}"),
        ));
    }
    // A template whose policy is gone.
    let mut removed = Vec::new();
    if let Ok(entries) = std::fs::read_dir(root.join(&templates)) {
        for entry in entries {
            let path = templates.join(entry?.file_name());
            if !files.iter().any(|(p, _)| *p == path) {
                removed.push(path);
            }
        }
    }
    removed.sort();
    Ok(Generated { files, removed })
}

#[cfg(test)]
mod tests {
    use super::*;

    use layout::checkout as root;

    #[test]
    fn committed_chart_files_are_what_the_policies_give() {
        let root = root();
        let generated = generate(&root).unwrap();
        let drift = generated.drift(&root);
        assert!(
            drift.is_empty(),
            "{drift:?} differ from what the policies give: run `make chart` and commit"
        );
    }

    /// The settings schema is the settings type: every case's settings
    /// that the policy accepts pass it, and a field the type does not have
    /// is refused.
    #[test]
    fn settings_schemas_accept_every_accepted_case_and_refuse_unknown_keys() {
        let root = root();
        for policy in layout::policies(&root).unwrap() {
            let schema = linked::visit(&policy.name, &mut SettingsSchema).unwrap();
            let mut schemas = boon::Schemas::new();
            let mut compiler = boon::Compiler::new();
            compiler
                .add_resource("settings.json", schema.clone())
                .unwrap();
            let index = compiler.compile("settings.json", &mut schemas).unwrap();
            for file in testkit::case::case_files(&policy.cases_dir()).unwrap() {
                let case = testkit::case::Case::load(&file).unwrap();
                if case.expect.result == testkit::case::ExpectedResult::InvalidSettings {
                    continue;
                }
                let settings = if case.settings.is_null() {
                    json!({})
                } else {
                    case.settings.clone()
                };
                if let Err(error) = schemas.validate(&settings, index) {
                    panic!("{}: the schema refuses {settings}: {error}", file.display());
                }
            }
            assert!(
                schemas
                    .validate(&json!({"noSuchSetting": true}), index)
                    .is_err(),
                "{}: unknown settings pass the schema",
                policy.name
            );
        }
    }

    fn find(name: &str) -> &'static Declared {
        registry::policies()
            .unwrap()
            .iter()
            .find(|p| p.name == name)
            .unwrap()
    }

    #[test]
    fn context_aware_resources_become_reads() {
        let policy = find("securitygroup-validity");
        let entry = chart_policy(policy).unwrap();
        assert!(entry.reads.contains(&Read {
            api_group: "helm.toolkit.fluxcd.io".into(),
            resource: "helmreleases".into(),
            names: Vec::new(),
        }));
        assert!(entry.reads.contains(&Read {
            api_group: "cozystack.io".into(),
            resource: "applicationdefinitions".into(),
            names: Vec::new(),
        }));
    }

    #[test]
    fn secrets_are_read_by_name_only() {
        let policy = find("upgrade-gate");
        let entry = chart_policy(policy).unwrap();
        let secrets: Vec<_> = entry
            .reads
            .iter()
            .filter(|r| r.resource == "secrets")
            .collect();
        assert_eq!(
            secrets,
            [&Read {
                api_group: String::new(),
                resource: "secrets".into(),
                names: vec!["cozy-backups-creds".into(), "patch-containerd".into()],
            }]
        );
    }

    #[test]
    fn objects_read_by_name_are_granted_by_name() {
        let entry = chart_policy(find("upgrade-gate")).unwrap();
        let named: Vec<(&str, &[String])> = entry
            .reads
            .iter()
            .filter(|r| !r.names.is_empty())
            .map(|r| (r.resource.as_str(), r.names.as_slice()))
            .collect();
        assert_eq!(
            named,
            [
                ("configmaps", &["cozystack-version".to_owned()][..]),
                ("secrets", &["cozy-backups-creds".to_owned(), "patch-containerd".to_owned()][..]),
                ("customresourcedefinitions", &["bucketclaims.objectstorage.k8s.io".to_owned()][..]),
                ("deployments", &["etcd-operator-controller-manager".to_owned()][..]),
            ]
        );
    }

    #[test]
    fn every_rule_resource_has_its_kind_and_context_aware_policies_wait_longer() {
        for policy in registry::policies().unwrap() {
            let entry = chart_policy(policy).unwrap();
            for rule in &policy.metadata.rules {
                for (group, resource) in rule
                    .api_groups
                    .iter()
                    .flat_map(|g| rule.resources.iter().map(move |r| (g, r)))
                    .filter(|(g, r)| *g != "*" && *r != "*")
                {
                    assert!(
                        entry.kinds.get(group).and_then(|k| k.get(resource)).is_some(),
                        "{}: {group}/{resource}",
                        policy.name
                    );
                }
            }
            let expected = if policy.metadata.context_aware_resources.is_empty() {
                5
            } else {
                10
            };
            assert_eq!(entry.timeout_seconds, expected, "{}", policy.name);
        }
        let entry = chart_policy(find("values-schema")).unwrap();
        assert_eq!(entry.kinds["apps.cozystack.io"]["kuberneteses"], "Kubernetes");
        let entry = chart_policy(find("upgrade-readiness")).unwrap();
        assert_eq!(entry.kinds[""]["configmaps"], "ConfigMap");
        assert_eq!(
            entry.kinds["bootstrap.cluster.x-k8s.io"]["kubeadmconfigtemplates"],
            "KubeadmConfigTemplate"
        );
    }
}
