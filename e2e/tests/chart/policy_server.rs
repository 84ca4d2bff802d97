//! `<rendering>/policy-server`: the PolicyServer, its RBAC and network
//! policy can serve the bundle; `policy-server/every-value`: policy-server
//! started with the `every-value` rendering's policies runs each in the
//! mode and with the settings the values gave it.

use std::collections::{BTreeMap, BTreeSet};

use e2e::manifests::Object;
use e2e::policy_server::{PolicyMode, PolicyServer, ServerConfig, admission_review};
use e2e::rbac::{Account, Grant};
use libtest_mimic::Failed;
use serde_json::Value;
use testkit::case::{ExpectedResult, Runner};

use crate::rbac::{audit_scanner, grant, rendered_rbac, show_grants};
use crate::{Bundle, Rendering, enabled, objects, policies_in, text};

/// The PolicyServer exists, runs as a service account that may read what
/// the enabled context-aware policies look up and nothing else, and is
/// reachable from cozy-system.
pub(crate) fn policy_server_serves_the_bundle(
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

/// policy-server runs the `every-value` rendering's policies as the
/// controller would configure them (modules from dist/): a policy the
/// values put in protect rejects the failing case it was given the settings
/// of, one in monitor allows it.
pub(crate) fn policy_server_serves(rendering: &Rendering) -> Result<(), Failed> {
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
    let server = PolicyServer::start(&config, &dir).map_err(|e| testkit::with_causes(&e))?;
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
            .map_err(|e| testkit::with_causes(&e))?
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
