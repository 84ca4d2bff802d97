//! values-schema's static schema trees.
//!
//! policy-server evaluates each request in a fresh instance, so nothing
//! prepared at run time outlives one request: the chart schemas are
//! prepared at build time instead. The policy's build script runs
//! [`write`] over the committed JSON (`schemas/<version>/<chart>.json`)
//! and index (`schemas/index.json`), and the module embeds the trees it
//! writes; a request walks them in place, with no JSON to parse and no
//! defaults to rebuild.
//!
//! This crate holds what the policy and its writer must agree on: the
//! tree's types ([`Schema`], [`Json`]), the JSON types and their bits
//! ([`Type`]), and the keywords the validator implements ([`KEYWORDS`],
//! [`unsupported`]).

use serde_json::Value;

#[cfg(feature = "write")]
pub mod write;

/// The one extension the validator reads: an object whose keys are free.
pub const PRESERVE_UNKNOWN: &str = "x-kubernetes-preserve-unknown-fields";

/// Kubernetes' quantity regex, as cozyvalues-gen writes it for every
/// `quantity` field (`size`, `resources.cpu`, ...): the one `pattern` the
/// validator supports, matched without a regex engine.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// One schema of the static tree: the keywords values-schema's validator
/// implements ([`KEYWORDS`]), as [`write`] read them from the chart's JSON. `true` is
/// [`Schema::TRUE`] (no keyword), `false` is [`Schema::FALSE`].
#[derive(Debug, Clone, Copy)]
pub struct Schema {
    /// The `false` schema: nothing is valid.
    pub never: bool,
    /// `type`: a bit per [`Type`] ([`Type::bit`]);
    /// 0 when absent.
    pub types: u8,
    /// `enum`.
    pub enumeration: Option<&'static [Json]>,
    /// `properties`, sorted by name; `None` when absent.
    pub properties: Option<&'static [(&'static str, Schema)]>,
    /// `additionalProperties`.
    pub additional: Additional,
    /// `items`.
    pub items: Option<&'static Schema>,
    /// `anyOf`; empty when absent.
    pub any_of: &'static [Schema],
    /// `required`, in the schema's order.
    pub required: &'static [&'static str],
    /// `pattern`: the Kubernetes quantity regex (the only one supported).
    pub quantity: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown: bool,
}

impl Schema {
    /// The `true` schema (and the base every generated schema updates).
    pub const TRUE: Self = Self {
        never: false,
        types: 0,
        enumeration: None,
        properties: None,
        additional: Additional::Absent,
        items: None,
        any_of: &[],
        required: &[],
        quantity: false,
        preserve_unknown: false,
    };

    /// The `false` schema.
    pub const FALSE: Self = Self {
        never: true,
        ..Self::TRUE
    };

    /// The schema of the declared property `name`.
    pub fn property(&self, name: &str) -> Option<&'static Self> {
        let properties = self.properties?;
        properties
            .binary_search_by(|(key, _)| (*key).cmp(name))
            .ok()
            .and_then(|i| properties.get(i))
            .map(|(_, sub)| sub)
    }
}

/// `additionalProperties`.
#[derive(Debug, Clone, Copy)]
pub enum Additional {
    Absent,
    Bool(bool),
    Schema(&'static Schema),
}

/// A JSON value in the static tree (an `enum` member, the chart defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// A number serde_json reads as `u64`.
    Uint(u64),
    /// A negative number serde_json reads as `i64`.
    Int(i64),
    /// Any other number.
    Float(f64),
    String(&'static str),
    Array(&'static [Json]),
    /// Members in the order serde_json's map gave them to the generator.
    Object(&'static [(&'static str, Json)]),
}

impl Json {
    /// The value as serde_json holds it.
    pub fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match *self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(b),
            Self::Uint(n) => Value::from(n),
            Self::Int(n) => Value::from(n),
            Self::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
            Self::String(s) => Value::String(s.to_owned()),
            Self::Array(items) => Value::Array(items.iter().map(Self::to_value).collect()),
            Self::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

/// A JSON type, in boon's order (the order messages list them in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Type {
    Null,
    Boolean,
    Number,
    Integer,
    String,
    Array,
    Object,
}

impl Type {
    /// The type a schema's `type` names.
    pub fn named(name: &str) -> Option<Self> {
        Some(match name {
            "null" => Self::Null,
            "boolean" => Self::Boolean,
            "number" => Self::Number,
            "integer" => Self::Integer,
            "string" => Self::String,
            "array" => Self::Array,
            "object" => Self::Object,
            _ => return None,
        })
    }

    /// Every type, in order.
    pub const ALL: [Self; 7] = [
        Self::Null,
        Self::Boolean,
        Self::Number,
        Self::Integer,
        Self::String,
        Self::Array,
        Self::Object,
    ];

    /// The type's bit in [`Schema::types`].
    pub const fn bit(self) -> u8 {
        match self {
            Self::Null => 0x01,
            Self::Boolean => 0x02,
            Self::Number => 0x04,
            Self::Integer => 0x08,
            Self::String => 0x10,
            Self::Array => 0x20,
            Self::Object => 0x40,
        }
    }

    /// The type of a value (a number is a `Number`).
    pub fn of(value: &Value) -> Self {
        match value {
            Value::Null => Self::Null,
            Value::Bool(_) => Self::Boolean,
            Value::Number(_) => Self::Number,
            Value::String(_) => Self::String,
            Value::Array(_) => Self::Array,
            Value::Object(_) => Self::Object,
        }
    }
}

/// The types of a [`Schema::types`] bitset, in [`Type`] order.
pub fn types(bits: u8) -> Vec<Type> {
    Type::ALL
        .into_iter()
        .filter(|t| bits & t.bit() != 0)
        .collect()
}

/// The bitset of a `type` keyword; 0 when it names none (boon ignores what
/// it does not know).
pub fn type_bits(keyword: &Value) -> u8 {
    match keyword {
        Value::String(name) => Type::named(name).map_or(0, Type::bit),
        Value::Array(names) => names
            .iter()
            .filter_map(|n| n.as_str().and_then(Type::named))
            .fold(0, |bits, t| bits | t.bit()),
        _ => 0,
    }
}

/// The keywords values-schema's validator implements; [`write`] refuses
/// a schema with any other.
pub const KEYWORDS: &[&str] = &[
    "type",
    "default",
    "properties",
    "anyOf",
    "pattern",
    "required",
    "enum",
    "items",
    "additionalProperties",
    PRESERVE_UNKNOWN,
];

/// The first thing in `schema` that values-schema's validator does not
/// implement, as
/// `(JSON pointer, what)`: a keyword outside [`KEYWORDS`], a pattern other
/// than [`QUANTITY_PATTERN`], or a keyword of an unexpected shape.
pub fn unsupported(schema: &Value) -> Option<(String, String)> {
    let mut found = None;
    check(schema, "", &mut found);
    found
}

fn check(schema: &Value, path: &str, found: &mut Option<(String, String)>) {
    if found.is_some() {
        return;
    }
    let keywords = match schema {
        Value::Bool(_) => return,
        Value::Object(keywords) => keywords,
        _ => {
            *found = Some((path.to_owned(), "a schema that is not an object".into()));
            return;
        }
    };
    for (key, value) in keywords {
        let here = pointer_in(path, key);
        let shape_ok = match key.as_str() {
            "default" => true,
            k if k == PRESERVE_UNKNOWN => value.is_boolean(),
            "type" => match value {
                Value::String(name) => Type::named(name).is_some(),
                Value::Array(names) => {
                    !names.is_empty()
                        && names
                            .iter()
                            .all(|n| n.as_str().and_then(Type::named).is_some())
                }
                _ => false,
            },
            "pattern" => {
                if value.as_str() != Some(QUANTITY_PATTERN) {
                    *found = Some((here, format!("pattern {value}")));
                    return;
                }
                true
            }
            "required" => value
                .as_array()
                .is_some_and(|keys| keys.iter().all(Value::is_string)),
            "enum" => value.is_array(),
            "items" | "additionalProperties" => {
                check(value, &here, found);
                value.is_object() || value.is_boolean()
            }
            "properties" => match value {
                Value::Object(named) => {
                    for (name, sub) in named {
                        check(sub, &pointer_in(&here, name), found);
                    }
                    true
                }
                _ => false,
            },
            "anyOf" => match value {
                Value::Array(alternatives) if !alternatives.is_empty() => {
                    for (i, sub) in alternatives.iter().enumerate() {
                        check(sub, &format!("{here}/{i}"), found);
                    }
                    true
                }
                _ => false,
            },
            other => {
                *found = Some((here, format!("keyword {other}")));
                return;
            }
        };
        if found.is_some() {
            return;
        }
        if !shape_ok {
            *found = Some((here, format!("keyword {key} with the value {value}")));
            return;
        }
    }
}

fn pointer_in(path: &str, name: &str) -> String {
    format!("{path}/{}", name.replace('~', "~0").replace('/', "~1"))
}
