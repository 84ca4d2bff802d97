//! `schema/…`: values.schema.json accepts the settings of every case a
//! policy accepts, refuses mistakes with the key named, and refuses the
//! invalid-settings cases it can express.

use std::collections::BTreeSet;

use e2e::helm::{Helm, Render, Rendered};
use libtest_mimic::Failed;
use serde_json::{Value, json};
use testkit::case::{ExpectedResult, Runner};

/// The values that give `policy` these settings.
pub(crate) fn with_settings(policy: &str, settings: &Value) -> Render {
    Render::with(json!({"policies": {policy: {"settings": settings}}}))
}

/// Every case's settings the policy accepts, the chart accepts.
pub(crate) fn accepts_every_accepted_case(helm: &Helm) -> Result<(), Failed> {
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
pub(crate) fn refuses_invalid_settings(helm: &Helm) -> Result<(), Failed> {
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
pub(crate) fn refuses_mistakes(helm: &Helm) -> Result<(), Failed> {
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
            json!({"policies": {"no-delete": {"timeoutEvalSeconds": 6}}}),
            "/policies/no-delete/timeoutEvalSeconds",
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
