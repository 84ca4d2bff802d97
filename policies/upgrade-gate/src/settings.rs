//! Settings of `upgrade-gate`.

use serde::Deserialize;
use shared::{Exemptions, Rule, Validatable};

use crate::rules::TENANT_QUOTA_UNBOUNDED;

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
    /// Reject a sub-tenant without `resourceQuotas` under a tenant whose
    /// sub-tree has a budget, instead of warning. Cozystack 1.6 accepts
    /// such a tenant (it shares its ancestor's budget); on 1.5 nothing
    /// bounds it, so a cluster that wants 1.6's fixed slices before the
    /// upgrade turns this on.
    #[serde(default)]
    pub deny_unbounded_sub_tenants: bool,
}

impl Settings {
    /// Whether the settings raise `rule`, a warning by default, to a denial.
    pub fn raises(&self, rule: &Rule) -> bool {
        *rule == TENANT_QUOTA_UNBOUNDED && self.deny_unbounded_sub_tenants
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
    fn the_setting_raises_exactly_the_raisable_rules() {
        let on = check(r#"{"denyUnboundedSubTenants": true}"#).unwrap();
        let raised = |settings: &Settings| crate::RULES.ids_where(|rule| settings.raises(rule));
        assert_eq!(raised(&on), crate::RULES.raisable());
        assert!(raised(&Settings::default()).is_empty());
    }

    #[test]
    fn defaults_and_refusals() {
        assert_eq!(check("{}").unwrap(), Settings::default());
        assert!(
            check(r#"{"denyUnboundedSubTenants": true}"#)
                .unwrap()
                .deny_unbounded_sub_tenants
        );
        assert!(
            check(r#"{"denyUnboundedSubTenants": "yes"}"#)
                .unwrap_err()
                .contains("expected a boolean")
        );
        assert!(
            check(r#"{"denyUnboundedSubtenants": true}"#)
                .unwrap_err()
                .contains("unknown field `denyUnboundedSubtenants`")
        );
    }
}
