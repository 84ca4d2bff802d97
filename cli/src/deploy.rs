//! The Kubewarden manifests in `deploy/`, read with Kubewarden's own
//! ClusterAdmissionPolicy type (the SDK's `crd` feature) and k8s-openapi's
//! ServiceAccount and RBAC types. Two kinds have no crate that models them,
//! Kubewarden's PolicyServer and Cilium's CiliumNetworkPolicy: for those
//! the tests declare the few fields the bundle uses.
//!
//! Every manifest must survive a round trip through its type unchanged, so
//! a misspelt field fails the tests instead of being pruned by the API
//! server; the tests then hold each ClusterAdmissionPolicy to its policy's
//! `metadata.yml`. `scaffold-deploy <policy>` prints a starting manifest
//! for a new policy from its metadata, in the shape the tests require.

use anyhow::{Context, Result, bail};
use bundle::Metadata;
pub use kubewarden_policy_sdk::crd::policies::cluster_admission_policy::ClusterAdmissionPolicy;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use shared::catalogue::PLATFORM_GROUPS;

use crate::push::OCI_URL_ANNOTATION;

/// The PolicyServer the bundle's policies run on.
pub const POLICY_SERVER: &str = "cozystack-policies";
/// Where Kubewarden's Helm charts install it (and the PolicyServer's pods).
pub const KUBEWARDEN_NAMESPACE: &str = "kubewarden";
pub const SEVERITY_ANNOTATION: &str = "io.kubewarden.policy.severity";
pub const CATEGORY_ANNOTATION: &str = "io.kubewarden.policy.category";

/// `value` read as `T`, which must hold all of it: the fields of `value`
/// that `T` dropped (a misspelt key, a field of a newer version) are an
/// error naming them.
pub fn typed<T: for<'de> Deserialize<'de> + Serialize>(value: &Value) -> Result<T> {
    let typed: T = serde_json::from_value(value.clone())?;
    let back = serde_json::to_value(&typed)?;
    let mut dropped = Vec::new();
    lost_fields(value, &back, &mut String::new(), &mut dropped);
    if !dropped.is_empty() {
        bail!("unknown fields: {}", dropped.join(", "));
    }
    Ok(typed)
}

/// The paths of `original` that `round_trip` does not have.
fn lost_fields(original: &Value, round_trip: &Value, path: &mut String, lost: &mut Vec<String>) {
    match (original, round_trip) {
        (Value::Object(before), Value::Object(after)) => {
            for (key, value) in before {
                let len = path.len();
                path.push_str(if path.is_empty() { "" } else { "." });
                path.push_str(key);
                match after.get(key) {
                    Some(kept) => lost_fields(value, kept, path, lost),
                    None if !value.is_null() => lost.push(path.clone()),
                    None => {}
                }
                path.truncate(len);
            }
        }
        (Value::Array(before), Value::Array(after)) => {
            for (i, (value, kept)) in before.iter().zip(after).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                lost_fields(value, kept, path, lost);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// `registry://<ociUrl>:v<version>`, the module a policy's manifest loads.
pub fn module_reference(metadata: &Metadata) -> Result<String> {
    let oci_url = metadata
        .annotations
        .get(OCI_URL_ANNOTATION)
        .with_context(|| format!("annotation {OCI_URL_ANNOTATION} is missing"))?;
    let version = metadata
        .version()
        .context("the version annotation is missing")?;
    Ok(format!("registry://{oci_url}:v{version}"))
}

/// The CEL condition that keeps the platform's upgrade identities off the
/// webhook.
pub fn platform_condition() -> (String, String) {
    let groups = PLATFORM_GROUPS
        .iter()
        .map(|g| format!("'{g}'"))
        .collect::<Vec<_>>()
        .join(", ");
    (
        "not-a-platform-upgrade".to_owned(),
        format!("!request.userInfo.groups.exists(g, g in [{groups}])"),
    )
}

/// A starting ClusterAdmissionPolicy for a policy, from its metadata:
/// monitor mode, the platform condition, the severity and category.
pub fn scaffold(metadata: &Metadata) -> Result<ClusterAdmissionPolicy> {
    let annotation = |key: &str| -> Result<String> {
        metadata
            .annotations
            .get(key)
            .cloned()
            .with_context(|| format!("annotation {key} is missing"))
    };
    if metadata.mutating {
        bail!("the bundle has no mutating policies; review the manifest by hand");
    }
    let (condition, expression) = platform_condition();
    let manifest = json!({
        "apiVersion": "policies.kubewarden.io/v1",
        "kind": "ClusterAdmissionPolicy",
        "metadata": {
            "name": metadata.title(),
            "labels": {"app.kubernetes.io/part-of": POLICY_SERVER},
            "annotations": {
                SEVERITY_ANNOTATION: annotation(SEVERITY_ANNOTATION)?,
                CATEGORY_ANNOTATION: annotation(CATEGORY_ANNOTATION)?,
            },
        },
        "spec": {
            "policyServer": POLICY_SERVER,
            "module": module_reference(metadata)?,
            "mode": "monitor",
            "settings": {},
            "rules": metadata.rules,
            "mutating": false,
            "backgroundAudit": metadata.background_audit,
            "contextAwareResources": metadata.context_aware_resources,
            "namespaceSelector": {"matchExpressions": [{
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["kube-system", KUBEWARDEN_NAMESPACE],
            }]},
            "matchConditions": [{"name": condition, "expression": expression}],
            "timeoutSeconds": if metadata.context_aware_resources.is_empty() { 5 } else { 10 },
            "failurePolicy": "Fail",
        },
    });
    typed(&manifest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace;
    use bundle::metadata::{ContextAwareResource, Rule};
    use k8s_openapi::api::core::v1::ServiceAccount;
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
    use kubewarden_policy_sdk::crd::policies::cluster_admission_policy::ClusterAdmissionPolicySpec;
    use kubewarden_policy_sdk::crd::policies::common::PolicyMode;
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    /// Kubewarden's PolicyServer (`policies.kubewarden.io/v1`), the fields the
    /// bundle uses: the SDK does not model this CRD.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct PolicyServer {
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub min_available: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub service_account_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub priority_class_name: Option<String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        pub requests: BTreeMap<String, String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        pub limits: BTreeMap<String, String>,
    }

    /// Cilium's CiliumNetworkPolicy (`cilium.io/v2`), the fields the bundle
    /// uses: no crate models Cilium's CRDs.
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

    /// Every object `deploy/` may hold.
    #[derive(Debug, Clone)]
    pub enum Object {
        PolicyServer(PolicyServer),
        ClusterAdmissionPolicy(Box<ClusterAdmissionPolicy>),
        ServiceAccount(ServiceAccount),
        ClusterRole(ClusterRole),
        ClusterRoleBinding(ClusterRoleBinding),
        CiliumNetworkPolicy(CiliumNetworkPolicy),
    }

    impl Object {
        /// The object a manifest describes, by `apiVersion` and `kind`.
        pub fn from_value(value: &Value) -> Result<Self> {
            let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
            Ok(match (text("apiVersion"), text("kind")) {
                ("policies.kubewarden.io/v1", "PolicyServer") => {
                    Object::PolicyServer(typed(value)?)
                }
                ("policies.kubewarden.io/v1", "ClusterAdmissionPolicy") => {
                    Object::ClusterAdmissionPolicy(Box::new(typed(value)?))
                }
                ("v1", "ServiceAccount") => Object::ServiceAccount(typed(value)?),
                ("rbac.authorization.k8s.io/v1", "ClusterRole") => {
                    Object::ClusterRole(typed(value)?)
                }
                ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
                    Object::ClusterRoleBinding(typed(value)?)
                }
                ("cilium.io/v2", "CiliumNetworkPolicy") => {
                    Object::CiliumNetworkPolicy(typed(value)?)
                }
                (api_version, kind) => bail!("{api_version} {kind} does not belong in deploy/"),
            })
        }
    }

    /// `kustomization.yaml`, the fields the bundle uses.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Kustomization {
        api_version: String,
        kind: String,
        resources: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        patches: Vec<Value>,
    }

    /// Reads every object of a multi-document YAML file.
    fn load(path: &Path) -> Result<Vec<Object>> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let documents: Vec<Value> = serde_saphyr::from_multiple(&text)?;
        documents
            .iter()
            .map(|document| {
                Object::from_value(document).with_context(|| path.display().to_string())
            })
            .collect()
    }

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_path_buf()
    }

    fn kustomization(dir: &Path) -> Kustomization {
        let path = dir.join("kustomization.yaml");
        bundle::yaml::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Every object the bundle's kustomization applies, with its file.
    fn bundle() -> Vec<(String, Object)> {
        assert_eq!(kustomization(&root().join("deploy")).resources, ["bundle"]);
        let deploy = root().join("deploy/bundle");
        let resources = kustomization(&deploy).resources;
        let mut files: Vec<String> = Vec::new();
        for dir in [deploy.clone(), deploy.join("policies")] {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_file() && name.ends_with(".yaml") && name != "kustomization.yaml" {
                    let relative = path.strip_prefix(&deploy).unwrap();
                    files.push(relative.to_string_lossy().into_owned());
                }
            }
        }
        files.sort();
        let mut listed = resources.clone();
        listed.sort();
        assert_eq!(
            listed, files,
            "deploy/bundle/kustomization.yaml must list exactly the manifests in deploy/bundle/ \
             and deploy/bundle/policies/"
        );
        resources
            .iter()
            .flat_map(|file| {
                load(&deploy.join(file))
                    .unwrap_or_else(|e| panic!("{e:#}"))
                    .into_iter()
                    .map(move |object| (file.clone(), object))
            })
            .collect()
    }

    fn policies_in(bundle: &[(String, Object)]) -> Vec<(String, ClusterAdmissionPolicy)> {
        bundle
            .iter()
            .filter_map(|(file, object)| match object {
                Object::ClusterAdmissionPolicy(policy) => Some((file.clone(), (**policy).clone())),
                _ => None,
            })
            .collect()
    }

    fn spec(policy: &ClusterAdmissionPolicy) -> &ClusterAdmissionPolicySpec {
        policy.spec.as_ref().expect("spec")
    }

    fn name(policy: &ClusterAdmissionPolicy) -> &str {
        policy.metadata.name.as_deref().unwrap_or_default()
    }

    /// The metadata's rules in the CRD's shape.
    fn rules_of(spec: &ClusterAdmissionPolicySpec) -> Vec<Rule> {
        spec.rules
            .iter()
            .flatten()
            .map(|rule| serde_json::from_value(serde_json::to_value(rule).unwrap()).unwrap())
            .collect()
    }

    #[test]
    fn unknown_fields_and_kinds_are_refused() {
        let good = json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "a", "namespace": "b"}});
        assert!(Object::from_value(&good).is_ok());
        let mut typo = good.clone();
        typo["metadata"]["namespcae"] = json!("b");
        assert_eq!(
            Object::from_value(&typo).unwrap_err().to_string(),
            "unknown fields: metadata.namespcae"
        );
        let mut kind = good.clone();
        kind["kind"] = json!("ConfigMap");
        assert!(Object::from_value(&kind).is_err());
        let mut extra = good.clone();
        extra["spec"] = json!({});
        assert!(Object::from_value(&extra).is_err());
    }

    /// Each policy of the workspace has exactly one manifest, in
    /// deploy/bundle/policies/<policy>.yaml, that says what its metadata
    /// says.
    #[test]
    fn every_policy_has_one_manifest_matching_its_metadata() {
        let root = root();
        let bundle = bundle();
        let manifests = policies_in(&bundle);
        let policies = workspace::policies(&root).unwrap();
        let mut problems = Vec::new();
        for policy in &policies {
            let metadata = policy.metadata().unwrap();
            let found: Vec<_> = manifests
                .iter()
                .filter(|(_, m)| name(m) == policy.name)
                .collect();
            let [(file, manifest)] = found.as_slice() else {
                let scaffold = serde_saphyr::to_string(&scaffold(&metadata).unwrap()).unwrap();
                problems.push(format!(
                    "{}: {} manifests; add deploy/bundle/policies/{}.yaml (and list it in \
                     deploy/bundle/kustomization.yaml), e.g. from \
                     `cozystack-policies scaffold-deploy {}`:\n{scaffold}",
                    policy.name,
                    found.len(),
                    policy.name,
                    policy.name
                ));
                continue;
            };
            let spec = spec(manifest);
            let mut expect = |what: &str, ok: bool| {
                if !ok {
                    problems.push(format!("{file}: {what}"));
                }
            };
            expect(
                "file is policies/<name>.yaml",
                *file == format!("policies/{}.yaml", policy.name),
            );
            // A manifest may send fewer operations than the module judges
            // (a guard that is off by default); never other resources.
            let rules = rules_of(spec);
            expect(
                "rules are not those of metadata.yml (or a subset of their operations)",
                rules.len() == metadata.rules.len()
                    && rules.iter().zip(&metadata.rules).all(|(r, m)| {
                        r.api_groups == m.api_groups
                            && r.api_versions == m.api_versions
                            && r.resources == m.resources
                            && r.operations.iter().all(|op| m.operations.contains(op))
                    }),
            );
            expect(
                "mutating differs from metadata.yml",
                spec.mutating == metadata.mutating,
            );
            let background_audit = serde_json::to_value(&spec.background_audit).unwrap();
            expect(
                "backgroundAudit differs from metadata.yml",
                background_audit == json!(metadata.background_audit),
            );
            let context_aware: Vec<ContextAwareResource> = spec
                .context_aware_resources
                .iter()
                .map(|r| ContextAwareResource {
                    api_version: r.api_version.clone(),
                    kind: r.kind.clone(),
                })
                .collect();
            expect(
                "contextAwareResources differ from metadata.yml",
                context_aware == metadata.context_aware_resources,
            );
            let module = module_reference(&metadata).unwrap();
            expect(&format!("module is not {module}"), spec.module == module);
            let annotations = manifest.metadata.annotations.clone().unwrap_or_default();
            for key in [SEVERITY_ANNOTATION, CATEGORY_ANNOTATION] {
                expect(
                    &format!("annotation {key} differs from metadata.yml"),
                    annotations.get(key) == metadata.annotations.get(key),
                );
            }
            expect(
                "mode is not monitor (switch with deploy/protect)",
                spec.mode == Some(PolicyMode::Monitor),
            );
            expect("policyServer", spec.policy_server == POLICY_SERVER);
            let timeout = spec.timeout_seconds.as_ref().map(i32::from);
            expect(
                "timeoutSeconds outside 1..=10",
                timeout.is_some_and(|t| (1..=10).contains(&t)),
            );
            expect(
                "neither namespaceSelector nor objectSelector",
                spec.namespace_selector.is_some() || spec.object_selector.is_some(),
            );
            let settings = serde_json::to_value(&spec.settings).unwrap();
            let module_file = policy.module_path(&root.join("dist"));
            match host::PolicyModule::from_file(&module_file) {
                Ok(module) => {
                    if let Err(error) = module.configure(settings) {
                        problems.push(format!("{file}: settings refused: {error}"));
                    }
                }
                Err(error) => problems.push(format!(
                    "{}: {error}; run `make dist` first",
                    module_file.display()
                )),
            }
        }
        for (file, manifest) in &manifests {
            if !policies.iter().any(|p| p.name == name(manifest)) {
                problems.push(format!(
                    "{file}: {} is no policy in policies/",
                    name(manifest)
                ));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// no-delete only ever sees objects that carry its label.
    #[test]
    fn no_delete_sees_only_labelled_objects() {
        let manifests = policies_in(&bundle());
        let Some((_, manifest)) = manifests.iter().find(|(_, m)| name(m) == "no-delete") else {
            panic!("no manifest for no-delete");
        };
        let spec = spec(manifest);
        let selector = serde_json::to_value(&spec.object_selector).unwrap();
        assert_eq!(
            selector,
            json!({"matchExpressions": [{"key": "platform.cozystack.io/no-delete",
                "operator": "In", "values": ["true"]}]})
        );
        assert!(
            spec.match_conditions
                .as_deref()
                .unwrap_or_default()
                .is_empty(),
            "no-delete exempts nobody, like the VAP"
        );
    }

    /// Every policy but no-delete keeps the platform's upgrade identities
    /// off its webhook.
    #[test]
    fn platform_upgrades_are_never_sent_to_the_other_policies() {
        let (condition, expression) = platform_condition();
        for (file, manifest) in policies_in(&bundle()) {
            if name(&manifest) != "no-delete" {
                let conditions = spec(&manifest).match_conditions.clone().unwrap_or_default();
                assert!(
                    conditions
                        .iter()
                        .any(|c| c.name == condition && c.expression == expression),
                    "{file}"
                );
            }
        }
    }

    /// The PolicyServer exists, runs as a service account that may read
    /// what the context-aware policies look up, and is reachable from
    /// cozy-system.
    #[test]
    fn policy_server_can_serve_the_bundle() {
        let bundle = bundle();
        let mut server = None;
        let (mut accounts, mut roles, mut bindings, mut network) = (vec![], vec![], vec![], vec![]);
        for (_, object) in &bundle {
            match object {
                Object::PolicyServer(found)
                    if found.metadata.name.as_deref() == Some(POLICY_SERVER) =>
                {
                    server = Some(found.spec.clone());
                }
                Object::ServiceAccount(account) => accounts.push(account.metadata.clone()),
                Object::ClusterRole(role) => roles.push(role.clone()),
                Object::ClusterRoleBinding(binding) => bindings.push(binding.clone()),
                Object::CiliumNetworkPolicy(policy) => network.push(policy.clone()),
                _ => {}
            }
        }
        let server = server.expect("PolicyServer cozystack-policies");
        assert!(server.replicas >= 2 && server.min_available == Some(1));
        let account = server.service_account_name.expect("serviceAccountName");
        assert!(
            accounts
                .iter()
                .any(|a| a.name.as_deref() == Some(account.as_str())
                    && a.namespace.as_deref() == Some(KUBEWARDEN_NAMESPACE))
        );
        let granted: Vec<_> = bindings
            .iter()
            .filter(|binding| {
                binding.subjects.iter().flatten().any(|s| {
                    s.kind == "ServiceAccount"
                        && s.name == account
                        && s.namespace.as_deref() == Some(KUBEWARDEN_NAMESPACE)
                })
            })
            .flat_map(|binding| {
                roles.iter().filter(move |role| {
                    binding.role_ref.kind == "ClusterRole"
                        && role.metadata.name.as_deref() == Some(binding.role_ref.name.as_str())
                })
            })
            .flat_map(|role| role.rules.iter().flatten())
            .collect();
        for (_, manifest) in policies_in(&bundle) {
            for resource in &spec(&manifest).context_aware_resources {
                let group = resource.api_version.rsplit_once('/').map_or("", |(g, _)| g);
                let plural = crate::manifests::plural(group, &resource.kind);
                let ok = ["get", "list"].iter().all(|verb| {
                    granted.iter().any(|rule| {
                        rule.api_groups.iter().flatten().any(|g| g == group)
                            && rule.resources.iter().flatten().any(|r| *r == plural)
                            && rule.verbs.iter().any(|v| v == verb)
                    })
                });
                assert!(ok, "the policy server may not {group}/{plural}");
            }
        }
        let policy = network.first().expect("CiliumNetworkPolicy");
        assert_eq!(
            policy.metadata.namespace.as_deref(),
            Some(KUBEWARDEN_NAMESPACE)
        );
        let labels = |selector: &LabelSelector| selector.match_labels.clone().unwrap_or_default();
        assert_eq!(
            labels(&policy.spec.endpoint_selector)
                .get("app")
                .map(String::as_str),
            Some("kubewarden-policy-server-cozystack-policies")
        );
        assert!(
            policy
                .spec
                .ingress
                .iter()
                .any(|rule| rule.from_endpoints.iter().any(|e| {
                    labels(e)
                        .get("k8s:io.kubernetes.pod.namespace")
                        .map(String::as_str)
                        == Some("cozy-system")
                }))
        );
        assert!(
            policy
                .spec
                .ingress
                .iter()
                .any(|rule| rule.from_entities.iter().any(|e| e == "kube-apiserver"))
        );
    }

    /// `kubectl apply -k deploy/protect` is the whole bundle with every
    /// policy in protect mode.
    #[test]
    fn protect_overlay_switches_every_policy() {
        let overlay = kustomization(&root().join("deploy/protect"));
        assert_eq!(overlay.resources, ["../bundle"]);
        let patch = serde_saphyr::to_string(&overlay.patches).unwrap();
        assert!(patch.contains("kind: ClusterAdmissionPolicy"), "{patch}");
        assert!(
            patch.contains("/spec/mode") && patch.contains("protect"),
            "{patch}"
        );
    }

    #[test]
    fn scaffolds_pass_the_manifest_checks() {
        for policy in workspace::policies(&root()).unwrap() {
            let manifest =
                serde_json::to_value(scaffold(&policy.metadata().unwrap()).unwrap()).unwrap();
            assert!(matches!(
                Object::from_value(&manifest).unwrap(),
                Object::ClusterAdmissionPolicy(_)
            ));
        }
    }
}
