//! `guards/…`: the render refuses a namespace other than Kubewarden's, an
//! upgrade that renames the PolicyServer of installed policies, and one
//! that would put a policy in protect back in monitor.

use e2e::helm::{ClusterResource, Helm, Render, Rendered};
use libtest_mimic::Failed;
use serde_json::json;

use crate::{Bundle, REPORT_ONLY};

/// Installed anywhere but Kubewarden's namespace, the render stops and
/// says where to install.
pub(crate) fn kubewarden_namespace_guard(helm: &Helm) -> Result<(), Failed> {
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
pub(crate) fn policy_server_rename_guard(helm: &Helm, bundle: &Bundle) -> Result<(), Failed> {
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
pub(crate) fn protect_to_monitor_guard(helm: &Helm, bundle: &Bundle) -> Result<(), Failed> {
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
