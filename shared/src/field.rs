//! Values addressed by path.
//!
//! Every value a rule reads is a [`Field`]: the JSON it holds (if any) and
//! where it was found, so a message can always say where the problem is
//! (`spec.oidc.users[1].role`). Reading a field as the wrong type is a
//! [`FieldError`] that names the path; rules propagate it with `?` and the
//! request is rejected as malformed (400) with that message.
//!
//! A field's path is rendered only when asked for, from the field's
//! position in its document: rules read dozens of fields per request and
//! name one in a message, if any (measured: building every path eagerly
//! cost 10–25 % of an evaluation). Absent fields have no position; they
//! remember the nearest present value above them and the member names
//! below it.
//!
//! Kubernetes and Helm treat `null` like an absent key (a `null` value
//! removes a Helm value and the chart default applies), so fields do too.

use std::borrow::Cow;
use std::fmt;

use crate::json::{Elements, Json, JsonError, Kind, member_name};

/// A path to a field, rendered the way `kubectl explain` and apiserver
/// field errors write it: `spec.kafka.storageClass`,
/// `spec.oidc.users[1].role`, `metadata.labels["platform.cozystack.io/no-delete"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(String);

fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `key` escaped as the inside of a JSON string.
fn push_json_escaped(text: &mut String, key: &str) {
    for c in key.chars() {
        match c {
            '"' => text.push_str("\\\""),
            '\\' => text.push_str("\\\\"),
            c if c.is_control() => text.push(' '),
            c => text.push(c),
        }
    }
}

impl FieldPath {
    /// The empty path: the object itself.
    pub fn root() -> Self {
        Self(String::new())
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
        Self(rendered.to_owned())
    }

    /// This path followed by a member name.
    pub fn key(&self, key: &str) -> Self {
        let mut path = self.clone();
        path.push_key(key);
        path
    }

    fn push_key(&mut self, key: &str) {
        if is_plain_key(key) {
            if !self.is_root() {
                self.0.push('.');
            }
            self.0.push_str(key);
        } else {
            self.0.push_str("[\"");
            push_json_escaped(&mut self.0, key);
            self.0.push_str("\"]");
        }
    }

    /// This path followed by a list index.
    pub fn index(&self, index: usize) -> Self {
        let mut path = self.clone();
        path.push_index(index);
        path
    }

    fn push_index(&mut self, index: usize) {
        self.0.push('[');
        self.0.push_str(&index.to_string());
        self.0.push(']');
    }

    /// This path followed by `relative`, a path rendered from the root.
    fn join(mut self, relative: &FieldPath) -> Self {
        if !self.is_root() && !relative.is_root() && !relative.0.starts_with('[') {
            self.0.push('.');
        }
        self.0.push_str(&relative.0);
        self
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the object itself.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<&FieldPath> for FieldPath {
    fn from(path: &FieldPath) -> Self {
        path.clone()
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

/// The document a field was read from: paths are measured from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Origin<'a> {
    /// The document's value; `None` when the document itself is absent.
    document: Option<Json<'a>>,
    /// The document's own path (`""` for an object, `request.userInfo`).
    prefix: &'static str,
}

/// Where a field is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place<'a> {
    /// At this value of the document (a `null` reads as absent).
    At(Json<'a>),
    /// Member names the document does not have, below `parent` (below the
    /// origin itself when `None`).
    Missing {
        parent: Option<Json<'a>>,
        keys: MissingKeys,
    },
}

/// The member names of an absent field below its nearest present value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum MissingKeys {
    /// One name the program spells out: most absent fields are optional
    /// members read by [`Field::members`], and need no allocation.
    Named(&'static str),
    /// Anything longer, rendered.
    Rendered(Box<FieldPath>),
}

impl MissingKeys {
    fn rendered(&self) -> FieldPath {
        match self {
            MissingKeys::Named(key) => FieldPath::root().key(key),
            MissingKeys::Rendered(path) => FieldPath::clone(path),
        }
    }

    /// These names followed by `key`.
    fn then(&self, key: &str) -> Self {
        MissingKeys::Rendered(Box::new(self.rendered().key(key)))
    }
}

/// A value (or its absence) and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    origin: Origin<'a>,
    place: Place<'a>,
}

impl<'a> Field<'a> {
    /// The document `value`, whose own path is `prefix` (`""` for an
    /// object a rule reads, `request.userInfo` for a part of the request).
    pub fn under(prefix: &'static str, value: Option<Json<'a>>) -> Self {
        let place = match value {
            Some(json) => Place::At(json),
            None => Place::Missing {
                parent: None,
                keys: MissingKeys::Rendered(Box::default()),
            },
        };
        Self {
            origin: Origin {
                document: value,
                prefix,
            },
            place,
        }
    }

    /// The document `value`, at the root path.
    pub fn root(value: Option<Json<'a>>) -> Self {
        Self::under("", value)
    }

    /// The whole JSON document `bytes`, at the root path (settings-free
    /// tests and tools read objects this way).
    pub fn document(bytes: &'a [u8]) -> Result<Self, FieldError> {
        let json = Json::parse(bytes).map_err(|error| FieldError::Malformed {
            path: FieldPath::root(),
            error,
        })?;
        Ok(Self::root(Some(json)))
    }

    /// A field for `json`, a value its caller read from within this
    /// field's value (a walk of its own, say); its path is rendered from
    /// where `json` sits in the document.
    pub fn inner(&self, json: Json<'a>) -> Self {
        Self {
            origin: self.origin,
            place: Place::At(json),
        }
    }

    /// The member `key`, which this field's value does not have.
    fn missing(&self, key: &str) -> Self {
        self.missing_with(key, || {
            MissingKeys::Rendered(Box::new(FieldPath::root().key(key)))
        })
    }

    /// [`Field::missing`] for a name spelled out in the program.
    fn missing_named(&self, key: &'static str) -> Self {
        self.missing_with(key, || MissingKeys::Named(key))
    }

    /// The absent member `key`: named by `first` below this field's value,
    /// or appended to this field's own missing names.
    fn missing_with(&self, key: &str, first: impl FnOnce() -> MissingKeys) -> Self {
        let place = match &self.place {
            Place::At(json) => Place::Missing {
                parent: Some(*json),
                keys: first(),
            },
            Place::Missing { parent, keys } => Place::Missing {
                parent: *parent,
                keys: keys.then(key),
            },
        };
        Self {
            origin: self.origin,
            place,
        }
    }

    /// The path of this field, rendered from its position in the document.
    pub fn path(&self) -> FieldPath {
        let path = FieldPath::from_rendered(self.origin.prefix);
        let (anchor, keys) = match &self.place {
            Place::At(json) => (Some(*json), None),
            Place::Missing { parent, keys } => (*parent, Some(keys)),
        };
        let path = match (self.origin.document, anchor) {
            (Some(document), Some(anchor)) => descend(path, document, anchor),
            _ => path,
        };
        match keys {
            Some(keys) => path.join(&keys.rendered()),
            None => path,
        }
    }

    /// The value, `None` when absent or null.
    pub fn json(&self) -> Option<Json<'a>> {
        match self.place {
            Place::At(json) if json.kind() != Kind::Null => Some(json),
            _ => None,
        }
    }

    /// Whether the field holds a value.
    pub fn is_present(&self) -> bool {
        self.json().is_some()
    }

    /// The type of the value, `None` when absent.
    pub fn kind(&self) -> Option<Kind> {
        self.json().map(|v| v.kind())
    }

    fn wrong_type(&self, expected: &'static str, found: Kind) -> FieldError {
        FieldError::WrongType {
            path: self.path(),
            expected,
            found,
        }
    }

    fn malformed(&self, error: JsonError) -> FieldError {
        FieldError::Malformed {
            path: self.path(),
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
        match self.json() {
            None => Ok(self.missing(key)),
            Some(value) if value.kind() == Kind::Object => {
                match value.get(key).map_err(|e| self.malformed(e))? {
                    Some(json) => Ok(self.inner(json)),
                    None => Ok(self.missing(key)),
                }
            }
            Some(value) => Err(self.wrong_type("an object", value.kind())),
        }
    }

    /// The members `keys` of this object, read in one walk that stops when
    /// all are found (a [`Field::field`] per key would walk the object from
    /// its start each time). Absent keys, or an absent object, give absent
    /// fields; the first of duplicate keys wins; an object that is not one
    /// is an error naming it.
    pub fn members<const N: usize>(
        &self,
        keys: [&'static str; N],
    ) -> Result<[Field<'a>; N], FieldError> {
        let found = match self.json() {
            None => [None; N],
            Some(value) if value.kind() == Kind::Object => {
                value.get_all(keys).map_err(|e| self.malformed(e))?
            }
            Some(value) => return Err(self.wrong_type("an object", value.kind())),
        };
        let mut values = found.into_iter();
        Ok(keys.map(|key| match values.next().flatten() {
            Some(json) => self.inner(json),
            None => self.missing_named(key),
        }))
    }

    /// Follows a dotted path of member names.
    pub fn at(&self, dotted: &str) -> Result<Field<'a>, FieldError> {
        let mut keys = dotted.split('.');
        let first = self.field(keys.next().unwrap_or_default())?;
        keys.try_fold(first, |field, key| field.field(key))
    }

    /// The string value; `None` when absent.
    pub fn string(&self) -> Result<Option<Cow<'a, str>>, FieldError> {
        match self.json() {
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
            Err(FieldError::Missing { path: self.path() })
        }
    }

    /// The string value, which must be present.
    pub fn required_string(&self) -> Result<Cow<'a, str>, FieldError> {
        self.string()?
            .ok_or_else(|| FieldError::Missing { path: self.path() })
    }

    /// The boolean value; `None` when absent.
    pub fn bool(&self) -> Result<Option<bool>, FieldError> {
        match self.json() {
            None => Ok(None),
            Some(value) => value
                .as_bool()
                .map(Some)
                .ok_or_else(|| self.wrong_type("a boolean", value.kind())),
        }
    }

    /// The elements of a list, each at its index, read as the walk goes
    /// (no list is collected); none when absent. An element that is not
    /// JSON ends the walk with an error naming the list.
    pub fn items(&self) -> Result<Items<'a>, FieldError> {
        let elements = match self.json() {
            None => None,
            Some(value) if value.kind() == Kind::Array => Some(value.elements()),
            Some(value) => return Err(self.wrong_type("a list", value.kind())),
        };
        Ok(Items {
            list: self.clone(),
            elements,
        })
    }

    /// The members of an object with their names; empty when absent.
    pub fn entries(&self) -> Result<Vec<(Cow<'a, str>, Field<'a>)>, FieldError> {
        let Some(value) = self.json() else {
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
                Ok((name, self.inner(json)))
            })
            .collect()
    }
}

/// The elements of a list field (see [`Field::items`]).
#[derive(Debug)]
pub struct Items<'a> {
    list: Field<'a>,
    elements: Option<Elements<'a>>,
}

impl<'a> Iterator for Items<'a> {
    type Item = Result<Field<'a>, FieldError>;

    fn next(&mut self) -> Option<Self::Item> {
        let element = self.elements.as_mut()?.next()?;
        Some(
            element
                .map(|json| self.list.inner(json))
                .map_err(|e| self.list.malformed(e)),
        )
    }
}

/// `path` extended from `document` down to `target`, a value read from
/// it: at each level, the member or element whose bytes hold the target.
/// Malformed regions (which the rule would have reported) end the descent.
fn descend(mut path: FieldPath, document: Json<'_>, target: Json<'_>) -> FieldPath {
    let mut node = document;
    while let Some(offset) = node.offset_of(&target).filter(|offset| *offset > 0) {
        let Some((segment, value)) = item_holding(node, offset) else {
            break;
        };
        match segment {
            Segment::Key(raw) => match member_name(raw) {
                Ok(name) => path.push_key(&name),
                Err(_) => break,
            },
            Segment::Index(i) => path.push_index(i),
        }
        node = value;
    }
    path
}

enum Segment<'a> {
    Key(&'a [u8]),
    Index(usize),
}

/// The item of `node` that holds the byte at `offset`: the last one that
/// starts at or before it (each item's end is found once, by the walk).
fn item_holding<'a>(node: Json<'a>, offset: usize) -> Option<(Segment<'a>, Json<'a>)> {
    let starts_by = |value: &Json<'a>| node.offset_of(value).is_some_and(|start| start <= offset);
    let mut holding = None;
    match node.kind() {
        Kind::Object => {
            for (raw, value) in node.members().map_while(Result::ok) {
                if !starts_by(&value) {
                    break;
                }
                holding = Some((Segment::Key(raw), value));
            }
        }
        Kind::Array => {
            for (i, value) in node.elements().map_while(Result::ok).enumerate() {
                if !starts_by(&value) {
                    break;
                }
                holding = Some((Segment::Index(i), value));
            }
        }
        _ => {}
    }
    holding
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Field<'_> {
        Field::document(text.as_bytes()).unwrap()
    }

    fn elements<'a>(list: &Field<'a>) -> Vec<Field<'a>> {
        list.items().unwrap().map(Result::unwrap).collect()
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
    fn paths_are_rendered_from_positions_only_when_asked_for() {
        let object = root(
            r#"{"a": 1, "a": {"x": 2}, "spec": {"list": [0, {"k\u0065y": null}, [[{"deep": true}]]],
               "odd key": {"q\"uote": "v"}}}"#,
        );
        let list = object.at("spec.list").unwrap();
        let items = elements(&list);
        let null = items[1].field("key").unwrap();
        assert!(!null.is_present());
        assert_eq!(null.path().as_str(), "spec.list[1].key");
        assert_eq!(
            null.at("below.that").unwrap().path().as_str(),
            "spec.list[1].key.below.that"
        );
        let deep = elements(&elements(&items[2])[0])[0].field("deep").unwrap();
        assert_eq!(deep.path().as_str(), "spec.list[2][0][0].deep");
        let quoted = object.at("spec.odd key").unwrap().entries().unwrap();
        assert_eq!(
            quoted[0].1.path().as_str(),
            "spec[\"odd key\"][\"q\\\"uote\"]"
        );
        // The first of duplicate keys is the one read, and named.
        assert_eq!(object.field("a").unwrap().path().as_str(), "a");
        assert_eq!(
            object.field("spec").unwrap().missing("[x]").path().as_str(),
            "spec[\"[x]\"]"
        );
        let header = Field::under(
            "request.userInfo",
            Some(Json::parse(br#"{"groups": ["a", 7]}"#).unwrap()),
        );
        let groups = elements(&header.field("groups").unwrap());
        assert_eq!(
            groups[1].string().unwrap_err().to_string(),
            "request.userInfo.groups[1] must be a string, not a number"
        );
        let nothing = Field::under("object", None);
        assert_eq!(
            nothing.at("spec.x").unwrap().path().as_str(),
            "object.spec.x"
        );
        assert_eq!(Field::root(None).path().as_str(), "");
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
        let users = elements(&object.field("users").unwrap());
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
        assert_eq!(elements(&b)[0].path().as_str(), "b[0]");
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
        let broken = Field::root(Some(Json::parse_lazy(b"{\"a\": 1 \"b\": 2}").unwrap()));
        assert!(broken.members(["b"]).is_err());
    }

    #[test]
    fn items_are_read_as_the_walk_goes() {
        let object = Field::root(Some(
            Json::parse_lazy(b"{\"l\": [1, @], \"e\": []}").unwrap(),
        ));
        let mut items = object.field("l").unwrap().items().unwrap();
        assert_eq!(items.next().unwrap().unwrap().path().as_str(), "l[0]");
        assert_eq!(
            items.next().unwrap().unwrap_err().to_string(),
            "l malformed JSON: unexpected character"
        );
        assert!(items.next().is_none());
        assert_eq!(object.field("e").unwrap().items().unwrap().count(), 0);
        assert_eq!(object.field("absent").unwrap().items().unwrap().count(), 0);
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
