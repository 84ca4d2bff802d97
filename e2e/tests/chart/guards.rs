//! `guards/…`: the render refuses a namespace other than Kubewarden's, and
//! an upgrade that renames the PolicyServer of installed policies.

use e2e::helm::{ClusterResource, Helm, Render, Rendered};
use libtest_mimic::Failed;
use serde_json::json;

use crate::Bundle;

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

/// `helm upgrade` that renames the PolicyServer of installed policies is
/// refused before anything is applied, naming the policies and the way
/// out; the same upgrade without the rename renders.
pub(crate) fn policy_server_rename_guard(helm: &Helm, bundle: &Bundle) -> Result<(), Failed> {
    let installed = |server: &str| {
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
                        "spec": {"policyServer": server, "mode": "monitor"},
                    })
                })
                .collect(),
        }]
    };
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
