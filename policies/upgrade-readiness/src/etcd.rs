//! etcd in the 1.6 upgrade: the Etcd `backup` block 1.6 removes, and the
//! escape hatch that lets migration 50 adopt etcd without a snapshot.
//!
//! Source: the v1.6 release notes
//! (`../shared/seeds/cozystack-1.6-release-notes.en.txt`), pre-upgrade check
//! 5 ("The backup.* block on the etcd tenant module is removed in this
//! release. Move to a BackupClass bound to the Etcd strategy first.") and
//! "etcd-operator v1alpha2 with in-place adoption"; the source at v1.5.4 and
//! v1.6.2:
//!
//! - `packages/extra/etcd/values.schema.json`: v1.5.4 has `backup`
//!   (`enabled`, `schedule`, `destinationPath`, `endpointURL`, `region`,
//!   `forcePathStyle`, `s3AccessKey`, `s3SecretKey`,
//!   `successfulJobsHistoryLimit`, `failedJobsHistoryLimit`), v1.6.2 has no
//!   `backup`; it is the only key any application schema loses between the
//!   two tags. v1.5.4's `templates/etcd-backup-schedule.yaml` and
//!   `backup-secret.yaml` render an EtcdBackupSchedule when
//!   `backup.enabled`; v1.6.2 renders nothing from it and the schema does
//!   not refuse it, so the scheduled backups stop without a word.
//! - cozystack-api fills schema defaults on read, so on a 1.5 cluster every
//!   stored Etcd shows the whole block with its defaults: only values that
//!   differ from those defaults are findings.
//! - `packages/core/platform/templates/migration-hook.yaml`: Package
//!   `cozystack.cozystack-platform`,
//!   `spec.components.platform.values.migrations.etcdAdoptSkipBackup`,
//!   taken when `lower (printf "%v" value)` is `1`, `true` or `yes`;
//!   migration 50 then adopts every legacy etcd without the mandatory
//!   snapshot ("A botched adoption on a tenant control-plane etcd is
//!   unrecoverable without a snapshot. Set the flag back to false
//!   afterwards, or the next etcd migration skips its snapshot too.").
//! - `migrations/50`, `warn_orphaned_backup_schedules`: "legacy
//!   etcd.aenix.io backup resources will NOT be migrated. Scheduled/one-off
//!   etcd backups STOP working after this upgrade": every
//!   `etcdbackupschedules.etcd.aenix.io` and `etcdbackups.etcd.aenix.io` the
//!   migration lists. It warns and goes on, and so does the rule.

use shared::{Field, FieldError, Request, Value};

use shared::Finding;

use crate::Settings;

/// The legacy operator's group.
pub const LEGACY_GROUP: &str = "etcd.aenix.io";

/// A legacy backup resource migration 50 leaves behind.
pub fn orphaned_backup(
    request: &Request<'_>,
    _: &Field<'_>,
    _: &Settings,
) -> Result<Vec<Finding>, FieldError> {
    Ok(vec![Finding::new(
        crate::rules::ETCD_BACKUP_ORPHANED,
        shared::FieldPath::root(),
        format!(
            "{} will not be migrated: its backups stop after the upgrade (migration 50); use a \
             backups.cozystack.io BackupClass and Plan",
            request.describe()
        ),
    )])
}

/// The group of Cozystack's Package (`packages.cozystack.io`, cluster-scoped).
pub const PACKAGE_GROUP: &str = "cozystack.io";

/// The platform Package whose values carry the migrations settings.
const PLATFORM_PACKAGE: &str = "cozystack.cozystack-platform";

/// The v1.5.4 defaults of `backup`'s keys other than `enabled`
/// (`packages/extra/etcd/values.schema.json` at v1.5.4).
const BACKUP_DEFAULTS: &[(&str, Default)] = &[
    ("destinationPath", Default::Text("")),
    ("endpointURL", Default::Text("")),
    ("failedJobsHistoryLimit", Default::Integer(1)),
    ("forcePathStyle", Default::Flag(true)),
    ("region", Default::Text("")),
    ("s3AccessKey", Default::Text("")),
    ("s3SecretKey", Default::Text("")),
    ("schedule", Default::Text("0 2 * * *")),
    ("successfulJobsHistoryLimit", Default::Integer(3)),
];

/// A schema default.
#[derive(Debug, Clone, Copy)]
enum Default {
    Text(&'static str),
    Integer(i64),
    Flag(bool),
}

impl Default {
    fn holds(self, value: &Value) -> bool {
        match self {
            Default::Text(text) => value.as_str() == Some(text),
            Default::Integer(n) => value.as_i64() == Some(n),
            Default::Flag(flag) => value.as_bool() == Some(flag),
        }
    }
}

/// An Etcd's `spec.backup`: enabled is a violation, other values that
/// differ from the v1.5.4 defaults are warnings.
pub fn backup_block(
    request: &Request<'_>,
    object: &Field<'_>,
    _: &Settings,
) -> Result<Vec<Finding>, FieldError> {
    let backup = object.at("spec.backup")?;
    // v1.6.2's schema has no `backup`, so its chart ignores a block of any
    // shape, and v1.5.4's schema refuses one of the wrong type (values-schema
    // denies it there): only the values v1.5.4 renders from are judged.
    if !backup.json().is_some_and(Value::is_object) {
        return Ok(Vec::new());
    }
    let enabled = backup.field("enabled")?;
    if enabled.json() == Some(&Value::Bool(true)) {
        return Ok(vec![Finding::new(
            crate::rules::ETCD_BACKUP_ENABLED,
            enabled.path(),
            format!(
                "Cozystack 1.6 removes the Etcd backup block: v1.5.4 renders an EtcdBackupSchedule from it, \
                 1.6 ignores it, so the scheduled backups of {} stop at the upgrade without a word. Before \
                 upgrading, back it up through a BackupClass bound to the Etcd strategy \
                 (strategy.backups.cozystack.io), then remove spec.backup",
                request.describe()
            ),
        )]);
    }
    let mut checks = Vec::new();
    for (key, default) in BACKUP_DEFAULTS {
        let field = backup.field(key)?;
        if let Some(value) = field.json()
            && !default.holds(value)
        {
            checks.push(Finding::new(
                crate::rules::ETCD_BACKUP_KEY_REMOVED,
                field.path(),
                "removed in Cozystack 1.6 with the whole Etcd backup block and ignored from then on; \
                 backups are disabled here, so remove spec.backup",
            ));
        }
    }
    Ok(checks)
}

/// Whether the migration hook takes `value` as set, as its template does:
/// `has (lower (printf "%v" value)) (list "1" "true" "yes")`.
fn affirmative(value: &Value) -> bool {
    let text = match value {
        Value::Bool(flag) => flag.to_string(),
        Value::String(text) => text.to_lowercase(),
        Value::Number(n) => match n.as_f64() {
            // Go prints a float64 1 as `1`, as JSON numbers decode.
            Some(1.0) => "1".to_owned(),
            _ => n.to_string(),
        },
        Value::Null | Value::Array(_) | Value::Object(_) => return false,
    };
    matches!(text.as_str(), "1" | "true" | "yes")
}

/// The platform Package must not take migration 50's no-snapshot escape
/// hatch; other Packages are not judged.
pub fn adopt_skip_backup(
    request: &Request<'_>,
    object: &Field<'_>,
    _: &Settings,
) -> Result<Vec<Finding>, FieldError> {
    if request.name != PLATFORM_PACKAGE {
        return Ok(Vec::new());
    }
    let flag = object
        .at("spec.components.platform.values.migrations")?
        .field("etcdAdoptSkipBackup")?;
    match flag.json() {
        Some(value) if affirmative(value) => Ok(vec![Finding::new(
            crate::rules::ETCD_ADOPT_SKIP_BACKUP,
            flag.path(),
            "migration 50 would adopt every legacy etcd without its mandatory snapshot, and a botched \
             adoption of a tenant control-plane etcd cannot be recovered without one. Give the cluster a \
             reachable backup target instead (see the README's checklist); if you took this escape hatch, \
             set it back to false, or the next etcd migration skips its snapshot too",
        )]),
        _ => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(value: impl Into<Value>) -> Value {
        value.into()
    }

    #[test]
    fn the_hatch_is_read_as_the_template_reads_it() {
        for yes in [
            json(true),
            json("true"),
            json("YES"),
            json(1),
            json("1"),
            json(1.0),
        ] {
            assert!(affirmative(&yes), "{yes}");
        }
        let empty: Vec<(String, Value)> = Vec::new();
        for no in [
            json(false),
            json("no"),
            json(0),
            json(2),
            json("y"),
            Value::Null,
            json(vec![true]),
            empty.into_iter().collect(),
        ] {
            assert!(!affirmative(&no), "{no}");
        }
    }

    #[test]
    fn only_values_off_the_v1_5_4_defaults_are_findings() {
        assert_eq!(
            BACKUP_DEFAULTS.len(),
            9,
            "the v1.5.4 keys other than enabled"
        );
        assert!(Default::Text("0 2 * * *").holds(&json("0 2 * * *")));
        assert!(!Default::Text("").holds(&json("s3://bucket/")));
        assert!(Default::Integer(3).holds(&json(3)));
        assert!(!Default::Integer(3).holds(&json("3")));
        assert!(Default::Flag(true).holds(&json(true)));
        assert!(!Default::Flag(true).holds(&json(false)));
    }
}
