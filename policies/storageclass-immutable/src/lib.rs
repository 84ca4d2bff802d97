//! `storageclass-immutable`: the charts' `storageClass is immutable`, enforced.
//!
//! Sixteen Cozystack charts mark their storage class `@immutable`
//! (`self == oldSelf`), but cozystack-api evaluates no CEL: only the
//! dashboard honours the marker, and `kubectl` can change the class. The
//! release then re-renders with the new class while every existing
//! PersistentVolumeClaim keeps the old one; nothing migrates. This policy
//! rejects such an UPDATE at admission, comparing *effective* values: an
//! absent field (or an absent parent object, or a PUT body without `spec`)
//! means the chart default.

mod fields;
mod settings;

use fields::{ImmutableField, platform_fields};
use shared::request::required;
use shared::{Field, FieldError, FieldPath, Operation, Reading, Refusal, Request, Review, Verdict};

pub use settings::{AdditionalField, Settings};

/// What the rule reads of each object: the immutable fields of the
/// request's kind, which settings may add to, so nothing up front
/// ([`Request::object_reading`]).
pub const READS: Reading = Reading::OnDemand(&[]);

shared::policy!(Settings, evaluate, READS);

/// The immutable fields of the request's kind: the platform's and the
/// configured ones.
fn immutable_fields<'s>(kind: &str, settings: &'s Settings) -> Vec<ImmutableField<'s>> {
    let configured = settings
        .additional_fields
        .iter()
        .filter(|extra| extra.kind == kind)
        .map(|extra| ImmutableField {
            path: &extra.path,
            default: &extra.default,
        });
    platform_fields(kind)
        .iter()
        .cloned()
        .chain(configured)
        .collect()
}

/// The rule: pure over the request and settings.
pub fn evaluate(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    if request.operation != Operation::Update || settings.exemptions.exempts(&request.user) {
        return Ok(Verdict::allow());
    }
    let fields = immutable_fields(&request.kind, settings);
    if fields.is_empty() {
        return Ok(Verdict::allow());
    }
    let paths: Vec<&str> = fields.iter().map(|field| field.path).collect();
    let (old, new) = (
        request.old_object_reading(&paths),
        request.object_reading(&paths),
    );
    let old_object = required(Field::root(old.as_ref()), "oldObject")?;
    let object = required(Field::root(new.as_ref()), "object")?;
    let mut review = Review::new();
    for field in &fields {
        let before = old_object.at(field.path)?;
        let after = object.at(field.path)?;
        let old_value = before.string_or(field.default)?;
        let new_value = after.string_or(field.default)?;
        if old_value != new_value {
            let omitted = if after.is_present() {
                String::new()
            } else {
                format!(
                    " (the request omits it, so the chart default {:?} would apply)",
                    field.default
                )
            };
            review.violation(
                FieldPath::parse(field.path),
                format!(
                    "storageClass is immutable: {} cannot change from {old_value:?} to {new_value:?}{omitted}. \
                     Existing PersistentVolumeClaims keep their class, so the change would never move any data. \
                     Keep {old_value:?}; to use another class, back up, create a new {} with it and restore into it.",
                    request.describe(),
                    request.kind,
                ),
            );
        }
    }
    Ok(review.verdict(Refusal::Invalid))
}
