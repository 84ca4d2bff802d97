//! A JSON Schema interpreter for exactly the keywords the shipped chart
//! schemas use, applied as boon (Helm's validator's Rust port, draft
//! 2020-12) applies them, walking the tree of the schema ([`Schema`]): the
//! static one the generator made, or one built from the schema of the
//! cluster's ApplicationDefinition.
//!
//! Why not boon at run time: policy-server evaluates every request in a
//! fresh wasm instance, so a compiled schema cannot be kept between
//! requests; compiling per request is slow, and shipping every compiled
//! schema in a pre-initialised module (Wizer) made the module large and its
//! instances slow to create (docs/performance.md). Walking the one schema a request needs,
//! a static tree in the module's data, has no compile step, no parse and
//! no global state.
//!
//! The keywords: `type` (one or several; `integer` accepts `1.0`), `enum`
//! (JSON equality, numbers compared numerically), `required`, `properties`,
//! `additionalProperties` (a boolean or a schema), `items` (a schema),
//! `anyOf`, `pattern` (only Kubernetes' quantity regex, matched by
//! [`is_quantity`]), and `default` and `x-kubernetes-preserve-unknown-fields`,
//! which do not validate. `make schemas` and the build script refuse a schema with any
//! other keyword or pattern ([`unsupported`]), so a release whose charts
//! use more fails at generation, not silently here; a cluster's schema with
//! one is not used ([`crate::cluster`]). boon stays the oracle:
//! `tests/oracle.rs` compares verdicts and failure locations on every
//! shipped schema.
//!
//! As in boon, a failed `type` or `enum` ends the checks of that value
//! (nothing else is reported about it); otherwise every keyword is checked
//! and every failure reported.

use serde_json::{Map, Value};

use crate::schemas::{Additional, Json, Schema};
pub use tree::{KEYWORDS, Type, types, unsupported};

/// One step of an instance location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token<'v> {
    /// An object member.
    Prop(&'v str),
    /// A list item.
    Item(usize),
}

/// What failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind<'s, 'v> {
    /// `type`: the types allowed, in [`Type`] order.
    Type { want: Vec<Type> },
    /// `enum`: the values allowed.
    Enum { want: &'s [Json<'s>] },
    /// `required`: the keys missing, in the schema's order.
    Required { missing: Vec<&'s str> },
    /// `additionalProperties: false`: the keys not allowed.
    AdditionalProperties { got: Vec<&'v str> },
    /// A `false` schema.
    FalseSchema,
    /// `pattern` (the quantity regex): the string that does not match.
    Quantity { got: &'v str },
    /// `anyOf` with two or more alternatives, none matching: each
    /// alternative's failures. (With one alternative, as in boon, its
    /// failures are reported directly.)
    AnyOf {
        alternatives: Vec<Vec<Failure<'s, 'v>>>,
    },
}

/// One failure: where in the instance, and what.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure<'s, 'v> {
    pub location: Vec<Token<'v>>,
    pub kind: Kind<'s, 'v>,
}

/// Every failure of `value` under `schema`, in boon's order; empty when
/// valid.
pub fn validate<'s, 'v>(schema: &'s Schema<'s>, value: &'v Value) -> Vec<Failure<'s, 'v>> {
    let mut out = Vec::new();
    let mut location = Vec::new();
    node(schema, value, &mut location, &mut out);
    out
}

/// Whether `value` satisfies `schema`.
pub fn is_valid(schema: &Schema<'_>, value: &Value) -> bool {
    validate(schema, value).is_empty()
}

/// Whether `value` equals the `enum` member `literal`, as [`equals`] has it.
pub fn equals_literal(literal: &Json<'_>, value: &Value) -> bool {
    match (literal, value) {
        (Json::String(a), Value::String(b)) => a == b,
        (Json::String(_), _) | (_, Value::String(_)) => false,
        (Json::Null, _) => value.is_null(),
        (Json::Bool(a), _) => value.as_bool() == Some(*a),
        _ => equals(&literal.to_value(), value),
    }
}

/// `integer` as boon reads it: any number without a fraction (`1.0`).
fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// JSON equality, numbers compared by value (`1 == 1.0`), as boon's.
pub fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                x == y
            } else if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                x == y
            } else if let (Some(x), Some(y)) = (x.as_f64(), y.as_f64()) {
                x == y
            } else {
                false
            }
        }
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equals(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| equals(a, b)))
        }
        _ => false,
    }
}

fn node<'s, 'v>(
    schema: &'s Schema<'s>,
    value: &'v Value,
    location: &mut Vec<Token<'v>>,
    out: &mut Vec<Failure<'s, 'v>>,
) {
    let fail = |kind, location: &Vec<Token<'v>>| Failure {
        location: location.clone(),
        kind,
    };
    if schema.never {
        out.push(fail(Kind::FalseSchema, location));
        return;
    }
    if schema.types != 0 {
        let matched = schema.types & Type::of(value).bit() != 0
            || (schema.types & Type::Integer.bit() != 0 && is_integer(value));
        if !matched {
            out.push(fail(
                Kind::Type {
                    want: types(schema.types),
                },
                location,
            ));
            return;
        }
    }
    if let Some(allowed) = schema.enumeration
        && !allowed.iter().any(|a| equals_literal(a, value))
    {
        out.push(fail(Kind::Enum { want: allowed }, location));
        return;
    }
    match value {
        Value::Object(members) => object(schema, members, location, out),
        Value::Array(items) => {
            if let Some(item_schema) = schema.items {
                for (i, item) in items.iter().enumerate() {
                    location.push(Token::Item(i));
                    node(item_schema, item, location, out);
                    location.pop();
                }
            }
        }
        Value::String(text) if schema.quantity && !is_quantity(text) => {
            out.push(fail(Kind::Quantity { got: text }, location));
        }
        _ => {}
    }
    if !schema.any_of.is_empty() {
        let mut failed = Vec::new();
        for alternative in schema.any_of {
            let mut inner = Vec::new();
            node(alternative, value, location, &mut inner);
            if inner.is_empty() {
                return;
            }
            failed.push(inner);
        }
        if failed.len() == 1 {
            out.extend(failed.into_iter().flatten());
        } else {
            out.push(fail(
                Kind::AnyOf {
                    alternatives: failed,
                },
                location,
            ));
        }
    }
}

fn object<'s, 'v>(
    schema: &'s Schema<'s>,
    members: &'v Map<String, Value>,
    location: &mut Vec<Token<'v>>,
    out: &mut Vec<Failure<'s, 'v>>,
) {
    let missing: Vec<&str> = schema
        .required
        .iter()
        .copied()
        .filter(|key| !members.contains_key(*key))
        .collect();
    if !missing.is_empty() {
        out.push(Failure {
            location: location.clone(),
            kind: Kind::Required { missing },
        });
    }
    let mut refused = Vec::new();
    for (key, member) in members {
        let sub = match schema.property(key) {
            Some(sub) => sub,
            None => match schema.additional {
                Additional::Bool(false) => {
                    refused.push(key.as_str());
                    continue;
                }
                Additional::Bool(true) | Additional::Absent => continue,
                Additional::Schema(sub) => sub,
            },
        };
        location.push(Token::Prop(key));
        node(sub, member, location, out);
        location.pop();
    }
    if !refused.is_empty() {
        out.push(Failure {
            location: location.clone(),
            kind: Kind::AdditionalProperties { got: refused },
        });
    }
}

/// Whether `text` matches [`QUANTITY_PATTERN`], Kubernetes' quantity
/// grammar: `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`.
pub fn is_quantity(text: &str) -> bool {
    let bytes = text.as_bytes();
    let start = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let Some(end) = decimal(bytes, start) else {
        return false;
    };
    match bytes.get(end..).unwrap_or_default() {
        [] => true,
        [b'K' | b'M' | b'G' | b'T' | b'P' | b'E', b'i'] => true,
        [b'n' | b'u' | b'm' | b'k' | b'M' | b'G' | b'T' | b'P' | b'E'] => true,
        [b'e' | b'E', rest @ ..] => {
            let sign = usize::from(matches!(rest.first(), Some(b'+' | b'-')));
            decimal(rest, sign) == Some(rest.len())
        }
        _ => false,
    }
}

/// The end of `[0-9]+(\.[0-9]*)?|\.[0-9]+` read from `start`, taken as long
/// as it goes: what may follow (a suffix letter or the end) never starts
/// with a digit or a dot, so the longest reading is the only one that can
/// match.
fn decimal(bytes: &[u8], start: usize) -> Option<usize> {
    let digits = |from: usize| {
        bytes
            .get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let whole = digits(start);
    let dot = start + whole;
    if bytes.get(dot) != Some(&b'.') {
        return (whole > 0).then_some(dot);
    }
    let fraction = digits(dot + 1);
    (whole > 0 || fraction > 0).then_some(dot + 1 + fraction)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tree::QUANTITY_PATTERN;

    #[test]
    fn quantities() {
        for good in [
            "1", "+1", "-1", "1.", "1.5", ".5", "10Gi", "500m", "2", "1E", "1e3", "1E+3", "1e-.5",
            "1.5Ei", "0.5k",
        ] {
            assert!(is_quantity(good), "{good}");
        }
        for bad in [
            "", "+", ".", "1e", "10 GB", "10GB", "1ki", "Gi", "1Gi ", " 1", "1e3Gi", "1.2.3",
            "1\n", "1mi", "--1",
        ] {
            assert!(!is_quantity(bad), "{bad}");
        }
    }

    #[test]
    fn keywords_as_boon_applies_them() {
        let schema = tree::write::leak(&json!({
            "type": "object",
            "required": ["a", "b"],
            "properties": {
                "n": {"type": "integer"},
                "e": {"type": "string", "enum": ["x", "y"]},
                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                "l": {"type": "array", "items": {"type": ["integer", "null"]}},
                "q": {"anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": QUANTITY_PATTERN},
                "c": {"type": "object", "properties": {"k": {}}, "additionalProperties": false}
            }
        }));
        assert!(is_valid(
            schema,
            &json!({"a": 1, "b": 2, "n": 1.0, "l": [1, null]})
        ));
        let value = json!({"a": 1, "n": 1.5, "e": "z", "m": {"k": 1}, "l": ["x"], "q": true,
                           "c": {"k": 1, "z": 2}});
        let found = validate(schema, &value);
        let kinds: Vec<String> = found
            .iter()
            .map(|f| format!("{:?} {:?}", f.location, std::mem::discriminant(&f.kind)))
            .collect();
        assert_eq!(found.len(), 7, "{kinds:#?}");
        assert!(matches!(&found[0].kind, Kind::Required { missing } if missing == &["b"]));
        assert!(
            found
                .iter()
                .any(|f| matches!(&f.kind, Kind::AdditionalProperties { got } if got == &["z"]))
        );
        assert!(
            found.iter().any(
                |f| matches!(&f.kind, Kind::AnyOf { alternatives } if alternatives.len() == 2)
            )
        );
        assert!(!is_valid(tree::write::leak(&json!(false)), &json!(1)));
        assert!(is_valid(
            tree::write::leak(&json!({"enum": [1]})),
            &json!(1.0)
        ));
    }

    #[test]
    fn unsupported_keywords_are_named() {
        assert_eq!(unsupported(&json!({"type": "object"})), None);
        assert_eq!(
            unsupported(&json!({"properties": {"a/b": {"minimum": 1}}})),
            Some((
                "/properties/a~1b/minimum".to_owned(),
                "keyword minimum".to_owned()
            ))
        );
        let (path, what) = unsupported(&json!({"items": {"pattern": "^[a-z]+$"}})).unwrap();
        assert_eq!(path, "/items/pattern");
        assert!(what.starts_with("pattern"), "{what}");
        assert!(unsupported(&json!({"type": "text"})).is_some());
        assert!(unsupported(&json!({"anyOf": []})).is_some());
    }
}
