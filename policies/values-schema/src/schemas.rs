//! The embedded schemas.
//!
//! The index the build script writes (`build.rs`, over values-schema-tree's
//! `write`, from the committed `schemas/`) lists every shipped release and
//! kind with its chart's schema as a static tree ([`Schema`]) and the
//! chart's defaults precomputed ([`Json`]). policy-server evaluates
//! each request in a fresh instance, so nothing prepared at run time would
//! outlive one request: the schemas are prepared at generation time
//! instead, and a request walks them in place, with no JSON to parse and
//! no defaults to rebuild.

pub use tree::{Additional, Json, Schema};

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
    /// (`tree::write::defaults`, computed at build time).
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

    /// The trees the module embeds are its committed JSON: each release's
    /// kind points at its own chart's tree and defaults, also where the
    /// build script shares one tree between releases.
    #[test]
    fn every_embedded_tree_is_its_committed_json() {
        let schemas = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        for release in RELEASES {
            for app in release.apps {
                let file = schemas
                    .join(release.version)
                    .join(format!("{}.json", app.chart));
                let text = std::fs::read_to_string(&file).unwrap();
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
                    tree::write::defaults(&json).unwrap_or_else(|| serde_json::json!({})),
                    "{} {}",
                    release.version,
                    app.kind
                );
            }
        }
    }

    #[test]
    fn releases_and_kinds() {
        assert_eq!(
            RELEASES[0].version, "v1.6.2",
            "the newest release is the default"
        );
        let v162 = release("v1.6.2").unwrap();
        let v154 = release("v1.5.4").unwrap();
        assert_eq!(v162.apps.len(), 30);
        assert_eq!(v154.apps.len(), 29);
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
