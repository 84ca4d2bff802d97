//! etcd adoption (migration 50) and the snapshot target it needs.
//!
//! Source: the v1.6 release notes, pre-upgrade check 1 ("Migration 50
//! adopts every legacy etcd.aenix.io/v1alpha1 cluster onto the new operator
//! and takes a mandatory snapshot first. If it cannot resolve the snapshot
//! target it exits 1 and halts the upgrade."), and at v1.6.2
//! `packages/core/platform/images/migrations/migrations/50`, followed step
//! by step ([`resolve`]):
//!
//! - with no legacy EtcdCluster the migration is a no-op, so the rule runs
//!   once per `etcdclusters.etcd.aenix.io` object;
//! - the escape hatch `migrations.etcdAdoptSkipBackup` (Package
//!   `cozystack.cozystack-platform`, taken as the migration hook's template
//!   takes it) skips the snapshot and with it the target: upgrade-readiness
//!   reports that Package itself;
//! - `resolve_platform_backup_args`: the Secret
//!   `cozy-velero/cozy-backups-creds` must exist with `AWS_ACCESS_KEY_ID`
//!   and `AWS_SECRET_ACCESS_KEY` non-empty (`return 1` otherwise); its
//!   `bucketName` and `endpoint` are read as `secret_val` reads them
//!   (base64-decoded, every whitespace removed);
//! - `_cosi_bucket_claimed`: a non-empty `bucketName` is COSI-provisioned
//!   when a live BucketClaim (`objectstorage.k8s.io`, any namespace) has it
//!   as `status.bucketName`; without the BucketClaim CRD, or without a
//!   claim of it, the storage is external; a bucket claimed only by a
//!   terminating BucketClaim cannot be classified and the migration exits 1;
//! - a COSI bucket keeps the Secret's coordinates; external storage takes
//!   every coordinate from the Strategy `etcds.strategy.backups.cozystack.io
//!   cozy-default-etcd` (`spec.template.destination.s3`), as does a COSI
//!   bucket whose Secret lacks one; without an endpoint and a bucket the
//!   migration exits 1.
//!
//! Two more halts of the same migration, after the target ([`halts`]):
//!
//! - `ensure_wildcard_sans` (`migrations/50:211-251`): for each legacy
//!   cluster `<name>` in `<ns>`, the cert-manager Certificates
//!   `<name>-server` and `<name>-peer` (when they exist) get the new
//!   operator's wildcard SAN `*.<name>.<ns>.svc`, unless `spec.dnsNames`
//!   already holds it (`_san_present`); the migration then waits 30 × 4 s for
//!   cert-manager to re-issue the Secret and exits 1 when it does not
//!   (line 247). A Certificate cert-manager does not keep Ready will not be
//!   re-issued in time;
//! - the adoption scales the Deployment
//!   `cozy-etcd-operator/etcd-operator-controller-manager` to 0 under `set
//!   -euo pipefail` (lines 20, 80-81, 727): without it `kubectl scale`
//!   fails and the migration exits 1.
//!
//! The Secret's data is read masked to those four keys. The credentials
//! are only tested for being non-empty, and never appear in a message; a
//! snapshot copies them as a marker, never as they are.

use shared::lookup::{
    GetResource, ListAll, LookupError, get_optional, list_items, text as answer_text,
};
use shared::{FieldPath, Findings, Request, Value};

use crate::rules::{
    ETCD_ADOPTION_CERTIFICATE, ETCD_ADOPTION_NOT_CHECKED, ETCD_ADOPTION_OPERATOR,
    ETCD_ADOPTION_TARGET,
};

pub const LEGACY_GROUP: &str = "etcd.aenix.io";
pub const LEGACY_KIND: &str = "EtcdCluster";

pub const PACKAGE_API_VERSION: &str = "cozystack.io/v1alpha1";
pub const PACKAGE_KIND: &str = "Package";
pub const PLATFORM_PACKAGE: &str = "cozystack.cozystack-platform";
const SKIP_BACKUP: &str = "spec.components.platform.values.migrations.etcdAdoptSkipBackup";

pub const SECRET_NAMESPACE: &str = "cozy-velero";
pub const SECRET_NAME: &str = "cozy-backups-creds";
/// The credentials migration 50 needs non-empty.
pub const CREDENTIALS: [&str; 2] = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"];
/// The coordinates it reads of the Secret.
const BUCKET_NAME: &str = "bucketName";
const ENDPOINT_KEY: &str = "endpoint";
const SECRET_MASKS: &[&str] = &[
    "data.AWS_ACCESS_KEY_ID",
    "data.AWS_SECRET_ACCESS_KEY",
    "data.bucketName",
    "data.endpoint",
];

pub const CRD_API_VERSION: &str = "apiextensions.k8s.io/v1";
pub const CRD_KIND: &str = "CustomResourceDefinition";
const CLAIM_CRD: &str = "bucketclaims.objectstorage.k8s.io";
pub const CLAIM_API_VERSION: &str = "objectstorage.k8s.io/v1alpha1";
pub const CLAIM_KIND: &str = "BucketClaim";
const CLAIM_MASKS: &[&str] = &["status.bucketName", "metadata.deletionTimestamp"];

pub const STRATEGY_API_VERSION: &str = "strategy.backups.cozystack.io/v1alpha1";
pub const STRATEGY_KIND: &str = "Etcd";
pub const STRATEGY_NAME: &str = "cozy-default-etcd";
const ENDPOINT: &str = "spec.template.destination.s3.endpoint";
const BUCKET: &str = "spec.template.destination.s3.bucket";

const NAME_MASK: &[&str] = &["metadata.name"];

pub const CERTIFICATE_API_VERSION: &str = "cert-manager.io/v1";
pub const CERTIFICATE_KIND: &str = "Certificate";
const CERTIFICATE_MASKS: &[&str] = &["spec.dnsNames", "status.conditions"];
pub const OPERATOR_API_VERSION: &str = "apps/v1";
pub const OPERATOR_KIND: &str = "Deployment";
/// `ETCD_OPERATOR_NS` and `ETCD_OPERATOR_DEPLOY` of migration 50.
pub const OPERATOR_NAMESPACE: &str = "cozy-etcd-operator";
pub const OPERATOR_NAME: &str = "etcd-operator-controller-manager";

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

/// A text at `dotted` of a looked-up object, empty when absent or not a
/// string (jq's `// ""`).
fn text<'v>(object: &'v Value, dotted: &str) -> &'v str {
    FieldPath::parse(dotted)
        .resolve(object)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A key of the Secret as `secret_val` reads it: base64-decoded, every
/// whitespace removed; `None` when the value is not base64, which no API
/// server returns (the migration then aborts, `set -e`).
fn secret_value(secret: &Value, key: &str) -> Option<String> {
    use base64::Engine as _;
    let encoded = secret
        .get("data")
        .and_then(|data| data.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    Some(
        String::from_utf8_lossy(&bytes)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect(),
    )
}

/// What `_cosi_bucket_claimed` answers.
enum Claim {
    /// A live BucketClaim claims the bucket: COSI-provisioned.
    Cosi,
    /// No claim of it, or no BucketClaim CRD: external storage.
    External,
    /// Only a terminating claim has it: the migration refuses to guess.
    Terminating,
}

fn claim(request: &Request<'_>, bucket: &str) -> Result<Claim, LookupError> {
    let cluster = request.cluster();
    let crd = get_optional(
        cluster,
        &get(CRD_API_VERSION, CRD_KIND, CLAIM_CRD, None, NAME_MASK),
    )?;
    if crd.is_none() {
        return Ok(Claim::External);
    }
    let answer = cluster.list_all(&ListAll {
        api_version: CLAIM_API_VERSION,
        kind: CLAIM_KIND,
        label_selector: None,
        field_selector: None,
        field_masks: Some(CLAIM_MASKS),
    })?;
    let mut terminating = false;
    for item in list_items(&answer)? {
        if answer_text(&item, "status.bucketName")?.unwrap_or_default() != bucket {
            continue;
        }
        // jq's `(.metadata.deletionTimestamp // "") == ""`.
        let deleting = item
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|at| !matches!(at, Value::Null | Value::Bool(false)) && at != "");
        if !deleting {
            return Ok(Claim::Cosi);
        }
        terminating = true;
    }
    Ok(if terminating {
        Claim::Terminating
    } else {
        Claim::External
    })
}

/// What the lookups found.
enum Target {
    /// Migration 50 can resolve a target (or needs none).
    Resolved,
    /// It cannot: why, and what to do.
    Missing(String),
}

const SECRET: &str = "Secret cozy-velero/cozy-backups-creds";
const STRATEGY: &str = "the Strategy etcds.strategy.backups.cozystack.io cozy-default-etcd";
const HALTS: &str = "so migration 50 exits 1 and halts the 1.6 upgrade";

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
            SECRET_MASKS,
        ),
    )?;
    let Some(secret) = secret else {
        return Ok(Target::Missing(format!(
            "{SECRET} does not exist: migration 50 reads the snapshot credentials from it, {HALTS}. Make the \
             backup storage healthy (the backupstrategy-controller projects the Secret from the cozy-backups \
             bucket's credentials) before upgrading"
        )));
    };
    for key in CREDENTIALS {
        if text(&secret, &format!("data.{key}")).is_empty() {
            return Ok(Target::Missing(format!(
                "{SECRET} has no {key}, or an empty one: migration 50 needs both AWS_ACCESS_KEY_ID and \
                 AWS_SECRET_ACCESS_KEY to take the snapshot, {HALTS}. Make the backupstrategy-controller \
                 project the bucket's credentials into it before upgrading"
            )));
        }
    }
    let (Some(mut bucket), Some(mut endpoint)) = (
        secret_value(&secret, BUCKET_NAME),
        secret_value(&secret, ENDPOINT_KEY),
    ) else {
        return Ok(Target::Missing(format!(
            "{SECRET} holds a bucketName or endpoint that is not base64, {HALTS}"
        )));
    };
    let claim = if bucket.is_empty() {
        Claim::External
    } else {
        claim(request, &bucket)?
    };
    match claim {
        Claim::Terminating => {
            return Ok(Target::Missing(format!(
                "bucket {bucket:?} of {SECRET} is claimed only by a terminating BucketClaim: migration 50 \
                 cannot tell a COSI bucket mid-teardown from external storage that reuses the name, {HALTS}. \
                 Resolve the claim (let COSI remove it, or clear its finalizer) before upgrading"
            )));
        }
        Claim::Cosi => {}
        // External storage: every coordinate from the Strategy.
        Claim::External => {
            bucket.clear();
            endpoint.clear();
        }
    }
    if bucket.is_empty() || endpoint.is_empty() {
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
        if let Some(strategy) = &strategy {
            if endpoint.is_empty() {
                endpoint = text(strategy, ENDPOINT).to_owned();
            }
            if bucket.is_empty() {
                bucket = text(strategy, BUCKET).to_owned();
            }
        }
        if bucket.is_empty() || endpoint.is_empty() {
            let from = match (&claim, &strategy) {
                (Claim::Cosi, _) => format!(
                    "the COSI bucket's {SECRET} lacks its {} and {STRATEGY} does not supply it",
                    if endpoint.is_empty() {
                        "endpoint"
                    } else {
                        "bucketName"
                    }
                ),
                (_, None) => format!(
                    "no live BucketClaim claims the bucket of {SECRET}, so the storage counts as external, \
                     and {STRATEGY}, which external storage takes every coordinate from, does not exist"
                ),
                (_, Some(_)) => format!(
                    "no live BucketClaim claims the bucket of {SECRET}, so the storage counts as external, \
                     and {STRATEGY} has no {}",
                    if endpoint.is_empty() {
                        ENDPOINT
                    } else {
                        BUCKET
                    }
                ),
            };
            return Ok(Target::Missing(format!(
                "{from}: migration 50 cannot resolve the snapshot target, {HALTS}. Set backupStorage.endpoint \
                 and backupStorage.bucketName of the backupstrategy-controller (or provision the cozy-backups \
                 bucket) before upgrading"
            )));
        }
    }
    Ok(Target::Resolved)
}

/// A Certificate migration 50 must have re-issued: whether it waits for
/// cert-manager, and on what state. `None` when the migration skips it.
fn certificate_state(found: &Value, native: &str) -> Option<String> {
    let names = found.pointer("/spec/dnsNames").and_then(Value::as_array);
    if names.is_some_and(|names| names.iter().any(|n| n.as_str() == Some(native))) {
        return None;
    }
    let ready = found
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"));
    let field = |c: &Value, key: &str| {
        c.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    match ready {
        Some(c) if field(c, "status") == "True" => None,
        Some(c) => Some(format!(
            "is not Ready ({}: {})",
            field(c, "reason"),
            field(c, "message")
        )),
        None => Some("has no Ready condition".to_owned()),
    }
}

/// Migration 50's halts after the target: Certificates cert-manager will
/// not re-issue in time, and the etcd-operator Deployment it scales.
fn halts(request: &Request<'_>, out: &mut Findings) -> Result<(), LookupError> {
    let cluster = request.cluster();
    let (namespace, name) = (&*request.namespace, &*request.name);
    let native = format!("*.{name}.{namespace}.svc");
    for role in ["server", "peer"] {
        let certificate = format!("{name}-{role}");
        let found = get_optional(
            cluster,
            &get(
                CERTIFICATE_API_VERSION,
                CERTIFICATE_KIND,
                &certificate,
                Some(namespace),
                CERTIFICATE_MASKS,
            ),
        )?;
        if let Some(state) = found.and_then(|found| certificate_state(&found, &native)) {
            out.add(
                ETCD_ADOPTION_CERTIFICATE,
                FieldPath::root(),
                format!(
                    "Certificate {namespace}/{certificate} (cert-manager.io) {state}: migration 50 adds the new \
                     operator's SAN {native} to it and waits two minutes for cert-manager to re-issue its Secret \
                     {certificate}-tls, then exits 1 and halts the 1.6 upgrade. Make cert-manager issue it \
                     (kubectl --namespace {namespace} describe certificate {certificate}) before upgrading"
                ),
            );
        }
    }
    let operator = get_optional(
        cluster,
        &get(
            OPERATOR_API_VERSION,
            OPERATOR_KIND,
            OPERATOR_NAME,
            Some(OPERATOR_NAMESPACE),
            NAME_MASK,
        ),
    )?;
    if operator.is_none() {
        out.add(
            ETCD_ADOPTION_OPERATOR,
            FieldPath::root(),
            format!(
                "Deployment {OPERATOR_NAMESPACE}/{OPERATOR_NAME} does not exist: migration 50 scales it to 0 to adopt \
                 {}, and under set -e the failed kubectl scale exits 1 and halts the 1.6 upgrade. Reinstall the \
                 etcd-operator package (its HelmRelease in {OPERATOR_NAMESPACE}) before upgrading",
                request.describe()
            ),
        );
    }
    Ok(())
}

/// A legacy EtcdCluster: can migration 50 snapshot it, re-issue its
/// certificates and scale the operator before adoption?
pub fn adoption_target(request: &Request<'_>, out: &mut Findings) {
    let not_checked = |out: &mut Findings, what: &str, error: LookupError| {
        out.add(
            ETCD_ADOPTION_NOT_CHECKED,
            FieldPath::root(),
            format!("not checked: {what} could not be read: {error}"),
        );
    };
    match resolve(request) {
        Ok(Target::Resolved) => {}
        Ok(Target::Missing(why)) => {
            out.add(
                ETCD_ADOPTION_TARGET,
                FieldPath::root(),
                format!(
                    "{why} (a cluster that has no backup storage on purpose can take migration 50's escape \
                     hatch {SKIP_BACKUP} in Package {PLATFORM_PACKAGE}, and adopt {} without a snapshot)",
                    request.describe()
                ),
            );
        }
        Err(error) => return not_checked(out, "the snapshot target of migration 50", error),
    }
    if let Err(error) = halts(request, out) {
        not_checked(
            out,
            "the Certificates and the etcd-operator Deployment migration 50 needs",
            error,
        );
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

    #[test]
    fn secret_values_are_decoded_and_stripped_as_secret_val_does() {
        let secret = serde_json::json!({"data": {
            "bucketName": "IGNvenktYmFja3Vwcwo=", // " cozy-backups\n"
            "endpoint": "",
            "bad": "%%%"}});
        assert_eq!(
            secret_value(&secret, "bucketName").as_deref(),
            Some("cozy-backups")
        );
        assert_eq!(secret_value(&secret, "endpoint").as_deref(), Some(""));
        assert_eq!(secret_value(&secret, "absent").as_deref(), Some(""));
        assert_eq!(secret_value(&secret, "bad"), None);
    }

    /// The masks the rule reads the Secret with and the keys metadata.yml
    /// declares (the snapshot command copies exactly those) agree.
    #[test]
    fn the_secret_is_read_as_metadata_declares() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("metadata.yml");
        let metadata = wasm_meta::metadata::Metadata::from_yaml_file(&path).unwrap();
        let reads = metadata.secret_reads().unwrap();
        let read = reads
            .iter()
            .find(|r| (r.namespace.as_str(), r.name.as_str()) == (SECRET_NAMESPACE, SECRET_NAME))
            .unwrap();
        assert_eq!(read.credentials, CREDENTIALS);
        assert_eq!(read.values, [BUCKET_NAME, ENDPOINT_KEY]);
        let masked: Vec<&str> = SECRET_MASKS
            .iter()
            .map(|m| m.trim_start_matches("data."))
            .collect();
        let mut named: Vec<&str> = CREDENTIALS
            .iter()
            .chain(&[BUCKET_NAME, ENDPOINT_KEY])
            .copied()
            .collect();
        named.sort_unstable();
        assert_eq!(masked, named);
    }
}
