//! SeaweedFS naming classes: the 1.6 chart's guard, before it runs.
//!
//! Source: the v1.6 release notes, pre-upgrade check 2 ("two states cannot
//! be adopted automatically and the chart fails the render rather than
//! guess: class S (installed fresh on 1.5.x, data on
//! data1-seaweedfs-system-volume-* PVCs) and class MIXED (both naming
//! generations present) ... Class L needs nothing."), and the guard itself
//! at v1.6.2, `packages/extra/seaweedfs/templates/seaweedfs.yaml` (the
//! copy that warns on the application) and
//! `packages/system/seaweedfs/templates/naming-guard.yaml` (the enforcing
//! copy, rendered for the `<name>-system` release):
//!
//! - the release-named generation is named after `<name>-system`, through
//!   `seaweedfs.renamedVolumePrefix` (`_naming.tpl`, [`renamed_volume_prefix`]);
//! - a PVC whose name starts with `data1-<prefix>` is of that generation, one
//!   starting with `data1-seaweedfs-volume` of the chart-named one;
//! - a StatefulSet labelled `app.kubernetes.io/name: seaweedfs` whose name
//!   starts with `<prefix>` is of the release-named generation, one
//!   starting with `seaweedfs-volume` of the chart-named one;
//! - both generations: class MIXED, refused; the release-named one alone:
//!   class S, refused; the chart-named one alone (class L) or neither: the
//!   render adopts it;
//! - topology `Client` runs no guard.
//!
//! One list of the namespace's PVCs (names only) and one of its SeaweedFS
//! StatefulSets (by the same label, names only).

use shared::lookup::{ListByNamespace, LookupError, list_items, text};
use shared::{Field, FieldError, FieldPath, Findings, Request};

use crate::rules::{SEAWEEDFS_NAMING, SEAWEEDFS_NAMING_NOT_CHECKED};
use crate::some;

pub const KIND: &str = "SeaweedFS";
const NAME_MASK: &[&str] = &["metadata.name"];
pub const STATEFULSET_SELECTOR: &str = "app.kubernetes.io/name=seaweedfs";
const CHART_NAMED_VOLUME: &str = "seaweedfs-volume";
const RUNBOOK: &str = "docs/operations/seaweedfs-431-rename-recovery.md";

/// `trunc n` of Sprig: the first `n` characters.
fn trunc(text: &str, n: usize) -> &str {
    text.char_indices()
        .nth(n)
        .and_then(|(at, _)| text.get(..at))
        .unwrap_or(text)
}

/// `seaweedfs.renamedVolumePrefix` of `_naming.tpl`: the name 4.31 gives
/// the volume component of the `<release>` release.
pub fn renamed_volume_prefix(release: &str) -> String {
    let full = if release.contains("seaweedfs") {
        release.to_owned()
    } else {
        format!("{release}-seaweedfs")
    };
    let full = trunc(&full, 63);
    let full = full.strip_suffix('-').unwrap_or(full);
    let cut = trunc(full, 56);
    format!("{}-volume", cut.strip_suffix('-').unwrap_or(cut))
}

/// Which naming generations a namespace holds.
#[derive(Debug, Default, PartialEq, Eq)]
struct Generations {
    /// The chart-named set (`seaweedfs-volume`, `data1-seaweedfs-volume-*`).
    chart_named: Vec<String>,
    /// The release-named set.
    release_named: Vec<String>,
}

fn names(
    request: &Request<'_>,
    api_version: &str,
    kind: &str,
    selector: Option<&str>,
) -> Result<Vec<String>, LookupError> {
    let answer = request.cluster().list_by_namespace(&ListByNamespace {
        api_version,
        kind,
        namespace: &request.namespace,
        label_selector: selector,
        field_selector: None,
        field_masks: Some(NAME_MASK),
    })?;
    let mut found = Vec::new();
    for item in list_items(&answer)? {
        if let Some(name) = text(&item, "metadata.name")? {
            found.push(name.to_owned());
        }
    }
    Ok(found)
}

fn generations(request: &Request<'_>, prefix: &str) -> Result<Generations, LookupError> {
    let mut found = Generations::default();
    let release_claim = format!("data1-{prefix}");
    let chart_claim = format!("data1-{CHART_NAMED_VOLUME}");
    for claim in names(request, "v1", "PersistentVolumeClaim", None)? {
        if claim.starts_with(&release_claim) {
            found
                .release_named
                .push(format!("PersistentVolumeClaim {claim}"));
        } else if claim.starts_with(&chart_claim) {
            found
                .chart_named
                .push(format!("PersistentVolumeClaim {claim}"));
        }
    }
    let sets = names(
        request,
        "apps/v1",
        "StatefulSet",
        Some(STATEFULSET_SELECTOR),
    )?;
    for set in sets {
        if set.starts_with(prefix) {
            found.release_named.push(format!("StatefulSet {set}"));
        } else if set.starts_with(CHART_NAMED_VOLUME) {
            found.chart_named.push(format!("StatefulSet {set}"));
        }
    }
    Ok(found)
}

/// A SeaweedFS application: the class its namespace's volumes make.
pub fn naming_class(
    request: &Request<'_>,
    object: &Field<'_>,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let topology = object.at("spec.topology")?;
    if topology.string()? == Some("Client") || request.namespace.is_empty() {
        return Ok(());
    }
    let release = format!("{}-system", request.name);
    let prefix = renamed_volume_prefix(&release);
    let found = match generations(request, &prefix) {
        Ok(found) => found,
        Err(error) => {
            out.add(
                SEAWEEDFS_NAMING_NOT_CHECKED,
                FieldPath::root(),
                format!("the naming class was not checked: {error}"),
            );
            return Ok(());
        }
    };
    let what = request.describe();
    match (found.chart_named.is_empty(), found.release_named.is_empty()) {
        (false, false) => out.add(
            SEAWEEDFS_NAMING,
            FieldPath::root(),
            format!(
                "{what} is class MIXED: both naming generations exist, chart-named ({}) and release-named \
                 ({}). The 1.6 chart refuses to render it, as one generation is an empty duplicate and a \
                 render cannot tell which. Classify it and delete the empty generation before upgrading \
                 ({RUNBOOK}, Step 1, then Step 2, 2a or 3)",
                some(&found.chart_named),
                some(&found.release_named)
            ),
        ),
        (true, false) => out.add(
            SEAWEEDFS_NAMING,
            FieldPath::root(),
            format!(
                "{what} is class S: its data is on volumes named after the release {release} ({}), and \
                 the 1.6 chart renames the workloads to seaweedfs-* away from them, so it refuses to \
                 render. Re-bind the PVs onto data1-{CHART_NAMED_VOLUME}-* claims before upgrading \
                 ({RUNBOOK}, Step 2)",
                some(&found.release_named)
            ),
        ),
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_follows_the_chart_helper() {
        assert_eq!(
            renamed_volume_prefix("seaweedfs-system"),
            "seaweedfs-system-volume"
        );
        assert_eq!(
            renamed_volume_prefix("foo-system"),
            "foo-system-seaweedfs-volume"
        );
        // Long names lose `seaweedfs` from the tail at 56 characters.
        let long = format!("{}-system", "a".repeat(45));
        let prefix = renamed_volume_prefix(&long);
        assert_eq!(prefix.len(), 56 + "-volume".len());
        assert!(!prefix.contains("seaweedfs"), "{prefix}");
        // A cut that ends in a dash loses it, as trimSuffix does.
        let dashed = format!("{}-x-system", "b".repeat(54));
        assert_eq!(
            renamed_volume_prefix(&dashed),
            format!("{}-volume", "b".repeat(54) + "-x")
        );
        let at_dash = format!("{}-{}", "c".repeat(55), "system");
        assert_eq!(
            renamed_volume_prefix(&at_dash),
            format!("{}-volume", "c".repeat(55))
        );
    }
}
