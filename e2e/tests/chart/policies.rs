//! `<rendering>/policies`: each ClusterAdmissionPolicy follows its policy's
//! metadata.yml, and its mode, failure policy, selectors, module and
//! settings follow the values.

use e2e::manifests::Object;
use kubewarden_policy_sdk::crd::policies::common::PolicyMode as CrdMode;
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::{Bundle, REPORT_ONLY, Rendering, enabled, policies_in, text};

pub(crate) const PLATFORM_CONDITION: &str = "!request.userInfo.groups.exists(g, g in ['system:serviceaccounts:cozy-system', 'system:serviceaccounts:cozy-fluxcd'])";

/// The module reference the values give a policy.
pub(crate) fn expected_module(bundle: &Bundle, values: &Value, policy: &str) -> String {
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

/// The mode the values give `policy`: its own, else monitor for a
/// report-only policy and the chart's for the others.
pub(crate) fn expected_mode<'v>(values: &'v Value, policy: &str) -> &'v str {
    match values["policies"][policy]["mode"].as_str() {
        Some(mode) => mode,
        None if REPORT_ONLY.contains(&policy) => "monitor",
        None => text(values, "/mode"),
    }
}

/// The failurePolicy the values give `policy`: its own, else Ignore in
/// monitor (monitor never rejects) and Fail in protect.
pub(crate) fn expected_failure_policy<'v>(values: &'v Value, policy: &str) -> &'v str {
    match values["policies"][policy]["failurePolicy"].as_str() {
        Some(given) => given,
        None if expected_mode(values, policy) == "protect" => "Fail",
        None => "Ignore",
    }
}

/// The namespaceSelector the values give `policy`: its own, else `NotIn`
/// the chart's skipped namespaces and Kubewarden's (no-delete: none of
/// them) and its own; none when nothing is left out.
pub(crate) fn expected_namespace_selector(values: &Value, policy: &str) -> Value {
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
pub(crate) fn settings_sent(bundle: &Bundle, values: &Value, policy: &str) -> Value {
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
pub(crate) fn policies_follow_metadata(
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
                testkit::with_causes(&error)
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
