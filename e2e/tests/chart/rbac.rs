//! `<rendering>/audit-scanner`: audit-scanner's account gets exactly what
//! the enabled policies audit; `rbac/…`: beside the audit-scanner RBAC of
//! Kubewarden's chart and Kubernetes' `view` role (tests/data/rbac/),
//! evaluated with Kubernetes' RBAC rules and aggregation (`e2e::rbac`).

use std::collections::BTreeSet;

use e2e::manifests::Object;
use e2e::rbac::{Account, Grant, Rbac, Request};
use libtest_mimic::Failed;
use serde_json::Value;

use crate::{Bundle, Rendering, enabled, objects, read, text};

/// One grant: `verb` on `group/resource`, by name or not.
pub(crate) fn grant(group: &str, resource: &str, verb: &str, name: Option<&str>) -> Grant {
    (
        group.to_owned(),
        resource.to_owned(),
        verb.to_owned(),
        name.map(str::to_owned),
    )
}

/// Grants as a person reads them: `verb group/resource[name]`, sorted.
pub(crate) fn show_grants(grants: &BTreeSet<Grant>) -> String {
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
pub(crate) fn rendered_rbac(objects: &[Object]) -> Rbac {
    let (roles, bindings) = rbac_objects(objects);
    Rbac::new(roles, bindings)
}

pub(crate) fn rbac_objects(
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

/// The resources audit-scanner lists to audit the policies `values`
/// enable, from their metadata.yml, as audit-scanner reads their
/// ClusterAdmissionPolicies: a policy with backgroundAudit, each rule of it
/// with CREATE and no wildcard (kubewarden/audit-scanner
/// internal/policies/client.go: `filterWildcardRules`,
/// `filterNonCreateOperations`, `groupPoliciesByGVR`), as (group, plural).
pub(crate) fn audited(bundle: &Bundle, values: &Value) -> BTreeSet<(String, String)> {
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
pub(crate) fn audit_scanner(values: &Value) -> Account {
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
pub(crate) fn audit_scanner_reads_exactly_the_audited(
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
pub(crate) fn rbac_data(file: &str) -> Result<Vec<Object>, String> {
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
pub(crate) fn audit_scanner_reads_what_the_policies_audit(
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
