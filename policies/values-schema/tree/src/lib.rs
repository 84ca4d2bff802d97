//! values-schema's schema trees.
//!
//! policy-server evaluates each request in a fresh instance, so nothing
//! prepared at run time outlives one request: the chart schemas of the
//! releases the bundle knows are prepared at build time instead. The
//! policy's build script runs [`write`] over the committed JSON
//! (`schemas/<version>/<chart>.json`) and index (`schemas/index.json`), and
//! the module embeds the static trees it writes; a request walks them in
//! place, with no JSON to parse and no defaults to rebuild. A schema a
//! cluster's ApplicationDefinition carries is built at run time instead
//! ([`build`]), into an arena that lives as long as the request.
//!
//! This crate holds what the policy and its writer must agree on: the
//! tree's types ([`Schema`], [`Json`]), the JSON types and their bits
//! ([`Type`]), the keywords the validator implements ([`KEYWORDS`],
//! [`unsupported`]), and the chart defaults a schema implies
//! ([`defaults`]).

use serde_json::{Map, Value};

pub mod build;
#[cfg(feature = "write")]
pub mod write;

/// The one extension the validator reads: an object whose keys are free.
pub const PRESERVE_UNKNOWN: &str = "x-kubernetes-preserve-unknown-fields";

/// Kubernetes' quantity regex, as cozyvalues-gen writes it for every
/// `quantity` field (`size`, `resources.cpu`, ...): the one `pattern` the
/// validator supports, matched without a regex engine.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// One schema of a tree: the keywords values-schema's validator
/// implements ([`KEYWORDS`]), read from a chart's JSON, by [`write`] into
/// the module's static trees or at run time by [`build`] from the schema a
/// cluster's ApplicationDefinition carries. `true` is [`Schema::TRUE`] (no
/// keyword), `false` is [`Schema::FALSE`].
#[derive(Debug, Clone, Copy)]
pub struct Schema<'a> {
    /// The `false` schema: nothing is valid.
    pub never: bool,
    /// `type`: a bit per [`Type`] ([`Type::bit`]);
    /// 0 when absent.
    pub types: u8,
    /// `enum`.
    pub enumeration: Option<&'a [Json<'a>]>,
    /// `properties`, sorted by name; `None` when absent.
    pub properties: Option<&'a [(&'a str, Schema<'a>)]>,
    /// `additionalProperties`.
    pub additional: Additional<'a>,
    /// `items`.
    pub items: Option<&'a Schema<'a>>,
    /// `anyOf`; empty when absent.
    pub any_of: &'a [Schema<'a>],
    /// `required`, in the schema's order.
    pub required: &'a [&'a str],
    /// `pattern`: the Kubernetes quantity regex (the only one supported).
    pub quantity: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown: bool,
}

impl<'a> Schema<'a> {
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
    pub fn property(&self, name: &str) -> Option<&'a Schema<'a>> {
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
pub enum Additional<'a> {
    Absent,
    Bool(bool),
    Schema(&'a Schema<'a>),
}

/// A JSON value in a tree (an `enum` member, the chart defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    /// A number serde_json reads as `u64`.
    Uint(u64),
    /// A negative number serde_json reads as `i64`.
    Int(i64),
    /// Any other number.
    Float(f64),
    String(&'a str),
    Array(&'a [Json<'a>]),
    /// Members in the order serde_json's map gave them to the generator.
    Object(&'a [(&'a str, Json<'a>)]),
}

impl Json<'_> {
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

/// The chart's default values, rebuilt from its schema; `None` when the
/// schema defaults nothing.
///
/// The chart's `values.yaml` is not in the release data, only its schema;
/// Cozystack generates both from the same annotated `values.yaml`
/// (cozyvalues-gen), each key's value becoming its `default`. The rebuild:
/// an object's own `default`, under which each declared property's rebuilt
/// default fills a key the object default leaves out. For v1.6.2 and
/// v1.5.4 this gives each chart's `values.yaml` exactly, but for two
/// deviations that do not change a verdict: Monitoring's
/// `grafana.resources.limits.cpu` and `alerta.resources.limits.cpu` (`1` in
/// the schema, `"1"` in the file; the field takes both) and
/// KubernetesNodes' `kubelet.evictionSoftMemory` and `evictionHardMemory`
/// (defaulted in the schema, commented out in the file).
pub fn defaults(schema: &Value) -> Option<Value> {
    let default = schema.get("default");
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return default.cloned();
    };
    let mut object = match default {
        None => Map::new(),
        Some(Value::Object(members)) => members.clone(),
        Some(other) => return Some(other.clone()),
    };
    let mut any = default.is_some();
    for (name, property) in properties {
        if let Some(value) = defaults(property) {
            any = true;
            match object.get_mut(name) {
                None => {
                    object.insert(name.clone(), value);
                }
                Some(Value::Object(present)) => {
                    if let Value::Object(below) = value {
                        fill(present, below);
                    }
                }
                Some(_) => {}
            }
        }
    }
    any.then_some(Value::Object(object))
}

/// Adds to `present` every key of `below` it lacks, recursively.
fn fill(present: &mut Map<String, Value>, below: Map<String, Value>) {
    for (key, value) in below {
        match present.get_mut(&key) {
            None => {
                present.insert(key, value);
            }
            Some(Value::Object(inner)) => {
                if let Value::Object(value) = value {
                    fill(inner, value);
                }
            }
            Some(_) => {}
        }
    }
}

/// Dotted paths (from `spec`) of the fields whose `x-kubernetes-validations`
/// hold `self == oldSelf`, through `properties`.
pub fn immutable_paths(schema: &Value) -> Vec<String> {
    fn walk(schema: &Value, path: &str, out: &mut Vec<String>) {
        let immutable = schema
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .is_some_and(|rules| {
                rules.iter().any(|rule| {
                    rule.get("rule").and_then(Value::as_str).map(str::trim)
                        == Some("self == oldSelf")
                })
            });
        if immutable {
            out.push(path.to_owned());
        }
        if let Some(Value::Object(properties)) = schema.get("properties") {
            for (name, sub) in properties {
                walk(sub, &format!("{path}.{name}"), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(schema, "spec", &mut out);
    out.sort();
    out
}

/// Schema keywords that only annotate: dropped from the committed copies.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "examples",
    "$comment",
    "readOnly",
    "writeOnly",
    "deprecated",
];

/// Keywords whose value is a schema.
const SCHEMA_VALUED: &[&str] = &[
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value maps names to schemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// The schema without annotations; data keywords (`default`, `enum`,
/// `const`) are kept as they are.
pub fn strip(schema: &Value) -> Value {
    let Value::Object(members) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in members {
        let key_str = key.as_str();
        if ANNOTATIONS.contains(&key_str) || (key.starts_with("x-") && key != PRESERVE_UNKNOWN) {
            continue;
        }
        let kept = if SCHEMA_VALUED.contains(&key_str) {
            strip(value)
        } else if SCHEMA_LISTS.contains(&key_str) {
            match value {
                Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
                other => other.clone(),
            }
        } else if SCHEMA_MAPS.contains(&key_str) {
            match value {
                Value::Object(named) => Value::Object(
                    named
                        .iter()
                        .map(|(name, sub)| (name.clone(), strip(sub)))
                        .collect(),
                ),
                other => other.clone(),
            }
        } else {
            value.clone()
        };
        out.insert(key.clone(), kept);
    }
    Value::Object(out)
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
