//! The renderings every check runs over (`defaults`, `every-value`,
//! `disabled`, `label-removal`, `protect`, `fewer-policies`) with the values
//! each is given, and what only one of them shows: `every-value/…` (each
//! value reaches the manifests, every leaf of values.yaml is changed),
//! `label-removal/guard`, `disabled/nothing-optional`, and
//! `deploy/protect-overlay`.

use std::collections::BTreeSet;

use e2e::helm::{Helm, Render};
use libtest_mimic::Failed;
use reading::yaml::Limit;
use serde_json::{Value, json};
use testkit::case::{ExpectedResult, Runner};

use crate::{Bundle, REPORT_ONLY, Rendering, deploy_documents, merged, text, yaml};

/// A public key for the verification config, made for this test (the
/// rendering is checked, not verified against).
pub(crate) const TEST_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAErQSw7hcodCCLS7IID5lAbu2kPRq+\ncIG0jOYmK4pcWgz4dzSen8tIUIi4WrWz2fuvH16phgy+Dz/tJnQJW+KzRQ==\n-----END PUBLIC KEY-----\n";

/// The settings of a case of `policy` that the policy accepts and rejects
/// something with: the `every-value` rendering gives the policy those, so
/// policy-server can be asked the case.
pub(crate) fn settings_with_a_failing_case(policy: &str) -> Result<Value, String> {
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
pub(crate) const TEST_CERTIFICATE: &str =
    "-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIUTest\n-----END CERTIFICATE-----\n";

/// The namespace the `every-value` rendering installs into, and tells the
/// chart Kubewarden runs in.
pub(crate) const OTHER_NAMESPACE: &str = "kubewarden-system";

/// Every value of values.yaml changed (what `disabled` turns off aside).
pub(crate) fn every_value(bundle: &Bundle) -> Result<Value, String> {
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
pub(crate) fn renderings(bundle: &Bundle, helm: &Helm) -> Result<Vec<Rendering>, String> {
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

/// `kubectl apply -k deploy/protect` is the bundle with every policy in
/// protect mode and failing closed, but the report-only ones: the overlay's
/// patch applied to deploy/bundle/ as kustomize applies it (a JSON patch on
/// the ClusterAdmissionPolicies its label selector picks).
pub(crate) fn protect_overlay() -> Result<(), Failed> {
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
pub(crate) fn values_reach_the_manifests(rendering: &Rendering) -> Result<(), Failed> {
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
pub(crate) fn every_value_is_changed(bundle: &Bundle, rendering: &Rendering) -> Result<(), Failed> {
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
pub(crate) fn label_removal_guard(rendering: &Rendering) -> Result<(), Failed> {
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
pub(crate) fn nothing_optional(bundle: &Bundle, rendering: &Rendering) -> Result<(), Failed> {
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
