//! The Helm keep pins the 1.6 upgrade relies on.
//!
//! `helm.sh/resource-policy: keep` tells Helm never to delete an object,
//! not even when a new chart version no longer renders it (Helm compares
//! the value trimmed and lower-cased with `keep`,
//! `helm.sh/helm/v3/pkg/action/resource_policy.go`). Source: the v1.6 release
//! notes (`../shared/seeds/cozystack-1.6-release-notes.en.txt`), "Read this
//! before upgrading" and "Upgrading", and the Cozystack source at v1.5.4 and
//! v1.6.2:
//!
//! - **KubeadmConfigTemplate** (`bootstrap.cluster.x-k8s.io`, in the tenant
//!   namespace, named `kubernetes-<cluster>-<group>`,
//!   `packages/apps/kubernetes/templates/cluster.yaml` at v1.5.4): 1.6 drops
//!   it from the kubernetes chart (workers move to TalosConfigTemplate), so
//!   without the pin Helm deletes it while the kubeadm-backed MachineSet is
//!   still rolling over with its `bootstrap.configRef` pointing at it; the
//!   worker rollover breaks and is recovered only by recreating the template
//!   by hand. v1.5.4's migration slot 45 (`migrations/45`,
//!   `migrations/lib/kubeadm-keep-pin.sh`) pins every template labelled
//!   `app.kubernetes.io/managed-by=Helm`, as does v1.6.2's migration 45; a
//!   v1.5.4 cluster is stamped 46 and skips the latter, hence "come through
//!   v1.5.4". Only Helm-managed templates are judged, as the migrations
//!   select them: CAPI's own children carry no such label and Helm never
//!   prunes them.
//! - **Namespace `cozy-system` and ConfigMap `cozy-system/cozystack-version`**:
//!   "without them, removing or upgrading the installer release can delete
//!   the cozy-system namespace and everything in it". The Helm install path
//!   never sets the annotation on the Namespace
//!   (`packages/core/installer/templates/cozy-system-labels.yaml` only labels
//!   it; `cozy-system-namespace.yaml` sets it only for the kubectl-apply
//!   path), and the ConfigMap carries it only from its first render
//!   (`packages/core/platform/templates/cozystack-version.yaml`).
//! - **`data.version` of `cozystack-version`**: the migration version the
//!   platform's migration hook reads, as it reads it ([`migration`]:
//!   `migration-hook.yaml:21`, `dig "data" "version" "0" | int`). A value
//!   Sprig's `int` cannot read, or one below 1, makes `run-migrations.sh`
//!   look for a migration the image lacks and exit 1 (`:39-43`), halting the
//!   upgrade; a leading 0 is octal (`"046"` reads as 38, and migrations
//!   38-53 run again); past 54 the hook is not rendered and no release
//!   wrote it. v1.5.4 stamps 46; below the `minimumVersion` setting the
//!   cluster has not come through v1.5.4.

use shared::validators::go_atoi;
use shared::{Field, FieldError, FieldPath, Finding, Request, migration};

use crate::Settings;

/// CAPI's bootstrap API group, whose KubeadmConfigTemplates the v1.5.4
/// kubernetes chart renders (`apiVersion: bootstrap.cluster.x-k8s.io/v1beta1`).
pub const BOOTSTRAP_GROUP: &str = "bootstrap.cluster.x-k8s.io";

/// Helm's resource-policy annotation and the value that pins an object.
pub const RESOURCE_POLICY: &str = "helm.sh/resource-policy";
const KEEP: &str = "keep";

/// The label Helm puts on everything it renders, which migration 45 selects.
const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

/// The platform's namespace and its version ConfigMap.
pub const PLATFORM_NAMESPACE: &str = "cozy-system";
pub const VERSION_CONFIGMAP: &str = "cozystack-version";

/// The keep annotation of `object`: `None` when it pins the object, else
/// its field and what it holds instead.
fn missing_keep<'a>(object: &Field<'a>) -> Result<Option<(Field<'a>, String)>, FieldError> {
    let annotation = object.at("metadata.annotations")?.field(RESOURCE_POLICY)?;
    Ok(match annotation.string()? {
        Some(value) if value.trim().eq_ignore_ascii_case(KEEP) => None,
        Some(value) => Some((annotation, format!("is {value:?}, not {KEEP:?}"))),
        None => Some((annotation, "is missing".to_owned())),
    })
}

/// Whether `object` is the one the request names by `name` (and namespace).
fn named(request: &Request<'_>, namespace: &str, name: &str) -> bool {
    request.namespace == namespace && request.name == name
}

/// KubeadmConfigTemplates that Helm manages must carry the keep pin.
pub fn kubeadm_config_template(
    request: &Request<'_>,
    object: &Field<'_>,
    _: &Settings,
) -> Result<Vec<Finding>, FieldError> {
    let managed_by = object.at("metadata.labels")?.field(MANAGED_BY)?;
    if managed_by.string()? != Some("Helm") {
        return Ok(Vec::new());
    }
    let Some((annotation, problem)) = missing_keep(object)? else {
        return Ok(Vec::new());
    };
    Ok(vec![Finding::new(
        crate::rules::KUBEADM_KEEP_PIN,
        annotation.path(),
        format!(
            "{problem}: Cozystack 1.6 drops KubeadmConfigTemplate from the kubernetes chart, so Helm would delete \
             {} while the kubeadm MachineSet still bootstraps from it and the Talos worker rollover would break. \
             Come through v1.5.4 (its migration 45 pins it) or run: kubectl annotate \
             kubeadmconfigtemplates.{BOOTSTRAP_GROUP}{} {} {RESOURCE_POLICY}={KEEP} --overwrite",
            request.describe(),
            request.kubectl_namespace_flag(),
            request.name,
        ),
    )])
}

/// The `cozy-system` Namespace must carry the keep pin; other Namespaces
/// are not judged.
pub fn cozy_system_namespace(
    request: &Request<'_>,
    object: &Field<'_>,
    _: &Settings,
) -> Result<Vec<Finding>, FieldError> {
    if !named(request, "", PLATFORM_NAMESPACE) {
        return Ok(Vec::new());
    }
    Ok(installer_pin(request, object, "namespace cozy-system")?
        .into_iter()
        .collect())
}

/// The `cozy-system/cozystack-version` ConfigMap must carry the keep pin
/// and a migration version the 1.6 upgrade runs from; other ConfigMaps are
/// not judged.
pub fn cozystack_version(
    request: &Request<'_>,
    object: &Field<'_>,
    settings: &Settings,
) -> Result<Vec<Finding>, FieldError> {
    if !named(request, PLATFORM_NAMESPACE, VERSION_CONFIGMAP) {
        return Ok(Vec::new());
    }
    let mut checks: Vec<Finding> = installer_pin(
        request,
        object,
        "configmap --namespace cozy-system cozystack-version",
    )?
    .into_iter()
    .collect();
    let version = object.at("data.version")?;
    checks.extend(migration_version(
        version.string()?,
        version.path(),
        settings,
    ));
    Ok(checks)
}

/// What to do about a migration version the upgrade cannot run from.
const RESTORE: &str = "Restore the version the cluster reached (46 after v1.5.4) before upgrading";

/// The migration version as the 1.6 chart reads it ([`migration`]: Sprig's
/// `int` after `dig`'s `"0"`), and what its upgrade then does.
fn migration_version(text: Option<&str>, path: FieldPath, settings: &Settings) -> Option<Finding> {
    let read = migration::hook_reads(text);
    let written = text.map_or_else(|| "is missing".to_owned(), |text| format!("{text:?}"));
    let then = match migration::Upgrade::from(read) {
        migration::Upgrade::Halts => format!(
            "run-migrations.sh, finding no migration {read}, exits 1, which halts the 1.6 upgrade"
        ),
        migration::Upgrade::Skips => format!(
            "the 1.6 chart renders no migration hook (it runs below {}), so migrations 45-53 never run",
            migration::V1_6_TARGET
        ),
        migration::Upgrade::Runs => format!(
            "the 1.6 upgrade runs migrations {read}-53, which a cluster that reached {} already ran",
            text.and_then(go_atoi).unwrap_or(read)
        ),
    };
    // A number in decimal that Sprig's `int` reads otherwise: a leading 0.
    if let Some(decimal) = text.and_then(go_atoi)
        && decimal != read
    {
        return Some(Finding::new(
            crate::rules::MIGRATION_VERSION_OCTAL,
            path,
            format!(
                "{written} starts with 0, which Sprig's int (migration-hook.yaml) reads as octal: the migration \
                 hook reads {read}, not {decimal}, and {then}. Write {decimal} without the leading 0"
            ),
        ));
    }
    match migration::Upgrade::from(read) {
        migration::Upgrade::Halts => Some(Finding::new(
            crate::rules::MIGRATION_VERSION,
            path,
            match text.and_then(sprig::parse) {
                Some(_) => format!("{written} reads as {read}: {then}. {RESTORE}"),
                None => format!(
                    "{written}: the migration hook reads it with Sprig's int (migration-hook.yaml), which \
                     takes {} as 0, and {then}. {RESTORE}",
                    if text.is_some() {
                        "it"
                    } else {
                        "a missing one"
                    }
                ),
            },
        )),
        migration::Upgrade::Skips if read > i64::from(migration::V1_6_TARGET) => {
            Some(Finding::new(
                crate::rules::MIGRATION_VERSION_BEYOND_TARGET,
                path,
                format!(
                    "{written} reads as {read}, past {}, the newest migration version a release stamps (v1.6.x): \
                 no Cozystack release wrote it, and {then}. {RESTORE}",
                    migration::V1_6_TARGET
                ),
            ))
        }
        migration::Upgrade::Runs if read < i64::from(settings.minimum_version) => {
            Some(Finding::new(
                crate::rules::MIGRATION_VERSION_BELOW_MINIMUM,
                path,
                format!(
                    "migration version {read} is below {}: the 1.6 notes say to come from the 1.5 line \
                 through v1.5.4 (stamped 46, its migration 45 pins KubeadmConfigTemplates) before 1.6",
                    settings.minimum_version
                ),
            ))
        }
        _ => None,
    }
}

/// The keep pin the 1.6 notes ask for before the installer upgrade.
fn installer_pin(
    request: &Request<'_>,
    object: &Field<'_>,
    kubectl_target: &str,
) -> Result<Option<Finding>, FieldError> {
    Ok(missing_keep(object)?.map(|(annotation, problem)| {
        Finding::new(
            crate::rules::INSTALLER_KEEP_PIN,
            annotation.path(),
            format!(
                "{problem} on {}: without it, removing or upgrading the cozy-installer release can delete \
                 the cozy-system namespace and everything in it. Before the installer upgrade run: \
                 kubectl annotate {kubectl_target} {RESOURCE_POLICY}={KEEP} --overwrite",
                request.describe(),
            ),
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::{FieldPath, Value};

    fn with_annotation(value: Option<Value>) -> Value {
        let annotations: Value = value.map(|v| (RESOURCE_POLICY, v)).into_iter().collect();
        let metadata: Value = [("annotations", annotations)].into_iter().collect();
        [("metadata", metadata)].into_iter().collect()
    }

    fn keep_path() -> FieldPath {
        FieldPath::parse("metadata.annotations").key(RESOURCE_POLICY)
    }

    #[test]
    fn keep_is_compared_as_helm_does() {
        for (value, pinned) in [
            ("keep", true),
            (" Keep ", true),
            ("KEEP", true),
            ("delete", false),
            ("", false),
        ] {
            let object = with_annotation(Some(Value::from(value)));
            let found = missing_keep(&Field::root(Some(&object))).unwrap();
            assert_eq!(found.is_none(), pinned, "{value}");
        }
        let bare = with_annotation(None);
        let (field, problem) = missing_keep(&Field::root(Some(&bare))).unwrap().unwrap();
        assert_eq!(field.path(), keep_path());
        assert_eq!(problem, "is missing");
        assert_eq!(
            keep_path().to_string(),
            "metadata.annotations[\"helm.sh/resource-policy\"]"
        );
    }
}
