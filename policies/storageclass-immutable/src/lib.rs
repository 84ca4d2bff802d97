//! `storageclass-immutable`: the charts' `storageClass is immutable`, enforced.
//!
//! Sixteen Cozystack charts mark their storage class `@immutable`
//! (`self == oldSelf`), but cozystack-api evaluates no CEL: only the
//! dashboard honours the marker, and `kubectl` can change the class. The
//! release then re-renders with the new class while every existing
//! PersistentVolumeClaim keeps the old one; nothing migrates. This policy
//! rejects such an UPDATE at admission, comparing *effective* values: an
//! absent field (or an absent parent object, or a PUT body without `spec`)
//! means the chart default; an explicit `null` means `""`, because Helm's
//! coalescing deletes a null key together with its default and every
//! template then names no class. Where the chart cannot render without the
//! field (FoundationDB, Kafka), a new `null` is rejected as such.

mod fields;
pub mod rules;
mod settings;

use fields::{ImmutableField, platform_fields};
use shared::request::required;
use shared::{
    Field, FieldError, FieldPath, Operation, Refusal, Request, Review, Selection, Verdict,
};

pub use rules::RULES;
pub use settings::{AdditionalField, Settings};

/// What the rule reads of each object: the platform's immutable fields of
/// every kind, up front. Fields the settings add are read when a request of
/// their kind comes ([`Request::object_reading`]).
pub const READS: Selection = Selection::Paths(fields::PLATFORM_PATHS);

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
            required: false,
        });
    platform_fields(kind)
        .iter()
        .cloned()
        .chain(configured)
        .collect()
}

/// Where an object's effective class comes from.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    /// The field holds the class.
    Set,
    /// The field, or a parent object, is absent: the chart default applies.
    Omitted,
    /// The field, or a parent object under `spec`, is an explicit `null`
    /// (here): Helm's coalescing deletes the key together with its default,
    /// so the templates see no class, as for `""`.
    Null(FieldPath),
}

/// The class the chart would render for `field` of `object`, and why.
fn effective<'a>(
    object: &Field<'a>,
    field: &ImmutableField<'a>,
) -> Result<(&'a str, Source), FieldError> {
    let mut current = object.clone();
    for (depth, key) in field.path.split('.').enumerate() {
        current = current.field(key)?;
        // `spec` itself is the release's whole values: a null there gives
        // Helm no values, so every default applies, as when it is absent.
        if depth > 0 && current.is_null() {
            return Ok(("", Source::Null(current.path())));
        }
    }
    Ok(match current.string()? {
        Some(class) => (class, Source::Set),
        None => (field.default, Source::Omitted),
    })
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
    let (old, new) = if fields
        .iter()
        .all(|field| fields::PLATFORM_PATHS.contains(&field.path))
    {
        (None, None)
    } else {
        let paths: Vec<&str> = fields.iter().map(|field| field.path).collect();
        (
            Some(request.old_object_reading(&paths)),
            Some(request.object_reading(&paths)),
        )
    };
    let old_object = match &old {
        Some(read) => required(Field::root(read.as_ref()), "oldObject")?,
        None => request.required_old_object()?,
    };
    let object = match &new {
        Some(read) => required(Field::root(read.as_ref()), "object")?,
        None => request.required_object()?,
    };
    let mut review = Review::new();
    for field in &fields {
        let (old_value, old_source) = effective(&old_object, field)?;
        let (new_value, new_source) = effective(&object, field)?;
        if let Source::Null(at) = &new_source
            && field.required
            && !matches!(old_source, Source::Null(_))
        {
            let advice = if *at == FieldPath::parse(field.path) {
                format!("Set it to {old_value:?}, the current class.")
            } else {
                format!("Send {at} with storageClass {old_value:?}, the current class.")
            };
            review.violation(
                rules::NULL_STORAGE_CLASS,
                at.clone(),
                format!(
                    "must not be null: Helm drops a null value together with the chart default, \
                     and the {} chart cannot render without {at}, so {} would fail to render. {advice}",
                    request.kind,
                    request.describe(),
                ),
            );
            continue;
        }
        if old_value != new_value {
            let why = match &new_source {
                Source::Set => String::new(),
                Source::Omitted => format!(
                    " (the request omits it, so the chart default {:?} would apply)",
                    field.default
                ),
                Source::Null(at) => format!(
                    " (the request sets {at} to null, which Helm drops together with the chart default, \
                     so no class would be named)"
                ),
            };
            review.violation(
                rules::STORAGE_CLASS_CHANGED,
                FieldPath::parse(field.path),
                format!(
                    "storageClass is immutable: {} cannot change from {old_value:?} to {new_value:?}{why}. \
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
