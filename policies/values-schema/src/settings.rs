//! Settings of `values-schema`.

use serde::Deserialize;
use shared::{CozystackVersion, Exemptions, Validatable};

use crate::schemas::{RELEASES, Release, release};

/// What becomes of a key the chart does not declare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum UndeclaredKeys {
    /// A warning naming the closest declared key (the default).
    #[default]
    Warn,
    /// A rejection, as for a schema violation.
    Deny,
    /// Nothing.
    Ignore,
}

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// The Cozystack release whose chart schemas apply: `v1.6.2` (the
    /// default) or `v1.5.4`, with or without the `v`.
    #[serde(default)]
    pub cozystack_version: CozystackVersion,
    /// What to do with keys a chart does not declare.
    #[serde(default)]
    pub undeclared_keys: UndeclaredKeys,
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
}

impl Settings {
    /// Whether the settings raise `rule`, a warning by default, to a denial.
    pub fn raises(&self, rule: &shared::Rule) -> bool {
        *rule == crate::rules::UNDECLARED_KEY && self.undeclared_keys == UndeclaredKeys::Deny
    }

    /// The release the settings select; `None` only for a version that
    /// [`Validatable::validate`] refuses.
    pub fn release(&self) -> Option<&'static Release> {
        release(self.cozystack_version.release()?.as_str())
    }
}

/// `v1.6.2 or v1.5.4`.
pub fn versions() -> String {
    let names: Vec<&str> = RELEASES.iter().map(|r| r.version).collect();
    match names.as_slice() {
        [init @ .., last] if !init.is_empty() => format!("{} or {last}", init.join(", ")),
        _ => names.join(""),
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
    fn versions_with_or_without_v() {
        assert_eq!(check("{}").unwrap().release().unwrap().version, "v1.6.2");
        for (given, selected) in [
            ("v1.5.4", "v1.5.4"),
            ("1.5.4", "v1.5.4"),
            ("1.6.2", "v1.6.2"),
        ] {
            let settings = check(&format!(r#"{{"cozystackVersion": "{given}"}}"#)).unwrap();
            assert_eq!(settings.release().unwrap().version, selected);
        }
        let refused = check(r#"{"cozystackVersion": "v1.6"}"#).unwrap_err();
        assert!(refused.contains("set v1.6.2 or v1.5.4"), "{refused}");
    }

    #[test]
    fn the_setting_raises_exactly_the_raisable_rules() {
        let deny = check(r#"{"undeclaredKeys": "deny"}"#).unwrap();
        let raised = |settings: &Settings| crate::RULES.ids_where(|rule| settings.raises(rule));
        assert_eq!(raised(&deny), crate::RULES.raisable());
        assert!(raised(&Settings::default()).is_empty());
    }

    #[test]
    fn undeclared_keys_and_typos() {
        assert_eq!(
            check(r#"{"undeclaredKeys": "deny"}"#)
                .unwrap()
                .undeclared_keys,
            UndeclaredKeys::Deny
        );
        assert!(
            check(r#"{"undeclaredKeys": "error"}"#)
                .unwrap_err()
                .contains("unknown variant `error`")
        );
        assert!(
            check(r#"{"cozystack_version": "v1.6.2"}"#)
                .unwrap_err()
                .contains("unknown field `cozystack_version`")
        );
    }
}
