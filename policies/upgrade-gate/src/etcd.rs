//! etcd adoption (migration 50) and the snapshot target it needs.
//!
//! Source: the v1.6 release notes, pre-upgrade check 1 ("Migration 50
//! adopts every legacy etcd.aenix.io/v1alpha1 cluster onto the new operator
//! and takes a mandatory snapshot first. If it cannot resolve the snapshot
//! target it exits 1 and halts the upgrade."), and at v1.6.2
//! `packages/core/platform/images/migrations/migrations/50`:
//!
//! - with no legacy EtcdCluster the migration is a no-op, so the rule runs
//!   once per `etcdclusters.etcd.aenix.io` object;
//! - the escape hatch `migrations.etcdAdoptSkipBackup` (Package
//!   `cozystack.cozystack-platform`, taken as the migration hook's template
//!   takes it) skips the snapshot and with it the target: upgrade-readiness
//!   reports that Package itself;
//! - `resolve_platform_backup_args` first needs the projected Secret
//!   `cozy-velero/cozy-backups-creds` ("returns non-zero" without it);
//! - then its coordinates: from that Secret when a BucketClaim claims its
//!   bucket (the COSI-provisioned `cozy-backups` Bucket of `tenant-root`,
//!   `backupStorage.namespace` in `packages/system/backupstrategy-controller`),
//!   else from the Strategy `etcds.strategy.backups.cozystack.io
//!   cozy-default-etcd`, whose `spec.template.destination.s3.endpoint` and
//!   `.bucket` must not be empty.
//!
//! The Bucket is read as the HelmRelease cozystack-api stores it as
//! (`bucket-cozy-backups`), from kube-apiserver, as the other lookups of the
//! bundle are. The Secret is read by name, masked to its name: its data
//! never reaches the policy, so the migration's further demand that both
//! AWS keys be non-empty is not checked (README).

use shared::lookup::{GetResource, LookupError, get_optional};
use shared::{FieldPath, Findings, Request, Value};

use crate::rules::{ETCD_ADOPTION_NOT_CHECKED, ETCD_ADOPTION_TARGET};

pub const LEGACY_GROUP: &str = "etcd.aenix.io";
pub const LEGACY_KIND: &str = "EtcdCluster";

pub const PACKAGE_API_VERSION: &str = "cozystack.io/v1alpha1";
pub const PACKAGE_KIND: &str = "Package";
pub const PLATFORM_PACKAGE: &str = "cozystack.cozystack-platform";
const SKIP_BACKUP: &str = "spec.components.platform.values.migrations.etcdAdoptSkipBackup";

pub const SECRET_NAMESPACE: &str = "cozy-velero";
pub const SECRET_NAME: &str = "cozy-backups-creds";

pub const RELEASE_API_VERSION: &str = "helm.toolkit.fluxcd.io/v2";
pub const RELEASE_KIND: &str = "HelmRelease";
pub const BUCKET_NAMESPACE: &str = "tenant-root";
/// The Bucket `cozy-backups`, as the HelmRelease `bucket-` + its name.
pub const BUCKET_RELEASE: &str = "bucket-cozy-backups";

pub const STRATEGY_API_VERSION: &str = "strategy.backups.cozystack.io/v1alpha1";
pub const STRATEGY_KIND: &str = "Etcd";
pub const STRATEGY_NAME: &str = "cozy-default-etcd";
const ENDPOINT: &str = "spec.template.destination.s3.endpoint";
const BUCKET: &str = "spec.template.destination.s3.bucket";

const NAME_MASK: &[&str] = &["metadata.name"];

fn get<'a>(
    api_version: &'a str,
    kind: &'a str,
    name: &'a str,
    namespace: Option<&'a str>,
    masks: &'a [&'a str],
) -> GetResource<'a> {
    GetResource {
        api_version,
        kind,
        name,
        namespace,
        disable_cache: false,
        field_masks: Some(masks),
    }
}

/// Whether the migration hook takes the escape hatch's value as set:
/// `has (lower (printf "%v" value)) (list "1" "true" "yes")`.
fn affirmative(value: Option<&Value>) -> bool {
    let text = match value {
        Some(Value::Bool(flag)) => flag.to_string(),
        Some(Value::String(text)) => text.to_lowercase(),
        Some(Value::Number(n)) if n.as_f64() == Some(1.0) => "1".to_owned(),
        _ => return false,
    };
    matches!(text.as_str(), "1" | "true" | "yes")
}

/// A text at `dotted` of a looked-up object, empty when absent.
fn text<'v>(object: &'v Value, dotted: &str) -> &'v str {
    FieldPath::parse(dotted)
        .resolve(object)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// What the lookups found.
enum Target {
    /// Migration 50 can resolve a target (or needs none).
    Resolved,
    /// It cannot: why, and what to do.
    Missing(String),
}

fn resolve(request: &Request<'_>) -> Result<Target, LookupError> {
    let cluster = request.cluster();
    let masks = [SKIP_BACKUP];
    let package = get_optional(
        cluster,
        &get(
            PACKAGE_API_VERSION,
            PACKAGE_KIND,
            PLATFORM_PACKAGE,
            None,
            &masks,
        ),
    )?;
    let skip = package
        .as_ref()
        .and_then(|p| FieldPath::parse(SKIP_BACKUP).resolve(p));
    if affirmative(skip) {
        return Ok(Target::Resolved);
    }
    let secret = get_optional(
        cluster,
        &get(
            "v1",
            "Secret",
            SECRET_NAME,
            Some(SECRET_NAMESPACE),
            NAME_MASK,
        ),
    )?;
    if secret.is_none() {
        return Ok(Target::Missing(format!(
            "Secret {SECRET_NAMESPACE}/{SECRET_NAME} does not exist: migration 50 reads the snapshot credentials \
             from it, so it exits 1 and halts the 1.6 upgrade. Make the backup storage healthy (the cozy-backups \
             Bucket of {BUCKET_NAMESPACE} and the backupstrategy-controller, which projects the Secret) before \
             upgrading"
        )));
    }
    let bucket = get_optional(
        cluster,
        &get(
            RELEASE_API_VERSION,
            RELEASE_KIND,
            BUCKET_RELEASE,
            Some(BUCKET_NAMESPACE),
            NAME_MASK,
        ),
    )?;
    if bucket.is_some() {
        return Ok(Target::Resolved);
    }
    let masks = [ENDPOINT, BUCKET];
    let strategy = get_optional(
        cluster,
        &get(
            STRATEGY_API_VERSION,
            STRATEGY_KIND,
            STRATEGY_NAME,
            None,
            &masks,
        ),
    )?;
    Ok(match strategy {
        None => Target::Missing(format!(
            "neither the Bucket {BUCKET_NAMESPACE}/cozy-backups nor the Strategy \
             etcds.strategy.backups.cozystack.io {STRATEGY_NAME} exists: migration 50 takes the snapshot \
             target from one of them, so it exits 1 and halts the 1.6 upgrade. Provision the cozy-backups \
             Bucket, or configure the external backup storage so that the Strategy is rendered, before upgrading"
        )),
        Some(strategy)
            if text(&strategy, ENDPOINT).is_empty() || text(&strategy, BUCKET).is_empty() =>
        {
            Target::Missing(format!(
                "the Strategy etcds.strategy.backups.cozystack.io {STRATEGY_NAME} has no \
                 {ENDPOINT} or {BUCKET}, and no cozy-backups Bucket exists in {BUCKET_NAMESPACE}: migration 50 \
                 cannot resolve the snapshot target, so it exits 1 and halts the 1.6 upgrade. Set \
                 backupStorage.endpoint and backupStorage.bucketName of the backupstrategy-controller before \
                 upgrading"
            ))
        }
        Some(_) => Target::Resolved,
    })
}

/// A legacy EtcdCluster: can migration 50 snapshot it before adoption?
pub fn adoption_target(request: &Request<'_>, out: &mut Findings) {
    let escape = format!(
        " (a cluster that has no backup storage on purpose can take migration 50's escape hatch \
         {SKIP_BACKUP} in Package {PLATFORM_PACKAGE}, and adopt {} without a snapshot)",
        request.describe()
    );
    match resolve(request) {
        Ok(Target::Resolved) => {}
        Ok(Target::Missing(why)) => {
            out.add(
                ETCD_ADOPTION_TARGET,
                FieldPath::root(),
                format!("{why}{escape}"),
            );
        }
        Err(error) => out.add(
            ETCD_ADOPTION_NOT_CHECKED,
            FieldPath::root(),
            format!("the snapshot target of migration 50 was not checked: {error}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_escape_hatch_is_read_as_the_hook_reads_it() {
        for yes in [
            Value::Bool(true),
            Value::String("YES".into()),
            Value::String("1".into()),
            Value::from(1),
        ] {
            assert!(affirmative(Some(&yes)), "{yes:?}");
        }
        for no in [
            Value::Bool(false),
            Value::String("on".into()),
            Value::from(2),
            Value::Null,
        ] {
            assert!(!affirmative(Some(&no)), "{no:?}");
        }
        assert!(!affirmative(None));
    }
}
