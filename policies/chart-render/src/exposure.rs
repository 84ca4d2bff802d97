//! `external: true` with TLS explicitly off (Kafka, NATS, Qdrant).
//!
//! The three charts read `tls.enabled` as a tri-state (`kindIs "invalid"`):
//! unset inherits `external`, so an exposed service gets TLS unless someone
//! writes `tls.enabled: false`. Sources (v1.6.2): `packages/apps/kafka/
//! templates/_tls.tpl` and `values.yaml` ("setting this to false while
//! external is true exposes Kafka over plaintext on a public IP via
//! LoadBalancer"), `packages/apps/nats/templates/_tls.tpl`,
//! `packages/apps/qdrant/templates/_helpers.tpl`. Postgres is not listed:
//! its `tls.enabled` only controls the certificate's external name; the
//! wire stays encrypted.
//!
//! An external NATS with TLS also names the tenant's host in its
//! certificate (`packages/apps/nats/templates/certmanager.yaml`, 72), a
//! tenant value: warned about.

use shared::{Field, FieldError};

use shared::Findings;

/// What goes over plaintext, per kind.
pub fn exposed(kind: &str) -> Option<&'static str> {
    match kind {
        "Kafka" => Some("the external Kafka listener (9094) on a LoadBalancer IP"),
        "NATS" => Some("NATS client connections on a LoadBalancer IP"),
        "Qdrant" => Some("the Qdrant REST and gRPC APIs on a LoadBalancer IP"),
        _ => None,
    }
}

/// The rule over the spec of an exposed kind.
pub fn check(kind: &str, spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let Some(what) = exposed(kind) else {
        return Ok(());
    };
    let [external, tls] = spec.members(["external", "tls"])?;
    let enabled = tls.field("enabled")?;
    if kind == "NATS" && external.bool()? == Some(true) && enabled.bool()? != Some(false) {
        out.add(
            crate::rules::EXTERNAL_NEEDS_HOST,
            external.path(),
            "the TLS certificate of an external NATS names <release>.<tenant host>, and in a tenant without a host \
             the chart fails to render (external is true but _namespace.host is not set); this policy does not read \
             the tenant. Give the tenant a host (spec.host of its Tenant or a parent's), or keep NATS internal.",
        );
    }
    if external.bool()? == Some(true) && enabled.bool()? == Some(false) {
        out.add(crate::rules::EXTERNAL_WITHOUT_TLS,
            enabled.path(),
            format!(
                "false while spec.external is true exposes {what} without TLS. Remove tls.enabled (it then follows \
                 external) or set it to true."
            ),
        );
    }
    Ok(())
}
