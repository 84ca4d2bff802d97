//! `monitor/…`: monitor mode never rejects, not even when the
//! policy-server does not answer, and the chart-wide `mode: protect`
//! protects every policy but the report-only ones.

use std::collections::BTreeMap;

use libtest_mimic::Failed;
use serde_json::Value;

use crate::{Bundle, REPORT_ONLY, Rendering, text};

/// The ClusterAdmissionPolicies of a rendering, by name, as JSON.
pub(crate) fn policy_documents(rendering: &Rendering) -> Result<BTreeMap<String, Value>, Failed> {
    let documents = rendering.documents.as_ref().map_err(Clone::clone)?;
    Ok(documents
        .iter()
        .filter(|d| d["kind"] == "ClusterAdmissionPolicy")
        .map(|d| (text(d, "/metadata/name").to_owned(), d.clone()))
        .collect())
}

/// With the defaults, every policy is in monitor mode and fails open: a
/// policy-server that is down, slow or refuses a request rejects nothing.
pub(crate) fn monitor_never_rejects(bundle: &Bundle, rendering: &Rendering) -> Result<(), Failed> {
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
pub(crate) fn protect_spares_the_report_only_policies(
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
