//! The management cluster's Kubernetes version.
//!
//! Source: the v1.6 release notes, pre-upgrade check 6: "Coming from
//! v1.4.x? The v1.5.0 requirement still applies: Kubernetes 1.33 or newer on
//! the management cluster and on any tenant cluster enabling the Flux
//! addon." Each Node reports its kubelet's version in
//! `status.nodeInfo.kubeletVersion` (`v1.33.4`, `v1.33.4+k3s1`); a node
//! below 1.33 is a management cluster the upgrade does not support. Tenant
//! clusters with the Flux addon are chart-render's `flux-minimum-version`.

use shared::{Field, FieldError, Finding, Request};

use crate::Settings;
use crate::rules::MANAGEMENT_KUBERNETES_VERSION;

/// The oldest minor the release supports.
const MINIMUM: (u64, u64) = (1, 33);

/// `v1.33.4+k3s1` as `(1, 33)`; `None` when it is not a version.
fn minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.strip_prefix('v').unwrap_or(version).split('.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().ok()?))
}

/// A Node: is its kubelet new enough for the release?
pub fn kubelet_version(
    _: &Request<'_>,
    object: &Field<'_>,
    _: &Settings,
) -> Result<Vec<Finding>, FieldError> {
    let version = object.at("status.nodeInfo.kubeletVersion")?;
    let Some(text) = version.string()? else {
        return Ok(Vec::new());
    };
    match minor(text) {
        Some(found) if found < MINIMUM => Ok(vec![Finding::new(
            MANAGEMENT_KUBERNETES_VERSION,
            version.path(),
            format!(
                "{text} is below Kubernetes 1.33, which Cozystack needs on the management cluster since \
                 1.5.0 (1.6 release notes, pre-upgrade check 6): upgrade the node's Kubernetes first"
            ),
        )]),
        _ => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_kubelets_report_them() {
        assert_eq!(minor("v1.33.4"), Some((1, 33)));
        assert_eq!(minor("v1.32.9+k3s1"), Some((1, 32)));
        assert_eq!(minor("v1.34.0-rc.1"), Some((1, 34)));
        assert_eq!(minor("1.31"), Some((1, 31)));
        assert_eq!(minor("latest"), None);
        assert_eq!(minor("v1"), None);
    }
}
