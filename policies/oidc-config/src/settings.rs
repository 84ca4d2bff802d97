//! Settings of `oidc-config`.

use release::CozystackVersion;
use serde::Deserialize;
use shared::{Exemptions, Validatable};

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Whether the platform's own OIDC (Keycloak, `authentication.oidc.enabled`
    /// in the platform values) is on. Mode `System` needs it; on clusters
    /// without it the charts fail the release, so the policy rejects the
    /// object instead. The charts read the flag from `_cluster.oidc-enabled`,
    /// which is the same in every namespace, so one cluster-wide setting
    /// says it exactly.
    ///
    /// Set, it is authoritative and the policy makes no cluster read. Unset
    /// (the default), the policy reads the same flag from the cluster-scoped
    /// Package `cozystack.tenant-application` ([`crate::platform`]) when a
    /// request asks for mode `System`, and only warns when it cannot.
    #[serde(default)]
    pub platform_oidc_enabled: Option<bool>,
    /// The Cozystack release the cluster runs: a release the bundle knows
    /// (`v1.6.2`, the default, …, `v1.5.0`, with or without the `v`), or
    /// `cluster`, the release the cluster records. `spec.oidc` came with
    /// v1.6: the v1.5 charts of Kubernetes and Monitoring have no such key
    /// and ignore it (values-schema warns about an undeclared key), so under
    /// a v1.5 release nothing here applies; on a release the bundle does not
    /// know, nothing is checked, saying so.
    #[serde(default)]
    pub cozystack_version: CozystackVersion,
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        self.exemptions.validate()?;
        self.cozystack_version.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> Result<Settings, String> {
        shared::settings::check::<Settings>(json.as_bytes())
    }

    #[test]
    fn platform_oidc_is_read_from_the_cluster_by_default() {
        assert_eq!(check("{}").unwrap(), Settings::default());
        assert_eq!(Settings::default().platform_oidc_enabled, None);
        assert_eq!(
            check(r#"{"platformOidcEnabled": null}"#)
                .unwrap()
                .platform_oidc_enabled,
            None
        );
        assert_eq!(
            check(r#"{"platformOidcEnabled": false}"#)
                .unwrap()
                .platform_oidc_enabled,
            Some(false)
        );
        assert_eq!(
            check(r#"{"platformOidcEnabled": true}"#)
                .unwrap()
                .platform_oidc_enabled,
            Some(true)
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
