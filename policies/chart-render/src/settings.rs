//! Settings of `chart-render`.

use serde::Deserialize;
use shared::{CozystackVersion, Exemptions, Rule, Validatable};

use crate::rules;

/// Settings of the policy; every field is optional, and the defaults never
/// deny what the platform renders.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
    /// Deny, instead of warning about, `external: true` with
    /// `tls.enabled: false` on Kafka, NATS and Qdrant.
    #[serde(default)]
    pub deny_external_without_tls: bool,
    /// Deny, instead of warning about, an addon enabled on a Kubernetes
    /// version below the one it needs (the Flux addon below v1.33).
    #[serde(default)]
    pub deny_addons_below_minimum_version: bool,
    /// Deny, instead of warning about, addons enabled while no node group
    /// can ever run them (every `maxReplicas` 0, or ingress-nginx without
    /// a node group carrying its role).
    #[serde(default)]
    pub deny_addons_without_workers: bool,
    /// The Cozystack release the cluster runs: `v1.6.2` (the default) or
    /// `v1.5.4`. Under `v1.5.4` the checks follow its charts: Kubernetes
    /// v1.30 renders, and `maxUnhealthy`'s format and apiServer's extra
    /// volumes are not read.
    #[serde(default)]
    pub cozystack_version: CozystackVersion,
}

impl Settings {
    /// Whether the settings raise `rule`, a warning by default, to a denial.
    pub fn raises(&self, rule: &Rule) -> bool {
        [
            (rules::EXTERNAL_WITHOUT_TLS, self.deny_external_without_tls),
            (
                rules::FLUX_MINIMUM_VERSION,
                self.deny_addons_below_minimum_version,
            ),
            (
                rules::ADDONS_WITHOUT_WORKERS,
                self.deny_addons_without_workers,
            ),
            (
                rules::INGRESS_WITHOUT_ROLE,
                self.deny_addons_without_workers,
            ),
        ]
        .iter()
        .any(|(raised, on)| raised == rule && *on)
    }
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
    fn defaults_only_warn() {
        assert_eq!(check("{}").unwrap(), Settings::default());
        let all = check(
            r#"{"denyExternalWithoutTls": true, "denyAddonsBelowMinimumVersion": true,
                "denyAddonsWithoutWorkers": true}"#,
        )
        .unwrap();
        assert!(all.deny_external_without_tls);
        assert!(all.deny_addons_below_minimum_version);
        assert!(all.deny_addons_without_workers);
        // Exactly the rules the catalogue says a setting raises.
        let raised = |settings: &Settings| rules::RULES.ids_where(|rule| settings.raises(rule));
        assert_eq!(raised(&all), rules::RULES.raisable());
        assert!(raised(&Settings::default()).is_empty());
    }

    #[test]
    fn refuses_typos_and_wrong_types() {
        assert!(
            check(r#"{"denyExternalWithoutTLS": true}"#)
                .unwrap_err()
                .contains("unknown field `denyExternalWithoutTLS`")
        );
        assert!(
            check(r#"{"denyAddonsWithoutWorkers": "yes"}"#)
                .unwrap_err()
                .contains("expected a boolean")
        );
        assert!(
            check(r#"{"cozystackVersion": "1.5"}"#)
                .unwrap_err()
                .starts_with("cozystackVersion \"1.5\" is not a release this policy knows")
        );
        assert!(
            check(r#"{"exemptions": {"serviceAccounts": ["nobody"]}}"#)
                .unwrap_err()
                .contains("exemptions.serviceAccounts[0]")
        );
    }
}
