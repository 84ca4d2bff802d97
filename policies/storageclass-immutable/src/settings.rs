//! Settings of `storageclass-immutable`.

use serde::Deserialize;
use shared::validators::is_kind_name;
use shared::{Exemptions, Validatable};

/// A field to guard beyond the platform's own list, for kinds or fields
/// that newer platform versions add.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdditionalField {
    /// The kind (`kind.kind` of the request), e.g. `ClickHouse`.
    pub kind: String,
    /// Dotted path under `spec`, e.g. `spec.keeper.storageClass`.
    pub path: String,
    /// The chart default that applies when the field is absent.
    #[serde(default)]
    pub default: String,
}

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
    /// Extra immutable fields.
    #[serde(default)]
    pub additional_fields: Vec<AdditionalField>,
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        self.exemptions.validate()?;
        for (i, extra) in self.additional_fields.iter().enumerate() {
            if !is_kind_name(&extra.kind) {
                return Err(format!(
                    "additionalFields[{i}].kind {:?} is not a kind name (for example ClickHouse)",
                    extra.kind
                ));
            }
            let segments: Vec<&str> = extra.path.split('.').collect();
            if segments.len() < 2
                || segments.first() != Some(&"spec")
                || segments.iter().any(|s| s.is_empty())
            {
                return Err(format!(
                    "additionalFields[{i}].path {:?} must be a dotted path under spec (for example spec.keeper.storageClass)",
                    extra.path
                ));
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
    fn accepts_extra_fields_and_refuses_bad_ones() {
        let ok = check(
            r#"{"additionalFields": [{"kind": "ClickHouse", "path": "spec.keeper.storageClass"}]}"#,
        )
        .unwrap();
        assert_eq!(ok.additional_fields[0].default, "");
        assert!(
            check(r#"{"additionalFields": [{"kind": "clickhouse", "path": "spec.a"}]}"#)
                .unwrap_err()
                .contains("kind")
        );
        assert!(
            check(r#"{"additionalFields": [{"kind": "X", "path": "storageClass"}]}"#)
                .unwrap_err()
                .contains("under spec")
        );
        assert!(check(r#"{"additionalFields": [{"kind": "X", "path": "spec..a"}]}"#).is_err());
        assert!(
            check(r#"{"additionalFields": [{"kind": "X", "path": "spec.a", "dflt": ""}]}"#)
                .unwrap_err()
                .contains("unknown field `dflt`")
        );
    }
}
