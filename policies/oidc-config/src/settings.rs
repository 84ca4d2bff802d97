//! Settings of `oidc-config`.

use serde::Deserialize;
use shared::{Exemptions, Validatable};

fn enabled() -> bool {
    true
}

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Whether the platform's own OIDC (Keycloak, `authentication.oidc.enabled`
    /// in the platform values) is on. Mode `System` needs it; on clusters
    /// without it the charts fail the release, so the policy rejects the
    /// object instead. The charts read the flag from `_cluster.oidc-enabled`,
    /// which is the same in every namespace, so one cluster-wide setting
    /// says it exactly.
    #[serde(default = "enabled")]
    pub platform_oidc_enabled: bool,
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            platform_oidc_enabled: true,
            exemptions: Exemptions::default(),
        }
    }
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        self.exemptions.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> Result<Settings, String> {
        shared::settings::check::<Settings>(json.as_bytes())
    }

    #[test]
    fn platform_oidc_is_on_by_default() {
        assert_eq!(check("{}").unwrap(), Settings::default());
        assert!(Settings::default().platform_oidc_enabled);
        assert!(
            !check(r#"{"platformOidcEnabled": false}"#)
                .unwrap()
                .platform_oidc_enabled
        );
    }

    #[test]
    fn refuses_typos_and_wrong_types() {
        assert!(
            check(r#"{"platformOIDCEnabled": false}"#)
                .unwrap_err()
                .contains("unknown field `platformOIDCEnabled`")
        );
        assert!(
            check(r#"{"platformOidcEnabled": "false"}"#)
                .unwrap_err()
                .contains("expected a boolean")
        );
        assert!(check(r#"{"exemptions": {"groups": [""]}}"#).is_err());
    }
}
