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
//!
//! Two more checks of the same application ([`pinned_name`], [`database`]):
//!
//! - the enforcing guard first refuses to render at all unless
//!   `seaweedfs.fullnameOverride` is exactly `seaweedfs` (`naming-guard.yaml`,
//!   `dig "fullnameOverride" ""`), whatever the naming class: the chart's
//!   `values.yaml` pins it, so only the `<name>-system` HelmRelease's own
//!   `spec.values` can change it (a `null` there deletes the pin);
//! - migration 53 (`migrations/53`, `lib/seaweedfs-db-adopt.sh`) hands the
//!   filer database `Cluster/seaweedfs-db` (`postgresql.cnpg.io`) of the
//!   namespace over to the `<name>-db` release and pins it with `keep`, but
//!   "cannot recover a Cluster that is ALREADY deleted": CNPG took the PVC
//!   with it, and with it the filer metadata of every object. A stored
//!   SeaweedFS (one with a `creationTimestamp`, as audit-scanner and a
//!   snapshot replay it) that is not `Client` has that Cluster, or has lost
//!   it.

use shared::lookup::{GetResource, ListByNamespace, LookupError, get_optional, list_items, text};
use shared::{Field, FieldError, FieldPath, Findings, Request, Value};

use crate::rules::{
    SEAWEEDFS_DB_DELETED, SEAWEEDFS_FULLNAME_OVERRIDE, SEAWEEDFS_NAMING,
    SEAWEEDFS_NAMING_NOT_CHECKED,
};
use crate::some;

pub const RELEASE_API_VERSION: &str = "helm.toolkit.fluxcd.io/v2";
pub const RELEASE_KIND: &str = "HelmRelease";
const PIN: &str = "spec.values.seaweedfs.fullnameOverride";
const PINNED: &str = "seaweedfs";
pub const DATABASE_API_VERSION: &str = "postgresql.cnpg.io/v1";
pub const DATABASE_KIND: &str = "Cluster";
pub const DATABASE: &str = "seaweedfs-db";

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

fn get<'a>(
    request: &'a Request<'_>,
    api_version: &'a str,
    kind: &'a str,
    name: &'a str,
    masks: &'a [&'a str],
) -> Result<Option<Value>, LookupError> {
    get_optional(
        request.cluster(),
        &GetResource {
            api_version,
            kind,
            name,
            namespace: Some(&request.namespace),
            disable_cache: false,
            field_masks: Some(masks),
        },
    )
}

/// A SeaweedFS application: everything the 1.6 upgrade needs of it.
pub fn judge(
    request: &Request<'_>,
    object: &Field<'_>,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let topology = object.at("spec.topology")?;
    if topology.string()? == Some("Client") || request.namespace.is_empty() {
        return Ok(());
    }
    // Each check reads the cluster on its own; one that could not read
    // leaves the others standing, and says so once.
    let unread = [
        naming_class(request, out),
        pinned_name(request, out),
        database(request, object, out),
    ]
    .into_iter()
    .find_map(Result::err);
    if let Some(error) = unread {
        out.add(
            SEAWEEDFS_NAMING_NOT_CHECKED,
            FieldPath::root(),
            format!("not checked: the cluster could not be read for the SeaweedFS upgrade checks: {error}"),
        );
    }
    Ok(())
}

/// The guard's pin, as the `<name>-system` release's values set it.
fn pinned_name(request: &Request<'_>, out: &mut Findings) -> Result<(), LookupError> {
    let release = format!("{}-system", request.name);
    let masks = [PIN];
    let Some(found) = get(request, RELEASE_API_VERSION, RELEASE_KIND, &release, &masks)? else {
        return Ok(());
    };
    let values = found.pointer("/spec/values/seaweedfs");
    let Some(set) = values.and_then(|v| v.get("fullnameOverride")) else {
        return Ok(());
    };
    if set.as_str() == Some(PINNED) {
        return Ok(());
    }
    out.add(
        SEAWEEDFS_FULLNAME_OVERRIDE,
        FieldPath::root(),
        format!(
            "HelmRelease {}/{release} sets {PIN} to {set}: the 1.6 system/seaweedfs chart refuses to render \
             unless it is {PINNED:?} (naming-guard.yaml), whatever the naming class. Remove it from the \
             HelmRelease's values before upgrading",
            request.namespace
        ),
    );
    Ok(())
}

/// The filer database migration 53 hands over, if it still exists.
fn database(
    request: &Request<'_>,
    object: &Field<'_>,
    out: &mut Findings,
) -> Result<(), LookupError> {
    let stored = object
        .at("metadata.creationTimestamp")
        .is_ok_and(|at| at.is_present());
    if !stored {
        return Ok(());
    }
    const NAME_MASK: &[&str] = &["metadata.name"];
    if get(
        request,
        DATABASE_API_VERSION,
        DATABASE_KIND,
        DATABASE,
        NAME_MASK,
    )?
    .is_some()
    {
        return Ok(());
    }
    out.add(
        SEAWEEDFS_DB_DELETED,
        FieldPath::root(),
        format!(
            "{} has no Cluster {}/{DATABASE} (postgresql.cnpg.io): its filer database is already deleted, \
             and with it the metadata of every object it stores. Migration 53 cannot recover a deleted \
             Cluster; restore the filer metadata from a backup before upgrading \
             (docs/operations/seaweedfs-431-rename-recovery.md)",
            request.describe(),
            request.namespace
        ),
    );
    Ok(())
}

/// The class its namespace's volumes make.
fn naming_class(request: &Request<'_>, out: &mut Findings) -> Result<(), LookupError> {
    let release = format!("{}-system", request.name);
    let prefix = renamed_volume_prefix(&release);
    let found = generations(request, &prefix)?;
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
