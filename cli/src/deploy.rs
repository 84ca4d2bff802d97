//! A starting ClusterAdmissionPolicy for a new policy, from its metadata
//! (`scaffold-deploy <policy>`), in the shape the chart's templates render:
//! read with Kubewarden's own type (the SDK's `crd` feature). The chart and
//! `deploy/`, rendered from it, are checked by `e2e/tests/chart.rs`.

use anyhow::{Context, Result, bail};
pub use kubewarden_policy_sdk::crd::policies::cluster_admission_policy::ClusterAdmissionPolicy;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use shared::catalogue::PLATFORM_GROUPS;
use wasm_meta::Metadata;

use crate::push::OCI_URL_ANNOTATION;

/// The PolicyServer the bundle's policies run on.
pub const POLICY_SERVER: &str = "cozystack-policies";
/// Where Kubewarden's Helm charts install it (and the PolicyServer's pods).
pub const KUBEWARDEN_NAMESPACE: &str = "kubewarden";
pub const SEVERITY_ANNOTATION: &str = "io.kubewarden.policy.severity";
pub const CATEGORY_ANNOTATION: &str = "io.kubewarden.policy.category";

/// `value` read as `T`, which must hold all of it ([`reading::typed`]).
pub fn typed<T: for<'de> Deserialize<'de> + Serialize>(value: &Value) -> Result<T> {
    Ok(reading::typed::typed(value)?)
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
pub fn platform_condition() -> (String, String) {
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
pub fn scaffold(metadata: &Metadata) -> Result<ClusterAdmissionPolicy> {
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
            "timeoutSeconds": if metadata.context_aware_resources.is_empty() { 5 } else { 10 },
            "failurePolicy": "Ignore",
        },
    });
    typed(&manifest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace;
    use crate::workspace::PolicyCrate;
    use std::path::Path;

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
