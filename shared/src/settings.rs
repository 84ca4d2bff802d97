//! Settings shared by every policy, and the `validate_settings` entry point.
//!
//! policy-server validates settings once, at start-up, and refuses to start
//! when any policy answers `valid: false`; a typo must therefore be caught
//! here, exactly: every settings struct denies unknown fields, and the
//! message names the offending key.

use serde::Deserialize;
use serde::de::DeserializeOwned;

use kubewarden_policy_sdk::settings::{SettingsValidationResponse, Validatable};
use kubewarden_policy_sdk::wapc_guest::CallResult;

use crate::request::User;
use crate::rule::Rule;
use crate::validators::{is_dns1123_label, is_dns1123_subdomain};

/// Callers a rule does not apply to: platform controllers, break-glass
/// groups. Empty by default, as Cozystack's own guardrails exempt nobody.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Exemptions {
    /// User names, exactly as authenticated (`alice@example.org`).
    #[serde(default)]
    pub users: Vec<String>,
    /// Groups (`system:serviceaccounts:cozy-system` exempts every service
    /// account of that namespace).
    #[serde(default)]
    pub groups: Vec<String>,
    /// Service accounts as `namespace/name`.
    #[serde(default)]
    pub service_accounts: Vec<String>,
}

impl Exemptions {
    /// Checks every entry; the message names the setting and the entry.
    pub fn validate(&self) -> Result<(), String> {
        for (setting, values) in [
            ("exemptions.users", &self.users),
            ("exemptions.groups", &self.groups),
        ] {
            if let Some(i) = values.iter().position(|v| v.trim().is_empty()) {
                return Err(format!("{setting}[{i}] must not be empty"));
            }
        }
        for (i, account) in self.service_accounts.iter().enumerate() {
            let valid = account.split_once('/').is_some_and(|(namespace, name)| {
                is_dns1123_label(namespace) && is_dns1123_subdomain(name)
            });
            if !valid {
                return Err(format!(
                    "exemptions.serviceAccounts[{i}]: {account:?} is not namespace/name (for example cozy-system/cozystack-migration-hook)"
                ));
            }
        }
        Ok(())
    }

    /// Whether the user is exempt.
    pub fn exempts(&self, user: &User<'_>) -> bool {
        self.users.iter().any(|u| *u == user.username)
            || user
                .groups
                .iter()
                .any(|g| self.groups.iter().any(|e| e == g))
            || self.service_accounts.iter().any(|account| {
                account.split_once('/').is_some_and(|(namespace, name)| {
                    user.username
                        .strip_prefix("system:serviceaccount:")
                        .and_then(|rest| rest.split_once(':'))
                        == Some((namespace, name))
                })
            })
    }
}

/// The settings `deny` and `ignore`: rules named by their id, as a
/// finding's tag shows it (`[chart-render/external-without-tls]` is
/// `external-without-tls`), so what a user reads in a warning is what they
/// write to change it. `deny` raises a rule's warnings to denials; only a
/// rule of level [`crate::Level::Setting`] may be listed. `ignore` silences a
/// warning the policy can leave out. Every policy takes them in this one
/// shape, and [`RuleIds::validate`] refuses an id its catalogue does not
/// allow, naming the ones it does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct RuleIds(Vec<String>);

impl RuleIds {
    /// Whether `rule` is listed.
    pub fn contains(&self, rule: &Rule) -> bool {
        self.0.iter().any(|id| *id == rule.id)
    }

    /// Refuses an id that is not one of `allowed`, the ids the setting
    /// `setting` may list.
    pub fn validate(&self, setting: &str, allowed: &[&str]) -> Result<(), String> {
        for (i, id) in self.0.iter().enumerate() {
            if !allowed.contains(&id.as_str()) {
                return Err(format!(
                    "{setting}[{i}]: {id:?} is not a rule {setting} can list here; use one of {}",
                    allowed.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// serde's message without the line/column suffix, which means nothing to
/// someone who wrote the settings as YAML in a policy resource.
fn settings_error(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let trimmed = match text.rfind(" at line ") {
        Some(at) => text.get(..at).unwrap_or(&text),
        None => &text,
    };
    trimmed.to_owned()
}

/// Decodes settings, with messages fit for an operator. `validate` decodes
/// them the same way, so both entry points refuse the same documents and a
/// module carries one decoder of its settings, not two.
pub fn decode<S: DeserializeOwned>(payload: &[u8]) -> Result<S, String> {
    crate::strict::from_value(&parse(payload)?).map_err(|e| e.to_string())
}

/// The settings document as a JSON value. Not generic, so that it is
/// compiled once, in this crate, where request reading instantiates the
/// same `Value` deserialiser: inside the generic [`decode`] it became a
/// second copy in each policy's module.
#[inline(never)]
fn parse(payload: &[u8]) -> Result<serde_json::Value, String> {
    // serde fills a struct from a list by position; settings are a map.
    if payload.trim_ascii_start().first() == Some(&b'[') {
        return Err("settings must be a map of setting names to values, not a list".to_owned());
    }
    // Read as text, as requests are: the module then carries one copy of
    // serde_json's reading code, not a second one for byte slices.
    let text = std::str::from_utf8(payload)
        .map_err(|e| format!("settings must be UTF-8 JSON text: {e}"))?;
    serde_json::from_str(text).map_err(|e| settings_error(&e))
}

/// Decodes and validates settings, with messages fit for an operator.
pub fn check<S: DeserializeOwned + Validatable>(payload: &[u8]) -> Result<S, String> {
    let settings: S = decode(payload)?;
    settings.validate()?;
    Ok(settings)
}

/// The waPC `validate_settings` function of `policy` for settings type `S`.
/// A refusal names the policy: policy-server stops at start-up with this
/// message and nothing else says which of its policies was refused.
pub fn validate_settings<S: DeserializeOwned + Validatable>(
    policy: &str,
    payload: &[u8],
) -> CallResult {
    let outcome = check::<S>(payload);
    let response = SettingsValidationResponse {
        valid: outcome.is_ok(),
        message: outcome
            .err()
            .map(|problem| format!("{policy} settings: {problem}")),
    };
    Ok(serde_json::to_vec(&response)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::rule::Level;

    #[test]
    fn rule_ids_are_checked_against_what_the_policy_allows() {
        let ids: RuleIds = serde_json::from_str(r#"["a-rule", "b-rule"]"#).unwrap();
        assert!(ids.validate("deny", &["a-rule", "b-rule"]).is_ok());
        assert_eq!(
            ids.validate("deny", &["a-rule"]).unwrap_err(),
            "deny[1]: \"b-rule\" is not a rule deny can list here; use one of a-rule"
        );
        let rule = Rule {
            policy: "p",
            id: "a-rule",
            level: Level::Setting,
        };
        assert!(ids.contains(&rule));
        assert!(!RuleIds::default().contains(&rule));
    }
    use std::borrow::Cow;

    #[derive(Debug, Default, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Example {
        #[serde(default)]
        exemptions: Exemptions,
    }

    #[test]
    fn a_list_is_not_settings() {
        for payload in ["[]", " [true]", "[[\"alice\"]]"] {
            let error = check::<Example>(payload.as_bytes()).expect_err(payload);
            assert!(error.contains("not a list"), "{payload}: {error}");
        }
        assert!(check::<Example>(b"{}").is_ok());
    }

    #[test]
    fn settings_that_are_not_utf8_are_refused() {
        let error =
            check::<Example>(b"{\"exemptions\": {\"users\": [\"\xff\"]}}").expect_err("not UTF-8");
        assert!(
            error.starts_with("settings must be UTF-8 JSON text: "),
            "{error}"
        );
    }

    impl Validatable for Example {
        fn validate(&self) -> Result<(), String> {
            self.exemptions.validate()
        }
    }

    fn answer(settings: &str) -> SettingsValidationResponse {
        serde_json::from_slice(
            &validate_settings::<Example>("example", settings.as_bytes()).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_refused_by_name() {
        let typo = answer(r#"{"exemption": {}}"#);
        assert!(!typo.valid);
        assert_eq!(
            typo.message.unwrap(),
            "example settings: unknown field `exemption`, expected `exemptions`"
        );
        let nested = answer(r#"{"exemptions": {"user": ["a"]}}"#);
        assert!(nested.message.unwrap().contains("unknown field `user`"));
        let wrong = answer(r#"{"exemptions": {"users": "alice"}}"#);
        assert_eq!(
            wrong.message.unwrap(),
            "example settings: exemptions.users: invalid type: string \"alice\", expected a sequence"
        );
        let nested = answer(r#"{"exemptions": [["alice"]]}"#);
        assert!(!nested.valid);
        assert!(
            nested
                .message
                .unwrap()
                .starts_with("example settings: exemptions: is a list")
        );
        assert!(answer("{}").valid);
    }

    #[test]
    fn entries_are_checked() {
        let bad = answer(r#"{"exemptions": {"serviceAccounts": ["cozy-system:flux"]}}"#);
        assert!(
            bad.message
                .unwrap()
                .starts_with("example settings: exemptions.serviceAccounts[0]")
        );
        assert!(!answer(r#"{"exemptions": {"groups": [""]}}"#).valid);
        assert!(
            answer(
                r#"{"exemptions": {"serviceAccounts": ["cozy-system/cozystack-migration-hook"]}}"#
            )
            .valid
        );
    }

    #[test]
    fn exempts_users_groups_and_service_accounts() {
        let exemptions = Exemptions {
            users: vec!["alice".into()],
            groups: vec!["ops".into()],
            service_accounts: vec!["cozy-system/hook".into()],
        };
        let user = |name: &'static str, groups: &[&'static str]| User {
            username: Cow::Borrowed(name),
            groups: groups.iter().map(|g| Cow::Borrowed(*g)).collect(),
        };
        assert!(exemptions.exempts(&user("alice", &[])));
        assert!(exemptions.exempts(&user("bob", &["ops"])));
        assert!(exemptions.exempts(&user("system:serviceaccount:cozy-system:hook", &[])));
        assert!(!exemptions.exempts(&user("system:serviceaccount:cozy-system:other", &[])));
        assert!(!exemptions.exempts(&user("bob", &["dev"])));
    }
}
