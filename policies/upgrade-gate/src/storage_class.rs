//! LINSTOR StorageClasses that Cozystack 1.6 propagates into tenant
//! clusters.
//!
//! Source: the v1.6 release notes, pre-upgrade check 4 ("Remote-accessible
//! LINSTOR StorageClasses are now created inside each tenant cluster under
//! the same name ... Infra classes that must stay node-local need an
//! explicit linstor.csi.linbit.com/allowRemoteVolumeAccess: \"false\"; an
//! absent annotation is treated as remote-accessible."), and at v1.6.2
//! `packages/apps/kubernetes/templates/helmreleases/csi.yaml`, which
//! propagates every class with `provisioner: linstor.csi.linbit.com` whose
//! **`parameters`** key `linstor.csi.linbit.com/allowRemoteVolumeAccess` is
//! not exactly `"false"` (absent counts as `"true"`). The template never
//! reads annotations, whatever the notes say (`../shared/domain/cozystack.md`
//! §6.8, §8).
//!
//! A node-local class is one whose `linstor.csi.linbit.com/layerList` lacks
//! `drbd`: without DRBD a volume cannot be reached from another node.
//! Parameters are immutable, so the fix is a new class; both findings are
//! warnings, as the upgrade goes through and only what tenants see changes.

use shared::{Field, FieldError, FieldPath, Findings};

use crate::rules::{LINSTOR_ANNOTATION_IGNORED, LINSTOR_NODE_LOCAL_PROPAGATED};

pub const GROUP: &str = "storage.k8s.io";
pub const KIND: &str = "StorageClass";
const PROVISIONER: &str = "linstor.csi.linbit.com";
pub const REMOTE_ACCESS: &str = "linstor.csi.linbit.com/allowRemoteVolumeAccess";
const LAYER_LIST: &str = "linstor.csi.linbit.com/layerList";

/// A StorageClass: what 1.6 does with it in tenant clusters.
pub fn propagation(object: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    if object.field("provisioner")?.string()? != Some(PROVISIONER) {
        return Ok(());
    }
    let parameters = object.field("parameters")?;
    let remote = parameters.field(REMOTE_ACCESS)?;
    if remote.string()? == Some("false") {
        return Ok(());
    }
    let annotation = object.at("metadata.annotations")?.field(REMOTE_ACCESS)?;
    if let Some(value) = annotation.string()? {
        out.add(
            LINSTOR_ANNOTATION_IGNORED,
            annotation.path(),
            format!(
                "{value:?} is ignored: 1.6 reads only parameters, so it propagates this class into tenant \
                 clusters; recreate it with the key in parameters"
            ),
        );
    }
    let layers = parameters.field(LAYER_LIST)?;
    let node_local = layers.string()?.is_some_and(|list| {
        !list
            .split_whitespace()
            .any(|layer| layer.eq_ignore_ascii_case("drbd"))
    });
    if node_local {
        let path: FieldPath = remote.path();
        out.add(
            LINSTOR_NODE_LOCAL_PROPAGATED,
            path,
            format!(
                "is {} on a node-local class (layerList {:?}): 1.6 propagates it into tenant clusters; \
                 recreate it with \"false\" here",
                match remote.string()? {
                    Some(value) => format!("{value:?}"),
                    None => "absent".to_owned(),
                },
                layers.string()?.unwrap_or_default(),
            ),
        );
    }
    Ok(())
}
