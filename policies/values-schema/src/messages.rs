//! boon's error tree as findings: one per leaf violation, at the field it
//! is about (`spec.users.alice.password`), in a user's words.
//!
//! boon nests errors: the schema's own, `allOf`/`$ref` groups, and for
//! `anyOf`/`oneOf` one subtree per alternative. Groups are flattened;
//! alternatives that all failed on the type of the same value become one
//! `expected an integer or a string, got a boolean` (the charts' int-or-string
//! quantities), any other failed alternatives one finding listing what each
//! wanted. A `required` error, which boon reports on the parent object,
//! becomes one finding per missing key, at that key.

use std::fmt::Write as _;

use boon::{ErrorKind, Type, Types, ValidationError};
use serde_json::Value;
use shared::FieldPath;
use shared::field::Segment;

use crate::undeclared::closest;

/// Kubernetes' quantity regex, as cozyvalues-gen writes it for every
/// `quantity` field (`size`, `resources.cpu`, ...).
const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// The most allowed values an enum message lists: Postgres'
/// `resourcesPreset` has 47, and a warning carries 256 characters.
const ENUM_SHOWN: usize = 6;

/// The longest excerpt of a value a message quotes.
const QUOTE_CHARS: usize = 60;

/// One violation: where (from the object root) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub path: FieldPath,
    pub message: String,
}

/// `value` as a message quotes it: JSON, cut to [`QUOTE_CHARS`].
pub fn quote(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= QUOTE_CHARS {
        text
    } else {
        let cut: String = text.chars().take(QUOTE_CHARS - 3).collect();
        format!("{cut}...")
    }
}

/// What a value is, as a message names it: `a string ("3")`, `null`.
pub fn described(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(_) => format!("a boolean ({value})"),
        Value::Number(_) => format!("a number ({value})"),
        Value::String(_) => format!("a string ({})", quote(value)),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

fn type_name(t: Type) -> &'static str {
    match t {
        Type::Null => "null",
        Type::Boolean => "a boolean",
        Type::Number => "a number",
        Type::Integer => "an integer",
        Type::String => "a string",
        Type::Array => "a list",
        Type::Object => "an object",
    }
}

fn type_names(types: impl Iterator<Item = Type>) -> String {
    let names: Vec<&str> = types.map(type_name).collect();
    join_or(&names)
}

/// `a`, `a or b`, `a, b or c`.
fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The path of a boon instance location below `base` (`spec`).
fn path_of(base: &FieldPath, error: &ValidationError<'_, '_>) -> FieldPath {
    error
        .instance_location
        .tokens
        .iter()
        .fold(base.clone(), |path, token| match token {
            boon::InstanceToken::Prop(name) => path.key(name),
            boon::InstanceToken::Item(index) => path.index(*index),
        })
}

/// The value at `path` (from the object root) in `spec`, which sits at
/// `base`.
fn value_at<'v>(spec: &'v Value, base: &FieldPath, path: &FieldPath) -> Option<&'v Value> {
    let skip = base.segments().len();
    path.segments()
        .into_iter()
        .skip(skip)
        .try_fold(spec, |value, segment| match segment {
            Segment::Key(key) => value.as_object()?.get(key),
            Segment::Index(i) => value.as_array()?.get(*i),
        })
}

/// Flattens `error`, raised validating `spec` (which sits at `base`), into
/// violations.
/// `chart` names the schema's chart in messages (`the Postgres chart`).
pub fn violations(
    error: &ValidationError<'_, '_>,
    spec: &Value,
    base: &FieldPath,
    chart: &str,
) -> Vec<Violation> {
    let mut out = Vec::new();
    flatten(error, &Context { spec, base, chart }, &mut out);
    out
}

/// What every message of one validation shares.
struct Context<'c> {
    /// The values validated.
    spec: &'c Value,
    /// Where they sit in the object (`spec`).
    base: &'c FieldPath,
    /// The chart, for messages.
    chart: &'c str,
}

fn flatten(error: &ValidationError<'_, '_>, cx: &Context<'_>, out: &mut Vec<Violation>) {
    let (spec, base) = (cx.spec, cx.base);
    let path = path_of(base, error);
    let got = || value_at(spec, base, &path);
    let mut push = |path: FieldPath, message: String| out.push(Violation { path, message });
    match &error.kind {
        ErrorKind::Group
        | ErrorKind::Schema { .. }
        | ErrorKind::Reference { .. }
        | ErrorKind::AllOf
        | ErrorKind::ContentSchema
        | ErrorKind::PropertyName { .. } => {
            for cause in &error.causes {
                flatten(cause, cx, out);
            }
        }
        ErrorKind::AnyOf | ErrorKind::OneOf(None) => {
            push(path.clone(), alternatives(error, cx, &path));
        }
        ErrorKind::OneOf(Some((first, second))) => push(
            path,
            format!(
                "matches more than one of the schema's alternatives (#{} and #{}), it must match exactly one",
                first + 1,
                second + 1
            ),
        ),
        ErrorKind::Type { got: _, want } => {
            push(path.clone(), expected(*want, got()));
        }
        ErrorKind::Enum { want } => {
            let mut allowed: Vec<String> = want.iter().take(ENUM_SHOWN).map(quote).collect();
            if want.len() > ENUM_SHOWN {
                allowed.push(format!("... ({} values in all)", want.len()));
            }
            let mut message = format!("must be one of {}", allowed.join(", "));
            if let Some(value) = got() {
                let _ = write!(message, "; got {}", quote(value));
                if let Some(text) = value.as_str() {
                    let choices: Vec<&str> = want.iter().filter_map(Value::as_str).collect();
                    if let Some(best) = closest(text, choices.iter().copied()) {
                        let _ = write!(message, " (did you mean {best:?}?)");
                    }
                }
            }
            push(path, message);
        }
        ErrorKind::Const { want } => push(
            path.clone(),
            with_got(format!("must be {}", quote(want)), got()),
        ),
        ErrorKind::Required { want } => {
            for key in want {
                push(
                    path.key(key),
                    format!("is required by the {} chart", cx.chart),
                );
            }
        }
        ErrorKind::DependentRequired { prop, missing }
        | ErrorKind::Dependency { prop, missing } => {
            for key in missing {
                push(
                    path.key(key),
                    format!("is required when {} is set", path.key(prop)),
                );
            }
        }
        ErrorKind::AdditionalProperties { got } => {
            for key in got {
                push(
                    path.key(key),
                    format!(
                        "is not allowed: the {} chart declares no such key",
                        cx.chart
                    ),
                );
            }
        }
        ErrorKind::FalseSchema => push(path, "is not allowed here".to_owned()),
        ErrorKind::Minimum { got, want } => {
            push(path, format!("must be at least {want}, got {got}"))
        }
        ErrorKind::Maximum { got, want } => {
            push(path, format!("must be at most {want}, got {got}"))
        }
        ErrorKind::ExclusiveMinimum { got, want } => {
            push(path, format!("must be greater than {want}, got {got}"));
        }
        ErrorKind::ExclusiveMaximum { got, want } => {
            push(path, format!("must be less than {want}, got {got}"));
        }
        ErrorKind::MultipleOf { got, want } => {
            push(path, format!("must be a multiple of {want}, got {got}"));
        }
        ErrorKind::MinLength { got, want } => push(
            path,
            format!(
                "must be at least {want} character{} long, got {got}",
                plural(*want)
            ),
        ),
        ErrorKind::MaxLength { got, want } => push(
            path,
            format!(
                "must be at most {want} character{} long, got {got}",
                plural(*want)
            ),
        ),
        ErrorKind::MinItems { got, want } => push(
            path,
            format!("must have at least {want} item{}, got {got}", plural(*want)),
        ),
        ErrorKind::MaxItems { got, want } => push(
            path,
            format!("must have at most {want} item{}, got {got}", plural(*want)),
        ),
        ErrorKind::MinProperties { got, want } => push(
            path,
            format!("must have at least {want} key{}, got {got}", plural(*want)),
        ),
        ErrorKind::MaxProperties { got, want } => push(
            path,
            format!("must have at most {want} key{}, got {got}", plural(*want)),
        ),
        ErrorKind::UniqueItems { got: [i, j] } => push(
            path,
            format!("items [{i}] and [{j}] are equal, but the items must be unique"),
        ),
        ErrorKind::Pattern { got, want } => {
            let value = quote(&Value::String(got.to_string()));
            let message = if *want == QUANTITY_PATTERN {
                format!(
                    "must be a Kubernetes quantity such as 10Gi, 500m or 2 (pattern {want}), got {value}"
                )
            } else {
                format!("must match the pattern {want}, got {value}")
            };
            push(path, message);
        }
        ErrorKind::Format { got, want, .. } => {
            push(path, format!("must be a valid {want}, got {}", quote(got)));
        }
        ErrorKind::Not => push(
            path,
            "must not match the schema given under `not`".to_owned(),
        ),
        // The rest (contains, content encodings, reference cycles) in
        // boon's own words.
        other => push(path, other.to_string()),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn with_got(message: String, got: Option<&Value>) -> String {
    match got {
        Some(value) => format!("{message}, got {}", quote(value)),
        None => message,
    }
}

/// `expected an integer, got a string ("3")`.
fn expected(want: Types, got: Option<&Value>) -> String {
    let mut message = format!("expected {}", type_names(want.iter()));
    if let Some(value) = got {
        let _ = write!(message, ", got {}", described(value));
    }
    message
}

/// One message for failed `anyOf`/`oneOf` alternatives at `path`.
fn alternatives(error: &ValidationError<'_, '_>, cx: &Context<'_>, path: &FieldPath) -> String {
    let (spec, base) = (cx.spec, cx.base);
    // Every alternative failed on the type of this very value: say which
    // types would do.
    let mut types: Vec<Type> = Vec::new();
    let all_types = error.causes.iter().all(|cause| {
        let here = path_of(base, cause) == *path;
        match &cause.kind {
            ErrorKind::Type { want, .. } if here => {
                types.extend(want.iter());
                true
            }
            _ => false,
        }
    });
    let got = value_at(spec, base, path);
    if all_types && !types.is_empty() {
        let mut unique: Vec<Type> = Vec::new();
        for t in types {
            if !unique.contains(&t) {
                unique.push(t);
            }
        }
        return expected_list(&unique, got);
    }
    let mut wanted: Vec<String> = Vec::new();
    for cause in &error.causes {
        let mut inner = Vec::new();
        flatten(cause, cx, &mut inner);
        let text: Vec<String> = inner
            .iter()
            .map(|v| {
                if v.path == *path {
                    v.message.clone()
                } else {
                    format!("{}: {}", v.path, v.message)
                }
            })
            .collect();
        wanted.push(text.join("; "));
    }
    format!(
        "matches none of the schema's alternatives: {}",
        wanted.join(" | ")
    )
}

fn expected_list(types: &[Type], got: Option<&Value>) -> String {
    let mut message = format!("expected {}", type_names(types.iter().copied()));
    if let Some(value) = got {
        let _ = write!(message, ", got {}", described(value));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use boon::{Compiler, Schemas};
    use serde_json::json;

    fn check(schema: Value, instance: Value) -> Vec<String> {
        let mut schemas = Schemas::new();
        let mut compiler = Compiler::new();
        compiler.set_default_draft(crate::schemas::DRAFT);
        compiler.add_resource("file:///t.json", schema).unwrap();
        let index = compiler.compile("file:///t.json", &mut schemas).unwrap();
        match schemas.validate(&instance, index) {
            Ok(()) => Vec::new(),
            Err(error) => violations(&error, &instance, &FieldPath::parse("spec"), "Test")
                .into_iter()
                .map(|v| format!("{}: {}", v.path, v.message))
                .collect(),
        }
    }

    #[test]
    fn every_keyword_family_in_words() {
        let schema = json!({
            "type": "object",
            "required": ["name"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 1, "maximum": 5},
                "ratio": {"type": "number", "exclusiveMinimum": 0},
                "size": {"pattern": QUANTITY_PATTERN, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "preset": {"type": "string", "enum": ["nano", "micro", "small"]},
                "code": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "uniqueItems": true},
                "users": {"type": "object", "additionalProperties": {
                    "type": "object", "properties": {"password": {"type": "string"}}}},
                "name": {"type": "string"}
            }
        });
        let found = check(
            schema.clone(),
            json!({
                "replicas": 0, "ratio": 0, "size": "10 GB", "preset": "smal", "code": "A",
                "tags": ["a", 1, "a"], "users": {"alice": {"password": 5}}
            }),
        );
        let expected = [
            "spec.name: is required by the Test chart",
            "spec.replicas: must be at least 1, got 0",
            "spec.ratio: must be greater than 0, got 0",
            "spec.size: must be a Kubernetes quantity such as 10Gi, 500m or 2",
            r#"spec.preset: must be one of "nano", "micro", "small"; got "smal" (did you mean "small"?)"#,
            "spec.code: must match the pattern ^[a-z]+$, got \"A\"",
            "spec.code: must be at least 2 characters long, got 1",
            "spec.tags: must have at most 2 items, got 3",
            "spec.tags: items [0] and [2] are equal",
            "spec.tags[1]: expected a string, got a number (1)",
            "spec.users.alice.password: expected a string, got a number (5)",
        ];
        for line in expected {
            assert!(
                found.iter().any(|f| f.contains(line)),
                "{line}\nin {found:#?}"
            );
        }
        assert_eq!(found.len(), expected.len(), "{found:#?}");
        let found = check(
            schema.clone(),
            json!({"name": "x", "replicas": 6, "size": true}),
        );
        assert_eq!(
            found,
            [
                "spec.replicas: must be at most 5, got 6",
                "spec.size: expected an integer or a string, got a boolean (true)",
            ]
        );
        assert!(check(schema, json!({"name": "x", "size": "10Gi", "replicas": 2})).is_empty());
    }

    #[test]
    fn other_alternatives_are_listed() {
        let schema = json!({"anyOf": [{"type": "string", "minLength": 3}, {"type": "integer"}]});
        assert_eq!(
            check(schema, json!("ab")),
            [
                "spec: matches none of the schema's alternatives: must be at least 3 characters long, got 2 | expected an integer, got a string (\"ab\")"
            ]
        );
    }

    #[test]
    fn long_values_are_cut() {
        let long = Value::String("x".repeat(100));
        let quoted = quote(&long);
        assert_eq!(quoted.chars().count(), QUOTE_CHARS);
        assert!(quoted.ends_with("..."));
    }
}
