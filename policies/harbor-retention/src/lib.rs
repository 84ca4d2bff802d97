//! `harbor-retention`: Harbor data is not kept, and the policy says so
//! before it is too late.
//!
//! Two rules, one concern (Cozystack v1.6 deletes an application's storage
//! with it):
//!
//! - CREATE/UPDATE of a Harbor: keys that try to override retention
//!   (`spec.persistence…`, any `persistence` under `spec.harbor`, any
//!   `resourcePolicy` under `spec`, the `helm.sh/resource-policy`
//!   annotation) are silently ignored by the chart, so they are rejected
//!   with the truth: the platform hard-codes `keep` and still deletes the
//!   volumes and the registry bucket. An UPDATE that only keeps such a key
//!   already stored is allowed with a warning, so an existing Harbor can
//!   still be edited and annotated for deletion.
//! - DELETE of a gated kind (Harbor by default; by settings any application
//!   kind, custom ones included): allowed only when the object carries
//!   `policies.cozystack.io/confirm-delete: <its name>`, and the refusal
//!   says what the deletion destroys where the policy knows it; the
//!   platform's own identities are exempt, so tenant teardown is never
//!   blocked.

mod gate;
mod ignored;
mod reclaim;
pub mod rules;
mod settings;
mod walk;

use std::collections::HashSet;

use shared::apps::APPS_GROUP;
use shared::{
    Field, FieldError, FieldPath, Finding, Kind, Operation, Refusal, Request, Review, Selection,
    Verdict,
};

pub use rules::RULES;
pub use settings::{DeleteGate, Settings};
use walk::{MAX_DEPTH, TooDeep};

/// What the rule reads of each object: the Harbor values and the
/// annotations (the confirmation, `helm.sh/resource-policy`). Most requests
/// need one object (an UPDATE reads the old one only to tell stored keys
/// from new ones), so each is read when first asked for.
pub const READS: Selection = Selection::OnDemand(&["metadata.annotations", "spec"]);

shared::policy!(Settings, evaluate, READS);

const IGNORED: &str = "is ignored by the Harbor chart, which has no persistence or resourcePolicy values: the platform \
     hard-codes persistence.resourcePolicy=keep and still deletes the jobservice and trivy volumes and the registry \
     bucket with every image when the Harbor is deleted. Remove it; to keep the data, back it up before deleting the Harbor.";

const ANNOTATION_IGNORED: &str = "keeps nothing: Helm honours it on the resources a chart renders, not on the \
     application. The platform hard-codes persistence.resourcePolicy=keep and still deletes the jobservice and trivy \
     volumes and the registry bucket with every image when the Harbor is deleted. Remove it; back up before deleting.";

const ALREADY_STORED: &str = "ignored by the Harbor chart (already stored, so this update is allowed); the volumes and \
     the registry bucket are deleted with the Harbor regardless. Remove it, and back up before deleting.";

/// The rule: pure over the request and settings.
pub fn evaluate(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    if settings.exemptions.exempts(&request.user) {
        return Ok(Verdict::allow());
    }
    match request.operation {
        Operation::Delete => gate::check(request, settings),
        Operation::Create | Operation::Update
            if request.group == APPS_GROUP && request.kind == "Harbor" =>
        {
            ignored_keys(request)
        }
        _ => Ok(Verdict::allow()),
    }
}

/// A spec nested beyond what the walk enters: malformed for a Harbor.
fn too_deep(path: FieldPath) -> Verdict {
    Verdict::malformed(Finding::new(
        rules::SPEC_TOO_DEEP,
        path,
        format!("nests deeper than {MAX_DEPTH} levels; Harbor values are at most four levels deep"),
    ))
}

/// The retention keys of an object.
struct Found<'a> {
    in_spec: Vec<Field<'a>>,
    annotation: Option<Field<'a>>,
}

/// Why the keys could not be listed.
enum Unlisted {
    Field(FieldError),
    TooDeep(FieldPath),
}

fn retention_keys<'a>(object: &Field<'a>) -> Result<Found<'a>, Unlisted> {
    let spec = object.field("spec").map_err(Unlisted::Field)?;
    let in_spec = ignored::find_in_spec(&spec).map_err(|TooDeep(path)| Unlisted::TooDeep(path))?;
    let annotation = ignored::annotation(object).map_err(Unlisted::Field)?;
    Ok(Found {
        in_spec,
        annotation,
    })
}

fn ignored_keys(request: &Request<'_>) -> Result<Verdict, FieldError> {
    let object = request.required_object()?;
    object.field("spec")?.expect(Kind::Object)?;
    let Found {
        in_spec,
        annotation,
    } = match retention_keys(&object) {
        Ok(found) => found,
        Err(Unlisted::Field(error)) => return Err(error),
        Err(Unlisted::TooDeep(path)) => return Ok(too_deep(path)),
    };
    if in_spec.is_empty() && annotation.is_none() {
        return Ok(Verdict::allow());
    }
    // An UPDATE may keep what is already stored: it is reported, but an
    // existing Harbor stays editable (and can be annotated for deletion).
    let stored: HashSet<FieldPath> = if request.operation == Operation::Update {
        match retention_keys(&request.old_object()) {
            Ok(old) => old
                .in_spec
                .iter()
                .chain(&old.annotation)
                .map(Field::path)
                .collect(),
            Err(_) => HashSet::new(),
        }
    } else {
        HashSet::new()
    };
    let mut review = Review::new();
    for field in &in_spec {
        let path = field.path();
        if stored.contains(&path) {
            review.warning(rules::IGNORED_RETENTION_KEY, path, ALREADY_STORED);
        } else {
            review.violation(rules::IGNORED_RETENTION_KEY, path, IGNORED);
        }
    }
    if let Some(annotation) = annotation {
        if stored.contains(&annotation.path()) {
            review.warning(
                rules::IGNORED_KEEP_ANNOTATION,
                annotation.path(),
                ALREADY_STORED,
            );
        } else {
            review.violation(
                rules::IGNORED_KEEP_ANNOTATION,
                annotation.path(),
                ANNOTATION_IGNORED,
            );
        }
    }
    Ok(review.verdict(Refusal::Invalid))
}
