//! The objects the chart renders, each read as the type that models it:
//! Kubewarden's ClusterAdmissionPolicy (the SDK's `crd` feature) and
//! k8s-openapi's ServiceAccount, RBAC, ConfigMap and PodDisruptionBudget
//! types. Two kinds have no crate that models them, Kubewarden's
//! PolicyServer and Cilium's CiliumNetworkPolicy: for those this module
//! declares the fields the chart may set, after the CRDs
//! (`policies.kubewarden.io_policyservers.yaml` of Kubewarden 1.35 and
//! 1.37.2, Cilium's `cilium.io/v2`).
//!
//! Every object must survive a round trip through its type unchanged
//! ([`reading::typed`]), so a misspelt field fails the tests instead of being
//! pruned by the API server.

use reading::yaml::{self, Limit};
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, ConfigMap, EnvVar, PodSecurityContext, SecurityContext, ServiceAccount, Toleration,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use kubewarden_policy_sdk::crd::policies::cluster_admission_policy::ClusterAdmissionPolicy;

/// Kubewarden's PolicyServer (`policies.kubewarden.io/v1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyServerResource {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: PolicyServerSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyServerSpec {
    pub image: String,
    pub replicas: u32,
    /// The chart sets neither, and brings its own disruption budget: the
    /// controller's blocks drains while a policy-server crash-loops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, Quantity>,
    /// Of the pods (the controller copies them to the Deployment's).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Of the Deployment and the pods (Kubewarden 1.37).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_contexts: Option<SecurityContexts>,
    /// A dockerconfigjson Secret (in the controller's namespace) with the
    /// credentials policy-server pulls the modules with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_secret: Option<String>,
    /// Registry -> the PEM certificates of the authorities of its TLS
    /// certificate (sources.yaml `source_authorities`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub source_authorities: BTreeMap<String, Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub insecure_sources: Vec<String>,
    /// The ConfigMap (in the controller's namespace) whose
    /// `sigstore-trust-config` configures another Sigstore instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigstore_trust_config: Option<String>,
    /// The ConfigMap (in the controller's namespace) whose
    /// `verification-config` policy-server verifies modules with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_config: Option<String>,
    /// The host capabilities namespaced policies may call (Kubewarden 1.37).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaced_policies_capabilities: Vec<String>,
    /// policy-server's ports (Kubewarden 1.37).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_port: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_probe_port: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_port: Option<i32>,
}

/// The security contexts of the policy-server pods and container.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecurityContexts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<PodSecurityContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<SecurityContext>,
}

/// Cilium's CiliumNetworkPolicy (`cilium.io/v2`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CiliumNetworkPolicy {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: CiliumNetworkPolicySpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CiliumNetworkPolicySpec {
    pub endpoint_selector: LabelSelector,
    pub ingress: Vec<CiliumIngress>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CiliumIngress {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from_entities: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from_endpoints: Vec<LabelSelector>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to_ports: Vec<CiliumPorts>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CiliumPorts {
    pub ports: Vec<CiliumPort>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CiliumPort {
    pub port: String,
    pub protocol: String,
}

/// Every object the chart may render.
#[derive(Debug, Clone)]
pub enum Object {
    PolicyServer(Box<PolicyServerResource>),
    ClusterAdmissionPolicy(Box<ClusterAdmissionPolicy>),
    ServiceAccount(ServiceAccount),
    ClusterRole(ClusterRole),
    ClusterRoleBinding(ClusterRoleBinding),
    ConfigMap(ConfigMap),
    CiliumNetworkPolicy(CiliumNetworkPolicy),
    PodDisruptionBudget(PodDisruptionBudget),
}

impl Object {
    /// The object a manifest describes, by `apiVersion` and `kind`.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
        let typed = |error: reading::typed::TypedError| {
            format!("{} {}: {error}", text("kind"), name_of(value))
        };
        Ok(match (text("apiVersion"), text("kind")) {
            ("policies.kubewarden.io/v1", "PolicyServer") => {
                Object::PolicyServer(Box::new(reading::typed::typed(value).map_err(typed)?))
            }
            ("policies.kubewarden.io/v1", "ClusterAdmissionPolicy") => {
                Object::ClusterAdmissionPolicy(Box::new(
                    reading::typed::typed(value).map_err(typed)?,
                ))
            }
            ("v1", "ServiceAccount") => {
                Object::ServiceAccount(reading::typed::typed(value).map_err(typed)?)
            }
            ("v1", "ConfigMap") => Object::ConfigMap(reading::typed::typed(value).map_err(typed)?),
            ("rbac.authorization.k8s.io/v1", "ClusterRole") => {
                Object::ClusterRole(reading::typed::typed(value).map_err(typed)?)
            }
            ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
                Object::ClusterRoleBinding(reading::typed::typed(value).map_err(typed)?)
            }
            ("policy/v1", "PodDisruptionBudget") => {
                Object::PodDisruptionBudget(reading::typed::typed(value).map_err(typed)?)
            }
            ("cilium.io/v2", "CiliumNetworkPolicy") => {
                Object::CiliumNetworkPolicy(reading::typed::typed(value).map_err(typed)?)
            }
            (api_version, kind) => {
                return Err(format!("{api_version} {kind} does not belong in the chart"));
            }
        })
    }
}

fn name_of(value: &Value) -> &str {
    value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Every document of a multi-document YAML text, as JSON values (empty
/// documents left out).
pub fn documents(text: &str) -> Result<Vec<Value>, String> {
    let documents: Vec<Value> =
        yaml::documents(text, Limit::Manifests).map_err(|e| e.to_string())?;
    Ok(documents.into_iter().filter(|d| !d.is_null()).collect())
}
