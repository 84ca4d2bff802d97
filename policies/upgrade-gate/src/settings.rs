//! Settings of `upgrade-gate`.

use serde::Deserialize;
use shared::{Exemptions, RuleIds, Validatable};

use crate::rules::RULES;

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
    /// Rules whose warnings are denials instead, by id: those of verdict
    /// "warn (deny by setting)" in the README's Rules table. Listing
    /// `tenant-quota-unbounded` rejects a sub-tenant without
    /// `resourceQuotas` under a tenant whose sub-tree has a budget.
    /// Cozystack 1.6 accepts such a tenant (it shares its ancestor's
    /// budget); on 1.5 nothing bounds it, so a cluster that wants 1.6's
    /// fixed slices before the upgrade lists it.
    #[serde(default)]
    pub deny: RuleIds,
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        self.exemptions.validate()?;
        self.deny.validate("deny", &RULES.raisable())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> Result<Settings, String> {
        shared::settings::check::<Settings>(json.as_bytes())
    }

    #[test]
    fn defaults_and_refusals() {
        assert_eq!(check("{}").unwrap(), Settings::default());
        assert!(
            check(r#"{"deny": ["tenant-quota-unbounded"]}"#)
                .unwrap()
                .deny
                .contains(&crate::rules::TENANT_QUOTA_UNBOUNDED)
        );
        assert_eq!(RULES.raisable(), ["tenant-quota-unbounded"]);
        assert_eq!(
            check(r#"{"deny": ["worker-remediation"]}"#).unwrap_err(),
            "deny[0]: \"worker-remediation\" is not a rule deny can list here; use one of tenant-quota-unbounded"
        );
        assert!(
            check(r#"{"denyUnboundedSubTenants": true}"#)
                .unwrap_err()
                .contains("unknown field `denyUnboundedSubTenants`")
        );
    }
}
