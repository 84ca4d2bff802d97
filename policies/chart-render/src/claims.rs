//! Values a chart writes into a StatefulSet's `volumeClaimTemplates`, which
//! kube-apiserver does not let an update change (`ValidateStatefulSetUpdate`
//! allows only replicas, ordinals, template, updateStrategy,
//! persistentVolumeClaimRetentionPolicy and minReadySeconds): an UPDATE that
//! changes one renders, and the Helm upgrade then fails to apply. Found by
//! the oracle's updates (docs/oracle.md, "Updates"), in both releases:
//!
//! - Harbor `trivy.size` (`system/harbor`, `trivy/trivy-sts.yaml`), while
//!   trivy is enabled;
//! - NATS `jetstream.size` (`system/nats`, `stateful-set.yaml`), while
//!   JetStream is enabled;
//! - OpenBAO `size` (`system/openbao`, `server-statefulset.yaml`);
//! - Qdrant `size` (`system/qdrant`, `statefulset.yaml`);
//! - SeaweedFS volume servers (`extra/seaweedfs/templates/seaweedfs.yaml`
//!   246–310): `volume.size`/`storageClass`, and per pool and zone, each
//!   defaulting to the level above.
//!
//! The top-level `storageClass` of the other kinds is storageclass-immutable's.

use shared::{Field, FieldError, FieldPath, Findings, Value};

/// One volume claim template as the chart renders it: where its size and
/// class come from, and their values (`toString`, chart defaults applied).
struct Claim {
    /// Which StatefulSet, for the message: `trivy`, `pool fast`.
    of: String,
    size: (FieldPath, String),
    class: Option<(FieldPath, String)>,
}

/// `{{ .Values.x }}` as the chart writes it: absent, the chart default; a
/// `null` deletes the key and its default (Helm's coalescing), so nothing;
/// else the value's `toString`.
fn rendered(field: &Field<'_>, default: &str) -> String {
    match field.json() {
        None if field.is_null() => String::new(),
        None => default.to_owned(),
        Some(Value::String(text)) => text.clone(),
        Some(value) => sprig::to_string(value).unwrap_or_else(|| value.to_string()),
    }
}

fn enabled(field: &Field<'_>) -> Result<bool, FieldError> {
    Ok(field.bool()? != Some(false))
}

/// `x | default y`: the field when set (non-empty), else what it defaults to.
fn layered(
    field: Field<'_>,
    fallback: &(FieldPath, String),
) -> Result<(FieldPath, String), FieldError> {
    Ok(match field.string()?.filter(|s| !s.is_empty()) {
        Some(value) => (field.path(), value.to_owned()),
        None => fallback.clone(),
    })
}

fn claims(kind: &str, spec: &Field<'_>) -> Result<Vec<Claim>, FieldError> {
    let single = |of: &str, field: Field<'_>, default: &str| -> Result<Vec<Claim>, FieldError> {
        Ok(vec![Claim {
            of: of.to_owned(),
            size: (field.path(), rendered(&field, default)),
            class: None,
        }])
    };
    match kind {
        "Harbor" => {
            let trivy = spec.field("trivy")?;
            if enabled(&trivy.field("enabled")?)? {
                single("trivy", trivy.field("size")?, "5Gi")
            } else {
                Ok(Vec::new())
            }
        }
        "NATS" => {
            let jetstream = spec.field("jetstream")?;
            if enabled(&jetstream.field("enabled")?)? {
                single("the NATS servers", jetstream.field("size")?, "10Gi")
            } else {
                Ok(Vec::new())
            }
        }
        "OpenBAO" => single("the OpenBAO servers", spec.field("size")?, "10Gi"),
        "Qdrant" => single("the Qdrant nodes", spec.field("size")?, "10Gi"),
        "SeaweedFS" => seaweedfs(spec),
        _ => Ok(Vec::new()),
    }
}

/// `seaweedfs.yaml` (246–310): the volume servers of each topology.
fn seaweedfs(spec: &Field<'_>) -> Result<Vec<Claim>, FieldError> {
    let topology = spec
        .field("topology")?
        .string()?
        .unwrap_or("Simple")
        .to_owned();
    let volume = spec.field("volume")?;
    let size = volume.field("size")?;
    let base_size = (size.path(), rendered(&size, "10Gi"));
    let class = volume.field("storageClass")?;
    let base_class = (class.path(), rendered(&class, ""));
    let mut out = Vec::new();
    let entry =
        |of: String, at: &Field<'_>, size: &(FieldPath, String), class: &(FieldPath, String)| {
            Ok::<Claim, FieldError>(Claim {
                of,
                size: layered(at.field("size")?, size)?,
                class: Some(layered(at.field("storageClass")?, class)?),
            })
        };
    match topology.as_str() {
        "Simple" => {
            out.push(Claim {
                of: "the volume servers".to_owned(),
                size: base_size.clone(),
                class: Some(base_class.clone()),
            });
            for (name, pool) in volume.field("pools")?.entries()? {
                out.push(entry(
                    format!("pool {name}"),
                    &pool,
                    &base_size,
                    &base_class,
                )?);
            }
        }
        "MultiZone" => {
            for (zone_name, zone) in volume.field("zones")?.entries()? {
                let zone_claim =
                    entry(format!("zone {zone_name}"), &zone, &base_size, &base_class)?;
                let zone_class = zone_claim
                    .class
                    .clone()
                    .unwrap_or_else(|| base_class.clone());
                for (pool_name, pool) in zone.field("pools")?.entries()? {
                    out.push(entry(
                        format!("zone {zone_name} pool {pool_name}"),
                        &pool,
                        &zone_claim.size,
                        &zone_class,
                    )?);
                }
                out.push(zone_claim);
            }
        }
        _ => {}
    }
    Ok(out)
}

/// UPDATE from `old` to `new` of `kind`: every claim both render whose size
/// or class changes.
pub fn changes(
    kind: &str,
    old: &Field<'_>,
    new: &Field<'_>,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let before = claims(kind, old)?;
    for claim in claims(kind, new)? {
        let Some(stored) = before.iter().find(|c| c.of == claim.of) else {
            continue;
        };
        let pairs = [
            ("size", Some(&stored.size), Some(&claim.size)),
            ("storage class", stored.class.as_ref(), claim.class.as_ref()),
        ];
        for (what, from, to) in pairs {
            let (Some((_, from)), Some((path, to))) = (from, to) else {
                continue;
            };
            if from != to {
                out.add(
                    crate::rules::VOLUME_CLAIM_TEMPLATE,
                    path.clone(),
                    format!(
                        "the {what} of {of} changes from {from:?} to {to:?}, but the chart writes it into the \
                         volumeClaimTemplates of a StatefulSet, which kube-apiserver does not let an upgrade change: \
                         the release fails to upgrade. Keep {from:?} (to grow a volume, resize its \
                         PersistentVolumeClaims).",
                        of = claim.of
                    ),
                );
            }
        }
    }
    Ok(())
}
