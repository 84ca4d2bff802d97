//! `spec.oidc.mode` and `spec.oidc.customConfig`.
//!
//! Both charts treat an empty string, an empty map and an absent key alike
//! ("not set"); `customConfig` is read only in mode `CustomConfig`, where
//! exactly one of the inline config and `secretRef.name` must be set.

use shared::{Field, FieldError, Kind, Review};

use crate::chart::{BOTH_SET, Chart, MODES, Mode};

/// The mode of `spec.oidc.mode`, reporting a value outside the enum and an
/// explicit `null`.
pub fn mode(field: &Field<'_>, review: &mut Review) -> Result<Mode, FieldError> {
    if field.is_null() {
        // Helm drops a null key before it validates the values, so the
        // chart default does not apply and the schema's `required: [mode]`
        // fails the release.
        review.violation(crate::rules::MODE_NULL,
            field.path(),
            format!(
                "null removes the key from the chart's values, and the chart's schema requires spec.oidc.mode, \
                 so the release fails to render. Delete the key (the chart default is None) or set one of {MODES}."
            ),
        );
        return Ok(Mode::Invalid);
    }
    let Some(text) = field.string()? else {
        // The chart default.
        return Ok(Mode::None);
    };
    let mode = Mode::parse(text);
    if mode == Mode::Invalid {
        let hint = if MODES
            .split(", ")
            .any(|name| name.eq_ignore_ascii_case(text))
        {
            " (the names are case-sensitive)"
        } else {
            ""
        };
        review.violation(crate::rules::MODE_UNKNOWN,
            field.path(),
            format!(
                "{text:?} is not one of the allowed values {MODES}{hint}; the chart's schema rejects it."
            ),
        );
    }
    Ok(mode)
}

/// What `customConfig` holds.
#[derive(Debug)]
pub struct CustomConfig<'a> {
    /// The inline config, set (non-empty, or of the wrong type).
    pub config: Option<Field<'a>>,
    /// `secretRef.name` is non-empty.
    pub secret_ref: bool,
}

/// Reads `spec.oidc.customConfig` and checks it against the mode.
pub fn check<'a>(
    chart: Chart,
    custom: &Field<'a>,
    (mode, mode_field): (Mode, &Field<'a>),
    review: &mut Review,
) -> Result<CustomConfig<'a>, FieldError> {
    let [config, secret_ref] = custom.members(["config", "secretRef"])?;
    let secret_ref = secret_ref
        .field("name")?
        .string()?
        .is_some_and(|name| !name.is_empty());
    let config_set = match (config.kind(), chart.config_kind()) {
        (None, _) => false,
        (Some(Kind::String), Kind::String) => config.string()?.is_some_and(|c| !c.is_empty()),
        (Some(Kind::Object), Kind::Object) => config
            .json()
            .and_then(|c| c.as_object())
            .is_some_and(|members| !members.is_empty()),
        (Some(found), _) => {
            review.violation(
                crate::rules::CUSTOM_CONFIG_TYPE,
                config.path(),
                chart.config_type_problem(found),
            );
            // Written with intent, so it counts as set: the type is the
            // one thing to fix.
            true
        }
    };
    match mode {
        Mode::CustomConfig if config_set && secret_ref => {
            review.violation(
                crate::rules::CUSTOM_CONFIG_EXCLUSIVE,
                custom.path(),
                BOTH_SET,
            );
        }
        Mode::CustomConfig if !config_set && !secret_ref => {
            review.violation(
                crate::rules::CUSTOM_CONFIG_MISSING,
                mode_field.path(),
                chart.neither_set(),
            );
        }
        _ => {}
    }
    if matches!(mode, Mode::None | Mode::System) && (config_set || secret_ref) {
        review.warning(crate::rules::CUSTOM_CONFIG_IGNORED,
            custom.path(),
            format!(
                "ignored: the chart reads customConfig only in mode CustomConfig, and spec.oidc.mode is {}.",
                mode.name()
            ),
        );
    }
    Ok(CustomConfig {
        config: config_set.then_some(config),
        secret_ref,
    })
}
