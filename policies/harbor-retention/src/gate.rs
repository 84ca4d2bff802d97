//! The confirmation gate: deleting an application of a gated kind needs an
//! annotation whose value is the object's name.
//!
//! This is a policy of this bundle, not a Cozystack rule. Since v1.6 the
//! post-delete hooks delete volumes, buckets and Secrets the moment the
//! application is deleted, and nothing asks first. The annotation makes
//! the deletion a deliberate, two-step act that names its target, as
//! `kubectl annotate` must be run against that very object. Application
//! annotations are stored on the HelmRelease and come back un-prefixed in
//! `oldObject.metadata.annotations` on DELETE.
//!
//! The refusal says what the deletion destroys for the kinds in
//! [`crate::reclaim`]; for any other gated kind (a catalogue kind, or a
//! custom ApplicationDefinition's) it says only what is certain: the
//! HelmRelease goes, and with it whatever its chart does on uninstall.

use shared::apps::{APPS_GROUP, app_kind};
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
    let app = app_kind(&request.kind);
    let release = app.map(|app| format!("{}{name}", app.release_prefix));
    let helm_release = release.as_ref().map_or_else(
        || "its HelmRelease".to_owned(),
        |r| format!("the HelmRelease {r}"),
    );
    let loss = match (reclaimed_kind(&request.kind), &release) {
        (Some(reclaimed), Some(release)) => format!(
            "in Cozystack v1.6 deleting it is irreversible and deletes {}, along with {helm_release}",
            reclaimed.destroys.replace("{release}", release)
        ),
        _ => format!(
            "deleting it deletes {helm_release}, which uninstalls its chart; this policy does not know what \
             that destroys for {} (in Cozystack v1.6 many applications delete their volumes, buckets or \
             Secrets with them)",
            request.kind
        ),
    };
    let resource = app.map_or_else(
        || request.kubectl_resource(),
        |app| format!("{}.{APPS_GROUP}", app.plural),
    );
    let (problem, overwrite) = match &value {
        None => ("needs a confirmation".to_owned(), ""),
        Some(other) => (
            format!("needs a confirmation whose value is its name, not {other:?}"),
            " --overwrite",
        ),
    };
    let mut review = Review::new();
    review.violation(
        crate::rules::UNCONFIRMED_DELETE,
        confirmation.path(),
        format!(
            "Deleting {} {problem}: {loss}. Back up first, then confirm and delete again: \
             kubectl annotate {resource} {name}{} {CONFIRM}={name}{overwrite}",
            request.describe(),
            request.kubectl_namespace_flag(),
        ),
    );
    Ok(review.verdict(Refusal::Forbidden))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::lookup::Offline;

    fn delete(kind: &str, plural: &str, name: &str) -> String {
        format!(
            r#"{{"request": {{"uid": "u", "operation": "DELETE",
                "kind": {{"group": "apps.cozystack.io", "version": "v1alpha1", "kind": "{kind}"}},
                "resource": {{"group": "apps.cozystack.io", "version": "v1alpha1", "resource": "{plural}"}},
                "name": "{name}", "namespace": "tenant-foo", "userInfo": {{"username": "alice"}},
                "oldObject": {{"metadata": {{"name": "{name}", "namespace": "tenant-foo"}}, "spec": {{}}}}}},
                "settings": {{}}}}"#
        )
    }

    fn message(payload: &str, kinds: &[&str]) -> Option<String> {
        let settings = Settings {
            delete_gate: DeleteGate {
                kinds: kinds.iter().map(|k| (*k).to_owned()).collect(),
                ..DeleteGate::default()
            },
            ..Settings::default()
        };
        let payload = shared::request::read(payload.as_bytes(), crate::READS, &Offline).unwrap();
        check(&payload.request, &settings).unwrap().message()
    }

    #[test]
    fn a_catalogue_kind_without_a_loss_text_names_its_release() {
        let message = message(&delete("Postgres", "postgreses", "db"), &["Postgres"]).unwrap();
        assert!(
            message.contains(
                "Deleting Postgres tenant-foo/db needs a confirmation: deleting it deletes the HelmRelease \
                 postgres-db, which uninstalls its chart; this policy does not know what that destroys for Postgres"
            ),
            "{message}"
        );
        assert!(!message.contains("irreversible"), "{message}");
        assert!(message.ends_with(
            "kubectl annotate postgreses.apps.cozystack.io db --namespace tenant-foo \
             policies.cozystack.io/confirm-delete=db"
        ));
    }

    #[test]
    fn a_custom_kind_is_gated_with_a_generic_message() {
        let payload = delete("Valkey", "valkeys", "cache");
        let message = message(&payload, &["Harbor", "Valkey"]).unwrap();
        assert!(
            message.contains(
                "Deleting Valkey tenant-foo/cache needs a confirmation: deleting it deletes its HelmRelease, \
                 which uninstalls its chart; this policy does not know what that destroys for Valkey"
            ),
            "{message}"
        );
        assert!(message.ends_with(
            "kubectl annotate valkeys.apps.cozystack.io cache --namespace tenant-foo \
             policies.cozystack.io/confirm-delete=cache"
        ));
        assert_eq!(self::message(&payload, &["Harbor"]), None);
    }
}
