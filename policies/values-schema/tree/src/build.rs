//! Trees built at run time: the schema a cluster's ApplicationDefinition
//! carries, read per request into an arena the request owns, so nothing
//! outlives it. The build script's trees are made the same way
//! ([`crate::write`] leaks the arena instead).

use bumpalo::Bump;
use serde_json::Value;

use crate::{Additional, Json, PRESERVE_UNKNOWN, Schema, type_bits};

pub use bumpalo::Bump as Arena;

/// `schema` (one [`crate::unsupported`] accepts) as a [`Schema`] in
/// `arena`, `properties` sorted by name for [`Schema::property`].
pub fn schema<'a>(arena: &'a Bump, schema: &'a Value) -> Schema<'a> {
    let Value::Object(keywords) = schema else {
        return if schema == &Value::Bool(false) {
            Schema::FALSE
        } else {
            Schema::TRUE
        };
    };
    let sub = |value: &'a Value| -> &'a Schema<'a> { arena.alloc(self::schema(arena, value)) };
    Schema {
        never: false,
        types: keywords.get("type").map_or(0, type_bits),
        enumeration: keywords
            .get("enum")
            .and_then(Value::as_array)
            .map(|members| &*arena.alloc_slice_fill_iter(members.iter().map(|m| json(arena, m)))),
        properties: keywords
            .get("properties")
            .and_then(Value::as_object)
            .map(|named| {
                let mut sorted: Vec<(&'a str, &'a Value)> =
                    named.iter().map(|(k, v)| (k.as_str(), v)).collect();
                sorted.sort_by(|a, b| a.0.cmp(b.0));
                &*arena.alloc_slice_fill_iter(
                    sorted
                        .into_iter()
                        .map(|(name, value)| (name, self::schema(arena, value))),
                )
            }),
        additional: match keywords.get("additionalProperties") {
            None => Additional::Absent,
            Some(Value::Bool(b)) => Additional::Bool(*b),
            Some(value) => Additional::Schema(sub(value)),
        },
        items: keywords.get("items").map(sub),
        any_of: keywords
            .get("anyOf")
            .and_then(Value::as_array)
            .map_or(&[], |alternatives| {
                arena.alloc_slice_fill_iter(alternatives.iter().map(|a| self::schema(arena, a)))
            }),
        required: keywords
            .get("required")
            .and_then(Value::as_array)
            .map_or(&[], |keys| {
                let keys: Vec<&'a str> = keys.iter().filter_map(Value::as_str).collect();
                arena.alloc_slice_fill_iter(keys)
            }),
        quantity: keywords.get("pattern").is_some(),
        preserve_unknown: keywords.get(PRESERVE_UNKNOWN).and_then(Value::as_bool) == Some(true),
    }
}

/// `value` as a [`Json`] in `arena` (object members in the map's order).
pub fn json<'a>(arena: &'a Bump, value: &'a Value) -> Json<'a> {
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                Json::Uint(n)
            } else if let Some(n) = n.as_i64() {
                Json::Int(n)
            } else {
                Json::Float(n.as_f64().unwrap_or_default())
            }
        }
        Value::String(text) => Json::String(text),
        Value::Array(items) => {
            Json::Array(arena.alloc_slice_fill_iter(items.iter().map(|i| json(arena, i))))
        }
        Value::Object(members) => Json::Object(
            arena.alloc_slice_fill_iter(members.iter().map(|(k, v)| (k.as_str(), json(arena, v)))),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_built_at_run_time_reads_every_keyword() {
        let value = json!({"type": "object", "required": ["b"], "properties": {
            "b": {"type": ["string", "null"], "enum": ["x", null]},
            "a": {"anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": crate::QUANTITY_PATTERN},
            "m": {"type": "object", "additionalProperties": {"type": "array", "items": false}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }, "additionalProperties": false});
        let arena = Bump::new();
        let tree = schema(&arena, &value);
        let names: Vec<&str> = tree.properties.unwrap().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["a", "b", "free", "m"]);
        assert_eq!(tree.required, ["b"]);
        assert!(matches!(tree.additional, Additional::Bool(false)));
        let b = tree.property("b").unwrap();
        assert_eq!(b.enumeration.unwrap(), [Json::String("x"), Json::Null]);
        assert_eq!(b.types, crate::Type::String.bit() | crate::Type::Null.bit());
        let a = tree.property("a").unwrap();
        assert!(a.quantity && a.any_of.len() == 2);
        let Additional::Schema(m) = tree.property("m").unwrap().additional else {
            panic!("m has an additionalProperties schema");
        };
        assert!(m.items.unwrap().never);
        assert!(tree.property("free").unwrap().preserve_unknown);
        assert_eq!(
            json(&arena, &json!({"k": [1, -2, 0.5]})).to_value(),
            json!({"k": [1, -2, 0.5]})
        );
    }
}
