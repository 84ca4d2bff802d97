//! The embedded schemas.
//!
//! The index the build script writes (`build.rs`, over values-schema-tree's
//! `write`, from the committed `schemas/`) lists every release the bundle
//! knows and its kinds, each with its chart's schema as a static tree
//! ([`Schema`]) and the chart's defaults precomputed ([`Json`]).
//! policy-server evaluates each request in a fresh instance, so nothing
//! prepared at run time would outlive one request: the schemas are prepared
//! at generation time instead, and a request walks them in place, with no
//! JSON to parse and no defaults to rebuild. A kind judged by the schema of
//! the cluster's ApplicationDefinition ([`crate::cluster`]) is an [`App`]
//! built for the request.

pub use tree::{Additional, Json, Schema};

/// One kind: of a release the bundle knows (`App<'static>`), or of the
/// cluster, for one request.
#[derive(Debug)]
pub struct App<'a> {
    /// `Postgres`.
    pub kind: &'a str,
    /// `postgreses`.
    pub plural: &'a str,
    /// The chart directory in the release data: `apps-postgres`.
    pub chart: &'a str,
    /// The chart's schema, annotations removed.
    pub schema: &'a Schema<'a>,
    /// The chart's defaults, as its `values.yaml` holds them
    /// (`tree::defaults`, computed at build time).
    pub defaults: &'a [(&'a str, Json<'a>)],
    /// Dotted paths whose schema says `self == oldSelf` (storageclass-immutable's).
    pub immutable: &'a [&'a str],
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
    pub apps: &'static [App<'static>],
}

mod index {
    use super::{Additional, AddonSchema, App, Closed, Json, NullFailure, Release, Schema};
    include!(concat!(env!("OUT_DIR"), "/index.rs"));
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
pub fn lookup(release: &'static Release, kind: &str) -> Option<&'static App<'static>> {
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
        for release in RELEASES {
            for app in release.apps {
                assert!(sorted(app.schema), "{} {}", release.version, app.kind);
            }
        }
        let postgres = lookup(release("v1.6.2").unwrap(), "Postgres").unwrap();
        assert!(postgres.schema.property("replicas").is_some());
        assert!(postgres.schema.property("replcas").is_none());
        assert!(postgres.defaults.iter().any(|(k, _)| *k == "replicas"));
    }

    /// The index entry of `version`'s own charts.
    fn own<'i>(index: &'i tree::write::Index, version: &str) -> &'i tree::write::IndexRelease {
        let mut entry = index
            .releases
            .iter()
            .find(|r| r.version == version)
            .unwrap();
        while let Some(other) = &entry.same_as {
            entry = index.releases.iter().find(|r| r.version == *other).unwrap();
        }
        entry
    }

    /// The trees the module embeds are its committed JSON: each release's
    /// kind points at the tree and defaults of the schema file the index
    /// names for it, also where the build script shares trees between
    /// charts and releases.
    #[test]
    fn every_embedded_tree_is_its_committed_json() {
        let schemas = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let index: tree::write::Index =
            serde_json::from_str(&std::fs::read_to_string(schemas.join("index.json")).unwrap())
                .unwrap();
        for release in RELEASES {
            let entry = own(&index, release.version);
            for app in release.apps {
                let file = &entry
                    .apps
                    .iter()
                    .find(|a| a.kind == app.kind)
                    .unwrap()
                    .schema;
                let text = std::fs::read_to_string(schemas.join(file)).unwrap();
                let json: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert_eq!(
                    tree::write::schema_text(app.schema),
                    tree::write::schema_text(tree::write::leak(&json)),
                    "{} {}",
                    release.version,
                    app.kind
                );
                assert_eq!(
                    Json::Object(app.defaults).to_value(),
                    tree::defaults(&json).unwrap_or_else(|| serde_json::json!({})),
                    "{} {}",
                    release.version,
                    app.kind
                );
            }
        }
    }

    /// Every release the bundle knows has its schemas here, with the kinds
    /// its ApplicationDefinitions serve; releases with the same charts
    /// share one table.
    #[test]
    fn releases_and_kinds() {
        assert_eq!(
            RELEASES[0].version, "v1.6.2",
            "the newest release is the default"
        );
        for known in release::Release::all() {
            assert!(release(known.as_str()).is_some(), "{known}");
        }
        assert_eq!(RELEASES.len(), release::Release::all().count());
        let v162 = release("v1.6.2").unwrap();
        let v154 = release("v1.5.4").unwrap();
        assert!(std::ptr::eq(
            release("v1.5.0").unwrap().apps,
            release("v1.5.1").unwrap().apps
        ));
        assert!(v154.apps.iter().all(|a| a.kind != "KubernetesNodes"));
        for app in v162.apps {
            let known = shared::apps::app_kind(app.kind).unwrap();
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
