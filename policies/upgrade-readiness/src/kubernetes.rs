//! Tenant Kubernetes clusters still on v1.30.
//!
//! Source: the v1.6 release notes
//! (`../shared/seeds/cozystack-1.6-release-notes.en.txt`), pre-upgrade check
//! 3: "v1.30 leaves the Talos-to-Kubernetes support matrix and the chart
//! refuses to render it. Migration 46 patches live CRs to v1.31, but a
//! GitOps-managed CR is overwritten again by the next source reconcile — so
//! bump spec.version in Git." The enum of `spec.version` in
//! `packages/apps/kubernetes/values.schema.json` holds v1.30 at v1.5.4 and
//! not at v1.6.2; v1.6.2's `migrations/46` bumps it through the apps API.
//!
//! A warning, not a violation: the migration bumps the stored object, so
//! the upgrade itself goes through; what fails is a GitOps source that
//! writes v1.30 back afterwards, which this policy cannot see. Only before
//! the upgrade (`cozystackVersion` a v1.5 release, or `cluster` on a v1.5
//! cluster): on v1.6 the chart refuses v1.30 and chart-render denies it
//! (`removed-version`) with the same advice.

use release::Resolved;
use shared::{Field, FieldError, FieldPath, Request};

use shared::Finding;

use crate::Settings;

/// The version 1.6 removes.
const REMOVED: &str = "v1.30";

/// A Kubernetes on v1.30.
pub fn removed_version(
    request: &Request<'_>,
    object: &Field<'_>,
    settings: &Settings,
) -> Result<Vec<Finding>, FieldError> {
    let version = object.at("spec.version")?;
    if version.string()? != Some(REMOVED) {
        return Ok(Vec::new());
    }
    let resolved = settings.cozystack_version.resolve(request.cluster());
    if let Some(note) = resolved.note(env!("CARGO_PKG_NAME"), "the charts") {
        return Ok(vec![Finding::new(
            crate::rules::RELEASE_NOT_CHECKED,
            FieldPath::root(),
            note,
        )]);
    }
    let before_the_upgrade = match resolved {
        Resolved::Known(release) => release.line() == Some((1, 5)),
        _ => false,
    };
    if !before_the_upgrade {
        return Ok(Vec::new());
    }
    Ok(vec![Finding::new(
        crate::rules::KUBERNETES_V1_30,
        version.path(),
        "v1.30 is removed in Cozystack 1.6 and its chart refuses to render it; migration 46 bumps it \
         to v1.31, but a GitOps source would write v1.30 back: bump spec.version to v1.31 in Git first",
    )])
}
