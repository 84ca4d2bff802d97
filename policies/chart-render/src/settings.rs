//! Settings of `chart-render`.

use release::CozystackVersion;
use serde::Deserialize;
use shared::{Exemptions, RuleIds, Validatable};

use crate::rules::RULES;

/// Settings of the policy; every field is optional, and the defaults never
/// deny what the platform renders.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
    /// Rules whose warnings are denials instead, by id: those of verdict
    /// "warn (deny by setting)" in the README's Rules table.
    #[serde(default)]
    pub deny: RuleIds,
    /// The Cozystack release whose templates the rules follow: a release
    /// the bundle knows (`v1.6.2`, the default, `v1.6.1`, `v1.6.0`,
    /// `v1.5.4`, `v1.5.3`, `v1.5.2`, `v1.5.1`, `v1.5.0`), or `cluster`, the
    /// release the cluster records (on one the bundle does not know,
    /// nothing is checked, saying so). Under a v1.5 release the checks
    /// follow its charts: Kubernetes v1.30 renders, and `maxUnhealthy`'s
    /// format and apiServer's extra volumes are not read; before v1.5.2, a
    /// node group's half-set resources render.
    #[serde(default)]
    pub cozystack_version: CozystackVersion,
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        self.exemptions.validate()?;
        self.deny.validate("deny", &RULES.raisable())?;
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
    fn defaults_only_warn_and_deny_lists_the_raisable_rules() {
        assert_eq!(check("{}").unwrap(), Settings::default());
        let all = check(
            r#"{"deny": ["external-without-tls", "flux-minimum-version",
                "addons-without-workers", "ingress-without-role"]}"#,
        )
        .unwrap();
        for rule in RULES.rules() {
            assert_eq!(
                all.deny.contains(&rule),
                RULES.raisable().contains(&rule.id),
                "{}",
                rule.id
            );
        }
        assert_eq!(
            check(r#"{"deny": ["removed-version"]}"#).unwrap_err(),
            "deny[0]: \"removed-version\" is not a rule deny can list here; use one of \
             flux-minimum-version, addons-without-workers, ingress-without-role, external-without-tls"
        );
    }

    #[test]
    fn refuses_typos_and_wrong_types() {
        assert!(
            check(r#"{"denyExternalWithoutTls": true}"#)
                .unwrap_err()
                .contains("unknown field `denyExternalWithoutTls`")
        );
        assert!(check(r#"{"deny": "external-without-tls"}"#).is_err());
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
