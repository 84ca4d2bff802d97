//! The interpreter's failures ([`crate::validate`]) as findings: one per
//! leaf failure, at the field it is about (`spec.users.alice.password`), in
//! a user's words.
//!
//! An `anyOf` failure holds each alternative's failures: alternatives that
//! all failed on the type of the same value become one
//! `expected an integer or a string, got a boolean` (the charts' int-or-string
//! quantities), any other failed alternatives one finding listing what each
//! wanted. A `required` failure, which is located at the parent object,
//! becomes one finding per missing key, at that key.

use std::fmt::Write as _;

use serde_json::Value;
use shared::FieldPath;
use shared::field::Segment;

use crate::bounds::Bound;
use crate::schemas::{AddonSchema, App, Json, NullFailure};
use crate::undeclared::closest;
use crate::validate::{Failure, Kind, Token, Type};

pub use tree::QUANTITY_PATTERN;

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

/// `a`, `a or b`, `a, b or c`.
fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The path of an instance location below `base` (`spec`).
fn path_of(base: &FieldPath, location: &[Token<'_>]) -> FieldPath {
    location
        .iter()
        .fold(base.clone(), |path, token| match token {
            Token::Prop(name) => path.key(name),
            Token::Item(index) => path.index(*index),
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

/// `failures`, found validating `spec` (which sits at `base`), as
/// violations. `chart` names the schema's chart in messages (`the Postgres
/// chart`).
pub fn violations(
    failures: &[Failure<'_, '_>],
    spec: &Value,
    base: &FieldPath,
    chart: &str,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let cx = Context { spec, base, chart };
    for failure in failures {
        flatten(failure, &cx, &mut out);
    }
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

fn flatten(failure: &Failure<'_, '_>, cx: &Context<'_>, out: &mut Vec<Violation>) {
    let path = path_of(cx.base, &failure.location);
    let got = value_at(cx.spec, cx.base, &path);
    let mut push = |path: FieldPath, message: String| out.push(Violation { path, message });
    match &failure.kind {
        Kind::AnyOf { alternatives } => {
            let message = any_of(alternatives, cx, &path);
            push(path, message);
        }
        Kind::Type { want } => push(path, expected(want, got)),
        Kind::Enum { want } => {
            let mut allowed: Vec<String> = want
                .iter()
                .take(ENUM_SHOWN)
                .map(|literal| quote(&literal.to_value()))
                .collect();
            if want.len() > ENUM_SHOWN {
                allowed.push(format!("... ({} values in all)", want.len()));
            }
            let mut message = format!("must be one of {}", allowed.join(", "));
            if let Some(value) = got {
                let _ = write!(message, "; got {}", quote(value));
                if let Some(text) = value.as_str() {
                    let choices: Vec<&str> = want
                        .iter()
                        .filter_map(|literal| match literal {
                            Json::String(choice) => Some(*choice),
                            _ => None,
                        })
                        .collect();
                    if let Some(best) = closest(text, choices.iter().copied()) {
                        let _ = write!(message, " (did you mean {best:?}?)");
                    }
                }
            }
            push(path, message);
        }
        Kind::Required { missing } => {
            for key in missing {
                push(
                    path.key(key),
                    format!("is required by the {} chart", cx.chart),
                );
            }
        }
        Kind::AdditionalProperties { got } => {
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
        Kind::FalseSchema => push(path, "is not allowed here".to_owned()),
        Kind::Quantity { got } => {
            let value = quote(&Value::String((*got).to_owned()));
            push(
                path,
                format!(
                    "must be a Kubernetes quantity such as 10Gi, 500m or 2 (pattern {QUANTITY_PATTERN}), got {value}"
                ),
            );
        }
    }
}

/// `expected an integer, got a string ("3")`.
fn expected(want: &[Type], got: Option<&Value>) -> String {
    let names: Vec<&str> = want.iter().copied().map(type_name).collect();
    let mut message = format!("expected {}", join_or(&names));
    if let Some(value) = got {
        let _ = write!(message, ", got {}", described(value));
    }
    message
}

/// One message for failed `anyOf` alternatives at `path`.
fn any_of(alternatives: &[Vec<Failure<'_, '_>>], cx: &Context<'_>, path: &FieldPath) -> String {
    // Every alternative failed on the type of this very value: say which
    // types would do.
    let mut types: Vec<Type> = Vec::new();
    let all_types = alternatives
        .iter()
        .all(|failures| match failures.as_slice() {
            [
                Failure {
                    location,
                    kind: Kind::Type { want },
                },
            ] if path_of(cx.base, location) == *path => {
                types.extend(want.iter().copied());
                true
            }
            _ => false,
        });
    if all_types && !types.is_empty() {
        let mut unique: Vec<Type> = Vec::new();
        for t in types {
            if !unique.contains(&t) {
                unique.push(t);
            }
        }
        return expected(&unique, value_at(cx.spec, cx.base, path));
    }
    let mut wanted: Vec<String> = Vec::new();
    for failures in alternatives {
        let mut inner = Vec::new();
        for failure in failures {
            flatten(failure, cx, &mut inner);
        }
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

/// The message of [`crate::rules::NULL_FAILS_RENDER`]: what the null
/// deletes, where the render then fails, and the fix.
pub fn null_fails_render(app: &App, null: &NullFailure) -> String {
    let mut default = None;
    let mut members = app.defaults;
    for (i, key) in null.path.iter().enumerate() {
        let Some((_, value)) = members.iter().find(|(name, _)| name == key) else {
            break;
        };
        if i + 1 == null.path.len() {
            default = Some(value.to_value());
        } else if let Json::Object(inner) = value {
            members = inner;
        }
    }
    let default = default.map_or_else(String::new, |value| format!(" ({})", quote(&value)));
    format!(
        "null deletes the key and the {kind} chart's default{default}, and the chart then fails to render \
         ({at}: {helm}). Remove the key to keep the default, or set a value.",
        kind = app.kind,
        at = null.at,
        helm = null.helm,
    )
}

/// The message of [`crate::rules::RENDER_BOUND`].
pub fn render_bound(app: &App, bound: &Bound, count: &Value) -> String {
    format!(
        "{count} is more than the {kind} chart can render: it writes {what}, and Helm runs out of \
         memory or time rendering that many, so the release fails. At most {max}.",
        kind = app.kind,
        what = bound.loop_,
        max = crate::bounds::MAX,
    )
}

/// The message of [`crate::rules::ADDON_SCHEMA`].
pub fn addon_schema(addon: &AddonSchema, suggestion: Option<FieldPath>) -> String {
    let mut message = format!(
        "not a value of the addon's chart ({}), whose schema refuses keys it does not declare: \
         the addon's HelmRelease fails to install",
        addon.chart
    );
    if let Some(best) = suggestion {
        let _ = write!(message, "; did you mean {best}?");
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, instance: Value) -> Vec<String> {
        let failures = crate::validate::validate(tree::write::leak(&schema), &instance);
        violations(&failures, &instance, &FieldPath::parse("spec"), "Test")
            .into_iter()
            .map(|v| format!("{}: {}", v.path, v.message))
            .collect()
    }

    #[test]
    fn every_keyword_in_words() {
        let schema = json!({
            "type": "object",
            "required": ["name"],
            "properties": {
                "replicas": {"type": "integer"},
                "size": {"pattern": QUANTITY_PATTERN, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "preset": {"type": "string", "enum": ["nano", "micro", "small"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "users": {"type": "object", "additionalProperties": {
                    "type": "object", "properties": {"password": {"type": "string"}}}},
                "closed": {"type": "object", "additionalProperties": false},
                "never": false,
                "name": {"type": "string"}
            }
        });
        let found = check(
            schema.clone(),
            json!({
                "replicas": "3", "size": "10 GB", "preset": "smal",
                "tags": ["a", 1], "users": {"alice": {"password": 5}},
                "closed": {"x": 1}, "never": 1
            }),
        );
        let expected = [
            "spec.name: is required by the Test chart",
            "spec.replicas: expected an integer, got a string (\"3\")",
            "spec.size: must be a Kubernetes quantity such as 10Gi, 500m or 2",
            r#"spec.preset: must be one of "nano", "micro", "small"; got "smal" (did you mean "small"?)"#,
            "spec.tags[1]: expected a string, got a number (1)",
            "spec.users.alice.password: expected a string, got a number (5)",
            "spec.closed.x: is not allowed: the Test chart declares no such key",
            "spec.never: is not allowed here",
        ];
        for line in expected {
            assert!(
                found.iter().any(|f| f.contains(line)),
                "{line}\nin {found:#?}"
            );
        }
        assert_eq!(found.len(), expected.len(), "{found:#?}");
        let found = check(schema.clone(), json!({"name": "x", "size": true}));
        assert_eq!(
            found,
            ["spec.size: expected an integer or a string, got a boolean (true)"]
        );
        assert!(check(schema, json!({"name": "x", "size": "10Gi", "replicas": 2})).is_empty());
    }

    #[test]
    fn other_alternatives_are_listed() {
        let schema = json!({"anyOf": [
            {"type": "string", "pattern": QUANTITY_PATTERN},
            {"type": "integer"}
        ]});
        let found = check(schema, json!("ab"));
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with(
                "spec: matches none of the schema's alternatives: must be a Kubernetes quantity"
            ),
            "{found:?}"
        );
        assert!(
            found[0].ends_with(" | expected an integer, got a string (\"ab\")"),
            "{found:?}"
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
