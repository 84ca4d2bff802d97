//! `field_masks`, as the host prunes the objects it returns.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// `value` pruned to `path`, arrays traversed implicitly; `None` when the
/// path is absent.
fn pick(value: &Value, path: &[&str]) -> Option<Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(value.clone());
    };
    match value {
        Value::Object(map) => {
            let kept = pick(map.get(*first)?, rest)?;
            Some(Value::Object(Map::from_iter([((*first).to_owned(), kept)])))
        }
        Value::Array(items) => Some(Value::Array(
            items
                .iter()
                .map(|item| pick(item, path).unwrap_or_else(|| json!({})))
                .collect(),
        )),
        _ => None,
    }
}

/// `more` merged into `into`: maps key by key, lists item by item.
fn merge(into: &mut Value, more: Value) {
    match (into, more) {
        (Value::Object(into), Value::Object(more)) => {
            for (key, value) in more {
                match into.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        into.insert(key, value);
                    }
                }
            }
        }
        (Value::Array(into), Value::Array(more)) => {
            for (existing, value) in into.iter_mut().zip(more) {
                merge(existing, value);
            }
        }
        (into, more) => *into = more,
    }
}

/// `object` as the host returns it for `masks` (dotted paths).
pub(super) fn masked(object: &Value, masks: Option<&BTreeSet<String>>) -> Value {
    let Some(masks) = masks else {
        return object.clone();
    };
    let mut kept = json!({});
    for mask in masks {
        let path: Vec<&str> = mask.split('.').collect();
        if let Some(part) = pick(object, &path) {
            merge(&mut kept, part);
        }
    }
    kept
}
