//! The Kubewarden manifests in `deploy/bundle/`, as types that mirror the CRD
//! fields the bundle uses (Kubewarden v1.35 `policies.kubewarden.io/v1`).
//! Every struct refuses unknown fields, so a typo in a manifest fails the
//! tests instead of being dropped by the API server's pruning; the tests
//! then hold each ClusterAdmissionPolicy to its policy's `metadata.yml`.
//!
//! `scaffold-deploy <policy>` prints a starting manifest for a new policy
//! from its metadata, in the shape the tests require.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use host::Metadata;
use host::metadata::{ContextAwareResource, Rule};
use serde::{Deserialize, Serialize};

use crate::push::OCI_URL_ANNOTATION;

/// The PolicyServer the bundle's policies run on.
pub const POLICY_SERVER: &str = "cozystack-policies";
/// Where Kubewarden's Helm charts install it (and the PolicyServer's pods).
pub const KUBEWARDEN_NAMESPACE: &str = "kubewarden";
pub const SEVERITY_ANNOTATION: &str = "io.kubewarden.policy.severity";
pub const CATEGORY_ANNOTATION: &str = "io.kubewarden.policy.category";
/// Identities that upgrade the platform: the migration hook's namespace and
/// Flux. Requests from them never reach the webhook (see the README).
pub const PLATFORM_GROUPS: [&str; 2] = [
    "system:serviceaccounts:cozy-system",
    "system:serviceaccounts:cozy-fluxcd",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObjectMeta {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// Every object `deploy/` may hold, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Object {
    PolicyServer {
        #[serde(rename = "apiVersion")]
        api_version: ApiVersion<KubewardenV1>,
        metadata: ObjectMeta,
        spec: PolicyServerSpec,
    },
    ClusterAdmissionPolicy {
        #[serde(rename = "apiVersion")]
        api_version: ApiVersion<KubewardenV1>,
        metadata: ObjectMeta,
        spec: ClusterAdmissionPolicySpec,
    },
    ServiceAccount {
        #[serde(rename = "apiVersion")]
        api_version: ApiVersion<CoreV1>,
        metadata: ObjectMeta,
    },
    ClusterRole {
        #[serde(rename = "apiVersion")]
        api_version: ApiVersion<RbacV1>,
        metadata: ObjectMeta,
        rules: Vec<PolicyRule>,
    },
    ClusterRoleBinding {
        #[serde(rename = "apiVersion")]
        api_version: ApiVersion<RbacV1>,
        metadata: ObjectMeta,
        #[serde(rename = "roleRef")]
        role_ref: RoleRef,
        subjects: Vec<Subject>,
    },
    CiliumNetworkPolicy {
        #[serde(rename = "apiVersion")]
        api_version: ApiVersion<CiliumV2>,
        metadata: ObjectMeta,
        spec: CiliumNetworkPolicySpec,
    },
}

/// An `apiVersion` that must be exactly `G::VALUE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiVersion<G>(std::marker::PhantomData<G>);

pub trait Group {
    const VALUE: &'static str;
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubewardenV1;
impl Group for KubewardenV1 {
    const VALUE: &'static str = "policies.kubewarden.io/v1";
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreV1;
impl Group for CoreV1 {
    const VALUE: &'static str = "v1";
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RbacV1;
impl Group for RbacV1 {
    const VALUE: &'static str = "rbac.authorization.k8s.io/v1";
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiliumV2;
impl Group for CiliumV2 {
    const VALUE: &'static str = "cilium.io/v2";
}

impl<G> Default for ApiVersion<G> {
    fn default() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<G: Group> Serialize for ApiVersion<G> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(G::VALUE)
    }
}

impl<'de, G: Group> Deserialize<'de> for ApiVersion<G> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = String::deserialize(d)?;
        if value == G::VALUE {
            Ok(Self::default())
        } else {
            Err(serde::de::Error::custom(format!(
                "apiVersion {value:?}, expected {:?}",
                G::VALUE
            )))
        }
    }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Monitor,
    Protect,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailurePolicy {
    Fail,
    Ignore,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterAdmissionPolicySpec {
    pub policy_server: String,
    pub module: String,
    pub mode: Mode,
    pub settings: serde_json::Value,
    pub rules: Vec<Rule>,
    pub mutating: bool,
    pub background_audit: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_aware_resources: Vec<ContextAwareResource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_conditions: Vec<MatchCondition>,
    pub timeout_seconds: u32,
    pub failure_policy: FailurePolicy,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSelector {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelRequirement>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelRequirement {
    pub key: String,
    pub operator: SelectorOperator,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SelectorOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchCondition {
    pub name: String,
    pub expression: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyRule {
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub verbs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoleRef {
    pub api_group: String,
    pub kind: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: String,
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
pub fn platform_condition() -> MatchCondition {
    let groups = PLATFORM_GROUPS
        .iter()
        .map(|g| format!("'{g}'"))
        .collect::<Vec<_>>()
        .join(", ");
    MatchCondition {
        name: "not-a-platform-upgrade".to_owned(),
        expression: format!("!request.userInfo.groups.exists(g, g in [{groups}])"),
    }
}

/// A starting ClusterAdmissionPolicy for a policy, from its metadata:
/// monitor mode, the platform condition, the severity and category.
pub fn scaffold(metadata: &Metadata) -> Result<Object> {
    let annotation = |key: &str| -> Result<(String, String)> {
        let value = metadata
            .annotations
            .get(key)
            .with_context(|| format!("annotation {key} is missing"))?;
        Ok((key.to_owned(), value.clone()))
    };
    if metadata.mutating {
        bail!("the bundle has no mutating policies; review the manifest by hand");
    }
    Ok(Object::ClusterAdmissionPolicy {
        api_version: ApiVersion::default(),
        metadata: ObjectMeta {
            name: metadata.title().to_owned(),
            namespace: None,
            labels: BTreeMap::from([(
                "app.kubernetes.io/part-of".to_owned(),
                POLICY_SERVER.to_owned(),
            )]),
            annotations: [
                annotation(SEVERITY_ANNOTATION)?,
                annotation(CATEGORY_ANNOTATION)?,
            ]
            .into_iter()
            .collect(),
        },
        spec: ClusterAdmissionPolicySpec {
            policy_server: POLICY_SERVER.to_owned(),
            module: module_reference(metadata)?,
            mode: Mode::Monitor,
            settings: serde_json::json!({}),
            rules: metadata.rules.clone(),
            mutating: false,
            background_audit: metadata.background_audit,
            context_aware_resources: metadata.context_aware_resources.clone(),
            namespace_selector: Some(LabelSelector {
                match_labels: BTreeMap::new(),
                match_expressions: vec![LabelRequirement {
                    key: "kubernetes.io/metadata.name".to_owned(),
                    operator: SelectorOperator::NotIn,
                    values: vec!["kube-system".to_owned(), KUBEWARDEN_NAMESPACE.to_owned()],
                }],
            }),
            object_selector: None,
            match_conditions: vec![platform_condition()],
            timeout_seconds: if metadata.context_aware_resources.is_empty() {
                5
            } else {
                10
            },
            failure_policy: FailurePolicy::Fail,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace;
    use std::path::{Path, PathBuf};

    /// `kustomization.yaml`, the fields the bundle uses.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct Kustomization {
        #[serde(rename = "apiVersion")]
        pub api_version: String,
        pub kind: String,
        pub resources: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub patches: Vec<serde_yaml::Value>,
    }

    /// Reads every object of a multi-document YAML file.
    pub fn load(path: &Path) -> Result<Vec<Object>> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_yaml::Deserializer::from_str(&text)
            .map(|document| {
                Object::deserialize(document).with_context(|| format!("{}", path.display()))
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
        serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap())
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

    fn policies_in(
        bundle: &[(String, Object)],
    ) -> Vec<(String, ObjectMeta, ClusterAdmissionPolicySpec)> {
        bundle
            .iter()
            .filter_map(|(file, object)| match object {
                Object::ClusterAdmissionPolicy { metadata, spec, .. } => {
                    Some((file.clone(), metadata.clone(), spec.clone()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn unknown_fields_and_kinds_are_refused() {
        let good = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a, namespace: b}\n";
        assert!(serde_yaml::from_str::<Object>(good).is_ok());
        for bad in [
            good.replace("namespace: b", "namespcae: b"),
            good.replace("ServiceAccount", "ConfigMap"),
            good.replace("apiVersion: v1", "apiVersion: v2"),
            format!("{good}spec: {{}}\n"),
        ] {
            assert!(serde_yaml::from_str::<Object>(&bad).is_err(), "{bad}");
        }
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
                .filter(|(_, m, _)| m.name == policy.name)
                .collect();
            let [(file, meta, spec)] = found.as_slice() else {
                let scaffold = serde_yaml::to_string(&scaffold(&metadata).unwrap()).unwrap();
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
            let mut expect = |what: &str, ok: bool| {
                if !ok {
                    problems.push(format!("{file}: {what}"));
                }
            };
            expect(
                "file is policies/<name>.yaml",
                *file == format!("policies/{}.yaml", policy.name),
            );
            expect(
                "rules differ from metadata.yml",
                spec.rules == metadata.rules,
            );
            expect(
                "mutating differs from metadata.yml",
                spec.mutating == metadata.mutating,
            );
            expect(
                "backgroundAudit differs from metadata.yml",
                spec.background_audit == metadata.background_audit,
            );
            expect(
                "contextAwareResources differ from metadata.yml",
                spec.context_aware_resources == metadata.context_aware_resources,
            );
            let module = module_reference(&metadata).unwrap();
            expect(&format!("module is not {module}"), spec.module == module);
            for key in [SEVERITY_ANNOTATION, CATEGORY_ANNOTATION] {
                expect(
                    &format!("annotation {key} differs from metadata.yml"),
                    meta.annotations.get(key) == metadata.annotations.get(key),
                );
            }
            expect(
                "mode is not monitor (switch with deploy/protect)",
                spec.mode == Mode::Monitor,
            );
            expect("policyServer", spec.policy_server == POLICY_SERVER);
            expect(
                "timeoutSeconds outside 1..=10",
                (1..=10).contains(&spec.timeout_seconds),
            );
            expect(
                "neither namespaceSelector nor objectSelector",
                spec.namespace_selector.is_some() || spec.object_selector.is_some(),
            );
            let settings = spec.settings.clone();
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
        for (file, meta, _) in &manifests {
            if !policies.iter().any(|p| p.name == meta.name) {
                problems.push(format!("{file}: {} is no policy in policies/", meta.name));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// no-delete only ever sees objects that carry its label.
    #[test]
    fn no_delete_sees_only_labelled_objects() {
        let bundle = bundle();
        let manifests = policies_in(&bundle);
        let Some((_, _, spec)) = manifests.iter().find(|(_, m, _)| m.name == "no-delete") else {
            panic!("no manifest for no-delete");
        };
        let selector = spec.object_selector.as_ref().expect("objectSelector");
        assert_eq!(
            selector.match_expressions,
            [LabelRequirement {
                key: "platform.cozystack.io/no-delete".to_owned(),
                operator: SelectorOperator::In,
                values: vec!["true".to_owned()],
            }]
        );
        assert!(
            spec.match_conditions.is_empty(),
            "no-delete exempts nobody, like the VAP"
        );
    }

    /// Every policy but no-delete keeps the platform's upgrade identities
    /// off its webhook.
    #[test]
    fn platform_upgrades_are_never_sent_to_the_other_policies() {
        for (file, meta, spec) in policies_in(&bundle()) {
            if meta.name != "no-delete" {
                assert!(
                    spec.match_conditions.contains(&platform_condition()),
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
                Object::PolicyServer { metadata, spec, .. } if metadata.name == POLICY_SERVER => {
                    server = Some(spec.clone());
                }
                Object::ServiceAccount { metadata, .. } => accounts.push(metadata.clone()),
                Object::ClusterRole {
                    metadata, rules, ..
                } => roles.push((metadata.clone(), rules.clone())),
                Object::ClusterRoleBinding {
                    role_ref, subjects, ..
                } => bindings.push((role_ref.clone(), subjects.clone())),
                Object::CiliumNetworkPolicy { metadata, spec, .. } => {
                    network.push((metadata.clone(), spec.clone()))
                }
                _ => {}
            }
        }
        let server = server.expect("PolicyServer cozystack-policies");
        assert!(server.replicas >= 2 && server.min_available == Some(1));
        let account = server.service_account_name.expect("serviceAccountName");
        assert!(
            accounts
                .iter()
                .any(|a| a.name == account && a.namespace.as_deref() == Some(KUBEWARDEN_NAMESPACE))
        );
        let granted: Vec<&PolicyRule> = bindings
            .iter()
            .filter(|(_, subjects)| {
                subjects.iter().any(|s| {
                    s.kind == "ServiceAccount"
                        && s.name == account
                        && s.namespace == KUBEWARDEN_NAMESPACE
                })
            })
            .flat_map(|(role_ref, _)| {
                roles
                    .iter()
                    .filter(move |(m, _)| role_ref.kind == "ClusterRole" && m.name == role_ref.name)
            })
            .flat_map(|(_, rules)| rules)
            .collect();
        for (_, _, spec) in policies_in(&bundle) {
            for resource in &spec.context_aware_resources {
                let group = resource.api_version.rsplit_once('/').map_or("", |(g, _)| g);
                let plural = crate::manifests::plural(group, &resource.kind);
                let ok = ["get", "list"].iter().all(|verb| {
                    granted.iter().any(|rule| {
                        rule.api_groups.iter().any(|g| g == group)
                            && rule.resources.contains(&plural)
                            && rule.verbs.iter().any(|v| v == verb)
                    })
                });
                assert!(ok, "the policy server may not {group}/{plural}");
            }
        }
        let (meta, spec) = network.first().expect("CiliumNetworkPolicy");
        assert_eq!(meta.namespace.as_deref(), Some(KUBEWARDEN_NAMESPACE));
        assert_eq!(
            spec.endpoint_selector
                .match_labels
                .get("app")
                .map(String::as_str),
            Some("kubewarden-policy-server-cozystack-policies")
        );
        assert!(
            spec.ingress
                .iter()
                .any(|rule| rule.from_endpoints.iter().any(|e| {
                    e.match_labels
                        .get("k8s:io.kubernetes.pod.namespace")
                        .map(String::as_str)
                        == Some("cozy-system")
                }))
        );
        assert!(
            spec.ingress
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
        let patch = serde_yaml::to_string(&overlay.patches).unwrap();
        assert!(patch.contains("kind: ClusterAdmissionPolicy"), "{patch}");
        assert!(
            patch.contains("/spec/mode") && patch.contains("protect"),
            "{patch}"
        );
    }
}
