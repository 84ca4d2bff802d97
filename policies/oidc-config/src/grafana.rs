//! Monitoring: inline `[auth.generic_oauth]` keys the chart overrides.
//!
//! With a non-empty `users` list, `grafana.yaml` merges
//! `skip_org_role_sync = true`, `oauth_allow_insecure_email_lookup = true`
//! and `allow_sign_up = false` over the inline map (`merge` keeps the
//! chart's values), so a different value written there is silently
//! ignored: the users Job's contract depends on them.

use shared::{Field, FieldError, Kind, Review, Value};

/// The keys the chart forces, with their values.
const FORCED: &[(&str, &str)] = &[
    ("skip_org_role_sync", "true"),
    ("oauth_allow_insecure_email_lookup", "true"),
    ("allow_sign_up", "false"),
];

/// Warns for each forced key of `config` (the inline map, in use) that asks
/// for another value.
pub fn check_forced_keys(config: &Field<'_>, review: &mut Review) -> Result<(), FieldError> {
    if config.kind() != Some(Kind::Object) {
        return Ok(());
    }
    for (key, forced) in FORCED {
        let value = config.field(key)?;
        let Some(json) = value.json() else {
            continue;
        };
        let same = match json {
            Value::Bool(flag) => flag.to_string() == *forced,
            Value::String(text) => text.eq_ignore_ascii_case(forced),
            _ => false,
        };
        if !same {
            review.warning(crate::rules::GRAFANA_FORCED_SETTING,
                value.path(),
                format!("ignored: with spec.oidc.users set, the chart forces {key} = {forced} over the inline map."),
            );
        }
    }
    Ok(())
}
