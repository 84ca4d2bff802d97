//! The embedded schemas and their compiled form.
//!
//! `schemas/index.rs` (generated, [`crate::generate`]) lists every shipped
//! release and kind with its chart's schema. Compiling one costs about
//! 1.8 ms, validating with it 0.015 ms, and policy-server evaluates each
//! request in a fresh instance: so everything is compiled once, in
//! [`COMPILED`], which [`prepare`] forces. The module runs `prepare` at
//! build time (Wizer, `shared::policy!(.., init = prepare)`) and ships the
//! memory it leaves; natively the first request compiles.

use std::sync::LazyLock;

use boon::{Compiler, Draft, SchemaIndex, Schemas};
use serde_json::Value;

use crate::helm;

/// One kind of a release.
#[derive(Debug)]
pub struct App {
    /// `Postgres`.
    pub kind: &'static str,
    /// `postgreses`.
    pub plural: &'static str,
    /// The chart directory in the release data: `apps-postgres`.
    pub chart: &'static str,
    /// The chart's schema, minified, annotations removed.
    pub schema: &'static str,
    /// Dotted paths whose schema says `self == oldSelf` (storageclass-immutable's).
    pub immutable: &'static [&'static str],
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
    use super::{App, Release};
    include!("../schemas/index.rs");
}

pub use index::RELEASES;

/// The release called `version`.
pub fn release(version: &str) -> Option<&'static Release> {
    RELEASES.iter().find(|r| r.version == version)
}

/// A schema ready to validate with. The schema itself is not kept as a
/// `Value`: the pre-initialised module would carry every one of them, and
/// the undeclared-key walk parses only the one it needs ([`App::schema`]).
#[derive(Debug)]
pub struct Entry {
    /// In [`Compiled::schemas`].
    pub index: SchemaIndex,
    /// The chart's defaults, as its `values.yaml` holds them ([`helm::defaults`]).
    pub defaults: serde_json::Map<String, Value>,
}

/// Every schema of every release, compiled.
pub struct Compiled {
    pub schemas: Schemas,
    /// Per release, per app, in [`RELEASES`] order; `Err` says why a schema
    /// did not compile (a unit test keeps that from shipping).
    entries: Vec<Vec<Result<Entry, String>>>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("schemas", &self.schemas.size())
            .finish_non_exhaustive()
    }
}

/// The draft a schema without `$schema` is read as: Helm's validator,
/// santhosh-tekuri/jsonschema v6 (Helm 3.18.5 onwards and Helm 4), compiles
/// with `jsonschema.NewCompiler()` and no `DefaultDraft`, whose default is
/// draft 2020-12. boon is the same author's Rust port.
pub const DRAFT: Draft = Draft::V2020_12;

fn compile(
    compiler: &mut Compiler,
    schemas: &mut Schemas,
    release: &Release,
    app: &App,
) -> Result<Entry, String> {
    let schema: Value = serde_json::from_str(app.schema)
        .map_err(|e| format!("the embedded schema is not JSON: {e}"))?;
    let location = format!(
        "file:///{}/{}/values.schema.json",
        release.version, app.chart
    );
    compiler
        .add_resource(&location, schema.clone())
        .map_err(|e| e.to_string())?;
    let index = compiler
        .compile(&location, schemas)
        .map_err(|e| e.to_string())?;
    let defaults = match helm::defaults(&schema) {
        Some(Value::Object(defaults)) => defaults,
        _ => serde_json::Map::new(),
    };
    Ok(Entry { index, defaults })
}

fn compile_all() -> Compiled {
    let mut schemas = Schemas::new();
    let mut compiler = Compiler::new();
    compiler.set_default_draft(DRAFT);
    let entries = RELEASES
        .iter()
        .map(|release| {
            release
                .apps
                .iter()
                .map(|app| compile(&mut compiler, &mut schemas, release, app))
                .collect()
        })
        .collect();
    Compiled { schemas, entries }
}

/// Every schema of every release, compiled on first use.
pub static COMPILED: LazyLock<Compiled> = LazyLock::new(compile_all);

/// Compiles every schema now: the module's build-time initialiser.
pub fn prepare() {
    LazyLock::force(&COMPILED);
}

/// The app `kind` of `release` and its compiled schema.
pub fn lookup(
    release: &'static Release,
    kind: &str,
) -> Option<(&'static App, Result<&'static Entry, &'static str>)> {
    let r = RELEASES.iter().position(|r| r.version == release.version)?;
    let a = release.apps.iter().position(|app| app.kind == kind)?;
    let app = release.apps.get(a)?;
    let entry = COMPILED.entries.get(r)?.get(a)?;
    Some((app, entry.as_ref().map_err(String::as_str)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_compiles() {
        let start = std::time::Instant::now();
        prepare();
        let elapsed = start.elapsed();
        let mut count = 0;
        for release in RELEASES {
            for app in release.apps {
                let (_, entry) = lookup(release, app.kind).unwrap();
                if let Err(error) = entry {
                    panic!("{} {}: {error}", release.version, app.kind);
                }
                count += 1;
            }
        }
        println!(
            "compiled {count} schemas ({} subschemas) in {elapsed:?}",
            COMPILED.schemas.size()
        );
        assert_eq!(count, 59, "30 kinds of v1.6.2, 29 of v1.5.4");
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
        let (vpc, _) = lookup(v162, "VirtualPrivateCloud").unwrap();
        assert_eq!(vpc.chart, "apps-vpc");
        let (kafka, _) = lookup(v162, "Kafka").unwrap();
        assert_eq!(
            kafka.immutable,
            ["spec.kafka.storageClass", "spec.zookeeper.storageClass"]
        );
        assert!(lookup(v162, "Gateway").is_none());
    }
}
