//! Settings decoded from JSON with two rules serde's derive lacks: a
//! setting that is a map of settings must be given as a map (derive would
//! fill it from a list by position, so `exemptions: [["alice"]]` passed as
//! `users: [alice]`), and every error names the setting it is about
//! (`exemptions.users[0]`), as the operator wrote it in the policy resource.

use std::cell::Cell;
use std::fmt;

use serde::de::value::StrDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess,
    Visitor,
};
use serde_json::Value;

/// serde_json's own error type: serde's generic error constructors and
/// serde_json's wording of them (a JSON `null` is "null") are then the
/// copies request reading already carries, not a second set in each module.
type Failure = serde_json::Error;

/// A settings error and the setting it is about.
#[derive(Debug)]
pub struct Error {
    path: Option<String>,
    failure: Failure,
}

impl std::error::Error for Error {}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.path.as_deref() {
            Some(path) if !path.is_empty() => write!(f, "{path}: {}", self.failure),
            _ => write!(f, "{}", self.failure),
        }
    }
}

/// Decodes `value` into `T` under the rules above.
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, Error> {
    let failed = Cell::new(None);
    T::deserialize(Strict {
        value,
        path: String::new(),
        failed: &failed,
    })
    .map_err(|failure| Error {
        path: failed.take(),
        failure,
    })
}

/// One value of the settings, where it is, and where the decoding failed:
/// the innermost value an error passes through records its path there,
/// outer ones leave it.
struct Strict<'a> {
    value: &'a Value,
    path: String,
    failed: &'a Cell<Option<String>>,
}

/// Records `path` as where `failure` happened unless a value deeper down
/// already did.
fn at(failed: &Cell<Option<String>>, path: &str, failure: Failure) -> Failure {
    let deeper = failed.take();
    failed.set(Some(deeper.unwrap_or_else(|| path.to_owned())));
    failure
}

impl Strict<'_> {
    fn at(&self, failure: Failure) -> Failure {
        at(self.failed, &self.path, failure)
    }

    /// serde's "invalid type" error for this value where `expected` was
    /// wanted: one copy for every visitor, as it takes the expectation by
    /// reference.
    fn invalid(&self, expected: &dyn de::Expected) -> Failure {
        let unexpected = match self.value {
            Value::Null => de::Unexpected::Unit,
            Value::Bool(b) => de::Unexpected::Bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => de::Unexpected::Unsigned(u),
                (None, Some(i), _) => de::Unexpected::Signed(i),
                (None, None, f) => de::Unexpected::Float(f.unwrap_or_default()),
            },
            Value::String(s) => de::Unexpected::Str(s),
            Value::Array(_) => de::Unexpected::Seq,
            Value::Object(_) => de::Unexpected::Map,
        };
        self.at(<Failure as de::Error>::invalid_type(unexpected, expected))
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

impl<'de> Deserializer<'de> for Strict<'_> {
    type Error = Failure;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        let result = match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => number(n, visitor),
            Value::String(s) => visitor.visit_str(s),
            Value::Array(items) => visitor.visit_seq(Items {
                items: items.iter().enumerate(),
                path: &self.path,
                failed: self.failed,
            }),
            Value::Object(map) => visitor.visit_map(Entries {
                entries: map.iter(),
                pending: None,
                path: &self.path,
                failed: self.failed,
            }),
        };
        result.map_err(|e| self.at(e))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Failure> {
        // Only a map reaches the visitor: derive's `visit_seq`, which fills
        // a struct by position, is then never instantiated for a settings
        // struct, and neither are the other `visit_*` a struct refuses.
        match self.value {
            Value::Object(map) => visitor
                .visit_map(Entries {
                    entries: map.iter(),
                    pending: None,
                    path: &self.path,
                    failed: self.failed,
                })
                .map_err(|e| self.at(e)),
            Value::Array(_) => Err(self.at(de::Error::custom(
                "is a list, but it is a map of settings; give its keys, for example `key: value`",
            ))),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        if self.value.is_null() {
            visitor.visit_none()
        } else {
            let (path, failed) = (self.path.clone(), self.failed);
            visitor.visit_some(self).map_err(|e| at(failed, &path, e))
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Failure> {
        match self.value {
            Value::String(s) => {
                let variant: StrDeserializer<'_, Failure> = s.as_str().into_deserializer();
                visitor.visit_enum(variant).map_err(|e| self.at(e))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Failure> {
        let (path, failed) = (self.path.clone(), self.failed);
        visitor
            .visit_newtype_struct(self)
            .map_err(|e| at(failed, &path, e))
    }

    // The types settings use get a method of their own that handles only
    // their JSON type: each is instantiated for every field's visitor, and
    // the whole match of `deserialize_any` in each would grow every module.
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool::<Failure>(*b).map_err(|e| self.at(e)),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.value {
            Value::Number(n) => number(n, visitor).map_err(|e| self.at(e)),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.value {
            Value::String(s) => visitor.visit_str::<Failure>(s).map_err(|e| self.at(e)),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        self.deserialize_str(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.value {
            Value::Array(items) => visitor
                .visit_seq(Items {
                    items: items.iter().enumerate(),
                    path: &self.path,
                    failed: self.failed,
                })
                .map_err(|e| self.at(e)),
            _ => Err(self.invalid(&visitor)),
        }
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u128 f32 f64 char
        bytes byte_buf unit unit_struct tuple tuple_struct map ignored_any
    }
}

/// The visitor called with the number as JSON gave it, as serde_json's own
/// deserializer calls it.
fn number<'de, V: Visitor<'de>>(n: &serde_json::Number, visitor: V) -> Result<V::Value, Failure> {
    match (n.as_u64(), n.as_i64(), n.as_f64()) {
        (Some(u), _, _) => visitor.visit_u64(u),
        (None, Some(i), _) => visitor.visit_i64(i),
        (None, None, Some(f)) => visitor.visit_f64(f),
        (None, None, None) => Err(de::Error::custom(format!("{n} is not a number"))),
    }
}

/// The entries of a list, each at `path[i]`.
struct Items<'a> {
    items: std::iter::Enumerate<std::slice::Iter<'a, Value>>,
    path: &'a str,
    failed: &'a Cell<Option<String>>,
}

impl<'de> SeqAccess<'de> for Items<'_> {
    type Error = Failure;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Failure> {
        match self.items.next() {
            None => Ok(None),
            Some((i, value)) => seed
                .deserialize(Strict {
                    value,
                    path: format!("{}[{i}]", self.path),
                    failed: self.failed,
                })
                .map(Some),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The keys of a map, each value at `path.key`.
struct Entries<'a> {
    entries: serde_json::map::Iter<'a>,
    pending: Option<(&'a str, &'a Value)>,
    path: &'a str,
    failed: &'a Cell<Option<String>>,
}

impl<'de> MapAccess<'de> for Entries<'_> {
    type Error = Failure;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Failure> {
        match self.entries.next() {
            None => Ok(None),
            Some((key, value)) => {
                self.pending = Some((key, value));
                let key: StrDeserializer<'_, Failure> = key.as_str().into_deserializer();
                seed.deserialize(key).map(Some)
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Failure> {
        let (key, value) = self
            .pending
            .take()
            .ok_or_else(|| <Failure as de::Error>::custom("a value without its key"))?;
        seed.deserialize(Strict {
            value,
            path: child(self.path, key),
            failed: self.failed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Inner {
        #[serde(default)]
        users: Vec<String>,
        #[serde(default)]
        enabled: Option<bool>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    enum Mode {
        Deny,
        Ignore,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Outer {
        #[serde(default)]
        exemptions: Option<Inner>,
        #[serde(default)]
        minimum: Option<u32>,
        #[serde(default)]
        mode: Option<Mode>,
    }

    fn decode(json: &str) -> Result<Outer, String> {
        let value: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        from_value(&value).map_err(|e| e.to_string())
    }

    #[test]
    fn a_map_of_settings_given_as_a_list_is_refused_by_name() {
        assert_eq!(
            decode(r#"{"exemptions": [["alice"]]}"#).unwrap_err(),
            "exemptions: is a list, but it is a map of settings; give its keys, for example `key: value`"
        );
        assert!(
            decode(r#"{"exemptions": [true]}"#)
                .unwrap_err()
                .starts_with("exemptions: is a list")
        );
    }

    #[test]
    fn every_error_names_its_setting() {
        assert_eq!(
            decode(r#"{"exemptions": {"users": [["alice"]]}}"#).unwrap_err(),
            "exemptions.users[0]: invalid type: sequence, expected a string"
        );
        assert_eq!(
            decode(r#"{"exemptions": {"users": "alice"}}"#).unwrap_err(),
            "exemptions.users: invalid type: string \"alice\", expected a sequence"
        );
        assert!(
            decode(r#"{"exemptions": {"user": []}}"#)
                .unwrap_err()
                .starts_with("exemptions: unknown field `user`")
        );
        assert_eq!(
            decode(r#"{"minimum": -1}"#).unwrap_err(),
            "minimum: invalid value: integer `-1`, expected u32"
        );
        assert!(
            decode(r#"{"mode": "warn"}"#)
                .unwrap_err()
                .starts_with("mode: unknown variant `warn`")
        );
        assert!(
            decode(r#"{"mode": ["deny"]}"#)
                .unwrap_err()
                .starts_with("mode: invalid type: sequence")
        );
        assert!(
            decode(r#"{"exemptions": {"enabled": [true]}}"#)
                .unwrap_err()
                .starts_with("exemptions.enabled: invalid type: sequence")
        );
        assert_eq!(
            decode(r#"{"exemptions": {"users": null}}"#).unwrap_err(),
            "exemptions.users: invalid type: null, expected a sequence"
        );
        // Numbers that are neither u64 nor i64 are written as serde_json writes them.
        assert_eq!(
            decode(r#"{"minimum": 1.5}"#).unwrap_err(),
            "minimum: invalid type: floating point `1.5`, expected u32"
        );
        assert_eq!(
            decode(r#"{"exemptions": {"enabled": 1e20}}"#).unwrap_err(),
            "exemptions.enabled: invalid type: floating point `1e+20`, expected a boolean"
        );
        assert!(
            decode(r#"{"other": 1}"#)
                .unwrap_err()
                .starts_with("unknown field `other`")
        );
    }

    #[test]
    fn well_formed_settings_decode_as_serde_json_would() {
        let json = r#"{"exemptions": {"users": ["alice"], "enabled": null}, "minimum": 46, "mode": "ignore"}"#;
        let expected: Outer = serde_json::from_str(json).unwrap();
        assert_eq!(decode(json).unwrap(), expected);
        assert_eq!(expected.mode, Some(Mode::Ignore));
        assert_eq!(
            decode("{}").unwrap(),
            Outer {
                exemptions: None,
                minimum: None,
                mode: None
            }
        );
        assert_ne!(Mode::Deny, Mode::Ignore);
    }
}
