//! Kubernetes: the kube-apiserver passthrough fields that collide with the
//! chart's OIDC wiring.
//!
//! With a mode other than `None`, `cluster.yaml` injects
//! `--authentication-config=/etc/kubernetes/authentication-config/config.yaml`
//! and a volume named `authentication-config`, and fails the render when
//! the user's `controlPlane.apiServer` passthrough already has either (the
//! kube-apiserver refuses to boot with both `--authentication-config` and
//! legacy `--oidc-*` flags). In mode `None` the passthrough is left alone,
//! so nothing is checked.

use shared::{Field, FieldError, Review};

use crate::chart::Mode;

/// The volume name the chart reserves.
const RESERVED_VOLUME: &str = "authentication-config";

/// Checks `spec.controlPlane.apiServer.{extraArgs,extraVolumes}` for a mode
/// that wires OIDC, given `spec.controlPlane`.
pub fn check(control_plane: &Field<'_>, mode: Mode, review: &mut Review) -> Result<(), FieldError> {
    let [extra_args, extra_volumes] = control_plane
        .field("apiServer")?
        .members(["extraArgs", "extraVolumes"])?;
    for arg in extra_args.items()? {
        let Some(text) = arg.string()? else {
            continue;
        };
        let tail = if text.starts_with("--oidc-") {
            "the kube-apiserver refuses to boot with both --authentication-config (injected by spec.oidc) and legacy \
             --oidc-* flags. Remove the --oidc-* flags from controlPlane.apiServer.extraArgs and use spec.oidc.mode: \
             CustomConfig with a customConfig.config carrying the same issuer/audience if you need to override, or \
             spec.oidc.mode: System for the platform cozy default."
        } else if text.starts_with("--authentication-config") {
            "the chart already injects --authentication-config= for OIDC. Drop your explicit flag and let \
             spec.oidc.mode: CustomConfig own the AuthenticationConfiguration (customConfig.config or \
             customConfig.secretRef.name), or leave spec.oidc.mode: None and keep managing the flag yourself."
        } else {
            continue;
        };
        review.violation(crate::rules::RESERVED_APISERVER_FLAG,
            arg.path(),
            format!(
                "controlPlane.apiServer.extraArgs contains {text:?} while spec.oidc.mode is {:?} — {tail}",
                mode.name()
            ),
        );
    }
    for volume in extra_volumes.items()? {
        let name = volume.field("name")?;
        if name.string()? == Some(RESERVED_VOLUME) {
            review.violation(crate::rules::RESERVED_APISERVER_VOLUME,
                name.path(),
                "controlPlane.apiServer.extraVolumes: volume name \"authentication-config\" is reserved by the chart \
                 for OIDC AuthenticationConfiguration when spec.oidc.mode is not None — rename your volume.",
            );
        }
    }
    Ok(())
}
