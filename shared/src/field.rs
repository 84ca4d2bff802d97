//! Values addressed by path.
//!
//! Every value a rule reads is a [`Field`]: the JSON it holds (if any) and
//! where it was found, so a message can always say where the problem is
//! (`spec.oidc.users[1].role`). Reading a field as the wrong type is a
//! [`FieldError`] that names the path; rules propagate it with `?` and the
//! request is rejected as malformed (400) with that message.
//!
//! Kubernetes and Helm treat `null` like an absent key (a `null` value
//! removes a Helm value and the chart default applies), so fields do too;
//! [`Field::is_null`] tells the two apart where a chart does not.

use std::borrow::Cow;
use std::fmt;
use std::rc::Rc;

use serde_json::Value;

/// The JSON type of a value, as messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    /// The type of `value`.
    pub fn of(value: &Value) -> Kind {
        match value {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        }
    }

    /// `a string`, `an object`, ...: how messages name the type.
    pub fn described(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "a list",
            Kind::Object => "an object",
        }
    }
}

/// One step of a path: a member name or a list index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A path to a field, rendered the way `kubectl explain` and apiserver
/// field errors write it: `spec.kafka.storageClass`,
/// `spec.oidc.users[1].role`, `metadata.labels["platform.cozystack.io/no-delete"]`.
///
/// Every field a rule reads carries its path, so paths share their
/// parents: extending one is a single small allocation, not a copy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(Option<Rc<Step>>);

/// The last segment of a path and the path before it.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Step {
    parent: FieldPath,
    segment: Segment,
}

/// Keys that render bare after a dot; any other is quoted in brackets.
fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl FieldPath {
    /// The empty path: the object itself.
    pub fn root() -> Self {
        Self::default()
    }

    /// A path from a dotted string (`"spec.storageClass"`); used for
    /// settings and rules that name fields.
    pub fn parse(dotted: &str) -> Self {
        Self::from_segments(dotted.split('.').map(|key| Segment::Key(key.to_owned())))
    }

    fn from_segments(segments: impl IntoIterator<Item = Segment>) -> Self {
        segments
            .into_iter()
            .fold(Self::root(), |path, segment| path.then(segment))
    }

    fn then(&self, segment: Segment) -> Self {
        Self(Some(Rc::new(Step {
            parent: self.clone(),
            segment,
        })))
    }

    /// A path from its rendered form (as [`fmt::Display`] prints it), or
    /// `None` when `text` does not read as one: plain keys joined by `.`,
    /// `[index]`, and `["quoted key"]`.
    pub fn parse_rendered(text: &str) -> Option<Self> {
        let mut segments = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            if let Some(quoted) = rest.strip_prefix("[\"") {
                // A JSON string up to its closing unescaped quote, then `]`.
                let mut escaped = false;
                let (end, _) = quoted.char_indices().find(|&(_, c)| {
                    let closes = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    closes
                })?;
                // From the opening quote (after `[`) to the closing one.
                let literal = rest.get(1..end + 3)?;
                segments.push(Segment::Key(serde_json::from_str(literal).ok()?));
                rest = quoted.get(end + 1..)?.strip_prefix(']')?;
            } else if let Some(indexed) = rest.strip_prefix('[') {
                let (digits, after) = indexed.split_once(']')?;
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                segments.push(Segment::Index(digits.parse().ok()?));
                rest = after;
            } else {
                let key = if segments.is_empty() {
                    rest
                } else {
                    rest.strip_prefix('.')?
                };
                let len = key.find(['.', '[']).unwrap_or(key.len());
                let name = key.get(..len)?;
                if !is_plain_key(name) {
                    return None;
                }
                segments.push(Segment::Key(name.to_owned()));
                rest = key.get(len..)?;
            }
        }
        (!segments.is_empty()).then(|| Self::from_segments(segments))
    }

    /// This path followed by a member name.
    pub fn key(&self, key: &str) -> Self {
        self.then(Segment::Key(key.to_owned()))
    }

    /// This path followed by a list index.
    pub fn index(&self, index: usize) -> Self {
        self.then(Segment::Index(index))
    }

    /// Whether this is the object itself.
    pub fn is_root(&self) -> bool {
        self.0.is_none()
    }

    /// The steps of the path, from the root.
    pub fn segments(&self) -> Vec<&Segment> {
        let mut segments = Vec::new();
        let mut step = self.0.as_deref();
        while let Some(Step { parent, segment }) = step {
            segments.push(segment);
            step = parent.0.as_deref();
        }
        segments.reverse();
        segments
    }

    /// The value at this path below `root`, if there is one.
    pub fn resolve<'v>(&self, root: &'v Value) -> Option<&'v Value> {
        self.segments()
            .into_iter()
            .try_fold(root, |value, segment| match segment {
                Segment::Key(key) => value.as_object()?.get(key),
                Segment::Index(i) => value.as_array()?.get(*i),
            })
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Parent first; paths are a few steps deep.
        let Some(step) = self.0.as_deref() else {
            return Ok(());
        };
        step.parent.fmt(f)?;
        match &step.segment {
            Segment::Key(key) if is_plain_key(key) => {
                if !step.parent.is_root() {
                    f.write_str(".")?;
                }
                f.write_str(key)
            }
            // Quoted as a JSON string, on one line.
            Segment::Key(key) => {
                let quoted = serde_json::to_string(&one_line(key)).map_err(|_| fmt::Error)?;
                write!(f, "[{quoted}]")
            }
            Segment::Index(index) => write!(f, "[{index}]"),
        }
    }
}

/// `text` with control characters as spaces, so a path stays on one line.
fn one_line(text: &str) -> Cow<'_, str> {
    if text.chars().any(char::is_control) {
        Cow::Owned(
            text.chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(text)
    }
}

/// A field holding a value of the wrong type, or one a rule needs but
/// cannot find.
///
/// Either becomes a 400 rejection naming the field (`spec.users[1]: must be
/// a map, not a string`), never a 500: a malformed object is the user's to
/// fix, not a fault of the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldError {
    /// The field is there, but not of a type the rule can read.
    WrongType {
        path: FieldPath,
        /// What the rule reads there, in a user's words (`a map`).
        expected: &'static str,
        /// What the object holds instead.
        found: Kind,
    },
    /// The field is absent (or `null`) where the rule requires it.
    Missing { path: FieldPath },
}

impl FieldError {
    /// Where the problem is.
    pub fn path(&self) -> &FieldPath {
        match self {
            FieldError::WrongType { path, .. } | FieldError::Missing { path } => path,
        }
    }

    /// The problem, without the path.
    pub fn problem(&self) -> String {
        match self {
            FieldError::WrongType {
                expected, found, ..
            } => format!("must be {expected}, not {}", found.described()),
            FieldError::Missing { .. } => "is required".to_owned(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path().is_root() {
            write!(f, "the object {}", self.problem())
        } else {
            write!(f, "{} {}", self.path(), self.problem())
        }
    }
}

impl std::error::Error for FieldError {}

/// A value (or its absence) and where it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Field<'a> {
    value: Option<&'a Value>,
    path: FieldPath,
}

impl<'a> Field<'a> {
    /// `value` found at `path`.
    pub fn new(path: FieldPath, value: Option<&'a Value>) -> Self {
        Self { value, path }
    }

    /// A whole document, at the root path.
    pub fn root(value: Option<&'a Value>) -> Self {
        Self::new(FieldPath::root(), value)
    }

    /// The path of this field.
    pub fn path(&self) -> FieldPath {
        self.path.clone()
    }

    /// The value, `None` when absent or null.
    pub fn json(&self) -> Option<&'a Value> {
        self.value.filter(|v| !v.is_null())
    }

    /// Whether the field holds a value.
    pub fn is_present(&self) -> bool {
        self.json().is_some()
    }

    /// Whether the field is there and holds an explicit `null`.
    pub fn is_null(&self) -> bool {
        self.value.is_some_and(Value::is_null)
    }

    /// The type of the value, `None` when absent or null.
    pub fn kind(&self) -> Option<Kind> {
        self.json().map(Kind::of)
    }

    fn wrong_type(&self, expected: &'static str, found: &Value) -> FieldError {
        FieldError::WrongType {
            path: self.path(),
            expected,
            found: Kind::of(found),
        }
    }

    /// Fails unless the field is absent or holds `kind`.
    pub fn expect(&self, kind: Kind) -> Result<&Self, FieldError> {
        match self.json() {
            Some(value) if Kind::of(value) != kind => Err(self.wrong_type(kind.described(), value)),
            _ => Ok(self),
        }
    }

    /// The members of this object: `None` when absent, an error naming
    /// this field when it is not an object.
    fn object(&self) -> Result<Option<&'a serde_json::Map<String, Value>>, FieldError> {
        match self.json() {
            None => Ok(None),
            Some(Value::Object(members)) => Ok(Some(members)),
            Some(value) => Err(self.wrong_type("an object", value)),
        }
    }

    /// The member `key` of this object. An absent parent gives an absent
    /// child (chart defaults then apply); a parent that is not an object is
    /// an error naming the parent.
    pub fn field(&self, key: &str) -> Result<Field<'a>, FieldError> {
        let value = self.object()?.and_then(|members| members.get(key));
        Ok(Field::new(self.path.key(key), value))
    }

    /// The members `keys` of this object, as [`Field::field`] reads each.
    pub fn members<const N: usize>(&self, keys: [&str; N]) -> Result<[Field<'a>; N], FieldError> {
        let members = self.object()?;
        Ok(keys.map(|key| Field::new(self.path.key(key), members.and_then(|m| m.get(key)))))
    }

    /// Follows a dotted path of member names.
    pub fn at(&self, dotted: &str) -> Result<Field<'a>, FieldError> {
        dotted
            .split('.')
            .try_fold(self.clone(), |field, key| field.field(key))
    }

    /// The string value; `None` when absent.
    pub fn string(&self) -> Result<Option<&'a str>, FieldError> {
        match self.json() {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(value) => Err(self.wrong_type("a string", value)),
        }
    }

    /// The string value, or the chart default when absent.
    pub fn string_or(&self, default: &'a str) -> Result<&'a str, FieldError> {
        Ok(self.string()?.unwrap_or(default))
    }

    /// The string value, which must be present.
    pub fn required_string(&self) -> Result<&'a str, FieldError> {
        self.string()?
            .ok_or_else(|| FieldError::Missing { path: self.path() })
    }

    /// The boolean value; `None` when absent.
    pub fn bool(&self) -> Result<Option<bool>, FieldError> {
        match self.json() {
            None => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(value) => Err(self.wrong_type("a boolean", value)),
        }
    }

    /// The elements of a list, each at its index; none when absent.
    pub fn items(&self) -> Result<impl Iterator<Item = Field<'a>> + use<'a>, FieldError> {
        let elements = match self.json() {
            None => &[][..],
            Some(Value::Array(elements)) => elements.as_slice(),
            Some(value) => return Err(self.wrong_type("a list", value)),
        };
        let path = self.path();
        Ok(elements
            .iter()
            .enumerate()
            .map(move |(i, element)| Field::new(path.index(i), Some(element))))
    }

    /// The members of an object with their names; empty when absent.
    pub fn entries(&self) -> Result<Vec<(&'a str, Field<'a>)>, FieldError> {
        Ok(self
            .object()?
            .into_iter()
            .flatten()
            .map(|(name, value)| (name.as_str(), Field::new(self.path.key(name), Some(value))))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_render_like_kubectl() {
        let path = FieldPath::root()
            .key("spec")
            .key("oidc")
            .key("users")
            .index(1)
            .key("role");
        assert_eq!(path.to_string(), "spec.oidc.users[1].role");
        let label = FieldPath::parse("metadata.labels").key("platform.cozystack.io/no-delete");
        assert_eq!(
            label.to_string(),
            "metadata.labels[\"platform.cozystack.io/no-delete\"]"
        );
        assert_eq!(
            FieldPath::root()
                .key("x")
                .index(0)
                .index(1234567)
                .to_string(),
            "x[0][1234567]"
        );
        assert_eq!(
            FieldPath::root().key("q\"uote\nline").to_string(),
            "[\"q\\\"uote line\"]"
        );
        assert_eq!(FieldPath::root().index(2).key("a").to_string(), "[2].a");
    }

    #[test]
    fn rendered_paths_read_back() {
        for path in [
            FieldPath::parse("spec.kafka.storageClass"),
            FieldPath::parse("metadata.labels").key("platform.cozystack.io/no-delete"),
            FieldPath::root().key("a b\\\"]: x").index(3),
            FieldPath::root().index(0).key("x"),
        ] {
            assert_eq!(FieldPath::parse_rendered(&path.to_string()), Some(path));
        }
        for text in [
            "",
            "a b",
            "a..b",
            "a[x]",
            "a[\"open",
            ".a",
            "a.",
            "Deletion blocked",
        ] {
            assert_eq!(FieldPath::parse_rendered(text), None, "{text:?}");
        }
    }

    #[test]
    fn paths_resolve_to_their_values() {
        let object = json!({"spec": {"users": [{"role": "admin"}]}});
        let path = FieldPath::parse("spec.users").index(0).key("role");
        assert_eq!(path.resolve(&object), Some(&json!("admin")));
        assert_eq!(FieldPath::parse("spec.none").resolve(&object), None);
        assert_eq!(FieldPath::parse("spec.users.x").resolve(&object), None);
        assert_eq!(FieldPath::root().resolve(&object), Some(&object));
    }

    #[test]
    fn fields_carry_their_paths() {
        let object = json!({"spec": {"list": [0, {"key": null}, [[{"deep": true}]]]}});
        let root = Field::root(Some(&object));
        let items: Vec<Field<'_>> = root.at("spec.list").unwrap().items().unwrap().collect();
        let null = items[1].field("key").unwrap();
        assert!(!null.is_present() && null.is_null());
        assert_eq!(null.path().to_string(), "spec.list[1].key");
        assert_eq!(
            null.at("below.that").unwrap().path().to_string(),
            "spec.list[1].key.below.that"
        );
        let absent = root.field("status").unwrap();
        assert!(!absent.is_present() && !absent.is_null());
        assert_eq!(Field::root(None).path().to_string(), "");
    }

    #[test]
    fn absent_parents_give_absent_children() {
        let object = json!({"spec": {"kafka": null}});
        let class = Field::root(Some(&object))
            .at("spec.kafka.storageClass")
            .unwrap();
        assert_eq!(class.path().to_string(), "spec.kafka.storageClass");
        assert_eq!(class.string_or("").unwrap(), "");
    }

    #[test]
    fn wrong_types_name_the_field() {
        let object = json!({"spec": "oops", "metadata": {"labels": {"a": 1}}});
        let root = Field::root(Some(&object));
        let error = root.at("spec.storageClass").unwrap_err();
        assert_eq!(error.to_string(), "spec must be an object, not a string");
        let error = root.at("metadata.labels.a").unwrap().string().unwrap_err();
        assert_eq!(
            error.to_string(),
            "metadata.labels.a must be a string, not a number"
        );
        let list = json!([]);
        assert_eq!(
            Field::root(Some(&list)).field("x").unwrap_err().to_string(),
            "the object must be an object, not a list"
        );
        assert!(root.field("spec").unwrap().members(["x"]).is_err());
        assert!(root.field("metadata").unwrap().items().is_err());
    }

    #[test]
    fn lists_maps_and_scalars() {
        let object = json!({"users": [{"role": "x"}, {"role": 2}], "labels": {"a/b": "c"},
            "flag": true, "name": "n"});
        let root = Field::root(Some(&object));
        let users: Vec<Field<'_>> = root.field("users").unwrap().items().unwrap().collect();
        assert_eq!(
            users[1].field("role").unwrap().path().to_string(),
            "users[1].role"
        );
        let labels = root.field("labels").unwrap().entries().unwrap();
        assert_eq!(labels[0].0, "a/b");
        assert_eq!(labels[0].1.path().to_string(), "labels[\"a/b\"]");
        let [flag, name, missing] = root.members(["flag", "name", "missing"]).unwrap();
        assert_eq!(flag.bool().unwrap(), Some(true));
        assert!(name.bool().is_err());
        assert_eq!(name.string().unwrap(), Some("n"));
        assert_eq!(
            missing.required_string().unwrap_err().to_string(),
            "missing is required"
        );
        assert_eq!(root.field("absent").unwrap().items().unwrap().count(), 0);
    }
}
