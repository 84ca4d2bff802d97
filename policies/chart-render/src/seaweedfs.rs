//! The preflight checks of `packages/extra/seaweedfs/templates/
//! seaweedfs.yaml` (lines 1–75, v1.6.2): what each topology needs, and the
//! storage pools' names and disk types. (The topology enum is
//! values-schema's.) On UPDATE, the topology the release was deployed
//! with (`templates/cm.yaml` records it in `<release>-deployed-topology`,
//! which line 80 looks up) may not change (line 92).

use shared::{Field, FieldError};

use shared::Findings;

use crate::skip_wrong_types;
use crate::values::{int_or, truthy};

/// The chart defaults.
const DEFAULT_TOPOLOGY: &str = "Simple";
const DEFAULT_REPLICATION: i64 = 2;

/// `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$` (no length limit, unlike a label).
fn is_label_shape(name: &str) -> bool {
    let bytes = name.as_bytes();
    let inner = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
    let edge = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    bytes.iter().all(inner) && edge(bytes.first()) && edge(bytes.last())
}

/// `^[a-z0-9]+$`
fn is_disk_type(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// `seaweedfs.yaml` (79–93): the topology recorded at the first deployment
/// is the stored object's (absent, the chart default); the chart refuses
/// any other.
pub fn topology_change(
    old: &Field<'_>,
    new: &Field<'_>,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let before = old.field("topology")?.string()?.unwrap_or(DEFAULT_TOPOLOGY);
    let field = new.field("topology")?;
    let after = field.string()?.unwrap_or(DEFAULT_TOPOLOGY);
    if before != after {
        out.add(
            crate::rules::SEAWEEDFS_TOPOLOGY_CHANGE,
            field.path(),
            format!(
                "Not allowed to switch between topologies after the first deployment: {before} (the chart records \
                 the deployed topology and fails to render with {after}). Keep {before}, or create a new SeaweedFS."
            ),
        );
    }
    Ok(())
}

/// Every rule over a SeaweedFS spec.
pub fn check(spec: &Field<'_>, out: &mut Findings) {
    skip_wrong_types(topology(spec, out));
    skip_wrong_types(pools(spec, out));
}

fn deny(out: &mut Findings, field: &Field<'_>, message: impl std::fmt::Display) {
    out.add(
        crate::rules::SEAWEEDFS_TOPOLOGY,
        field.path(),
        format!("{message} (the chart fails to render)."),
    );
}

/// What each topology needs.
fn topology(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let [topology, replication, filer, volume] =
        spec.members(["topology", "replicationFactor", "filer", "volume"])?;
    let kind = topology.string_or(DEFAULT_TOPOLOGY)?;
    let host = filer.field("grpcHost")?;
    if kind == "Client" && !truthy(host.json()) {
        deny(
            out,
            &host,
            "When topology is 'Client', .Values.filer.grpcHost must be set to a valid remote filer GRPC service \
             endpoint. Set filer.grpcHost",
        );
    }
    let factor = int_or(&replication, DEFAULT_REPLICATION)?;
    if factor < 1 {
        deny(
            out,
            &replication,
            format!(
                "Invalid value for .Values.replicationFactor. Must be at least 1, got {factor}"
            ),
        );
    }
    let [zones, pools] = volume.members(["zones", "pools"])?;
    let zone_count = zones.entries()?.len();
    if kind == "MultiZone" {
        if zone_count == 0 {
            deny(
                out,
                &zones,
                "Zones must be defined for MultiZone topology. Define volume.zones, one entry per zone",
            );
        } else if i64::try_from(zone_count).is_ok_and(|zones| factor > zones) {
            deny(
                out,
                &replication,
                format!(
                    "replicationFactor must be less than or equal to the number of zones defined in \
                     .Values.volume.zones ({factor} > {zone_count}). Lower it or add zones"
                ),
            );
        }
    }
    if !pools.entries()?.is_empty() {
        match kind {
            "Client" => deny(
                out,
                &pools,
                "volume.pools is not supported with Client topology. Remove volume.pools",
            ),
            "MultiZone" => deny(
                out,
                &pools,
                "volume.pools is not supported with MultiZone topology. Use volume.zones[name].pools instead",
            ),
            _ => {}
        }
    }
    Ok(())
}

fn deny_pool(out: &mut Findings, field: &Field<'_>, message: impl std::fmt::Display) {
    out.add(
        crate::rules::SEAWEEDFS_POOL,
        field.path(),
        format!("{message} (the chart fails to render)."),
    );
}

/// One pool's name and disk type; `prefix` names it as the messages do
/// (`volume.pools`, `volume.zones.<z>.pools`). Its disk type, when valid.
fn pool<'a>(
    prefix: &str,
    name: &str,
    pool: &Field<'a>,
    default_disk: &str,
    out: &mut Findings,
) -> Result<Option<&'a str>, FieldError> {
    if !is_label_shape(name) {
        let what = if prefix == "volume.pools" {
            "must be a valid DNS label (lowercase alphanumeric and hyphens, no dots)"
        } else {
            "must be a valid DNS label"
        };
        deny_pool(
            out,
            pool,
            format!("{prefix} key '{name}' {what}. Rename the pool"),
        );
        return Ok(None);
    }
    if name.ends_with("-lock") || name.ends_with("-readonly") {
        deny_pool(
            out,
            pool,
            format!(
                "{prefix} key '{name}' must not end with '-lock' or '-readonly' (reserved suffixes for COSI \
                 resources). Rename the pool"
            ),
        );
        return Ok(None);
    }
    let disk = pool.field("diskType")?;
    let Some(value) = disk.string()?.filter(|d| !d.is_empty()) else {
        deny_pool(
            out,
            &disk,
            format!("{prefix}.{name}.diskType is required. Set it (e.g. ssd, hdd, nvme)"),
        );
        return Ok(None);
    };
    if !is_disk_type(value) {
        deny_pool(
            out,
            &disk,
            format!("{prefix}.{name}.diskType must be lowercase alphanumeric (got: {value})"),
        );
        return Ok(None);
    }
    if !default_disk.is_empty() && value == default_disk {
        deny_pool(
            out,
            &disk,
            format!(
                "{prefix}.{name}.diskType '{value}' must differ from volume.diskType. Give the pool another disk type"
            ),
        );
        return Ok(None);
    }
    Ok(Some(value))
}

/// The disk types and the pools of `volume.pools` and, for MultiZone,
/// of each zone.
fn pools(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let [topology, volume] = spec.members(["topology", "volume"])?;
    let [disk, pools, zones] = volume.members(["diskType", "pools", "zones"])?;
    let default_disk = disk.string()?.unwrap_or_default();
    if !default_disk.is_empty() && !is_disk_type(default_disk) {
        deny_pool(
            out,
            &disk,
            format!("volume.diskType must be lowercase alphanumeric (got: {default_disk})"),
        );
    }
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (name, field) in pools.entries()? {
        if let Some(disk) = pool("volume.pools", name, &field, default_disk, out)? {
            seen.push((name, disk));
        }
    }
    if topology.string_or(DEFAULT_TOPOLOGY)? != "MultiZone" {
        return Ok(());
    }
    let zone_entries = zones.entries()?;
    for (zone, zone_field) in &zone_entries {
        for (name, field) in zone_field.field("pools")?.entries()? {
            let prefix = format!("volume.zones.{zone}.pools");
            let Some(disk) = pool(&prefix, name, &field, default_disk, out)? else {
                continue;
            };
            if let Some((_, expected)) = seen.iter().find(|(n, _)| *n == name)
                && *expected != disk
            {
                deny_pool(
                    out,
                    &field.field("diskType")?,
                    format!(
                        "Pool '{name}' has inconsistent diskType across zones (expected '{expected}', got '{disk}' in \
                         zone '{zone}'). Use one disk type per pool name"
                    ),
                );
            } else {
                seen.push((name, disk));
            }
            let composed = format!("{zone}-{name}");
            if zone_entries.iter().any(|(other, _)| *other == composed) {
                deny_pool(
                    out,
                    &field,
                    format!(
                        "Composed volume name '{composed}' (from zone '{zone}' and pool '{name}') collides with an \
                         existing zone name. Rename the pool or the zone"
                    ),
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_disk_types() {
        assert!(is_label_shape("ssd"));
        assert!(is_label_shape("a-1"));
        assert!(is_label_shape(&"a".repeat(80)));
        for bad in ["", "SSD", "a.b", "-a", "a-", "a_b"] {
            assert!(!is_label_shape(bad), "{bad}");
        }
        assert!(is_disk_type("nvme1"));
        assert!(!is_disk_type("s-d"));
        assert!(!is_disk_type(""));
    }
}
