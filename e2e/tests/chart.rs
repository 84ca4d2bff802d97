//! The Helm chart (`charts/cozystack-policies`) through Helm itself, and
//! `deploy/`, which is its rendering with the defaults.
//!
//! - `deploy/…`: the committed `deploy/bundle/` (read without Helm): every
//!   object typed, each ClusterAdmissionPolicy held to its policy's
//!   metadata.yml and its settings accepted by the module, the PolicyServer,
//!   RBAC and network policy able to serve the bundle.
//! - `helm/lint`, `helm/deploy-is-the-chart`: `helm lint --strict`, and
//!   `deploy/bundle/` equal to the chart's rendering (run `make chart`).
//! - `<rendering>/…`: the same checks for the chart rendered with its
//!   defaults, with every value changed (`every-value`, in another
//!   namespace, and `every-value/values-reach-the-manifests`: each value
//!   shows in the manifests; every leaf of values.yaml is changed by one of
//!   the renderings), with everything optional off (`disabled`), with
//!   no-delete's guard on (`label-removal`), with `mode: protect`
//!   (`protect`) and with two policies off (`fewer-policies`). Each is typed, also against Kubewarden's CRDs; each
//!   policy's mode and failurePolicy follow the values (`policies`); the
//!   PolicyServer's and audit-scanner's accounts get exactly what the
//!   enabled policies read and audit (`policy-server`, `audit-scanner`).
//! - `rbac/…`: from the default rendering beside the audit-scanner RBAC of
//!   Kubewarden's chart and Kubernetes' `view` role (tests/data/rbac/),
//!   evaluated with Kubernetes' RBAC rules and aggregation
//!   (`e2e::rbac`): audit-scanner can list every resource a policy audits
//!   and do the rest of its job, and could not without the chart.
//! - `monitor/…`: monitor mode never rejects, not even when the
//!   policy-server does not answer (failurePolicy Ignore), and the
//!   chart-wide `mode: protect` protects every policy but the report-only
//!   ones.
//! - `guards/…`: the render refuses a namespace other than Kubewarden's,
//!   and an upgrade that renames the PolicyServer of installed policies
//!   (rendered over a loopback API server, as `helm upgrade` asks the
//!   cluster).
//! - `schema/…`: values.schema.json accepts the settings of every case a
//!   policy accepts, refuses mistakes with the key named, and refuses the
//!   invalid-settings cases it can express (the rest are refused by
//!   policy-server at start-up: `start-up/*` of the policy_server suite).
//! - `install/…`: the Flux HelmRelease and the Cozystack PackageSource and
//!   Package of `charts/install/`, typed, pointing at the published chart,
//!   their values rendered by Helm, and shown verbatim in the README.
//! - `policy-server/every-value`: policy-server started with exactly the
//!   `every-value` rendering's policies: each policy in the mode the values
//!   gave it, with the settings they gave it.
//!
//! Helm comes from target/helm-venv (`make chart` runs tools/helm-venv);
//! without it the Helm trials say they are skipped (a failure under CI).

// serde_json's `value["key"]` is Null for a missing key: reading manifests
// that way cannot panic, and the values built here are objects.
#![allow(clippy::indexing_slicing)]

use reading::yaml::{self, Limit};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use e2e::helm::{ClusterResource, Helm, Render, Rendered};
use e2e::manifests::{ClusterAdmissionPolicy, Object};
use e2e::rbac::{Account, Grant, Rbac, Request};
use host::policy_server::{PolicyMode, PolicyServer, ServerConfig, admission_review};
use kubewarden_policy_sdk::crd::policies::common::PolicyMode as CrdMode;
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};
use testkit::case::{ExpectedResult, Runner};
use wasm_meta::Metadata;

const CHART: &str = "charts/cozystack-policies";
const CHART_REPOSITORY: &str = "ghcr.io/cozystack/cozystack-policies/charts/cozystack-policies";
const PLATFORM_CONDITION: &str = "!request.userInfo.groups.exists(g, g in ['system:serviceaccounts:cozy-system', 'system:serviceaccounts:cozy-fluxcd'])";
const HELM_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/// The policies that only report (their templates and READMEs say why):
/// the chart-wide `mode` never protects them.
const REPORT_ONLY: [&str; 2] = ["upgrade-gate", "upgrade-readiness"];

#[path = "chart/crds.rs"]
mod crds;
#[path = "chart/shapes.rs"]
mod shapes;

fn main() {
    let args = Arguments::from_args();
    let trials = trials()
        .unwrap_or_else(|error| vec![Trial::test("chart/set-up", move || Err(error.into()))]);
    libtest_mimic::run(&args, trials).exit();
}

/// What every check needs to know about the workspace.
struct Bundle {
    metadata: BTreeMap<String, Metadata>,
    /// files/policies.yaml: what the templates read.
    chart_policies: Value,
    /// values.yaml, the chart's defaults.
    defaults: Value,
    /// Chart.yaml.
    chart: Value,
    /// Kubewarden 1.35's CRDs (`None` where the fact base is missing, off CI).
    crds: Option<crds::Crds>,
    /// Kubewarden 1.37.2's.
    newest_crds: crds::Crds,
}

/// One rendering of the chart: the values given and what came out.
struct Rendering {
    name: &'static str,
    /// The release's namespace.
    namespace: String,
    /// The values as Helm merges them: values.yaml under the given ones.
    values: Value,
    documents: Result<Vec<Value>, String>,
}

fn read(path: &str) -> Result<String, String> {
    let full = e2e::root().join(path);
    std::fs::read_to_string(&full).map_err(|e| format!("{}: {e}", full.display()))
}

fn yaml(path: &str) -> Result<Value, String> {
    yaml::document(&read(path)?, Limit::Cases).map_err(|e| format!("{path}: {e}"))
}

fn load() -> Result<Bundle, String> {
    let mut metadata = BTreeMap::new();
    for policy in e2e::policies()? {
        let path = e2e::root()
            .join("policies")
            .join(&policy)
            .join("metadata.yml");
        let read = Metadata::from_yaml_file(&path).map_err(|e| e.to_string())?;
        metadata.insert(policy, read);
    }
    Ok(Bundle {
        metadata,
        chart_policies: yaml(&format!("{CHART}/files/policies.yaml"))?,
        defaults: yaml(&format!("{CHART}/values.yaml"))?,
        chart: yaml(&format!("{CHART}/Chart.yaml"))?,
        crds: crds::Crds::find()?,
        newest_crds: crds::Crds::newest()?,
    })
}

/// `over` merged onto `under`, maps key by key, as Helm merges values.
fn merged(under: &Value, over: &Value) -> Value {
    match (under, over) {
        (Value::Object(under), Value::Object(over)) => {
            let mut out = under.clone();
            for (key, value) in over {
                let merged = match out.get(key) {
                    Some(below) if !value.is_null() => merged(below, value),
                    _ => value.clone(),
                };
                out.insert(key.clone(), merged);
            }
            Value::Object(out)
        }
        _ => over.clone(),
    }
}

/// The committed deploy/bundle/, as `kubectl apply -k deploy/` applies it.
fn deploy_documents() -> Result<Vec<Value>, String> {
    let top = yaml("deploy/kustomization.yaml")?;
    if top["resources"] != json!(["bundle"]) {
        return Err("deploy/kustomization.yaml must apply exactly bundle/".into());
    }
    let kustomization = yaml("deploy/bundle/kustomization.yaml")?;
    let mut documents = Vec::new();
    for file in kustomization["resources"].as_array().into_iter().flatten() {
        let file = file.as_str().unwrap_or_default();
        documents.extend(e2e::manifests::documents(&read(&format!(
            "deploy/bundle/{file}"
        ))?)?);
    }
    Ok(documents)
}

/// A public key for the verification config, made for this test (the
/// rendering is checked, not verified against).
const TEST_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAErQSw7hcodCCLS7IID5lAbu2kPRq+\ncIG0jOYmK4pcWgz4dzSen8tIUIi4WrWz2fuvH16phgy+Dz/tJnQJW+KzRQ==\n-----END PUBLIC KEY-----\n";

/// The settings of a case of `policy` that the policy accepts and rejects
/// something with: the `every-value` rendering gives the policy those, so
/// policy-server can be asked the case.
fn settings_with_a_failing_case(policy: &str) -> Result<Value, String> {
    let mut fallback = json!({});
    for case in e2e::cases()?.into_iter().filter(|c| c.policy == policy) {
        let expect = case.case.expectation(Runner::PolicyServer);
        if expect.result == ExpectedResult::Fail && case.settings() != json!({}) {
            return Ok(case.settings());
        }
        if expect.result != ExpectedResult::InvalidSettings && fallback == json!({}) {
            fallback = case.settings();
        }
    }
    Ok(fallback)
}

/// A certificate authority's PEM for `sourceAuthorities` (the rendering is
/// checked, not used to connect).
const TEST_CERTIFICATE: &str =
    "-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIUTest\n-----END CERTIFICATE-----\n";

/// The namespace the `every-value` rendering installs into, and tells the
/// chart Kubewarden runs in.
const OTHER_NAMESPACE: &str = "kubewarden-system";

/// Every value of values.yaml changed (what `disabled` turns off aside).
fn every_value(bundle: &Bundle) -> Result<Value, String> {
    let mut policies = serde_json::Map::new();
    for (i, policy) in bundle.metadata.keys().enumerate() {
        let mut values = json!({
            "enabled": true,
            "settings": settings_with_a_failing_case(policy)?,
        });
        // Half the policies in protect by their own mode, the other half by
        // the chart's: both ways of setting it are seen.
        if i % 2 == 0 {
            values["mode"] = json!("monitor");
        }
        values["module"] = match i % 3 {
            0 => json!({"tag": "v9.9.9"}),
            1 => json!({"digest": format!("sha256:{}", "ab".repeat(32))}),
            _ => {
                json!({"registry": "other.example.com/policies", "tag": "v1.2.3", "digest": format!("sha256:{}", "cd".repeat(32))})
            }
        };
        // A third with their own failure policy, against their mode's, and
        // webhook settings of their own; a third with a selector of their
        // own; the rest as their mode and template say.
        match i % 3 {
            0 => {
                values["failurePolicy"] = json!(if i % 2 == 0 { "Fail" } else { "Ignore" });
                values["timeoutSeconds"] = json!(7);
                values["timeoutEvalSeconds"] = json!(4);
                values["skipNamespaces"] = json!(["tenant-sandbox"]);
            }
            1 => {
                values["namespaceSelector"] = json!({"matchExpressions": [
                    {"key": "cozystack.io/system", "operator": "DoesNotExist"},
                ]});
            }
            _ => {}
        }
        policies.insert(policy.clone(), values);
    }
    Ok(json!({
        "mode": "protect",
        "cozystackVersion": "v1.5.4",
        "kubewardenNamespace": OTHER_NAMESPACE,
        "skipNamespaces": ["kube-system", "cozy-linstor"],
        "modules": {"registry": "registry.example.com/mirror"},
        "policies": policies,
        "policyServer": {
            "name": "cozy-guard",
            "image": {
                "registry": "registry.example.com:5000",
                "repository": "mirror/kubewarden/policy-server",
                "tag": "v1.36.1",
                "digest": format!("sha256:{}", "ef".repeat(32)),
            },
            "replicas": 3,
            "maxUnavailable": 1,
            "minAvailable": "50%",
            "labels": {"example.com/team": "platform"},
            "namespacedPoliciesCapabilities": ["oci/*", "net/v1/dns_lookup_host"],
            "ports": {"webhook": 9443, "readinessProbe": 9081, "metrics": 9080},
            "resources": {
                "requests": {"cpu": "250m", "memory": "256Mi"},
                "limits": {"cpu": "1", "memory": "1Gi"},
            },
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "kubewarden-policy-server-cozy-guard"}},
                "topologyKey": "kubernetes.io/hostname",
            }]}},
            "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}],
            "priorityClassName": "system-cluster-critical",
            "annotations": {"example.com/owner": "platform-team"},
            "env": [
                {"name": "KUBEWARDEN_LOG_LEVEL", "value": "debug"},
                {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            ],
            "securityContexts": {
                "pod": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
                "container": {"readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}},
            },
            "imagePullSecret": "registry-credentials",
            "sourceAuthorities": {"registry.example.com:5000": [TEST_CERTIFICATE]},
            "insecureSources": ["registry.lab.example.com:5000"],
            "sigstoreTrustConfig": "sigstore-trust",
            "serviceAccount": {"create": true, "name": "cozy-guard", "readHelmReleases": false},
            "verificationConfig": {"apiVersion": "v1", "allOf": [{"kind": "pubKey", "owner": "platform-team", "key": TEST_PUBLIC_KEY}]},
        },
        "auditScanner": {
            "rbac": {"create": true},
            "serviceAccount": {"name": "scanner", "namespace": "kubewarden-audit"},
        },
        "networkPolicy": {"enabled": true, "namespaces": ["cozy-system", "tenant-root"]},
    }))
}

/// The renderings every check runs over, with the values and namespace
/// each was given.
fn renderings(bundle: &Bundle, helm: &Helm) -> Result<Vec<Rendering>, String> {
    let first = bundle.metadata.keys().next().cloned().unwrap_or_default();
    let given: Vec<(&'static str, &str, Value)> = vec![
        ("defaults", "kubewarden", json!({})),
        ("every-value", OTHER_NAMESPACE, every_value(bundle)?),
        (
            "disabled",
            "kubewarden",
            json!({
                "policies": {first: {"enabled": false}},
                "policyServer": {
                    "serviceAccount": {"create": false, "name": "existing"},
                    "verificationConfigMap": "platform-verification",
                },
                "auditScanner": {"rbac": {"create": false}},
                "networkPolicy": {"enabled": false},
            }),
        ),
        (
            "label-removal",
            "kubewarden",
            json!({"policies": {"no-delete": {"settings": {
                "labelKey": "example.com/keep",
                "labelRemoval": {"allowedGroups": ["cozystack-cluster-admin"]},
            }}}}),
        ),
        ("protect", "kubewarden", json!({"mode": "protect"})),
        // upgrade-readiness alone audits Namespaces, ConfigMaps,
        // KubeadmConfigTemplates and Packages, and securitygroup-validity
        // alone reads CiliumNetworkPolicies and ApplicationDefinitions: both
        // roles must lose them.
        (
            "fewer-policies",
            "kubewarden",
            json!({
                "policies": {
                    "upgrade-readiness": {"enabled": false},
                    "securitygroup-validity": {"enabled": false},
                },
                "policyServer": {"maxUnavailable": 2},
            }),
        ),
        // Kubewarden in a namespace of its own, audit-scanner's left to
        // follow it: every object that names Kubewarden's namespace names
        // this one.
        (
            "kubewarden-elsewhere",
            OTHER_NAMESPACE,
            json!({"kubewardenNamespace": OTHER_NAMESPACE}),
        ),
    ];
    let requests: Vec<Render> = given
        .iter()
        .map(|(_, namespace, v)| Render::in_namespace(v.clone(), namespace))
        .collect();
    let rendered = helm.render(&requests)?;
    Ok(given
        .into_iter()
        .zip(rendered)
        .map(|((name, namespace, values), rendered)| Rendering {
            name,
            namespace: namespace.to_owned(),
            values: merged(&bundle.defaults, &values),
            documents: rendered.documents(),
        })
        .collect())
}

fn trials() -> Result<Vec<Trial>, String> {
    let bundle = Arc::new(load()?);
    let mut trials = Vec::new();
    let deploy = Arc::new(Rendering {
        name: "deploy",
        namespace: "kubewarden".to_owned(),
        values: bundle.defaults.clone(),
        documents: deploy_documents(),
    });
    trials.extend(checks(&bundle, &deploy));
    trials.push(Trial::test("deploy/protect-overlay", protect_overlay));
    let mut helm_trials: Vec<String> = ["helm/lint", "helm/deploy-is-the-chart"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    for name in [
        "defaults",
        "every-value",
        "disabled",
        "label-removal",
        "protect",
        "fewer-policies",
        "kubewarden-elsewhere",
    ] {
        for check in CHECKS {
            helm_trials.push(format!("{name}/{check}"));
        }
    }
    helm_trials.extend(
        [
            "every-value/values-reach-the-manifests",
            "every-value/every-value-is-changed",
            "label-removal/guard",
            "disabled/nothing-optional",
            "rbac/audit-scanner-reads-what-the-policies-audit",
            "monitor/never-rejects",
            "monitor/protect-spares-the-report-only-policies",
            "guards/kubewarden-namespace",
            "guards/policy-server-rename",
            "guards/protect-to-monitor",
            "schema/accepts-every-accepted-case",
            "schema/refuses-invalid-settings",
            "schema/refuses-mistakes",
            "install/flux",
            "install/cozystack",
            "policy-server/every-value",
            "shapes/matrix-in-the-docs",
        ]
        .into_iter()
        .map(str::to_owned),
    );
    let Some(helm) = Helm::find()? else {
        println!(
            "target/helm-venv is missing: the Helm trials below are SKIPPED (tools/helm-venv installs Helm's SDK)"
        );
        trials.extend(
            helm_trials
                .into_iter()
                .map(|name| Trial::test(name, || Ok(())).with_ignored_flag(true)),
        );
        return Ok(trials);
    };
    let helm = Arc::new(helm);
    {
        let helm = Arc::clone(&helm);
        trials.push(Trial::test("helm/lint", move || Ok(helm.lint()?)));
    }
    {
        let helm = Arc::clone(&helm);
        trials.push(Trial::test("helm/deploy-is-the-chart", move || {
            Ok(helm.deploy_is_rendered()?)
        }));
    }
    let renderings: BTreeMap<&'static str, Arc<Rendering>> = renderings(&bundle, &helm)?
        .into_iter()
        .map(|r| (r.name, Arc::new(r)))
        .collect();
    for rendering in renderings.values() {
        trials.extend(checks(&bundle, rendering));
    }
    let get = |name: &str| {
        renderings
            .get(name)
            .cloned()
            .ok_or_else(|| format!("no rendering {name}"))
    };
    let every = get("every-value")?;
    {
        let every = Arc::clone(&every);
        trials.push(Trial::test(
            "every-value/values-reach-the-manifests",
            move || values_reach_the_manifests(&every),
        ));
    }
    {
        let bundle = Arc::clone(&bundle);
        let every = Arc::clone(&every);
        trials.push(Trial::test(
            "every-value/every-value-is-changed",
            move || every_value_is_changed(&bundle, &every),
        ));
    }
    {
        let rendering = get("label-removal")?;
        trials.push(Trial::test("label-removal/guard", move || {
            label_removal_guard(&rendering)
        }));
    }
    {
        let rendering = get("disabled")?;
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test("disabled/nothing-optional", move || {
            nothing_optional(&bundle, &rendering)
        }));
    }
    {
        let rendering = get("defaults")?;
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test(
            "rbac/audit-scanner-reads-what-the-policies-audit",
            move || audit_scanner_reads_what_the_policies_audit(&bundle, &rendering),
        ));
    }
    {
        let rendering = get("defaults")?;
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test("monitor/never-rejects", move || {
            monitor_never_rejects(&bundle, &rendering)
        }));
    }
    {
        let rendering = get("protect")?;
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test(
            "monitor/protect-spares-the-report-only-policies",
            move || protect_spares_the_report_only_policies(&bundle, &rendering),
        ));
    }
    {
        let helm = Arc::clone(&helm);
        trials.push(Trial::test("guards/kubewarden-namespace", move || {
            kubewarden_namespace_guard(&helm)
        }));
    }
    {
        let helm = Arc::clone(&helm);
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test("guards/policy-server-rename", move || {
            policy_server_rename_guard(&helm, &bundle)
        }));
    }
    {
        let helm = Arc::clone(&helm);
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test("guards/protect-to-monitor", move || {
            protect_to_monitor_guard(&helm, &bundle)
        }));
    }
    let schema_checks: [(&str, Check); 3] = [
        (
            "schema/accepts-every-accepted-case",
            accepts_every_accepted_case,
        ),
        ("schema/refuses-invalid-settings", refuses_invalid_settings),
        ("schema/refuses-mistakes", refuses_mistakes),
    ];
    for (name, run) in schema_checks {
        let helm = Arc::clone(&helm);
        trials.push(Trial::test(name, move || run(&helm)));
    }
    for (name, file) in [("install/flux", "flux"), ("install/cozystack", "cozystack")] {
        let (helm, bundle) = (Arc::clone(&helm), Arc::clone(&bundle));
        trials.push(Trial::test(name, move || install(&helm, &bundle, file)));
    }
    {
        let every = Arc::clone(&every);
        trials.push(Trial::test("policy-server/every-value", move || {
            policy_server_serves(&every)
        }));
    }
    trials.extend(shapes::trials(&helm, Arc::new(bundle.metadata.clone()))?);
    Ok(trials)
}

/// A trial that asks Helm.
type Check = fn(&Helm) -> Result<(), Failed>;

const CHECKS: [&str; 4] = ["typed", "policies", "policy-server", "audit-scanner"];

/// The checks every rendering gets.
fn checks(bundle: &Arc<Bundle>, rendering: &Arc<Rendering>) -> Vec<Trial> {
    CHECKS
        .iter()
        .map(|check| {
            let (bundle, rendering) = (Arc::clone(bundle), Arc::clone(rendering));
            Trial::test(format!("{}/{check}", rendering.name), move || {
                let objects = objects(&rendering)?;
                match *check {
                    "typed" => typed_against_the_crds(&bundle, &rendering),
                    "policies" => policies_follow_metadata(&bundle, &rendering, &objects),
                    "policy-server" => {
                        policy_server_serves_the_bundle(&bundle, &rendering, &objects)
                    }
                    _ => audit_scanner_reads_exactly_the_audited(&bundle, &rendering, &objects),
                }
            })
        })
        .collect()
}

/// Every object of a rendering as its type.
fn objects(rendering: &Rendering) -> Result<Vec<Object>, Failed> {
    let documents = rendering.documents.as_ref().map_err(Clone::clone)?;
    let mut objects = Vec::new();
    let mut problems = Vec::new();
    for document in documents {
        match Object::from_value(document) {
            Ok(object) => objects.push(object),
            Err(error) => problems.push(error),
        }
    }
    if problems.is_empty() {
        Ok(objects)
    } else {
        Err(problems.join("\n").into())
    }
}

fn policies_in(objects: &[Object]) -> Vec<&ClusterAdmissionPolicy> {
    objects
        .iter()
        .filter_map(|object| match object {
            Object::ClusterAdmissionPolicy(policy) => Some(&**policy),
            _ => None,
        })
        .collect()
}

/// One grant: `verb` on `group/resource`, by name or not.
fn grant(group: &str, resource: &str, verb: &str, name: Option<&str>) -> Grant {
    (
        group.to_owned(),
        resource.to_owned(),
        verb.to_owned(),
        name.map(str::to_owned),
    )
}

/// Grants as a person reads them: `verb group/resource[name]`, sorted.
fn show_grants(grants: &BTreeSet<Grant>) -> String {
    let shown: Vec<String> = grants
        .iter()
        .map(|(group, resource, verb, name)| {
            let name = name.as_ref().map(|n| format!("[{n}]")).unwrap_or_default();
            format!("{verb} {group}/{resource}{name}")
        })
        .collect();
    format!("[{}]", shown.join(", "))
}

/// The ClusterRoles and ClusterRoleBindings a rendering holds.
fn rendered_rbac(objects: &[Object]) -> Rbac {
    let (roles, bindings) = rbac_objects(objects);
    Rbac::new(roles, bindings)
}

fn rbac_objects(
    objects: &[Object],
) -> (
    Vec<k8s_openapi::api::rbac::v1::ClusterRole>,
    Vec<k8s_openapi::api::rbac::v1::ClusterRoleBinding>,
) {
    let roles = objects
        .iter()
        .filter_map(|o| match o {
            Object::ClusterRole(role) => Some(role.clone()),
            _ => None,
        })
        .collect();
    let bindings = objects
        .iter()
        .filter_map(|o| match o {
            Object::ClusterRoleBinding(binding) => Some(binding.clone()),
            _ => None,
        })
        .collect();
    (roles, bindings)
}

fn text<'v>(value: &'v Value, pointer: &str) -> &'v str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The module reference the values give a policy.
fn expected_module(bundle: &Bundle, values: &Value, policy: &str) -> String {
    let module = &values["policies"][policy]["module"];
    let registry = module
        .get("registry")
        .and_then(Value::as_str)
        .unwrap_or_else(|| text(values, "/modules/registry"));
    let version = text(&bundle.chart_policies, &format!("/{policy}/version"));
    let tag = module
        .get("tag")
        .and_then(Value::as_str)
        .map_or_else(|| format!("v{version}"), str::to_owned);
    let digest = module
        .get("digest")
        .and_then(Value::as_str)
        .map(|d| format!("@{d}"))
        .unwrap_or_default();
    format!("registry://{registry}/{policy}:{tag}{digest}")
}

fn enabled(values: &Value, policy: &str) -> bool {
    values["policies"][policy]["enabled"]
        .as_bool()
        .unwrap_or(true)
}

/// The mode the values give `policy`: its own, else monitor for a
/// report-only policy and the chart's for the others.
fn expected_mode<'v>(values: &'v Value, policy: &str) -> &'v str {
    match values["policies"][policy]["mode"].as_str() {
        Some(mode) => mode,
        None if REPORT_ONLY.contains(&policy) => "monitor",
        None => text(values, "/mode"),
    }
}

/// The failurePolicy the values give `policy`: its own, else Ignore in
/// monitor (monitor never rejects) and Fail in protect.
fn expected_failure_policy<'v>(values: &'v Value, policy: &str) -> &'v str {
    match values["policies"][policy]["failurePolicy"].as_str() {
        Some(given) => given,
        None if expected_mode(values, policy) == "protect" => "Fail",
        None => "Ignore",
    }
}

/// The namespaceSelector the values give `policy`: its own, else `NotIn`
/// the chart's skipped namespaces and Kubewarden's (no-delete: none of
/// them) and its own; none when nothing is left out.
fn expected_namespace_selector(values: &Value, policy: &str) -> Value {
    let own = &values["policies"][policy];
    if let Some(selector) = own.get("namespaceSelector") {
        return selector.clone();
    }
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let mut skipped = Vec::new();
    if policy != "no-delete" {
        skipped.extend(strings(&values["skipNamespaces"]));
        skipped.push(text(values, "/kubewardenNamespace").to_owned());
    }
    for namespace in strings(&own["skipNamespaces"]) {
        if !skipped.contains(&namespace) {
            skipped.push(namespace);
        }
    }
    if skipped.is_empty() {
        return Value::Null;
    }
    json!({"matchExpressions": [{
        "key": "kubernetes.io/metadata.name",
        "operator": "NotIn",
        "values": skipped,
    }]})
}

/// The settings the chart sends `policy` with these values: the policy's
/// own, and the chart's `cozystackVersion` when the policy takes that
/// setting and its own leave it out.
fn settings_sent(bundle: &Bundle, values: &Value, policy: &str) -> Value {
    let mut settings = values["policies"][policy]["settings"].clone();
    if bundle.chart_policies[policy]["releaseSetting"] == json!(true)
        && let Value::Object(map) = &mut settings
    {
        map.entry("cozystackVersion")
            .or_insert_with(|| values["cozystackVersion"].clone());
    }
    settings
}

/// Each enabled policy has exactly one ClusterAdmissionPolicy that says
/// what its metadata.yml and the values say, with settings its module
/// accepts; a disabled one has none.
fn policies_follow_metadata(
    bundle: &Bundle,
    rendering: &Rendering,
    objects: &[Object],
) -> Result<(), Failed> {
    let values = &rendering.values;
    let manifests = policies_in(objects);
    let mut problems = Vec::new();
    for (policy, metadata) in &bundle.metadata {
        let found: Vec<_> = manifests
            .iter()
            .filter(|m| m.metadata.name.as_deref() == Some(policy))
            .collect();
        if !enabled(values, policy) {
            if !found.is_empty() {
                problems.push(format!("{policy}: disabled, but rendered"));
            }
            continue;
        }
        let [manifest] = found.as_slice() else {
            problems.push(format!(
                "{policy}: {} manifests; add policies/{policy}/cluster-admission-policy.yaml \
                 (`cargo xtask scaffold-deploy {policy}` prints its spec) and run `make chart`",
                found.len()
            ));
            continue;
        };
        let Some(spec) = manifest.spec.as_ref() else {
            problems.push(format!("{policy}: no spec"));
            continue;
        };
        let mut expect = |what: &str, ok: bool| {
            if !ok {
                problems.push(format!("{}/{policy}: {what}", rendering.name));
            }
        };
        // A manifest may send fewer operations than the module judges (a
        // guard that is off); never other resources.
        let rules: Vec<wasm_meta::metadata::WebhookRule> = spec
            .rules
            .iter()
            .flatten()
            .filter_map(|rule| serde_json::to_value(rule).ok())
            .filter_map(|rule| serde_json::from_value(rule).ok())
            .collect();
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
        expect(
            "backgroundAudit differs from metadata.yml",
            serde_json::to_value(&spec.background_audit).ok()
                == Some(json!(metadata.background_audit)),
        );
        let context: Vec<(String, String)> = spec
            .context_aware_resources
            .iter()
            .map(|r| (r.api_version.clone(), r.kind.clone()))
            .collect();
        let helm_releases = values["policyServer"]["serviceAccount"]["readHelmReleases"] == true;
        let declared: Vec<(String, String)> = metadata
            .context_aware_resources
            .iter()
            .filter(|r| helm_releases || r.kind != "HelmRelease")
            .map(|r| (r.api_version.clone(), r.kind.clone()))
            .collect();
        expect(
            "contextAwareResources differ from metadata.yml",
            context == declared,
        );
        let module = expected_module(bundle, values, policy);
        expect(&format!("module is not {module}"), spec.module == module);
        let annotations = manifest.metadata.annotations.clone().unwrap_or_default();
        for key in [
            "io.kubewarden.policy.severity",
            "io.kubewarden.policy.category",
        ] {
            expect(
                &format!("annotation {key} differs from metadata.yml"),
                annotations.get(key) == metadata.annotations.get(key),
            );
        }
        let mode = expected_mode(values, policy);
        let rendered_mode = match spec.mode {
            Some(CrdMode::Monitor) => "monitor",
            _ => "protect",
        };
        expect(&format!("mode is not {mode}"), rendered_mode == mode);
        let failure_policy = expected_failure_policy(values, policy);
        expect(
            &format!("failurePolicy is not {failure_policy}"),
            serde_json::to_value(&spec.failure_policy).ok() == Some(json!(failure_policy)),
        );
        expect(
            "policyServer",
            spec.policy_server == text(values, "/policyServer/name"),
        );
        let own = &values["policies"][policy];
        let timeout = spec.timeout_seconds.as_ref().map(i32::from);
        // The policy's own timeouts, else 10 s for a context-aware policy
        // (5 s otherwise) and an evaluation one second shorter, at least 2:
        // policy-server answers before the API server gives up, and
        // Kubewarden refuses an evaluation longer than the webhook's.
        let webhook = own["timeoutSeconds"]
            .as_i64()
            .or_else(|| bundle.chart_policies[policy]["timeoutSeconds"].as_i64());
        expect(
            &format!("timeoutSeconds is not {webhook:?}"),
            timeout.map(i64::from) == webhook,
        );
        let evaluation = own["timeoutEvalSeconds"]
            .as_i64()
            .or_else(|| webhook.map(|w| (w - 1).max(2)));
        let rendered_evaluation = spec
            .timeout_eval_seconds
            .as_ref()
            .map(|t| i64::from(i32::from(t)));
        expect(
            &format!("timeoutEvalSeconds is not {evaluation:?}"),
            rendered_evaluation == evaluation,
        );
        expect(
            "timeoutEvalSeconds above timeoutSeconds, which Kubewarden refuses",
            rendered_evaluation <= webhook,
        );
        let selector = serde_json::to_value(&spec.namespace_selector).unwrap_or_default();
        expect(
            &format!("namespaceSelector {selector} is not the values'"),
            selector == expected_namespace_selector(values, policy),
        );
        expect(
            "neither namespaceSelector nor objectSelector",
            spec.namespace_selector.is_some() || spec.object_selector.is_some(),
        );
        let conditions = spec.match_conditions.clone().unwrap_or_default();
        let platform = conditions
            .iter()
            .any(|c| c.name == "not-a-platform-upgrade" && c.expression == PLATFORM_CONDITION);
        // no-delete exempts nobody, like the VAP it follows.
        expect(
            "the platform's upgrade identities are not kept off the webhook",
            platform == (policy != "no-delete"),
        );
        let settings = serde_json::to_value(&spec.settings).unwrap_or_default();
        expect(
            "settings are not the values' (with the chart's cozystackVersion where they leave it out)",
            settings == settings_sent(bundle, values, policy),
        );
        match host::PolicyModule::from_file(&e2e::module(policy)) {
            Ok(module) => {
                if let Err(error) = module.configure(settings) {
                    problems.push(format!("{policy}: settings refused: {error}"));
                }
            }
            Err(error) => problems.push(format!(
                "{policy}: {}; run `make dist` first",
                error.with_causes()
            )),
        }
    }
    for manifest in &manifests {
        let name = manifest.metadata.name.as_deref().unwrap_or_default();
        if !bundle.metadata.contains_key(name) {
            problems.push(format!("{name} is no policy in policies/"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// The PolicyServer exists, runs as a service account that may read what
/// the enabled context-aware policies look up and nothing else, and is
/// reachable from cozy-system.
fn policy_server_serves_the_bundle(
    bundle: &Bundle,
    rendering: &Rendering,
    objects: &[Object],
) -> Result<(), Failed> {
    let values = &rendering.values;
    let name = text(values, "/policyServer/name");
    let account = text(values, "/policyServer/serviceAccount/name");
    let create = values["policyServer"]["serviceAccount"]["create"].as_bool() == Some(true);
    let servers: Vec<_> = objects
        .iter()
        .filter_map(|o| match o {
            Object::PolicyServer(server) => Some(server),
            _ => None,
        })
        .collect();
    let [server] = servers.as_slice() else {
        return Err(format!("{} PolicyServers", servers.len()).into());
    };
    if server.metadata.name.as_deref() != Some(name)
        || server.spec.service_account_name.as_deref() != Some(account)
    {
        return Err(format!("PolicyServer {:?}", server.metadata.name).into());
    }
    let namespace = rendering.namespace.as_str();
    let accounts = objects
        .iter()
        .filter(|o| matches!(o, Object::ServiceAccount(a) if a.metadata.name.as_deref() == Some(account) && a.metadata.namespace.as_deref() == Some(namespace)))
        .count();
    if accounts != usize::from(create) {
        return Err(format!("{accounts} ServiceAccounts {account} in {namespace}").into());
    }
    // What the chart's roles grant the account, as the API server reads
    // them: get, list and watch of what the enabled policies read, Secrets
    // only got by name.
    let granted = rendered_rbac(objects).grants_of(&Account::new(namespace, account))?;
    let helm_releases = values["policyServer"]["serviceAccount"]["readHelmReleases"] == true;
    let wanted: BTreeSet<Grant> = if create {
        bundle
            .metadata
            .keys()
            .filter(|policy| enabled(values, policy))
            .flat_map(|policy| {
                bundle.chart_policies[policy]["reads"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|read| helm_releases || read["apiGroup"] != "helm.toolkit.fluxcd.io")
            .flat_map(|read| {
                let names: Vec<String> = read["names"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect();
                let (group, resource) = (text(&read, "/apiGroup"), text(&read, "/resource"));
                if names.is_empty() {
                    ["get", "list", "watch"]
                        .map(|verb| grant(group, resource, verb, None))
                        .to_vec()
                } else {
                    names
                        .iter()
                        .map(|name| grant(group, resource, "get", Some(name)))
                        .collect()
                }
            })
            .collect()
    } else {
        BTreeSet::new()
    };
    if granted != wanted {
        return Err(format!(
            "the policy server may {}, not {}",
            show_grants(&granted),
            show_grants(&wanted)
        )
        .into());
    }
    // The chart's disruption budget, not the controller's (which blocks
    // drains while a policy-server crash-loops): AlwaysAllow, the
    // controller's selector, the values' maxUnavailable or minAvailable.
    if server.spec.max_unavailable.is_some() || server.spec.min_available.is_some() {
        return Err("the PolicyServer sets a budget: the controller's blocks drains".into());
    }
    let budgets: Vec<_> = objects
        .iter()
        .filter_map(|o| match o {
            Object::PodDisruptionBudget(b) => Some(b),
            _ => None,
        })
        .collect();
    let [budget] = budgets.as_slice() else {
        return Err(format!("{} PodDisruptionBudgets", budgets.len()).into());
    };
    let budget_spec = budget.spec.clone().unwrap_or_default();
    let labels = budget_spec
        .selector
        .as_ref()
        .and_then(|s| s.match_labels.clone())
        .unwrap_or_default();
    let min_available = &values["policyServer"]["minAvailable"];
    let (given_min, given_max) = if min_available == "" {
        (
            Value::Null,
            values["policyServer"]["maxUnavailable"].clone(),
        )
    } else {
        (min_available.clone(), Value::Null)
    };
    let budget_ok = budget.metadata.name.as_deref()
        == Some(&format!("policy-server-{name}-budget"))
        && budget.metadata.namespace.as_deref() == Some(namespace)
        && budget_spec.unhealthy_pod_eviction_policy.as_deref() == Some("AlwaysAllow")
        && serde_json::to_value(&budget_spec.min_available).unwrap_or_default() == given_min
        && serde_json::to_value(&budget_spec.max_unavailable).unwrap_or_default() == given_max
        && labels
            == BTreeMap::from([
                (
                    "app.kubernetes.io/instance".to_owned(),
                    format!("policy-server-{name}"),
                ),
                (
                    "app.kubernetes.io/part-of".to_owned(),
                    "kubewarden".to_owned(),
                ),
                ("kubewarden/policy-server".to_owned(), name.to_owned()),
            ]);
    if !budget_ok {
        return Err(format!("the disruption budget {budget:?} is not the chart's").into());
    }
    // Every context-aware resource an enabled policy declares is read.
    for (policy, metadata) in &bundle.metadata {
        let reads = bundle.chart_policies[policy]["reads"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if reads.len() != metadata.context_aware_resources.len() {
            return Err(
                format!("{policy}: files/policies.yaml reads {reads:?}: run `make chart`").into(),
            );
        }
    }
    let network: Vec<_> = objects
        .iter()
        .filter_map(|o| match o {
            Object::CiliumNetworkPolicy(p) => Some(p),
            _ => None,
        })
        .collect();
    if values["networkPolicy"]["enabled"].as_bool() != Some(true) {
        return if network.is_empty() {
            Ok(())
        } else {
            Err("networkPolicy.enabled is false, yet a network policy is rendered".into())
        };
    }
    let [policy] = network.as_slice() else {
        return Err(format!("{} CiliumNetworkPolicies", network.len()).into());
    };
    let selected = policy
        .spec
        .endpoint_selector
        .match_labels
        .clone()
        .unwrap_or_default();
    if selected.get("app").map(String::as_str) != Some(&format!("kubewarden-policy-server-{name}"))
    {
        return Err(format!("the network policy selects {selected:?}").into());
    }
    let namespaces: BTreeSet<String> = policy
        .spec
        .ingress
        .iter()
        .flat_map(|rule| &rule.from_endpoints)
        .filter_map(|e| {
            e.match_labels
                .as_ref()?
                .get("k8s:io.kubernetes.pod.namespace")
                .cloned()
        })
        .collect();
    let mut wanted: BTreeSet<String> = values["networkPolicy"]["namespaces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect();
    wanted.insert(namespace.to_owned());
    wanted.insert(audit_scanner(values).namespace);
    if namespaces != wanted || !namespaces.contains("cozy-system") {
        return Err(format!("the network policy admits {namespaces:?}, not {wanted:?}").into());
    }
    let port = values["policyServer"]["ports"]["webhook"]
        .as_u64()
        .unwrap_or(8443)
        .to_string();
    let ports: BTreeSet<&str> = policy
        .spec
        .ingress
        .iter()
        .flat_map(|rule| &rule.to_ports)
        .flat_map(|p| &p.ports)
        .map(|p| p.port.as_str())
        .collect();
    if ports != BTreeSet::from([port.as_str()]) {
        return Err(format!("the network policy admits ports {ports:?}, not {port}").into());
    }
    if !policy
        .spec
        .ingress
        .iter()
        .any(|rule| rule.from_entities.iter().any(|e| e == "kube-apiserver"))
    {
        return Err("the API server may not call the webhook".into());
    }
    Ok(())
}

/// The resources audit-scanner lists to audit the policies `values`
/// enable, from their metadata.yml, as audit-scanner reads their
/// ClusterAdmissionPolicies: a policy with backgroundAudit, each rule of it
/// with CREATE and no wildcard (kubewarden/audit-scanner
/// internal/policies/client.go: `filterWildcardRules`,
/// `filterNonCreateOperations`, `groupPoliciesByGVR`), as (group, plural).
fn audited(bundle: &Bundle, values: &Value) -> BTreeSet<(String, String)> {
    use wasm_meta::metadata::RuleOperation;
    let create = RuleOperation::Only(shared::Operation::Create);
    let mut audited = BTreeSet::new();
    for (policy, metadata) in &bundle.metadata {
        if !enabled(values, policy) || !metadata.background_audit {
            continue;
        }
        for rule in &metadata.rules {
            let wildcard = |items: &[String]| items.iter().any(|i| i == "*");
            if !rule.operations.contains(&create)
                || wildcard(&rule.api_groups)
                || wildcard(&rule.api_versions)
                || wildcard(&rule.resources)
            {
                continue;
            }
            for group in &rule.api_groups {
                for resource in &rule.resources {
                    audited.insert((group.clone(), resource.clone()));
                }
            }
        }
    }
    audited
}

/// audit-scanner's account as the values name it: in
/// `kubewardenNamespace` unless they name another namespace.
fn audit_scanner(values: &Value) -> Account {
    let namespace = match text(values, "/auditScanner/serviceAccount/namespace") {
        "" => text(values, "/kubewardenNamespace"),
        given => given,
    };
    Account::new(namespace, text(values, "/auditScanner/serviceAccount/name"))
}

/// The chart grants audit-scanner's account get, list and watch on exactly
/// what the enabled policies audit (nothing when `auditScanner.rbac.create`
/// is off), and binds its roles to no account but audit-scanner's and the
/// PolicyServer's.
fn audit_scanner_reads_exactly_the_audited(
    bundle: &Bundle,
    rendering: &Rendering,
    objects: &[Object],
) -> Result<(), Failed> {
    let values = &rendering.values;
    let account = audit_scanner(values);
    let granted = rendered_rbac(objects).grants_of(&account)?;
    let wanted: BTreeSet<Grant> =
        if values["auditScanner"]["rbac"]["create"].as_bool() == Some(true) {
            audited(bundle, values)
                .into_iter()
                .flat_map(|(group, resource)| {
                    ["get", "list", "watch"].map(|verb| grant(&group, &resource, verb, None))
                })
                .collect()
        } else {
            BTreeSet::new()
        };
    if granted != wanted {
        return Err(format!(
            "audit-scanner ({account}) may {}, not {}",
            show_grants(&granted),
            show_grants(&wanted)
        )
        .into());
    }
    let policy_server = Account::new(
        &rendering.namespace,
        text(values, "/policyServer/serviceAccount/name"),
    );
    let (_, bindings) = rbac_objects(objects);
    for binding in &bindings {
        for subject in binding.subjects.iter().flatten() {
            let known = subject.kind == "ServiceAccount"
                && [&account, &policy_server].iter().any(|a| {
                    subject.name == a.name && subject.namespace.as_deref() == Some(&a.namespace)
                });
            if !known {
                return Err(format!(
                    "{} binds {} {}: the chart grants no account but audit-scanner's and the PolicyServer's",
                    binding.metadata.name.as_deref().unwrap_or_default(),
                    subject.kind,
                    subject.name
                )
                .into());
            }
        }
    }
    Ok(())
}

/// RBAC that is not the chart's, as manifests of tests/data/rbac/.
fn rbac_data(file: &str) -> Result<Vec<Object>, String> {
    let path = format!("e2e/tests/data/rbac/{file}");
    e2e::manifests::documents(&read(&path)?)?
        .iter()
        .map(Object::from_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{path}: {e}"))
}

/// Everything audit-scanner does, as the API server authorizes it, with
/// the chart's default rendering installed beside Kubewarden's chart
/// (tests/data/rbac/kubewarden-audit-scanner.yaml) on a cluster with
/// Kubernetes' default roles (tests/data/rbac/kubernetes-view.yaml): it
/// finds the namespaces, policies and policy-server it needs, writes its
/// reports, and lists every resource an enabled policy audits. Without the
/// chart's roles it could not list some of them, which is why the chart
/// grants them.
fn audit_scanner_reads_what_the_policies_audit(
    bundle: &Bundle,
    rendering: &Rendering,
) -> Result<(), Failed> {
    let values = &rendering.values;
    let account = audit_scanner(values);
    if account != Account::new("kubewarden", "audit-scanner") {
        return Err(format!(
            "the defaults name {account}, not Kubewarden's audit-scanner (kubewarden/audit-scanner)"
        )
        .into());
    }
    let mut theirs = rbac_data("kubewarden-audit-scanner.yaml")?;
    theirs.extend(rbac_data("kubernetes-view.yaml")?);
    let mut everything = objects(rendering)?;
    everything.extend(theirs.iter().cloned());
    let with_chart = rendered_rbac(&everything);
    let without_chart = rendered_rbac(&theirs);
    let audited = audited(bundle, values);
    if audited.is_empty() {
        return Err("no enabled policy audits anything".into());
    }
    // What audit-scanner does besides listing the audited resources
    // (kubewarden/audit-scanner internal/: the namespaces to scan, the
    // policies and their PolicyServer's Service, the reports it writes).
    let mut needed = vec![
        Request::new("list", "", "namespaces"),
        Request::new("list", "", "services"),
        Request::new("list", "policies.kubewarden.io", "clusteradmissionpolicies"),
        Request::new("list", "policies.kubewarden.io", "admissionpolicies"),
        Request::new("get", "policies.kubewarden.io", "policyservers"),
        Request::new("create", "openreports.io", "reports"),
        Request::new("patch", "openreports.io", "reports"),
        Request::new("create", "openreports.io", "clusterreports"),
    ];
    for (group, resource) in &audited {
        for verb in ["get", "list", "watch"] {
            needed.push(Request::new(verb, group, resource));
        }
    }
    let refused: Vec<String> = needed
        .iter()
        .filter(|request| !with_chart.allows(&account, request))
        .map(ToString::to_string)
        .collect();
    if !refused.is_empty() {
        return Err(format!("audit-scanner ({account}) may not: {}", refused.join(", ")).into());
    }
    let blind: Vec<String> = audited
        .iter()
        .filter(|(group, resource)| {
            !without_chart.allows(&account, &Request::new("list", group, resource))
        })
        .map(|(group, resource)| format!("{group}/{resource}"))
        .collect();
    println!(
        "audit-scanner lists the {} audited resources; without the chart's ClusterRole it could not list {}: {}",
        audited.len(),
        blind.len(),
        blind.join(", ")
    );
    if blind.is_empty() {
        return Err("Kubewarden's and Kubernetes' roles alone already let audit-scanner list everything audited: is tests/data/rbac/ right?".into());
    }
    Ok(())
}

/// The ClusterAdmissionPolicies of a rendering, by name, as JSON.
fn policy_documents(rendering: &Rendering) -> Result<BTreeMap<String, Value>, Failed> {
    let documents = rendering.documents.as_ref().map_err(Clone::clone)?;
    Ok(documents
        .iter()
        .filter(|d| d["kind"] == "ClusterAdmissionPolicy")
        .map(|d| (text(d, "/metadata/name").to_owned(), d.clone()))
        .collect())
}

/// With the defaults, every policy is in monitor mode and fails open: a
/// policy-server that is down, slow or refuses a request rejects nothing.
fn monitor_never_rejects(bundle: &Bundle, rendering: &Rendering) -> Result<(), Failed> {
    let policies = policy_documents(rendering)?;
    if policies.len() != bundle.metadata.len() {
        return Err(format!("{} policies rendered", policies.len()).into());
    }
    for (name, policy) in &policies {
        let spec = &policy["spec"];
        if spec["mode"] != "monitor" || spec["failurePolicy"] != "Ignore" {
            return Err(format!(
                "{name}: mode {}, failurePolicy {}: monitor must never reject a write",
                spec["mode"], spec["failurePolicy"]
            )
            .into());
        }
    }
    Ok(())
}

/// With `mode: protect`, every policy protects and fails closed, but the
/// report-only ones, which stay in monitor and fail open.
fn protect_spares_the_report_only_policies(
    bundle: &Bundle,
    rendering: &Rendering,
) -> Result<(), Failed> {
    let policies = policy_documents(rendering)?;
    if policies.len() != bundle.metadata.len() {
        return Err(format!("{} policies rendered", policies.len()).into());
    }
    for (name, policy) in &policies {
        let spec = &policy["spec"];
        let report_only = REPORT_ONLY.contains(&name.as_str());
        let (mode, failure) = if report_only {
            ("monitor", "Ignore")
        } else {
            ("protect", "Fail")
        };
        let labelled = policy["metadata"]["labels"]["policies.cozystack.io/report-only"] == "true";
        if spec["mode"] != mode || spec["failurePolicy"] != failure || labelled != report_only {
            return Err(format!(
                "{name}: mode {}, failurePolicy {}, report-only label {labelled}; want {mode}, {failure}, {report_only}",
                spec["mode"], spec["failurePolicy"]
            )
            .into());
        }
    }
    Ok(())
}

/// Installed anywhere but Kubewarden's namespace, the render stops and
/// says where to install.
fn kubewarden_namespace_guard(helm: &Helm) -> Result<(), Failed> {
    let answers = helm.render(&[
        Render::in_namespace(json!({}), "default"),
        Render::in_namespace(
            json!({"kubewardenNamespace": "cattle-kubewarden-system"}),
            "cattle-kubewarden-system",
        ),
    ])?;
    match &answers[..] {
        [Rendered::Error(error), Rendered::Templates(_)]
            if error.contains("\"default\"")
                && error.contains("kubewardenNamespace")
                && error.contains("--namespace kubewarden") =>
        {
            Ok(())
        }
        [Rendered::Error(error), _] => {
            Err(format!("the refusal does not say what to do: {error}").into())
        }
        [Rendered::Templates(_), _] => Err("a release in `default` is rendered".into()),
        _ => Err(
            format!("Kubewarden's namespace set to the release's is refused: {answers:?}").into(),
        ),
    }
}

/// A cluster holding every policy of the bundle as installed on `server`,
/// each in the mode `mode` gives it: what the guards' `lookup` finds.
fn installed_policies(
    bundle: &Bundle,
    server: &str,
    mode: impl Fn(&str) -> &'static str,
) -> Vec<ClusterResource> {
    vec![ClusterResource {
        api_version: "policies.kubewarden.io/v1".to_owned(),
        kind: "ClusterAdmissionPolicy".to_owned(),
        resource: "clusteradmissionpolicies".to_owned(),
        namespaced: false,
        objects: bundle
            .metadata
            .keys()
            .map(|policy| {
                json!({
                    "apiVersion": "policies.kubewarden.io/v1",
                    "kind": "ClusterAdmissionPolicy",
                    "metadata": {"name": policy},
                    "spec": {"policyServer": server, "mode": mode(policy)},
                })
            })
            .collect(),
    }]
}

/// `helm upgrade` that renames the PolicyServer of installed policies is
/// refused before anything is applied, naming the policies and the way
/// out; the same upgrade without the rename renders.
fn policy_server_rename_guard(helm: &Helm, bundle: &Bundle) -> Result<(), Failed> {
    let installed = |server: &str| installed_policies(bundle, server, |_| "monitor");
    let answers = helm.render(&[
        Render::with(json!({})).upgrading(installed("cozystack-policies")),
        Render::with(json!({"policyServer": {"name": "renamed"}}))
            .upgrading(installed("cozystack-policies")),
        Render::with(json!({})).upgrading(installed("legacy")),
    ])?;
    let [same, renamed, legacy] = &answers[..] else {
        return Err(format!("{} answers", answers.len()).into());
    };
    if let Rendered::Error(error) = same {
        return Err(format!("an upgrade that keeps the name is refused: {error}").into());
    }
    for (answer, from, to) in [
        (renamed, "cozystack-policies", "renamed"),
        (legacy, "legacy", "cozystack-policies"),
    ] {
        match answer {
            Rendered::Error(error)
                if error.contains(&format!("run on the PolicyServer \"{from}\""))
                    && error.contains(&format!("policyServer.name is \"{to}\""))
                    && error.contains("immutable")
                    && error.contains(&format!("Keep policyServer.name: {from}"))
                    && bundle.metadata.keys().all(|p| error.contains(p.as_str())) => {}
            Rendered::Error(error) => {
                return Err(format!("the refusal does not say it all: {error}").into());
            }
            Rendered::Templates(_) => {
                return Err(
                    format!("renaming {from} to {to} over installed policies is rendered").into(),
                );
            }
        }
    }
    Ok(())
}

/// An upgrade that would put a policy installed in protect back in monitor
/// is refused before anything is applied (Kubewarden's webhook refuses the
/// change itself, half-way), naming the policies and how to recreate them;
/// the other way, and staying in protect, go through.
fn protect_to_monitor_guard(helm: &Helm, bundle: &Bundle) -> Result<(), Failed> {
    // The report-only ones stay in monitor under the chart-wide mode.
    let installed = |mode: &'static str| {
        installed_policies(bundle, "cozystack-policies", move |policy| {
            if REPORT_ONLY.contains(&policy) {
                "monitor"
            } else {
                mode
            }
        })
    };
    let answers = helm.render(&[
        Render::with(json!({})).upgrading(installed("protect")),
        Render::with(json!({"mode": "protect"})).upgrading(installed("protect")),
        Render::with(json!({"mode": "protect"})).upgrading(installed("monitor")),
        Render::with(json!({"mode": "protect", "policies": {"oidc-config": {"mode": "monitor"}}}))
            .upgrading(installed("protect")),
    ])?;
    let [back, kept, forward, one] = &answers[..] else {
        return Err(format!("{} answers", answers.len()).into());
    };
    for (answer, what) in [
        (kept, "staying in protect"),
        (forward, "monitor to protect"),
    ] {
        if let Rendered::Error(error) = answer {
            return Err(format!("{what} is refused: {error}").into());
        }
    }
    // The chart-wide mode moves every policy but the report-only ones,
    // which stay in monitor unless their own mode says otherwise.
    let moved: Vec<&str> = bundle
        .metadata
        .keys()
        .map(String::as_str)
        .filter(|p| !REPORT_ONLY.contains(p))
        .collect();
    for (answer, policies) in [(back, moved.as_slice()), (one, &["oidc-config"][..])] {
        match answer {
            Rendered::Error(error)
                if error.contains(
                    "are in protect on the cluster and these values put them in monitor",
                ) && error.contains("Recreate instead.")
                    && error.contains(&format!("--set policies.{}.enabled=false", policies[0]))
                    && error.contains(&format!(
                        "--set policies.{0}.enabled=true --set policies.{0}.mode=monitor",
                        policies[0]
                    ))
                    && policies.iter().all(|p| error.contains(p))
                    && (policies.len() > 1 || !error.contains("values-schema")) => {}
            Rendered::Error(error) => {
                return Err(
                    format!("the refusal does not say it all for {policies:?}: {error}").into(),
                );
            }
            Rendered::Templates(_) => {
                return Err(format!("protect to monitor of {policies:?} is rendered").into());
            }
        }
    }
    Ok(())
}

/// Every Kubewarden object of a rendering satisfies Kubewarden's own CRD
/// (its openAPIV3Schema, each object closed to the fields it declares, as
/// the API server prunes the rest); the types of `e2e::manifests` already
/// read every object whole.
fn typed_against_the_crds(bundle: &Bundle, rendering: &Rendering) -> Result<(), Failed> {
    let documents = rendering.documents.as_ref().map_err(Clone::clone)?;
    // `every-value` sets the PolicyServer fields 1.37 added (labels, ports,
    // namespacedPoliciesCapabilities): Kubewarden 1.35 would prune them.
    let mut releases = vec![("1.37.2", &bundle.newest_crds)];
    match &bundle.crds {
        Some(crds) if rendering.name != "every-value" => releases.push(("1.35", crds)),
        Some(_) => {}
        None => println!(
            "{}: Kubewarden 1.35's CRDs are missing: that half is SKIPPED",
            rendering.name
        ),
    }
    let mut problems = Vec::new();
    for (release, crds) in releases {
        let mut checked = 0;
        for document in documents {
            match crds.check(document) {
                Ok(true) => checked += 1,
                Ok(false) => {}
                Err(error) => problems.push(format!("Kubewarden {release}: {error}")),
            }
        }
        if checked == 0 {
            problems.push(format!(
                "Kubewarden {release}: no object checked against a CRD"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// `kubectl apply -k deploy/protect` is the bundle with every policy in
/// protect mode and failing closed, but the report-only ones: the overlay's
/// patch applied to deploy/bundle/ as kustomize applies it (a JSON patch on
/// the ClusterAdmissionPolicies its label selector picks).
fn protect_overlay() -> Result<(), Failed> {
    let overlay = yaml("deploy/protect/kustomization.yaml")?;
    if overlay["resources"] != json!(["../bundle"]) {
        return Err("deploy/protect must patch ../bundle".into());
    }
    let [patch] = overlay["patches"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    else {
        return Err(format!("deploy/protect: one patch, not {}", overlay["patches"]).into());
    };
    let target = &patch["target"];
    if target["group"] != "policies.kubewarden.io" || target["kind"] != "ClusterAdmissionPolicy" {
        return Err(format!("deploy/protect patches {target}").into());
    }
    // kustomize's label selector, in the one form the overlay uses.
    let selector = text(target, "/labelSelector");
    let (key, value) = selector.split_once("!=").ok_or_else(|| {
        format!("deploy/protect: the label selector {selector:?} is not key!=value")
    })?;
    let operations: Vec<Value> = yaml::document(text(patch, "/patch"), Limit::Cases)
        .map_err(|e| format!("deploy/protect: {e}"))?;
    let mut protected = BTreeSet::new();
    for document in deploy_documents()? {
        if document["kind"] != "ClusterAdmissionPolicy" {
            continue;
        }
        let name = text(&document, "/metadata/name").to_owned();
        let mut spec = document["spec"].clone();
        if document["metadata"]["labels"][key].as_str() != Some(value) {
            for operation in &operations {
                let field = text(operation, "/path")
                    .strip_prefix("/spec/")
                    .filter(|_| operation["op"] == "replace")
                    .ok_or_else(|| format!("deploy/protect: {operation}"))?;
                spec[field] = operation["value"].clone();
            }
            protected.insert(name.clone());
        }
        let want = if REPORT_ONLY.contains(&name.as_str()) {
            ("monitor", "Ignore")
        } else {
            ("protect", "Fail")
        };
        if (spec["mode"].as_str(), spec["failurePolicy"].as_str()) != (Some(want.0), Some(want.1)) {
            return Err(format!(
                "deploy/protect leaves {name} in mode {}, failurePolicy {}",
                spec["mode"], spec["failurePolicy"]
            )
            .into());
        }
    }
    if protected.is_empty() {
        return Err("deploy/protect protects nothing".into());
    }
    Ok(())
}

/// Each changed value shows in the manifests.
fn values_reach_the_manifests(rendering: &Rendering) -> Result<(), Failed> {
    let values = &rendering.values;
    let documents = rendering.documents.as_ref().map_err(Clone::clone)?;
    let find = |kind: &str| {
        documents
            .iter()
            .find(|d| d["kind"] == kind)
            .cloned()
            .ok_or_else(|| format!("no {kind}"))
    };
    let server = find("PolicyServer")?;
    let given = &values["policyServer"];
    let image = &given["image"];
    let reference = format!(
        "{}/{}:{}@{}",
        text(image, "/registry"),
        text(image, "/repository"),
        text(image, "/tag"),
        text(image, "/digest")
    );
    for (field, want) in [
        ("image", json!(reference)),
        ("replicas", given["replicas"].clone()),
        ("labels", given["labels"].clone()),
        (
            "namespacedPoliciesCapabilities",
            given["namespacedPoliciesCapabilities"].clone(),
        ),
        ("webhookPort", given["ports"]["webhook"].clone()),
        (
            "readinessProbePort",
            given["ports"]["readinessProbe"].clone(),
        ),
        ("metricsPort", given["ports"]["metrics"].clone()),
        ("affinity", given["affinity"].clone()),
        ("tolerations", given["tolerations"].clone()),
        ("priorityClassName", given["priorityClassName"].clone()),
        ("requests", given["resources"]["requests"].clone()),
        ("limits", given["resources"]["limits"].clone()),
        ("annotations", given["annotations"].clone()),
        ("env", given["env"].clone()),
        ("securityContexts", given["securityContexts"].clone()),
        ("imagePullSecret", given["imagePullSecret"].clone()),
        ("sourceAuthorities", given["sourceAuthorities"].clone()),
        ("insecureSources", given["insecureSources"].clone()),
        ("sigstoreTrustConfig", given["sigstoreTrustConfig"].clone()),
        (
            "serviceAccountName",
            given["serviceAccount"]["name"].clone(),
        ),
        ("verificationConfig", json!("cozy-guard-verification")),
    ] {
        if server["spec"][field] != want {
            return Err(format!(
                "PolicyServer spec.{field} is {}, not {want}",
                server["spec"][field]
            )
            .into());
        }
    }
    let config = find("ConfigMap")?;
    let verification: Value =
        yaml::document(text(&config, "/data/verification-config"), Limit::Cases)
            .map_err(|e| format!("verification-config: {e}"))?;
    if verification != given["verificationConfig"]
        || text(&config, "/metadata/name") != "cozy-guard-verification"
        || text(&config, "/metadata/namespace") != text(values, "/kubewardenNamespace")
    {
        return Err(format!("the verification ConfigMap holds {verification}").into());
    }
    Ok(())
}

/// Every leaf of values.yaml is changed by `every-value`, or turned off by
/// `disabled`: a value added to the chart without a rendering that changes
/// it fails here.
fn every_value_is_changed(bundle: &Bundle, rendering: &Rendering) -> Result<(), Failed> {
    fn leaves(value: &Value, path: String, out: &mut Vec<(String, Value)>) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (key, value) in map {
                    leaves(value, format!("{path}/{key}"), out);
                }
            }
            other => out.push((path, other.clone())),
        }
    }
    let mut defaults = Vec::new();
    leaves(&bundle.defaults, String::new(), &mut defaults);
    // Turned off by the `disabled` rendering, or the same in both on purpose.
    let elsewhere = |path: &str| {
        path.ends_with("/enabled")
            || [
                "/policyServer/serviceAccount/create",
                "/policyServer/verificationConfigMap",
                "/auditScanner/rbac/create",
                // `fewer-policies` changes it: `every-value` sets
                // minAvailable, which the budget takes instead.
                "/policyServer/maxUnavailable",
            ]
            .contains(&path)
    };
    let unchanged: Vec<&String> = defaults
        .iter()
        .filter(|(path, _)| !elsewhere(path))
        .filter(|(path, value)| rendering.values.pointer(path) == Some(value))
        .map(|(path, _)| path)
        .collect();
    let settings_unchanged: Vec<&String> = unchanged
        .iter()
        .copied()
        .filter(|path| path.ends_with("/settings"))
        .collect();
    // A policy whose cases all run with default settings keeps `{}`.
    let others: Vec<&&String> = unchanged
        .iter()
        .filter(|p| !settings_unchanged.contains(p))
        .collect();
    if others.is_empty() {
        Ok(())
    } else {
        Err(
            format!("every-value leaves these values of values.yaml as they are: {others:?}")
                .into(),
        )
    }
}

/// no-delete with labelRemoval: UPDATE is sent too, without the platform's
/// writers', and the selector follows labelKey.
fn label_removal_guard(rendering: &Rendering) -> Result<(), Failed> {
    let documents = rendering.documents.as_ref().map_err(Clone::clone)?;
    let policy = documents
        .iter()
        .find(|d| d["kind"] == "ClusterAdmissionPolicy" && d["metadata"]["name"] == "no-delete")
        .ok_or("no no-delete")?;
    let spec = &policy["spec"];
    if spec["rules"][0]["operations"] != json!(["DELETE", "UPDATE"]) {
        return Err(format!("operations {}", spec["rules"][0]["operations"]).into());
    }
    if spec["objectSelector"]["matchExpressions"][0]["key"] != "example.com/keep" {
        return Err(format!("objectSelector {}", spec["objectSelector"]).into());
    }
    if spec["matchConditions"][0]["name"] != "not-a-platform-writer-update" {
        return Err(format!("matchConditions {}", spec["matchConditions"]).into());
    }
    Ok(())
}

/// With the service account, audit-scanner's RBAC, the network policy, the
/// verification ConfigMap and a policy off, none of them is rendered; the
/// PolicyServer names the ConfigMap of the admin's own instead.
fn nothing_optional(bundle: &Bundle, rendering: &Rendering) -> Result<(), Failed> {
    let documents = rendering.documents.as_ref().map_err(Clone::clone)?;
    let kinds: BTreeSet<&str> = documents
        .iter()
        .filter_map(|d| d["kind"].as_str())
        .collect();
    for kind in [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "CiliumNetworkPolicy",
        "ConfigMap",
    ] {
        if kinds.contains(kind) {
            return Err(format!("{kind} rendered").into());
        }
    }
    let policies = documents
        .iter()
        .filter(|d| d["kind"] == "ClusterAdmissionPolicy")
        .count();
    if policies + 1 != bundle.metadata.len() {
        return Err(format!("{policies} policies rendered").into());
    }
    let named = documents
        .iter()
        .find(|d| d["kind"] == "PolicyServer")
        .map(|d| text(d, "/spec/verificationConfig"));
    if named != Some("platform-verification") {
        return Err(format!("the PolicyServer's verificationConfig is {named:?}").into());
    }
    Ok(())
}

/// The values that give `policy` these settings.
fn with_settings(policy: &str, settings: &Value) -> Render {
    Render::with(json!({"policies": {policy: {"settings": settings}}}))
}

/// Every case's settings the policy accepts, the chart accepts.
fn accepts_every_accepted_case(helm: &Helm) -> Result<(), Failed> {
    let mut seen = BTreeSet::new();
    let mut requests = Vec::new();
    for case in e2e::cases()? {
        if case.case.expectation(Runner::PolicyServer).result == ExpectedResult::InvalidSettings {
            continue;
        }
        if seen.insert((case.policy.clone(), case.settings().to_string())) {
            requests.push((case.id(), with_settings(&case.policy, &case.settings())));
        }
    }
    let answers = helm.render(&requests.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>())?;
    let refused: Vec<String> = requests
        .iter()
        .zip(&answers)
        .filter_map(|((id, _), answer)| match answer {
            Rendered::Error(error) => Some(format!("{id}: {error}")),
            Rendered::Templates(_) => None,
        })
        .collect();
    println!("{} distinct settings accepted", requests.len());
    if refused.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the chart's schema refuses settings the policies accept:\n{}",
            refused.join("\n")
        )
        .into())
    }
}

/// The invalid-settings cases the schema can express are refused at `helm
/// install`, the error naming the setting's path; the others (a value the
/// rule checks, such as a label key's syntax) reach policy-server, which
/// refuses them at start-up (`start-up/*` of the policy_server suite).
fn refuses_invalid_settings(helm: &Helm) -> Result<(), Failed> {
    let cases: Vec<_> = e2e::cases()?
        .into_iter()
        .filter(|c| {
            c.case.expectation(Runner::PolicyServer).result == ExpectedResult::InvalidSettings
        })
        .collect();
    let requests: Vec<Render> = cases
        .iter()
        .map(|c| with_settings(&c.policy, &c.settings()))
        .collect();
    let answers = helm.render(&requests)?;
    let mut refused = 0;
    let mut to_policy_server = Vec::new();
    for (case, answer) in cases.iter().zip(&answers) {
        match answer {
            Rendered::Error(error) => {
                if !error.contains(&format!("/policies/{}/settings", case.policy)) {
                    return Err(format!(
                        "{}: the error does not name the setting: {error}",
                        case.id()
                    )
                    .into());
                }
                refused += 1;
            }
            Rendered::Templates(_) => to_policy_server.push(case.id()),
        }
    }
    println!(
        "{refused} of {} invalid-settings cases refused by values.schema.json; policy-server refuses the rest at start-up: {}",
        cases.len(),
        to_policy_server.join(", ")
    );
    if refused == 0 {
        return Err("the schema refuses no invalid-settings case".into());
    }
    Ok(())
}

/// Mistakes an operator makes in the values, refused with the key named.
fn refuses_mistakes(helm: &Helm) -> Result<(), Failed> {
    let mistakes = [
        (json!({"mdoe": "protect"}), "mdoe"),
        (json!({"mode": "audit"}), "/mode"),
        (
            json!({"policies": {"no-delet": {"enabled": true}}}),
            "no-delet",
        ),
        (
            json!({"policies": {"no-delete": {"settings": {"labelkey": "x"}}}}),
            "labelkey",
        ),
        (
            json!({"policies": {"oidc-config": {"settings": {"platformOidcEnabled": "yes"}}}}),
            "/policies/oidc-config/settings/platformOidcEnabled",
        ),
        (
            json!({"policies": {"securitygroup-validity": {"settings": {"missingTargets": "deny"}}}}),
            "missingTargets",
        ),
        (
            json!({"policies": {"chart-render": {"settings": {"deny": ["removed-version"]}}}}),
            "/policies/chart-render/settings/deny/0",
        ),
        (
            json!({"policies": {"no-delete": {"module": {"digest": "sha256:abc"}}}}),
            "/policies/no-delete/module/digest",
        ),
        // A null removes the value before Helm checks the values: every
        // value values.yaml sets is required, so the removal is refused.
        (json!({"mode": null}), "missing property 'mode'"),
        (
            json!({"policyServer": {"resources": null}}),
            "missing property 'resources'",
        ),
        (
            json!({"policyServer": {"image": {"tag": null}}}),
            "missing property 'tag'",
        ),
        (
            json!({"kubewardenNamespace": null}),
            "missing property 'kubewardenNamespace'",
        ),
        // A disruption budget that blocks every drain cannot be written:
        // at least one ready pod (or 1 %) may go.
        (
            json!({"policyServer": {"maxUnavailable": 0}}),
            "/policyServer/maxUnavailable",
        ),
        (
            json!({"policyServer": {"maxUnavailable": "0%"}}),
            "/policyServer/maxUnavailable",
        ),
        (
            json!({"policyServer": {"minAvailable": "100%"}}),
            "/policyServer/minAvailable",
        ),
        (
            json!({"policyServer": {"replicas": 2, "minAvailable": 2}}),
            "policyServer.minAvailable is 2 with 2 replicas: the disruption budget would let a drain evict no ready policy-server pod",
        ),
        // Kubewarden refuses an evaluation longer than its webhook's, given
        // or the policy's own.
        (
            json!({"policies": {"values-schema": {"timeoutSeconds": 6, "timeoutEvalSeconds": 7}}}),
            "/policies/values-schema/timeoutEvalSeconds",
        ),
        (
            json!({"policies": {"values-schema": {"timeoutEvalSeconds": 6}}}),
            "/policies/values-schema/timeoutEvalSeconds",
        ),
        (
            json!({"policies": {"upgrade-gate": {"timeoutEvalSeconds": 11}}}),
            "/policies/upgrade-gate/timeoutEvalSeconds",
        ),
        (
            json!({"policyServer": {"ports": {"webhook": 0}}}),
            "/policyServer/ports/webhook",
        ),
        (
            json!({"policyServer": {"ports": {"webhok": 9443}}}),
            "webhok",
        ),
        (
            json!({"policyServer": {"namespacedPoliciesCapabilities": ["OCI/*"]}}),
            "/policyServer/namespacedPoliciesCapabilities/0",
        ),
        (
            json!({"policyServer": {"serviceAccount": {"readHelmReleases": "no"}}}),
            "/policyServer/serviceAccount/readHelmReleases",
        ),
        (
            json!({"policyServer": {"image": "ghcr.io/kubewarden/adm-controller/policy-server:v1.36.0"}}),
            "/policyServer/image",
        ),
        (
            json!({"policyServer": {"image": {"digest": "sha256:abc"}}}),
            "/policyServer/image/digest",
        ),
        (
            json!({"policyServer": {"verificationConfigMap": "mine", "verificationConfig": {"apiVersion": "v1", "allOf": [{"kind": "githubAction", "owner": "cozystack"}]}}}),
            "/policyServer",
        ),
        (
            json!({"policyServer": {"env": [{"value": "no name"}]}}),
            "/policyServer/env/0",
        ),
        (
            json!({"policyServer": {"securityContexts": {"pod": {"runAsNonroot": true}}}}),
            "runAsNonroot",
        ),
        (
            json!({"policyServer": {"imagePullSecret": "Not_A_Name"}}),
            "/policyServer/imagePullSecret",
        ),
        (
            json!({"policyServer": {"sourceAuthorities": {"registry.example.com": ["not a certificate"]}}}),
            "/policyServer/sourceAuthorities",
        ),
        (
            json!({"policies": {"values-schema": {"failurePolicy": "Open"}}}),
            "/policies/values-schema/failurePolicy",
        ),
        (
            json!({"policies": {"values-schema": {"timeoutSeconds": 31}}}),
            "/policies/values-schema/timeoutSeconds",
        ),
        (
            json!({"policies": {"values-schema": {"timeoutEvalSeconds": 1}}}),
            "/policies/values-schema/timeoutEvalSeconds",
        ),
        (
            json!({"policies": {"values-schema": {"skipNamespaces": ["Tenant_Root"]}}}),
            "/policies/values-schema/skipNamespaces/0",
        ),
        (
            json!({"policies": {"values-schema": {"namespaceSelector": {"matchLabel": {}}}}}),
            "matchLabel",
        ),
        (
            json!({"auditScanner": {"serviceAccount": {"namespace": "Kube Warden"}}}),
            "/auditScanner/serviceAccount/namespace",
        ),
        (
            json!({"policyServer": {"replicas": 0}}),
            "/policyServer/replicas",
        ),
        (
            json!({"policyServer": {"verificationConfig": {"apiVersion": "v1", "allOf": [{"kind": "pubkey", "key": "k"}]}}}),
            "/policyServer/verificationConfig",
        ),
        (
            json!({"policyServer": {"affinity": {"nodeAffinty": {}}}}),
            "nodeAffinty",
        ),
    ];
    let answers = helm.render(
        &mistakes
            .iter()
            .map(|(v, _)| Render::with(v.clone()))
            .collect::<Vec<_>>(),
    )?;
    for ((values, named), answer) in mistakes.iter().zip(&answers) {
        match answer {
            Rendered::Error(error) if error.contains(named) => {}
            Rendered::Error(error) => {
                return Err(format!("{values}: the error does not name {named:?}: {error}").into());
            }
            Rendered::Templates(_) => return Err(format!("{values} was accepted").into()),
        }
    }
    Ok(())
}

/// A field of a Flux or Cozystack object the README's manifests use.
fn field<'v>(value: &'v Value, pointer: &str) -> Result<&'v Value, String> {
    value
        .pointer(pointer)
        .ok_or_else(|| format!("{} has no {pointer}", text(value, "/kind")))
}

/// Only these keys (dotted paths) may appear: the fields of the Go types
/// the objects are decoded into (Flux's source and helm APIs, Cozystack's
/// `api/v1alpha1/packagesource_types.go` and `package_types.go` of v1.6.2),
/// so a misspelt one fails here.
fn only_fields(value: &Value, allowed: &[&str]) -> Result<(), String> {
    /// Dotted paths, list indices as `*`; below a `values` key anything
    /// goes (the chart's values, checked by Helm).
    fn walk(value: &Value, path: &str, allowed: &[&str], out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    let here = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    if !allowed.contains(&here.as_str()) {
                        out.push(here);
                    } else if !here.ends_with("values") {
                        walk(value, &here, allowed, out);
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    walk(item, &format!("{path}.*"), allowed, out);
                }
            }
            _ => {}
        }
    }
    let mut unknown = Vec::new();
    walk(value, "", allowed, &mut unknown);
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}: unknown fields {unknown:?}",
            text(value, "/kind")
        ))
    }
}

const OCI_REPOSITORY_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "metadata.name",
    "metadata.namespace",
    "spec",
    "spec.interval",
    "spec.url",
    "spec.ref",
    "spec.ref.tag",
    "spec.ref.semver",
    "spec.layerSelector",
    "spec.layerSelector.mediaType",
    "spec.layerSelector.operation",
    "spec.verify",
    "spec.verify.provider",
    "spec.verify.secretRef",
    "spec.verify.secretRef.name",
    "spec.verify.matchOIDCIdentity",
    "spec.verify.matchOIDCIdentity.*.issuer",
    "spec.verify.matchOIDCIdentity.*.subject",
];

/// The OCIRepository of the published chart: its URL, the chart's version,
/// Helm's layer, verified with cosign.
fn check_oci_repository(
    bundle: &Bundle,
    repository: &Value,
    operation: &str,
) -> Result<(), String> {
    only_fields(repository, OCI_REPOSITORY_FIELDS)?;
    let want = [
        ("/apiVersion", json!("source.toolkit.fluxcd.io/v1")),
        ("/spec/url", json!(format!("oci://{CHART_REPOSITORY}"))),
        ("/spec/ref/tag", bundle.chart["version"].clone()),
        ("/spec/layerSelector/mediaType", json!(HELM_LAYER)),
        ("/spec/layerSelector/operation", json!(operation)),
        ("/spec/verify/provider", json!("cosign")),
    ];
    for (pointer, value) in want {
        if field(repository, pointer)? != &value {
            return Err(format!(
                "OCIRepository {pointer} is {}, not {value}",
                field(repository, pointer)?
            ));
        }
    }
    Ok(())
}

/// The README's Flux and Cozystack manifests (`charts/install/<file>.yaml`)
/// are typed, point at the published chart, and their values render.
fn install(helm: &Helm, bundle: &Bundle, file: &str) -> Result<(), Failed> {
    let path = format!("charts/install/{file}.yaml");
    let text = read(&path)?;
    let readme = read("README.md")?;
    let body = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    if !readme.contains(body.trim()) {
        return Err(format!("README.md does not show {path} as it is").into());
    }
    let documents = e2e::manifests::documents(&text)?;
    let by_kind = |kind: &str| {
        documents
            .iter()
            .find(|d| d["kind"] == kind)
            .ok_or_else(|| format!("{path}: no {kind}"))
    };
    let repository = by_kind("OCIRepository")?;
    let values = match file {
        "flux" => {
            // helm-controller installs the chart from the copied layer.
            check_oci_repository(bundle, repository, "copy")?;
            let release = by_kind("HelmRelease")?;
            only_fields(
                release,
                &[
                    "apiVersion",
                    "kind",
                    "metadata",
                    "metadata.name",
                    "metadata.namespace",
                    "spec",
                    "spec.interval",
                    "spec.releaseName",
                    "spec.chartRef",
                    "spec.chartRef.kind",
                    "spec.chartRef.name",
                    "spec.chartRef.namespace",
                    "spec.install",
                    "spec.install.remediation",
                    "spec.install.remediation.retries",
                    "spec.upgrade",
                    "spec.upgrade.remediation",
                    "spec.upgrade.remediation.retries",
                    "spec.values",
                ],
            )?;
            if text_of(release, "/apiVersion") != "helm.toolkit.fluxcd.io/v2"
                || text_of(release, "/spec/chartRef/kind") != "OCIRepository"
                || text_of(release, "/spec/chartRef/name") != text_of(repository, "/metadata/name")
                || text_of(release, "/metadata/namespace") != "kubewarden"
            {
                return Err(format!(
                    "the HelmRelease does not install the chart in kubewarden: {release}"
                )
                .into());
            }
            release["spec"]["values"].clone()
        }
        _ => {
            // The PackageSource's ArtifactGenerator copies the extracted
            // chart directory (`<source>/<path>/**`).
            check_oci_repository(bundle, repository, "extract")?;
            let source = by_kind("PackageSource")?;
            let package = by_kind("Package")?;
            only_fields(
                source,
                &[
                    "apiVersion",
                    "kind",
                    "metadata",
                    "metadata.name",
                    "metadata.annotations",
                    "metadata.annotations.operator.cozystack.io/skip-cozystack-values",
                    "spec",
                    "spec.sourceRef",
                    "spec.sourceRef.kind",
                    "spec.sourceRef.name",
                    "spec.sourceRef.namespace",
                    "spec.sourceRef.path",
                    "spec.variants",
                    "spec.variants.*",
                    "spec.variants.*.name",
                    "spec.variants.*.dependsOn",
                    "spec.variants.*.components",
                    "spec.variants.*.components.*",
                    "spec.variants.*.components.*.name",
                    "spec.variants.*.components.*.path",
                    "spec.variants.*.components.*.install",
                    "spec.variants.*.components.*.install.namespace",
                    "spec.variants.*.components.*.install.releaseName",
                ],
            )?;
            only_fields(
                package,
                &[
                    "apiVersion",
                    "kind",
                    "metadata",
                    "metadata.name",
                    "spec",
                    "spec.variant",
                    "spec.components",
                    "spec.components.cozystack-policies",
                    "spec.components.cozystack-policies.enabled",
                    "spec.components.cozystack-policies.values",
                ],
            )?;
            let component = &source["spec"]["variants"][0]["components"][0];
            let checks = [
                (
                    text_of(source, "/apiVersion") == "cozystack.io/v1alpha1",
                    "apiVersion",
                ),
                // The Package reconciler reads the PackageSource of its own name.
                (
                    text_of(source, "/metadata/name") == text_of(package, "/metadata/name"),
                    "the Package's name is the PackageSource's",
                ),
                (
                    text_of(source, "/spec/sourceRef/kind") == "OCIRepository",
                    "sourceRef.kind",
                ),
                (
                    text_of(source, "/spec/sourceRef/name")
                        == text_of(repository, "/metadata/name"),
                    "sourceRef.name",
                ),
                (
                    text_of(source, "/spec/sourceRef/namespace")
                        == text_of(repository, "/metadata/namespace"),
                    "sourceRef.namespace",
                ),
                // The extracted archive's one directory is the chart's name.
                (
                    text_of(component, "/path") == text_of(&bundle.chart, "/name"),
                    "the component's path is the chart's directory",
                ),
                (
                    text_of(component, "/install/namespace") == "kubewarden",
                    "the release goes to Kubewarden's namespace",
                ),
                (
                    text_of(component, "/name") == "cozystack-policies",
                    "the component's name",
                ),
                // No cozystack-values Secret exists in kubewarden: without
                // the annotation the HelmRelease would wait for one.
                (
                    text_of(
                        source,
                        "/metadata/annotations/operator.cozystack.io~1skip-cozystack-values",
                    ) == "true",
                    "skip-cozystack-values",
                ),
                (
                    text_of(&source["spec"]["variants"][0], "/name")
                        == text_of(package, "/spec/variant"),
                    "the Package's variant is the PackageSource's",
                ),
            ];
            for (ok, what) in checks {
                if !ok {
                    return Err(format!("{path}: {what}").into());
                }
            }
            package["spec"]["components"]["cozystack-policies"]["values"].clone()
        }
    };
    match helm.render(&[Render::with(values.clone())])?.pop() {
        Some(Rendered::Templates(_)) => Ok(()),
        Some(Rendered::Error(error)) => {
            Err(format!("{path}: Helm refuses the values {values}: {error}").into())
        }
        None => Err("no answer from Helm".into()),
    }
}

fn text_of<'v>(value: &'v Value, pointer: &str) -> &'v str {
    text(value, pointer)
}

/// policy-server runs the `every-value` rendering's policies as the
/// controller would configure them (modules from dist/): a policy the
/// values put in protect rejects the failing case it was given the settings
/// of, one in monitor allows it.
fn policy_server_serves(rendering: &Rendering) -> Result<(), Failed> {
    let Some(binary) = e2e::program("policy-server")? else {
        println!("policy-server is not on PATH: SKIPPED");
        return Ok(());
    };
    let objects = objects(rendering)?;
    let mut policies = BTreeMap::new();
    let mut shipped = BTreeMap::new();
    for manifest in policies_in(&objects) {
        let entry = e2e::deployed_entry(manifest)?;
        let id = e2e::deployed_id(manifest);
        let name = manifest.metadata.name.clone().unwrap_or_default();
        shipped.insert(name, (id.clone(), entry.clone()));
        policies.insert(id, entry);
    }
    let config = ServerConfig {
        binary,
        policies,
        trust_config: e2e::trust_config(),
        workers: Some(1),
        registry: None,
    };
    let dir = e2e::root().join("target/e2e/chart-policy-server");
    let server = PolicyServer::start(&config, &dir).map_err(|e| e.to_string())?;
    let mut asked = 0;
    for case in e2e::cases()? {
        let Some((id, entry)) = shipped.get(&case.policy) else {
            continue;
        };
        let expect = case.case.expectation(Runner::PolicyServer);
        if expect.result != ExpectedResult::Fail || !e2e::runs_with(&case, &entry.settings) {
            continue;
        }
        let review = admission_review(&case.case.request);
        let body = serde_json::to_vec(&review).map_err(|e| e.to_string())?;
        let response = server
            .post(id, &body)
            .map_err(|e| e.to_string())?
            .response()?;
        let protect = entry.policy_mode == PolicyMode::Protect;
        if response.allowed == protect {
            return Err(format!(
                "{} ({:?} mode): allowed = {}",
                case.id(),
                entry.policy_mode,
                response.allowed
            )
            .into());
        }
        asked += 1;
    }
    println!(
        "policy-server: {} policies as rendered, {asked} failing cases asked",
        shipped.len()
    );
    if asked == 0 {
        return Err("no failing case runs with the rendered settings".into());
    }
    Ok(())
}
