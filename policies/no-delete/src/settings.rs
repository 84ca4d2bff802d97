//! Settings of `no-delete`.

use serde::Deserialize;
use shared::validators::check_qualified_name;
use shared::{Exemptions, Validatable};

/// The label Cozystack stamps on objects that must never be deleted.
pub const DEFAULT_LABEL_KEY: &str = "platform.cozystack.io/no-delete";

fn default_label_key() -> String {
    DEFAULT_LABEL_KEY.to_owned()
}

/// Who may lift the protection: when set, an UPDATE that removes the label
/// or changes its value is rejected unless the user is in one of the groups
/// or is one of the platform's own writers (`crate::is_platform_writer`),
/// which are never refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelRemoval {
    pub allowed_groups: Vec<String>,
}

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// The protecting label; its value must be exactly `"true"`.
    #[serde(default = "default_label_key")]
    pub label_key: String,
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
    /// Opt-in guard on lifting the protection.
    #[serde(default)]
    pub label_removal: Option<LabelRemoval>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            label_key: default_label_key(),
            exemptions: Exemptions::default(),
            label_removal: None,
        }
    }
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        check_qualified_name(&self.label_key).map_err(|problems| {
            format!(
                "labelKey {:?} is not a valid label key: {}",
                self.label_key,
                problems.join("; ")
            )
        })?;
        self.exemptions.validate()?;
        if let Some(guard) = &self.label_removal {
            if guard.allowed_groups.is_empty() {
                return Err("labelRemoval.allowedGroups must name at least one group; \
                     an empty list would let nobody but the platform's own writers lift protection; \
                     name the break-glass group, for example cozystack-cluster-admin"
                    .to_owned());
            }
            if let Some(i) = guard
                .allowed_groups
                .iter()
                .position(|g| g.trim().is_empty())
            {
                return Err(format!("labelRemoval.allowedGroups[{i}] must not be empty"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> Result<Settings, String> {
        shared::settings::check::<Settings>(json.as_bytes())
    }

    #[test]
    fn defaults_match_the_platform_guardrail() {
        let settings = check("{}").unwrap();
        assert_eq!(settings, Settings::default());
        assert_eq!(settings.label_key, "platform.cozystack.io/no-delete");
    }

    #[test]
    fn refuses_bad_keys_and_empty_guards() {
        assert!(
            check(r#"{"labelKey": "not a key"}"#)
                .unwrap_err()
                .starts_with("labelKey \"not a key\"")
        );
        assert!(
            check(r#"{"labelRemoval": {"allowedGroups": []}}"#)
                .unwrap_err()
                .contains("at least one group")
        );
        assert!(
            check(r#"{"labelRemoval": {}}"#)
                .unwrap_err()
                .contains("missing field `allowedGroups`")
        );
        assert!(
            check(r#"{"labelKeys": "x"}"#)
                .unwrap_err()
                .contains("unknown field `labelKeys`")
        );
    }
}
