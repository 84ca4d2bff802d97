//! `oidc-config`: `spec.oidc` of tenant Kubernetes clusters and Monitoring
//! (Grafana), checked at admission instead of at render time.
//!
//! Cozystack v1.6 added OIDC to two charts with the same selector
//! (`mode: None | System | CustomConfig`) but different details: the
//! inline `customConfig.config` is a YAML string for Kubernetes and a map
//! for Monitoring, the roles are `admin|view` and `Admin|Editor|Viewer`,
//! and Monitoring validates its users in every mode, even `None`.
//! cozystack-api validates none of it (it does not apply the charts'
//! schemas), so a mistake becomes a failed HelmRelease long after `kubectl`
//! said "created". This policy rejects, with the charts' own messages,
//! every `oidc` block the schemas or templates would reject, plus the user
//! lists that break the charts' user jobs; it warns where the charts
//! silently ignore input. Objects without `spec.oidc` are not looked at.

mod apiserver;
mod chart;
mod custom_config;
mod email;
mod grafana;
mod settings;
mod users;

use chart::{Chart, Mode};
use shared::{FieldError, Kind, Operation, Reading, Refusal, Request, Review, Verdict};

pub use settings::Settings;

/// What the rule reads of each object.
pub const READS: Reading = Reading::Paths(&[
    "spec.oidc",
    "spec.controlPlane.apiServer.extraArgs",
    "spec.controlPlane.apiServer.extraVolumes",
]);

shared::policy!(Settings, evaluate, READS);

/// The rule: pure over the request and settings.
pub fn evaluate(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    let Some(chart) = Chart::of(&request.group, &request.kind) else {
        return Ok(Verdict::allow());
    };
    if !matches!(request.operation, Operation::Create | Operation::Update)
        || settings.exemptions.exempts(&request.user)
    {
        return Ok(Verdict::allow());
    }
    let object = request.required_object()?;
    let [oidc, control_plane] = object.field("spec")?.members(["oidc", "controlPlane"])?;
    if !oidc.is_present() {
        return Ok(Verdict::allow());
    }
    oidc.expect(Kind::Object)?;

    let mut review = Review::new();
    let [mode_field, custom_field, users_field] =
        oidc.members(["mode", "customConfig", "users"])?;
    let mode = custom_config::mode(&mode_field, &mut review)?;
    let custom = custom_config::check(
        chart,
        &custom_field,
        (mode, &mode_field),
        settings.platform_oidc_enabled,
        &mut review,
    )?;
    let mut users = users::read(&users_field)?;
    users::check_entries(chart, mode, &mut users, &mut review);

    if chart == Chart::Monitoring && custom.secret_ref && !users.is_empty() {
        // `assertCustomSecretRefUsersEmpty`, in every mode.
        review.violation(
            oidc.path(),
            "`users` is not honoured under `customConfig.secretRef` — the operator's mounted auth.ini is authoritative \
             and the chart cannot inject `skip_org_role_sync=true` / `oauth_allow_insecure_email_lookup=true`, so the \
             users-Job's role assignments would be overwritten on the operator's next login. Either switch to \
             `customConfig.config` (inline map, merged with the chart-forced settings) or unset `users` and manage \
             authorization inside the ini fragment yourself.",
        );
    }
    if mode == Mode::None && !users.is_empty() {
        review.warning(users_field.path(), chart.users_ignored());
    }
    if mode.is_enabled() {
        users::check_duplicates(chart, &mut users, &mut review);
        match chart {
            Chart::Kubernetes => {
                if request.operation == Operation::Update && !users.is_empty() {
                    let before = users::bound_before(&request.old_object());
                    users::check_role_changes(&users, &before, &mut review);
                }
                apiserver::check(&control_plane, mode, &mut review)?;
            }
            Chart::Monitoring => {
                if let (Mode::CustomConfig, Some(config), false, false) =
                    (mode, &custom.config, custom.secret_ref, users.is_empty())
                {
                    grafana::check_forced_keys(config, &mut review)?;
                }
            }
        }
    }
    Ok(review.verdict(Refusal::Invalid))
}
