//! Values addressed by path.
//!
//! Every value a rule reads is a [`Field`]: the JSON it holds (if any) and
//! the path that leads to it, so a message can always say where the problem
//! is (`spec.oidc.users[1].role`). Reading a field as the wrong type is a
//! [`FieldError`] that names the path; rules propagate it with `?` and the
//! request is rejected as malformed (400) with that message.
//!
//! Kubernetes and Helm treat `null` like an absent key (a `null` value
//! removes a Helm value and the chart default applies), so fields do too.

use std::borrow::Cow;
use std::fmt;

use crate::json::{Json, JsonError, Kind, key_equals, member_name};

/// A path to a field, rendered the way `kubectl explain` and apiserver
/// field errors write it: `spec.kafka.storageClass`,
/// `spec.oidc.users[1].role`, `metadata.labels["platform.cozystack.io/no-delete"]`.
///
/// Every field a rule touches carries its path, so paths are built far more
/// often than they are printed: short ones (nearly all) live inline and
/// cost a copy, not an allocation.
#[derive(Debug, Clone)]
pub struct FieldPath(Text);

const INLINE_CAPACITY: usize = 62;

/// A string that stays inline up to [`INLINE_CAPACITY`] bytes.
#[derive(Debug, Clone)]
enum Text {
    Inline {
        len: u8,
        bytes: [u8; INLINE_CAPACITY],
    },
    Heap(String),
}

impl Text {
    fn as_str(&self) -> &str {
        match self {
            Text::Inline { len, bytes } => bytes
                .get(..usize::from(*len))
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default(),
            Text::Heap(text) => text,
        }
    }

    fn push_str(&mut self, piece: &str) {
        match self {
            Text::Inline { len, bytes } => {
                let start = usize::from(*len);
                let end = start + piece.len();
                match (bytes.get_mut(start..end), u8::try_from(end)) {
                    (Some(slot), Ok(new_len)) => {
                        slot.copy_from_slice(piece.as_bytes());
                        *len = new_len;
                    }
                    _ => {
                        let mut text = String::with_capacity(end + 16);
                        text.push_str(self.as_str());
                        text.push_str(piece);
                        *self = Text::Heap(text);
                    }
                }
            }
            Text::Heap(text) => text.push_str(piece),
        }
    }
}

fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `key` escaped as the inside of a JSON string.
fn push_json_escaped(text: &mut Text, key: &str) {
    let mut start = 0;
    for (i, c) in key.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            c if c.is_control() => " ",
            _ => continue,
        };
        text.push_str(key.get(start..i).unwrap_or_default());
        text.push_str(escape);
        start = i + c.len_utf8();
    }
    text.push_str(key.get(start..).unwrap_or_default());
}

/// Decimal digits of `value`, without going through the formatter.
fn push_decimal(text: &mut Text, mut value: usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        if let (Some(slot), Ok(digit)) = (digits.get_mut(start), u8::try_from(value % 10)) {
            *slot = b'0' + digit;
        }
        value /= 10;
        if value == 0 || start == 0 {
            break;
        }
    }
    if let Some(text_digits) = digits
        .get(start..)
        .and_then(|d| std::str::from_utf8(d).ok())
    {
        text.push_str(text_digits);
    }
}

impl FieldPath {
    /// The empty path: the object itself.
    pub fn root() -> Self {
        Self(Text::Inline {
            len: 0,
            bytes: [0; INLINE_CAPACITY],
        })
    }

    /// A path from a dotted string (`"spec.storageClass"`); used for
    /// settings that name fields.
    pub fn parse(dotted: &str) -> Self {
        dotted
            .split('.')
            .fold(Self::root(), |path, key| path.key(key))
    }

    /// A path from its rendered form (as [`FieldPath::as_str`] prints it).
    pub fn from_rendered(rendered: &str) -> Self {
        let mut text = Self::root().0;
        text.push_str(rendered);
        Self(text)
    }

    /// This path followed by a member name.
    pub fn key(&self, key: &str) -> Self {
        let mut path = self.0.clone();
        if is_plain_key(key) {
            if !self.is_root() {
                path.push_str(".");
            }
            path.push_str(key);
        } else {
            path.push_str("[\"");
            push_json_escaped(&mut path, key);
            path.push_str("\"]");
        }
        Self(path)
    }

    /// This path followed by a list index.
    pub fn index(&self, index: usize) -> Self {
        let mut path = self.0.clone();
        path.push_str("[");
        push_decimal(&mut path, index);
        path.push_str("]");
        Self(path)
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Whether this is the object itself.
    pub fn is_root(&self) -> bool {
        match &self.0 {
            Text::Inline { len, .. } => *len == 0,
            Text::Heap(text) => text.is_empty(),
        }
    }
}

impl Default for FieldPath {
    fn default() -> Self {
        Self::root()
    }
}

impl PartialEq for FieldPath {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for FieldPath {}

impl std::hash::Hash for FieldPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A field holding a value of the wrong type, or bytes that are not JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldError {
    WrongType {
        path: FieldPath,
        expected: &'static str,
        found: Kind,
    },
    Malformed {
        path: FieldPath,
        error: JsonError,
    },
    Missing {
        path: FieldPath,
    },
}

impl FieldError {
    /// Where the problem is.
    pub fn path(&self) -> &FieldPath {
        match self {
            FieldError::WrongType { path, .. }
            | FieldError::Malformed { path, .. }
            | FieldError::Missing { path } => path,
        }
    }

    /// The problem, without the path.
    pub fn problem(&self) -> String {
        match self {
            FieldError::WrongType {
                expected, found, ..
            } => {
                format!("must be {expected}, not {}", found.described())
            }
            FieldError::Malformed { error, .. } => error.to_string(),
            FieldError::Missing { .. } => "is required".to_owned(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", display_path(self.path()), self.problem())
    }
}

impl std::error::Error for FieldError {}

fn display_path(path: &FieldPath) -> &str {
    if path.is_root() {
        "the object"
    } else {
        path.as_str()
    }
}

/// A value (or its absence) and the path it was found at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    path: FieldPath,
    value: Option<Json<'a>>,
}

impl<'a> Field<'a> {
    /// A field at `path` holding `value`; `null` counts as absent.
    pub fn new(path: FieldPath, value: Option<Json<'a>>) -> Self {
        let value = value.filter(|v| v.kind() != Kind::Null);
        Self { path, value }
    }

    /// The whole JSON document `bytes`, at the root path (settings-free
    /// tests and tools read objects this way).
    pub fn document(bytes: &'a [u8]) -> Result<Self, FieldError> {
        let json = Json::parse(bytes).map_err(|error| FieldError::Malformed {
            path: FieldPath::root(),
            error,
        })?;
        Ok(Self::new(FieldPath::root(), Some(json)))
    }

    /// A field known to be absent.
    pub fn absent(path: FieldPath) -> Self {
        Self { path, value: None }
    }

    /// The path of this field.
    pub fn path(&self) -> &FieldPath {
        &self.path
    }

    /// The value, `None` when absent or null.
    pub fn json(&self) -> Option<Json<'a>> {
        self.value
    }

    /// Whether the field holds a value.
    pub fn is_present(&self) -> bool {
        self.value.is_some()
    }

    /// The type of the value, `None` when absent.
    pub fn kind(&self) -> Option<Kind> {
        self.value.map(|v| v.kind())
    }

    fn wrong_type(&self, expected: &'static str, found: Kind) -> FieldError {
        FieldError::WrongType {
            path: self.path.clone(),
            expected,
            found,
        }
    }

    fn malformed(&self, error: JsonError) -> FieldError {
        FieldError::Malformed {
            path: self.path.clone(),
            error,
        }
    }

    /// Fails unless the field is absent or holds `kind`.
    pub fn expect(&self, kind: Kind) -> Result<&Self, FieldError> {
        match self.kind() {
            Some(found) if found != kind => Err(self.wrong_type(kind.described(), found)),
            _ => Ok(self),
        }
    }

    /// The member `key` of this object. An absent parent gives an absent
    /// child (chart defaults then apply); a parent that is not an object is
    /// an error naming the parent.
    pub fn field(&self, key: &str) -> Result<Field<'a>, FieldError> {
        let path = self.path.key(key);
        match self.value {
            None => Ok(Field::absent(path)),
            Some(value) if value.kind() == Kind::Object => {
                let child = value.get(key).map_err(|e| self.malformed(e))?;
                Ok(Field::new(path, child))
            }
            Some(value) => Err(self.wrong_type("an object", value.kind())),
        }
    }

    /// The members `keys` of this object, read in one walk that stops when
    /// all are found (a [`Field::field`] per key would walk the object from
    /// its start each time). Absent keys, or an absent object, give absent
    /// fields; the first of duplicate keys wins; an object that is not one
    /// is an error naming it.
    pub fn members<const N: usize>(&self, keys: [&str; N]) -> Result<[Field<'a>; N], FieldError> {
        let mut found: [Option<Json<'a>>; N] = [None; N];
        match self.value {
            None => {}
            Some(value) if value.kind() == Kind::Object => {
                let mut missing = N;
                for member in value.members() {
                    let (raw, json) = member.map_err(|e| self.malformed(e))?;
                    let slot = keys
                        .iter()
                        .position(|key| key_equals(raw, key))
                        .and_then(|i| found.get_mut(i))
                        .filter(|slot| slot.is_none());
                    if let Some(slot) = slot {
                        *slot = Some(json);
                        missing -= 1;
                        if missing == 0 {
                            break;
                        }
                    }
                }
            }
            Some(value) => return Err(self.wrong_type("an object", value.kind())),
        }
        let mut values = found.into_iter();
        Ok(keys.map(|key| Field::new(self.path.key(key), values.next().flatten())))
    }

    /// Follows a dotted path of member names.
    pub fn at(&self, dotted: &str) -> Result<Field<'a>, FieldError> {
        dotted
            .split('.')
            .try_fold(self.clone(), |field, key| field.field(key))
    }

    /// The string value; `None` when absent.
    pub fn string(&self) -> Result<Option<Cow<'a, str>>, FieldError> {
        match self.value {
            None => Ok(None),
            Some(value) => match value.kind() {
                Kind::String => value.as_str().map(Some).ok_or_else(|| {
                    self.malformed(JsonError::from_reason("string is not valid JSON text"))
                }),
                found => Err(self.wrong_type("a string", found)),
            },
        }
    }

    /// The string value, or the chart default when absent.
    pub fn string_or(&self, default: &'a str) -> Result<Cow<'a, str>, FieldError> {
        Ok(self.string()?.unwrap_or(Cow::Borrowed(default)))
    }

    /// This field, which must be present.
    pub fn required(self) -> Result<Self, FieldError> {
        if self.is_present() {
            Ok(self)
        } else {
            Err(FieldError::Missing { path: self.path })
        }
    }

    /// The string value, which must be present.
    pub fn required_string(&self) -> Result<Cow<'a, str>, FieldError> {
        self.string()?.ok_or_else(|| FieldError::Missing {
            path: self.path.clone(),
        })
    }

    /// The boolean value; `None` when absent.
    pub fn bool(&self) -> Result<Option<bool>, FieldError> {
        match self.value {
            None => Ok(None),
            Some(value) => value
                .as_bool()
                .map(Some)
                .ok_or_else(|| self.wrong_type("a boolean", value.kind())),
        }
    }

    /// The elements of a list, each with its indexed path; empty when absent.
    pub fn items(&self) -> Result<Vec<Field<'a>>, FieldError> {
        let Some(value) = self.value else {
            return Ok(Vec::new());
        };
        if value.kind() != Kind::Array {
            return Err(self.wrong_type("a list", value.kind()));
        }
        value
            .elements()
            .enumerate()
            .map(|(i, element)| {
                element
                    .map(|json| Field::new(self.path.index(i), Some(json)))
                    .map_err(|e| self.malformed(e))
            })
            .collect()
    }

    /// The members of an object with their names; empty when absent.
    pub fn entries(&self) -> Result<Vec<(Cow<'a, str>, Field<'a>)>, FieldError> {
        let Some(value) = self.value else {
            return Ok(Vec::new());
        };
        if value.kind() != Kind::Object {
            return Err(self.wrong_type("an object", value.kind()));
        }
        value
            .members()
            .map(|member| {
                let (raw_name, json) = member.map_err(|e| self.malformed(e))?;
                let name = member_name(raw_name).map_err(|e| self.malformed(e))?;
                let field = Field::new(self.path.key(&name), Some(json));
                Ok((name, field))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Field<'_> {
        Field::document(text.as_bytes()).unwrap()
    }

    #[test]
    fn paths_render_like_kubectl() {
        let path = FieldPath::root()
            .key("spec")
            .key("oidc")
            .key("users")
            .index(1)
            .key("role");
        assert_eq!(path.as_str(), "spec.oidc.users[1].role");
        let label = FieldPath::root()
            .key("metadata")
            .key("labels")
            .key("platform.cozystack.io/no-delete");
        assert_eq!(
            label.as_str(),
            "metadata.labels[\"platform.cozystack.io/no-delete\"]"
        );
        assert_eq!(
            FieldPath::parse("spec.kafka.storageClass").as_str(),
            "spec.kafka.storageClass"
        );
        assert_eq!(
            FieldPath::root().key("x").index(0).index(1234567).as_str(),
            "x[0][1234567]"
        );
    }

    #[test]
    fn long_paths_move_to_the_heap_unchanged() {
        let mut path = FieldPath::root();
        let mut expected = String::new();
        for i in 0..30 {
            path = path.key("segment").index(i);
            expected.push_str(if i == 0 { "segment" } else { ".segment" });
            expected.push_str(&format!("[{i}]"));
            assert_eq!(path.as_str(), expected);
        }
    }

    #[test]
    fn absent_parents_give_absent_children() {
        let object = root(r#"{"spec": {"kafka": null}}"#);
        let class = object.at("spec.kafka.storageClass").unwrap();
        assert_eq!(class.path().as_str(), "spec.kafka.storageClass");
        assert_eq!(class.string_or("").unwrap(), "");
        assert_eq!(
            object
                .at("spec.zookeeper.storageClass")
                .unwrap()
                .string()
                .unwrap(),
            None
        );
    }

    #[test]
    fn wrong_types_name_the_field() {
        let object = root(r#"{"spec": "oops", "metadata": {"labels": {"a": 1}}}"#);
        let error = object.at("spec.storageClass").unwrap_err();
        assert_eq!(error.to_string(), "spec must be an object, not a string");
        let error = object
            .at("metadata.labels.a")
            .unwrap()
            .string()
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "metadata.labels.a must be a string, not a number"
        );
        assert_eq!(
            root("[]").field("x").unwrap_err().to_string(),
            "the object must be an object, not a list"
        );
    }

    #[test]
    fn lists_and_maps_carry_indexed_paths() {
        let object = root(r#"{"users": [{"role": "x"}, {"role": 2}], "labels": {"a/b": "c"}}"#);
        let users = object.field("users").unwrap().items().unwrap();
        assert_eq!(
            users[1].field("role").unwrap().path().as_str(),
            "users[1].role"
        );
        let labels = object.field("labels").unwrap().entries().unwrap();
        assert_eq!(labels[0].0, "a/b");
        assert_eq!(labels[0].1.path().as_str(), "labels[\"a/b\"]");
        assert!(object.field("labels").unwrap().items().is_err());
    }

    #[test]
    fn members_are_read_in_one_walk_with_their_paths() {
        let object = root(r#"{"b": [1], "a": "x", "a": "second", "c": null, "d\u0065": 2}"#);
        let [a, b, c, de, z] = object.members(["a", "b", "c", "de", "z"]).unwrap();
        assert_eq!(a.string().unwrap().unwrap(), "x");
        assert_eq!(b.items().unwrap()[0].path().as_str(), "b[0]");
        assert!(!c.is_present());
        assert_eq!(de.json().unwrap().as_i64(), Some(2));
        assert!(!z.is_present());
        assert_eq!(z.path().as_str(), "z");
        let absent = root("{}").field("spec").unwrap();
        assert_eq!(absent.members(["x"]).unwrap()[0].path().as_str(), "spec.x");
        let list = root(r#"{"spec": []}"#).field("spec").unwrap();
        assert_eq!(
            list.members(["x"]).unwrap_err().to_string(),
            list.field("x").unwrap_err().to_string()
        );
        let broken = Field::new(
            FieldPath::root(),
            Some(Json::parse_lazy(b"{\"a\": 1 \"b\": 2}").unwrap()),
        );
        assert!(broken.members(["b"]).is_err());
    }

    #[test]
    fn required_and_boolean_values() {
        let object = root(r#"{"flag": true, "name": "x"}"#);
        assert_eq!(object.field("flag").unwrap().bool().unwrap(), Some(true));
        assert!(object.field("name").unwrap().bool().is_err());
        assert_eq!(
            object
                .field("missing")
                .unwrap()
                .required_string()
                .unwrap_err()
                .to_string(),
            "missing is required"
        );
    }
}
