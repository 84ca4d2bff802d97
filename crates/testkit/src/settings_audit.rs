//! Every setting of a policy has an `invalid-settings` case that names it.
//!
//! The settings are read from the settings type itself, as serde sees it
//! (the names after `rename_all`, nested maps and lists of maps), by
//! decoding one made-up value that has every field: a field added to a
//! settings struct shows up here without anyone listing it, so the list
//! cannot drift from the code the way a README's table could.

use std::cell::RefCell;

use serde::de::value::{Error, StrDeserializer};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess,
    Visitor,
};

use crate::case::{Case, ExpectedResult};

/// The settings of `S` as paths: `labelKey`, `exemptions`,
/// `exemptions.users`, and `additionalFields[].kind` for a field of the
/// maps in a list.
pub fn settings_of<S: DeserializeOwned>() -> Result<Vec<String>, String> {
    let found = RefCell::new(Vec::new());
    S::deserialize(Tracer {
        path: String::new(),
        found: &found,
    })
    .map_err(|e| format!("the settings type cannot be traced: {e}"))?;
    Ok(found.into_inner())
}

/// The settings no `invalid-settings` case names in its expected message.
pub fn unnamed<'s>(settings: &'s [String], cases: &[Case]) -> Vec<&'s str> {
    let messages: Vec<String> = cases
        .iter()
        .filter(|case| case.expect.result == ExpectedResult::InvalidSettings)
        .flat_map(|case| case.expect.message.iter().map(|m| without_indices(m)))
        .collect();
    settings
        .iter()
        .map(String::as_str)
        .filter(|setting| !messages.iter().any(|m| names(m, setting)))
        .collect()
}

/// `a[3].b[0]` as `a[].b[]`, the form [`settings_of`] gives lists in.
fn without_indices(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut in_index = false;
    for c in message.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push(c);
            }
            ']' => {
                in_index = false;
                out.push(c);
            }
            c if in_index && c.is_ascii_digit() => {}
            c => out.push(c),
        }
    }
    out
}

/// Whether `message` holds `setting` as a whole name: not a prefix of a
/// longer key (`deny` in `denyAddons`) nor the parent of a nested one
/// (`exemptions` in `exemptions.users`), which needs its own case.
fn names(message: &str, setting: &str) -> bool {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '_';
    message.match_indices(setting).any(|(at, _)| {
        let before = message.get(..at).and_then(|s| s.chars().next_back());
        let after = message
            .get(at + setting.len()..)
            .and_then(|s| s.chars().next());
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

/// A deserializer that answers every field with a made-up value of its
/// type and records the name of every field of every struct it meets.
struct Tracer<'a> {
    path: String,
    found: &'a RefCell<Vec<String>>,
}

impl<'de> Deserializer<'de> for Tracer<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_bool(false)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(0)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(0)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f64(0.0)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str("")
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    /// One element, so the fields of a list of maps are traced too.
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(One {
            element: Some(Tracer {
                path: format!("{}[]", self.path),
                found: self.found,
            }),
        })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(Fields {
            fields: [].iter(),
            pending: None,
            tracer: self,
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_map(Fields {
            fields: fields.iter(),
            pending: None,
            tracer: self,
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let first = variants
            .first()
            .ok_or_else(|| <Error as de::Error>::custom("an enum without variants"))?;
        let variant: StrDeserializer<'_, Error> = first.into_deserializer();
        visitor.visit_enum(variant)
    }

    serde::forward_to_deserialize_any! {
        unit unit_struct tuple tuple_struct identifier ignored_any bytes byte_buf
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_f64(visitor)
    }
    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_char('x')
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }
}

/// A list of one traced element.
struct One<'a> {
    element: Option<Tracer<'a>>,
}

impl<'de> SeqAccess<'de> for One<'_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.element.take().map(|e| seed.deserialize(e)).transpose()
    }
}

/// Every field of a struct, each recorded and traced in turn.
struct Fields<'a> {
    fields: std::slice::Iter<'static, &'static str>,
    pending: Option<&'static str>,
    tracer: Tracer<'a>,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(field) = self.fields.next() else {
            return Ok(None);
        };
        self.pending = Some(field);
        let key: StrDeserializer<'_, Error> = field.into_deserializer();
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let field = self
            .pending
            .take()
            .ok_or_else(|| <Error as de::Error>::custom("a value without its key"))?;
        let path = if self.tracer.path.is_empty() {
            field.to_owned()
        } else {
            format!("{}.{field}", self.tracer.path)
        };
        self.tracer.found.borrow_mut().push(path.clone());
        seed.deserialize(Tracer {
            path,
            found: self.tracer.found,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[allow(dead_code)]
    struct Field {
        kind: String,
        path: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    enum Mode {
        Deny,
        Ignore,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[allow(dead_code)]
    struct Example {
        label_key: String,
        minimum: u32,
        mode: Mode,
        enabled: Option<bool>,
        additional_fields: Vec<Field>,
        names: Vec<String>,
    }

    #[test]
    fn every_field_is_found_under_its_serde_name() {
        assert_eq!(
            settings_of::<Example>().unwrap(),
            [
                "labelKey",
                "minimum",
                "mode",
                "enabled",
                "additionalFields",
                "additionalFields[].kind",
                "additionalFields[].path",
                "names",
            ]
        );
    }

    #[test]
    fn a_setting_is_named_whole_and_lists_by_any_index() {
        assert!(names("labelKey \"x\" is not", "labelKey"));
        assert!(!names("labelKeys: unknown", "labelKey"));
        assert!(!names("exemptions.users: bad", "exemptions"));
        assert!(names("exemptions: is a list", "exemptions"));
        assert!(names(
            &without_indices("additionalFields[12].kind: bad"),
            "additionalFields[].kind"
        ));
        assert!(names(
            &without_indices("exemptions.users[0] must not be empty"),
            "exemptions.users"
        ));
    }
}
