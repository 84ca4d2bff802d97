//! `no-delete`: Cozystack's deletion guardrail as a Kubewarden policy.
//!
//! Cozystack ships the ValidatingAdmissionPolicy `cozystack-no-delete-guardrail`:
//! a DELETE of any object whose existing labels carry
//! `platform.cozystack.io/no-delete` with the exact value `"true"` is denied,
//! for everyone; other values do not protect. This policy has the same
//! semantics and adds what the VAP cannot express: exemptions, and an opt-in
//! rule that only named groups may lift the protection (remove or change the
//! label), so lifting it becomes an auditable break-glass step.

mod settings;

use shared::{Field, FieldError, Operation, Reading, Refusal, Request, Review, Verdict};

pub use settings::{LabelRemoval, Settings};

/// What the rule reads of each object.
pub const READS: Reading = Reading::Paths(&["metadata.labels"]);

shared::policy!(Settings, evaluate, READS);

/// The only value that protects, as in the VAP binding's `matchLabels`.
const PROTECTED: &str = "true";

/// The protecting label of `object`: its field, and whether it protects.
fn protection<'a>(object: &Field<'a>, key: &str) -> Result<(Field<'a>, bool), FieldError> {
    let label = object.at("metadata.labels")?.field(key)?;
    let protects = label.string()? == Some(PROTECTED);
    Ok((label, protects))
}

/// The rule: pure over the request and settings.
pub fn evaluate(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    if settings.exemptions.exempts(&request.user) {
        return Ok(Verdict::allow());
    }
    match request.operation {
        Operation::Delete => deletion(request, settings),
        Operation::Update => match &settings.label_removal {
            Some(guard) => label_removal(request, settings, guard),
            None => Ok(Verdict::allow()),
        },
        Operation::Create | Operation::Connect => Ok(Verdict::allow()),
    }
}

fn deletion(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    let old_object = request.required_old_object()?;
    let (label, protects) = protection(&old_object, &settings.label_key)?;
    let mut review = Review::new();
    if protects {
        review.violation(
            label.path(),
            format!(
                "Deletion blocked: {} carries {key}={PROTECTED}. To delete it, first lift the protection: \
                 kubectl label {} {}{} {key}-",
                request.describe(),
                request.kubectl_resource(),
                request.name,
                request.kubectl_namespace_flag(),
                key = settings.label_key,
            ),
        );
    }
    Ok(review.verdict(Refusal::Forbidden))
}

fn label_removal(
    request: &Request<'_>,
    settings: &Settings,
    guard: &LabelRemoval,
) -> Result<Verdict, FieldError> {
    let (_, was_protected) = protection(&request.old_object(), &settings.label_key)?;
    if !was_protected {
        return Ok(Verdict::allow());
    }
    let (label, still_protected) = protection(&request.object(), &settings.label_key)?;
    let allowed = request
        .user
        .groups
        .iter()
        .any(|group| guard.allowed_groups.iter().any(|g| g == group));
    let mut review = Review::new();
    if !still_protected && !allowed {
        review.violation(
            label.path(),
            format!(
                "{} is protected from deletion and only members of {} may lift the protection; \
                 keep {}={PROTECTED} or ask one of them",
                request.describe(),
                guard.allowed_groups.join(", "),
                settings.label_key,
            ),
        );
    }
    Ok(review.verdict(Refusal::Forbidden))
}
