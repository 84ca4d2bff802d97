//! `scaffold-deploy`: a starting ClusterAdmissionPolicy for a new policy,
//! from its metadata, in the shape the chart's templates render: read with
//! Kubewarden's own type (the SDK's `crd` feature). The chart and `deploy/`,
//! rendered from it, are checked by `e2e/tests/chart.rs`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use kubewarden_policy_sdk::crd::policies::cluster_admission_policy::ClusterAdmissionPolicy;
use serde_json::json;
use shared::apps::PLATFORM_GROUPS;
use wasm_meta::Metadata;
use wasm_meta::metadata::{CATEGORY_ANNOTATION, OCI_URL_ANNOTATION, SEVERITY_ANNOTATION};

use crate::workspace::{self, PolicyCrate};

/// Print a starting ClusterAdmissionPolicy for a policy (from its
/// metadata), the shape of its template in
/// policies/<policy>/cluster-admission-policy.yaml.
#[derive(clap::Args)]
pub struct Args {
    pub policy: String,
}

pub fn run(root: &Path, Args { policy }: Args) -> Result<ExitCode> {
    let selected = workspace::select(workspace::policies(root)?, &[policy])?;
    for policy in selected {
        print!(
            "{}",
            serde_saphyr::to_string(&scaffold(&policy.metadata()?)?)?
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The PolicyServer the bundle's policies run on.
const POLICY_SERVER: &str = "cozystack-policies";
/// Where Kubewarden's Helm charts install it (and the PolicyServer's pods).
const KUBEWARDEN_NAMESPACE: &str = "kubewarden";

/// `registry://<ociUrl>:v<version>`, the module a policy's manifest loads.
fn module_reference(metadata: &Metadata) -> Result<String> {
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
fn platform_condition() -> (String, String) {
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
/// monitor mode (failing open, as the chart's monitor mode does), the
/// platform condition, the severity and category.
fn scaffold(metadata: &Metadata) -> Result<ClusterAdmissionPolicy> {
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
            "timeoutSeconds": metadata.timeout_seconds(),
            "failurePolicy": "Ignore",
        },
    });
    Ok(reading::typed::typed(&manifest)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_has_a_scaffold_its_type_holds() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for policy in workspace::policies(root).unwrap() {
            let manifest = scaffold(&policy.metadata().unwrap()).unwrap();
            assert_eq!(
                manifest.metadata.name.as_deref(),
                Some(policy.name.as_str())
            );
        }
    }
}
