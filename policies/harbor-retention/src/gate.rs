//! The confirmation gate: deleting an application whose deletion reclaims
//! storage needs an annotation whose value is the object's name.
//!
//! This is a policy of this bundle, not a Cozystack rule. Since v1.6 the
//! post-delete hooks delete volumes, buckets and Secrets the moment the
//! application is deleted, and nothing asks first. The annotation makes
//! the deletion a deliberate, two-step act that names its target, as
//! `kubectl annotate` must be run against that very object. Application
//! annotations are stored on the HelmRelease and come back un-prefixed in
//! `oldObject.metadata.annotations` on DELETE.

use shared::catalogue::{APPS_GROUP, app_kind};
use shared::{FieldError, Refusal, Request, Review, Verdict};

use crate::reclaim::reclaimed_kind;
use crate::settings::{DeleteGate, Settings};

/// The confirmation annotation.
pub const CONFIRM: &str = "policies.cozystack.io/confirm-delete";

/// The rule for DELETE.
pub fn check(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    let gate = &settings.delete_gate;
    if request.group != APPS_GROUP
        || !gate.covers(&request.kind)
        || (gate.exempt_platform && DeleteGate::is_platform(&request.user))
    {
        return Ok(Verdict::allow());
    }
    let (Some(reclaimed), Some(app)) = (reclaimed_kind(&request.kind), app_kind(&request.kind))
    else {
        return Ok(Verdict::allow());
    };
    let old_object = request.required_old_object()?;
    let name = old_object
        .at("metadata.name")?
        .string()?
        .unwrap_or(&request.name);
    let confirmation = old_object.at("metadata.annotations")?.field(CONFIRM)?;
    let value = confirmation.string()?;
    if value == Some(name) {
        return Ok(Verdict::allow());
    }
    let release = format!("{}{name}", app.release_prefix);
    let destroys = reclaimed.destroys.replace("{release}", &release);
    let (problem, overwrite) = match &value {
        None => ("needs a confirmation".to_owned(), ""),
        Some(other) => (
            format!("needs a confirmation whose value is its name, not {other:?}"),
            " --overwrite",
        ),
    };
    let mut review = Review::new();
    review.violation(
        confirmation.path(),
        format!(
            "Deleting {} {problem}: since Cozystack v1.6 deleting it is irreversible and deletes {destroys}, \
             along with the HelmRelease {release}. Back up first, then confirm and delete again: \
             kubectl annotate {}.{APPS_GROUP} {name}{} {CONFIRM}={name}{overwrite}",
            request.describe(),
            app.plural,
            request.kubectl_namespace_flag(),
        ),
    );
    Ok(review.verdict(Refusal::Forbidden))
}
