//! Whether the 1.6 platform chart runs migrations 45–53 at all.
//!
//! Source: at v1.6.2 `packages/core/platform/templates/migration-hook.yaml`
//! renders the pre-upgrade hook Job only when `lookup "v1" "ConfigMap"
//! .Release.Namespace "cozystack-version"` finds the ConfigMap (and its
//! `data.version` is below `migrations.targetVersion`), and
//! `templates/cozystack-version.yaml` creates that ConfigMap, when it is
//! missing, at the target version (54). A 1.5 cluster without it therefore
//! upgrades with every migration skipped in silence: migration 47 never
//! pins md0, so Helm prunes the md0 MachineDeployments; migration 50 never
//! adopts the legacy etcd clusters; migration 45's keep pins never land.
//!
//! The platform release lives in `cozy-system`, so the rule judges that
//! Namespace (audit-scanner replays it, as every stored object) with one
//! `get` of the ConfigMap, masked to its name. Its content (an integer
//! version, the keep pin) is upgrade-readiness's.

use shared::lookup::{GetResource, get_optional};
use shared::{FieldPath, Findings};

use crate::rules::{MIGRATION_VERSION_MISSING, MIGRATION_VERSION_NOT_CHECKED};

pub const NAMESPACE: &str = "cozy-system";
pub const CONFIG_MAP: &str = "cozystack-version";
const NAME_MASK: &[&str] = &["metadata.name"];

/// The Namespace `cozy-system`: does its migration version exist?
pub fn version_recorded(request: &shared::Request<'_>, out: &mut Findings) {
    if &*request.name != NAMESPACE {
        return;
    }
    let found = get_optional(
        request.cluster(),
        &GetResource {
            api_version: "v1",
            kind: "ConfigMap",
            name: CONFIG_MAP,
            namespace: Some(NAMESPACE),
            disable_cache: false,
            field_masks: Some(NAME_MASK),
        },
    );
    match found {
        Ok(Some(_)) => {}
        Ok(None) => out.add(
            MIGRATION_VERSION_MISSING,
            FieldPath::root(),
            "ConfigMap cozy-system/cozystack-version does not exist: the 1.6 platform chart runs its migration \
             hook only when it finds it, then creates it at version 54, so migrations 45-53 are skipped in \
             silence (md0 MachineDeployments pruned, legacy etcd never adopted). Recreate it before upgrading \
             with data.version set to the version the cluster reached (46 on v1.5.4), the label \
             platform.cozystack.io/no-delete=true and the annotation helm.sh/resource-policy=keep",
        ),
        Err(error) => out.add(
            MIGRATION_VERSION_NOT_CHECKED,
            FieldPath::root(),
            format!("not checked: ConfigMap cozy-system/cozystack-version could not be read: {error}"),
        ),
    }
}
