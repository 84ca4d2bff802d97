//! The embedded schemas.
//!
//! `schemas/index.rs` (generated, [`crate::generate`]) lists every shipped
//! release and kind with its chart's schema as a static tree ([`Schema`])
//! and the chart's defaults precomputed ([`Json`]). policy-server evaluates
//! each request in a fresh instance, so nothing prepared at run time would
//! outlive one request: the schemas are prepared at generation time
//! instead, and a request walks them in place, with no JSON to parse and
//! no defaults to rebuild.

/// One schema of the static tree: the keywords [`crate::validate`]
/// implements, as the generator read them from the chart's JSON. `true` is
/// [`Schema::TRUE`] (no keyword), `false` is [`Schema::FALSE`].
#[derive(Debug, Clone, Copy)]
pub struct Schema {
    /// The `false` schema: nothing is valid.
    pub never: bool,
    /// `type`: a bit per [`crate::validate::Type`] ([`crate::validate::Type::bit`]);
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

/// One kind of a release.
#[derive(Debug)]
pub struct App {
    /// `Postgres`.
    pub kind: &'static str,
    /// `postgreses`.
    pub plural: &'static str,
    /// The chart directory in the release data: `apps-postgres`.
    pub chart: &'static str,
    /// The chart's schema, annotations removed.
    pub schema: &'static Schema,
    /// The chart's defaults, as its `values.yaml` holds them
    /// ([`crate::helm::defaults`], computed by the generator).
    pub defaults: &'static [(&'static str, Json)],
    /// Dotted paths whose schema says `self == oldSelf` (storageclass-immutable's).
    pub immutable: &'static [&'static str],
    /// The defaulted keys whose `null` makes the chart's templates fail,
    /// as the Helm oracle rendered them (`nulls.json`).
    pub nulls: &'static [NullFailure],
    /// The addon charts a user's values reach whose schemas refuse
    /// undeclared keys.
    pub addons: &'static [AddonSchema],
}

/// An addon's chart, reached verbatim from a block of the user's values,
/// whose schema closes some of its objects.
#[derive(Debug)]
pub struct AddonSchema {
    /// The block below `spec` the chart validates.
    pub values: &'static [&'static str],
    /// The chart, under `packages/`.
    pub chart: &'static str,
    /// Its closed objects.
    pub closed: &'static [Closed],
}

/// An object of an addon's schema with `additionalProperties: false`.
#[derive(Debug)]
pub struct Closed {
    /// Below the addon's block.
    pub path: &'static [&'static str],
    /// Its declared keys, sorted.
    pub keys: &'static [&'static str],
}

/// A defaulted key whose `null` makes the chart fail to render: Helm
/// deletes the key with its default, and a template then reads it.
#[derive(Debug)]
pub struct NullFailure {
    /// The key's path below `spec`.
    pub path: &'static [&'static str],
    /// Where the render fails: `postgres/templates/db.yaml:224`.
    pub at: &'static str,
    /// Helm's message there.
    pub helm: &'static str,
}

/// One Cozystack release.
#[derive(Debug)]
pub struct Release {
    /// `v1.6.2`.
    pub version: &'static str,
    /// Its kinds, by name.
    pub apps: &'static [App],
}

mod index {
    use super::{Additional, AddonSchema, App, Closed, Json, NullFailure, Release, Schema};
    include!("../schemas/index.rs");
}

pub use index::RELEASES;

/// The release called `version`.
pub fn release(version: &str) -> Option<&'static Release> {
    RELEASES.iter().find(|r| r.version == version)
}

/// The draft a schema without `$schema` is read as: Helm's validator,
/// santhosh-tekuri/jsonschema v6 (Helm 3.18.5 onwards and Helm 4), compiles
/// with `jsonschema.NewCompiler()` and no `DefaultDraft`, whose default is
/// draft 2020-12. [`crate::validate`] applies the charts' keywords as that
/// draft does (boon, the same author's Rust port, is the tests' oracle).
pub const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The app `kind` of `release`.
pub fn lookup(release: &'static Release, kind: &str) -> Option<&'static App> {
    release.apps.iter().find(|app| app.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether every `properties` below `schema` is sorted, as
    /// [`Schema::property`]'s binary search needs.
    fn sorted(schema: &Schema) -> bool {
        let properties = schema.properties.unwrap_or_default();
        properties.windows(2).all(|w| w[0].0 < w[1].0)
            && properties.iter().all(|(_, sub)| sorted(sub))
            && schema.items.is_none_or(sorted)
            && schema.any_of.iter().all(sorted)
            && match schema.additional {
                Additional::Schema(sub) => sorted(sub),
                _ => true,
            }
    }

    #[test]
    fn every_schema_is_searchable() {
        let mut count = 0;
        for release in RELEASES {
            for app in release.apps {
                assert!(sorted(app.schema), "{} {}", release.version, app.kind);
                count += 1;
            }
        }
        assert_eq!(count, 59, "30 kinds of v1.6.2, 29 of v1.5.4");
        let postgres = lookup(release("v1.6.2").unwrap(), "Postgres").unwrap();
        assert!(postgres.schema.property("replicas").is_some());
        assert!(postgres.schema.property("replcas").is_none());
        assert!(postgres.defaults.iter().any(|(k, _)| *k == "replicas"));
    }

    #[test]
    fn releases_and_kinds() {
        assert_eq!(RELEASES[0].version, crate::generate::VERSIONS[0]);
        let v162 = release("v1.6.2").unwrap();
        let v154 = release("v1.5.4").unwrap();
        assert_eq!(v162.apps.len(), 30);
        assert_eq!(v154.apps.len(), 29);
        assert!(v154.apps.iter().all(|a| a.kind != "KubernetesNodes"));
        for app in v162.apps {
            let known = shared::catalogue::app_kind(app.kind).unwrap();
            assert_eq!(known.plural, app.plural, "{}", app.kind);
        }
        let vpc = lookup(v162, "VirtualPrivateCloud").unwrap();
        assert_eq!(vpc.chart, "apps-vpc");
        let kafka = lookup(v162, "Kafka").unwrap();
        assert_eq!(
            kafka.immutable,
            ["spec.kafka.storageClass", "spec.zookeeper.storageClass"]
        );
        assert!(lookup(v162, "Gateway").is_none());
    }
}
