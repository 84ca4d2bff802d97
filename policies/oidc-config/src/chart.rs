//! The two charts behind `spec.oidc`, and how they differ.
//!
//! Sources (Cozystack v1.6.2): `packages/apps/kubernetes/templates/`
//! `{oidc-authn-config,oidc-keycloak,oidc-rbac-job,cluster}.yaml` and
//! `values.schema.json`; `packages/system/monitoring/templates/_helpers.tpl`,
//! `grafana/{grafana,oidc-users-job}.yaml` and
//! `packages/extra/monitoring/values.schema.json`. The failure messages are
//! the charts' own `fail` texts, so auditors recognise them.

use shared::Kind;
use shared::apps::APPS_GROUP;

/// Which chart renders the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    /// `packages/apps/kubernetes`: the tenant kube-apiserver.
    Kubernetes,
    /// `packages/extra/monitoring` → `packages/system/monitoring`: Grafana.
    Monitoring,
}

/// `spec.oidc.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    None,
    System,
    CustomConfig,
    /// A value outside the enum (already reported); mode-dependent checks
    /// are skipped, as the chart never gets that far.
    Invalid,
}

impl Mode {
    /// The enum value as written, `None` for a non-member.
    pub fn parse(text: &str) -> Mode {
        match text {
            "None" => Mode::None,
            "System" => Mode::System,
            "CustomConfig" => Mode::CustomConfig,
            _ => Mode::Invalid,
        }
    }

    /// Whether the chart wires OIDC (and uses `users`).
    pub fn is_enabled(self) -> bool {
        matches!(self, Mode::System | Mode::CustomConfig)
    }

    /// The name as the chart spells it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::None => "None",
            Mode::System => "System",
            Mode::CustomConfig => "CustomConfig",
            Mode::Invalid => "(invalid)",
        }
    }
}

/// Shared by both charts (`oidc-authn-config.yaml`, `_helpers.tpl`).
pub const BOTH_SET: &str =
    "set exactly one of `config` (inline) or `secretRef.name` — they are mutually exclusive.";

/// Shared by both charts (`oidc-keycloak.yaml`, `_helpers.tpl`).
pub const SYSTEM_NEEDS_PLATFORM: &str = "System requires the platform-level OIDC feature (authentication.oidc.enabled) — enable it in cozystack-values, or use mode: CustomConfig for a tenant-supplied issuer.";

/// The allowed mode values, for messages.
pub const MODES: &str = "None, System, CustomConfig";

impl Chart {
    /// The chart of a request's kind, if it is one of the two.
    pub fn of(group: &str, kind: &str) -> Option<Chart> {
        if group != APPS_GROUP {
            return None;
        }
        match kind {
            "Kubernetes" => Some(Chart::Kubernetes),
            "Monitoring" => Some(Chart::Monitoring),
            _ => None,
        }
    }

    /// The roles `users[].role` may take.
    pub fn roles(self) -> &'static [&'static str] {
        match self {
            Chart::Kubernetes => &["admin", "view"],
            Chart::Monitoring => &["Admin", "Editor", "Viewer"],
        }
    }

    /// The JSON type of `customConfig.config`.
    pub fn config_kind(self) -> Kind {
        match self {
            Chart::Kubernetes => Kind::String,
            Chart::Monitoring => Kind::Object,
        }
    }

    /// The chart's message for mode `CustomConfig` with neither payload.
    pub fn neither_set(self) -> &'static str {
        match self {
            Chart::Kubernetes => {
                "CustomConfig requires either spec.oidc.customConfig.config (inline AuthenticationConfiguration) or spec.oidc.customConfig.secretRef.name (Secret with config.yaml key)."
            }
            Chart::Monitoring => {
                "CustomConfig requires either spec.oidc.customConfig.config (inline generic_oauth map) or spec.oidc.customConfig.secretRef.name (Secret with an `auth.ini` key)."
            }
        }
    }

    /// What `customConfig.config` must be, when it is something else.
    pub fn config_type_problem(self, found: Kind) -> String {
        match self {
            Chart::Kubernetes => format!(
                "must be a string holding the AuthenticationConfiguration YAML (apiserver.config.k8s.io/v1beta1), not {}; \
                 the chart's schema rejects it. (Monitoring takes a map here; Kubernetes takes text: write it as a block scalar `config: |`.)",
                found.described()
            ),
            Chart::Monitoring => format!(
                "must be a map of [auth.generic_oauth] keys (client_id, auth_url, token_url, ...), not {}; \
                 the chart's schema rejects it. (Kubernetes takes a YAML string here; for a ready-made ini fragment use secretRef.name with an auth.ini key.)",
                found.described()
            ),
        }
    }

    /// What the chart does with `users` in mode `None`, for the warning.
    pub fn users_ignored(self) -> &'static str {
        match self {
            Chart::Kubernetes => {
                "ignored while spec.oidc.mode is None: the chart binds no users. Set mode System or CustomConfig, or remove them."
            }
            Chart::Monitoring => {
                "ignored while spec.oidc.mode is None: the chart reconciles no Grafana users. Set mode System or CustomConfig, or remove them."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_two_apps_kinds() {
        assert_eq!(
            Chart::of("apps.cozystack.io", "Kubernetes"),
            Some(Chart::Kubernetes)
        );
        assert_eq!(
            Chart::of("apps.cozystack.io", "Monitoring"),
            Some(Chart::Monitoring)
        );
        assert_eq!(Chart::of("apps.cozystack.io", "Postgres"), None);
        assert_eq!(Chart::of("example.org", "Kubernetes"), None);
    }

    #[test]
    fn modes_are_case_sensitive() {
        assert_eq!(Mode::parse("System"), Mode::System);
        assert_eq!(Mode::parse("system"), Mode::Invalid);
        assert_eq!(Mode::parse(""), Mode::Invalid);
        assert!(Mode::CustomConfig.is_enabled());
        assert!(!Mode::None.is_enabled());
        assert!(!Mode::Invalid.is_enabled());
    }
}
