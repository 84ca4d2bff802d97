//! The `required`s of the database charts' own backups and restores
//! (v1.6.2): the chart defaults fill most S3 settings with placeholders, so
//! these fail when a user empties one (`""` or `null`, which deletes the
//! placeholder) or, for MongoDB, leaves the keys at their empty defaults.

use shared::{Field, FieldError};

use shared::Findings;

use crate::skip_wrong_types;
use crate::values::truthy;

/// The rules of `kind`.
pub fn check(kind: &str, spec: &Field<'_>, out: &mut Findings) {
    skip_wrong_types(match kind {
        "ClickHouse" => clickhouse(spec, out),
        "MariaDB" => mariadb(spec, out),
        "MongoDB" => mongodb(spec, out),
        _ => Ok(()),
    });
}

/// Whether a string setting is empty as the template sees it: the spec's
/// value, else the chart default, a placeholder unless `empty_by_default`.
/// A `null` deletes the key and its default (Helm's coalescing), so the
/// `required` finds nothing.
fn empty(field: &Field<'_>, empty_by_default: bool) -> Result<bool, FieldError> {
    if field.is_null() {
        return Ok(true);
    }
    Ok(field.string()?.map_or(empty_by_default, str::is_empty))
}

/// Denies each of `keys` (with the `required` message) of `backup` that is
/// empty.
fn required(
    backup: &Field<'_>,
    keys: &[(&str, &str)],
    empty_by_default: bool,
    why: &str,
    out: &mut Findings,
) -> Result<(), FieldError> {
    for &(key, message) in keys {
        let field = backup.field(key)?;
        if empty(&field, empty_by_default)? {
            out.add(
                crate::rules::BACKUP_CREDENTIALS,
                field.path(),
                format!("{message} (the chart fails to render: {why}). Set backup.{key}."),
            );
        }
    }
    Ok(())
}

/// `apps/clickhouse/templates/backup-secret.yaml`, `backup-cronjob.yaml`
/// (the legacy restic flow: `enabled`, a `schedule`, no system bucket) and
/// `backup-strategy-secret.yaml` (`enabled`, no system bucket, no
/// credentials Secret).
fn clickhouse(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let backup = spec.field("backup")?;
    let [enabled, schedule, system, credentials] = backup.members([
        "enabled",
        "schedule",
        "useSystemBucket",
        "s3CredentialsSecret",
    ])?;
    if !truthy(enabled.json()) || truthy(system.json()) {
        return Ok(());
    }
    let mut keys: Vec<(&str, &str)> = Vec::new();
    if truthy(schedule.json()) {
        keys.extend([
            ("s3AccessKey", "s3AccessKey is not specified!"),
            ("s3SecretKey", "s3SecretKey is not specified!"),
            ("resticPassword", "resticPassword is not specified!"),
            ("s3Bucket", "s3Bucket is not specified!"),
            ("cleanupStrategy", "cleanupPolicy is not specified!"),
        ]);
    }
    if empty(&credentials.field("name")?, true)? {
        for key in [
            ("s3Bucket", "backup.s3Bucket is not specified!"),
            ("s3Region", "backup.s3Region is not specified!"),
            ("s3AccessKey", "backup.s3AccessKey is not specified!"),
            ("s3SecretKey", "backup.s3SecretKey is not specified!"),
        ] {
            // One finding per field, the restic flow's message first.
            if !keys.iter().any(|k| k.0 == key.0) {
                keys.push(key);
            }
        }
    }
    required(
        &backup,
        &keys,
        false,
        "backup.enabled without backup.useSystemBucket renders the backup Secrets",
        out,
    )
}

/// `apps/mariadb/templates/backup-secret.yaml` and `backup-cronjob.yaml`.
fn mariadb(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let backup = spec.field("backup")?;
    if !truthy(backup.field("enabled")?.json()) {
        return Ok(());
    }
    required(
        &backup,
        &[
            ("s3AccessKey", "s3AccessKey is not specified!"),
            ("s3SecretKey", "s3SecretKey is not specified!"),
            ("resticPassword", "resticPassword is not specified!"),
            ("s3Bucket", "s3Bucket is not specified!"),
            ("cleanupStrategy", "cleanupPolicy is not specified!"),
        ],
        false,
        "backup.enabled renders the backup Secret and CronJob",
        out,
    )
}

/// `apps/mongodb/templates/backup-secret.yaml` (backup or bootstrap) and
/// `restore.yaml` (bootstrap).
fn mongodb(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let [backup, bootstrap] = spec.members(["backup", "bootstrap"])?;
    let backing_up = truthy(backup.field("enabled")?.json());
    let restoring = truthy(bootstrap.field("enabled")?.json());
    if restoring {
        let name = bootstrap.field("backupName")?;
        if empty(&name, true)? {
            out.add(
                crate::rules::MONGODB_BOOTSTRAP,
                name.path(),
                "bootstrap.backupName is required when bootstrap.enabled is true (the chart fails to render). Name \
                 the backup to restore.",
            );
        }
        for key in ["destinationPath", "endpointURL"] {
            let field = backup.field(key)?;
            if empty(&field, false)? {
                out.add(
                    crate::rules::MONGODB_BOOTSTRAP,
                    field.path(),
                    format!(
                        "backup.{key} is required when bootstrap.enabled is true (the chart fails to render). Set \
                         backup.{key} to where the backup is stored."
                    ),
                );
            }
        }
    }
    if backing_up || restoring {
        required(
            &backup,
            &[
                (
                    "s3AccessKey",
                    "backup.s3AccessKey is required when backup or bootstrap is enabled",
                ),
                (
                    "s3SecretKey",
                    "backup.s3SecretKey is required when backup or bootstrap is enabled",
                ),
            ],
            true,
            "backup.enabled or bootstrap.enabled renders the S3 credentials Secret",
            out,
        )?;
    }
    Ok(())
}
