//! Several members of one object in one pass.
//!
//! `Field::field` scans an object from its start on every call; a rule
//! object has up to five lists to read, so reading them one by one scans
//! it five times (measured: repeated scans were 40 % of an evaluation).
//! [`members`] reads the members once and stops when it has all it wants.

use shared::json::{Json, Kind, member_name};
use shared::{Field, FieldError};

/// Whether the raw member name token (quotes included) is `key`. Objects
/// in admission requests are written by Go's encoding/json, which escapes
/// no letters, so the plain comparison decides; an escaped name is decoded.
fn is_key(raw: &[u8], key: &str) -> bool {
    match raw.get(1..raw.len().saturating_sub(1)) {
        Some(inner) if !inner.contains(&b'\\') => inner == key.as_bytes(),
        _ => member_name(raw).is_ok_and(|name| name == key),
    }
}

/// The members `keys` of `object`, each with its path: absent when
/// `object` is absent or lacks it (as `Field::field`), an error naming
/// `object` when it is not an object. The first of duplicate keys wins.
pub fn members<'a, const N: usize>(
    object: &Field<'a>,
    keys: [&str; N],
) -> Result<[Field<'a>; N], FieldError> {
    let mut found: [(&str, Option<Json<'a>>); N] = keys.map(|key| (key, None));
    match object.json() {
        None => {}
        Some(json) if json.kind() == Kind::Object => {
            let mut missing = N;
            for member in json.members() {
                let (raw, value) = member.map_err(|error| FieldError::Malformed {
                    path: object.path().clone(),
                    error,
                })?;
                if let Some((_, slot @ None)) = found.iter_mut().find(|(key, _)| is_key(raw, key)) {
                    *slot = Some(value);
                    missing -= 1;
                    if missing == 0 {
                        break;
                    }
                }
            }
        }
        Some(json) => {
            return Err(FieldError::WrongType {
                path: object.path().clone(),
                expected: "an object",
                found: json.kind(),
            });
        }
    }
    Ok(found.map(|(key, value)| Field::new(object.path().key(key), value)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::FieldPath;

    fn root(text: &str) -> Field<'_> {
        Field::new(
            FieldPath::root(),
            Some(Json::parse(text.as_bytes()).unwrap()),
        )
    }

    #[test]
    fn reads_each_member_once_with_its_path() {
        let object = root(r#"{"b": [1], "a": "x", "a": "second", "c": null, "d\u0065": 2}"#);
        let [a, b, c, de, z] = members(&object, ["a", "b", "c", "de", "z"]).unwrap();
        assert_eq!(a.string().unwrap().unwrap(), "x");
        assert_eq!(b.items().unwrap().len(), 1);
        assert!(!c.is_present());
        assert_eq!(de.json().unwrap().as_i64(), Some(2));
        assert!(!z.is_present());
        assert_eq!(z.path().as_str(), "z");
        let nested = object.field("b").unwrap().items().unwrap();
        assert_eq!(nested[0].path().as_str(), "b[0]");
    }

    #[test]
    fn agrees_with_field_on_absent_and_wrong_types() {
        let absent = root("{}").field("spec").unwrap();
        let [x] = members(&absent, ["x"]).unwrap();
        assert_eq!(x.path().as_str(), "spec.x");
        assert!(!x.is_present());
        let list = root(r#"{"spec": []}"#).field("spec").unwrap();
        assert_eq!(
            members(&list, ["x"]).unwrap_err().to_string(),
            list.field("x").unwrap_err().to_string()
        );
        let broken = Field::new(
            FieldPath::root(),
            Some(Json::parse_lazy(b"{\"a\": 1 \"b\": 2}").unwrap()),
        );
        assert!(members(&broken, ["b"]).is_err());
    }
}
