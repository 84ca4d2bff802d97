//! The embedded schemas.
//!
//! `schemas/index.rs` (generated, [`crate::generate`]) lists every shipped
//! release and kind with its chart's schema, minified JSON. policy-server
//! evaluates each request in a fresh instance, so nothing is prepared
//! ahead: a request parses the one schema it needs ([`load`]) and
//! [`crate::validate`] walks it, with no compile step.

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

/// One kind's schema, read for one request: parsed from [`App::schema`]
/// (a few KB) with the chart's defaults rebuilt from it. Nothing is kept
/// between requests: policy-server evaluates each in a fresh instance.
#[derive(Debug)]
pub struct Loaded {
    /// The chart's schema, as [`crate::validate`] walks it.
    pub schema: Value,
    /// The chart's defaults, as its `values.yaml` holds them ([`helm::defaults`]).
    pub defaults: serde_json::Map<String, Value>,
}

/// The draft a schema without `$schema` is read as: Helm's validator,
/// santhosh-tekuri/jsonschema v6 (Helm 3.18.5 onwards and Helm 4), compiles
/// with `jsonschema.NewCompiler()` and no `DefaultDraft`, whose default is
/// draft 2020-12. [`crate::validate`] applies the charts' keywords as that
/// draft does (boon, the same author's Rust port, is the tests' oracle).
pub const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// `app`'s schema and defaults; `Err` when the embedded schema is not
/// JSON (a unit test keeps that from shipping).
pub fn load(app: &App) -> Result<Loaded, String> {
    let schema: Value = serde_json::from_str(app.schema)
        .map_err(|e| format!("the embedded schema is not JSON: {e}"))?;
    let defaults = match helm::defaults(&schema) {
        Some(Value::Object(defaults)) => defaults,
        _ => serde_json::Map::new(),
    };
    Ok(Loaded { schema, defaults })
}

/// The app `kind` of `release`.
pub fn lookup(release: &'static Release, kind: &str) -> Option<&'static App> {
    release.apps.iter().find(|app| app.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_loads_and_is_supported() {
        let mut count = 0;
        for release in RELEASES {
            for app in release.apps {
                let loaded = load(lookup(release, app.kind).unwrap())
                    .unwrap_or_else(|e| panic!("{} {}: {e}", release.version, app.kind));
                if let Some((path, what)) = crate::validate::unsupported(&loaded.schema) {
                    panic!("{} {}: {what} at {path}", release.version, app.kind);
                }
                count += 1;
            }
        }
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
