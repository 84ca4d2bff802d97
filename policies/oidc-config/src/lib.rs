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
//! silently ignore input. Objects without `spec.oidc` are not looked at;
//! a Kubernetes `spec.oidc: null` is rejected (Helm drops the key and the
//! templates read `.Values.oidc.mode` without a default).
//!
//! One check needs the cluster: mode `System` fails the render while the
//! platform runs without OIDC. The setting `platformOidcEnabled` says so;
//! unset, the rule reads the flag from the Package
//! `cozystack.tenant-application` ([`platform`]), only for requests that ask
//! for mode `System` and are not rejected already.

mod apiserver;
mod chart;
mod custom_config;
mod email;
mod grafana;
pub mod platform;
pub mod rules;
mod settings;
mod users;

use chart::{Chart, Mode};
use release::Fact;
use shared::{
    FieldError, FieldPath, Kind, Operation, Refusal, Request, Review, Selection, Verdict,
};

pub use rules::RULES;
pub use settings::Settings;

/// What the rule reads of each object.
pub const READS: Selection = Selection::Paths(&[
    "spec.oidc",
    "spec.controlPlane.apiServer.extraArgs",
    "spec.controlPlane.apiServer.extraVolumes",
]);

shared::policy!(Settings, evaluate, READS);

/// `spec.oidc: null` on a Kubernetes object. Monitoring reads
/// `.Values.oidc | default dict` everywhere, so a null there is harmless.
const KUBERNETES_OIDC_NULL: &str = "null removes the key from the chart's values, and the Kubernetes chart reads \
    spec.oidc.mode without a default (templates/cluster.yaml, oidc-authn-config.yaml), so the release fails to \
    render with a nil pointer error. Delete the key to keep the chart default (mode None), or set spec.oidc.mode \
    to None, System or CustomConfig.";

/// The rule: over the request and settings; the one cluster read (mode
/// `System` without the setting) goes where the request says
/// ([`Request::cluster`]).
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
    if !oidc.is_present() && !oidc.is_null() {
        return Ok(Verdict::allow());
    }
    // `spec.oidc` came with v1.6: a release whose Kubernetes chart does not
    // declare it ignores it (values-schema warns about an undeclared key).
    let mut review = Review::new();
    let resolved = settings.cozystack_version.resolve(request.cluster());
    if let Some(note) = resolved.note(env!("CARGO_PKG_NAME"), "the OIDC templates") {
        review.warning(crate::rules::RELEASE_NOT_CHECKED, FieldPath::root(), note);
    }
    if !resolved
        .release()
        .is_some_and(|release| release.has(Fact::Oidc))
    {
        return Ok(review.verdict(Refusal::Invalid));
    }
    if chart == Chart::Kubernetes && oidc.is_null() {
        review.violation(crate::rules::OIDC_NULL, oidc.path(), KUBERNETES_OIDC_NULL);
        return Ok(review.verdict(Refusal::Invalid));
    }
    if !oidc.is_present() {
        return Ok(review.verdict(Refusal::Invalid));
    }
    oidc.expect(Kind::Object)?;

    let [mode_field, custom_field, users_field] =
        oidc.members(["mode", "customConfig", "users"])?;
    let mode = custom_config::mode(&mode_field, &mut review)?;
    let custom = custom_config::check(chart, &custom_field, (mode, &mode_field), &mut review)?;
    let mut users = users::read(&users_field)?;
    users::check_entries(chart, mode, &mut users, &mut review);

    if chart == Chart::Monitoring && custom.secret_ref && !users.is_empty() {
        // `assertCustomSecretRefUsersEmpty`, in every mode.
        review.violation(crate::rules::USERS_WITH_SECRET_REF,
            oidc.path(),
            "`users` is not honoured under `customConfig.secretRef` — the operator's mounted auth.ini is authoritative \
             and the chart cannot inject `skip_org_role_sync=true` / `oauth_allow_insecure_email_lookup=true`, so the \
             users-Job's role assignments would be overwritten on the operator's next login. Either switch to \
             `customConfig.config` (inline map, merged with the chart-forced settings) or unset `users` and manage \
             authorization inside the ini fragment yourself.",
        );
    }
    if mode == Mode::None && !users.is_empty() {
        review.warning(
            crate::rules::USERS_IGNORED,
            users_field.path(),
            chart.users_ignored(),
        );
    }
    if mode.is_enabled() {
        users::check_duplicates(chart, &mut users, &mut review);
        match chart {
            Chart::Kubernetes => {
                if request.operation == Operation::Update && !users.is_empty() {
                    match users::stored(&request.old_object()) {
                        Some(users::Stored::Bound(before)) => {
                            users::check_role_changes(&users, &before, &mut review);
                        }
                        Some(users::Stored::ListedWhileNone(before)) => {
                            users::warn_role_changes_after_none(&users, &before, &mut review);
                        }
                        None => {}
                    }
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
    if mode == Mode::System {
        platform::check(
            request,
            settings.platform_oidc_enabled,
            &mode_field,
            &mut review,
        );
    }
    Ok(review.verdict(Refusal::Invalid))
}
