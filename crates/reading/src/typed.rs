//! A manifest read as the type that models it, which must hold all of it:
//! a field the type dropped (a misspelt key, a field of a newer version)
//! would be pruned by the API server without a word, so it is an error
//! naming the field.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a manifest is not its type.
#[derive(Debug, thiserror::Error)]
pub enum TypedError {
    /// The value does not decode as the type at all.
    #[error(transparent)]
    Decode(#[from] serde_json::Error),
    /// The type decodes it, but not all of it.
    #[error("unknown fields: {}", .0.join(", "))]
    UnknownFields(Vec<String>),
}

/// `value` read as `T`, with every field of `value` kept.
pub fn typed<T: DeserializeOwned + Serialize>(value: &Value) -> Result<T, TypedError> {
    let typed: T = serde_json::from_value(value.clone())?;
    let back = serde_json::to_value(&typed)?;
    let mut dropped = Vec::new();
    lost_fields(value, &back, &mut String::new(), &mut dropped);
    if !dropped.is_empty() {
        return Err(TypedError::UnknownFields(dropped));
    }
    Ok(typed)
}

/// The paths of `original` that `round_trip` does not have.
fn lost_fields(original: &Value, round_trip: &Value, path: &mut String, lost: &mut Vec<String>) {
    match (original, round_trip) {
        (Value::Object(before), Value::Object(after)) => {
            for (key, value) in before {
                let len = path.len();
                path.push_str(if path.is_empty() { "" } else { "." });
                path.push_str(key);
                match after.get(key) {
                    Some(kept) => lost_fields(value, kept, path, lost),
                    None if !value.is_null() => lost.push(path.clone()),
                    None => {}
                }
                path.truncate(len);
            }
        }
        (Value::Array(before), Value::Array(after)) => {
            for (i, (value, kept)) in before.iter().zip(after).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                lost_fields(value, kept, path, lost);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Serialize, Deserialize)]
    struct Meta {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Object {
        metadata: Meta,
    }

    #[test]
    fn dropped_fields_are_named() {
        let good = json!({"metadata": {"name": "a", "namespace": "b"}});
        assert!(typed::<Object>(&good).is_ok());
        let typo = json!({"metadata": {"name": "a", "namespcae": "b"}});
        assert_eq!(
            typed::<Object>(&typo).unwrap_err().to_string(),
            "unknown fields: metadata.namespcae"
        );
        assert!(typed::<Object>(&json!({"metadata": {}})).is_err());
    }
}
