//! The writer: the committed chart schemas and index in, the Rust trees
//! the module embeds out.
//!
//! Input, in the policy's `schemas/` (written by `make schemas`, the
//! `values-schema-generator` crate, from Cozystack's release files):
//! `index.json` ([`Index`]: the releases, their kinds and what the release
//! files say about them beyond the schema), the charts' schemas without
//! annotations in [`canonical`] form, each file written once under the
//! newest release with it (`<version>/<chart>.json`, which the index names
//! for every release with the same schema), and `<version>/nulls.json`
//! (the Helm oracle's nulls that fail a render, written by `tools/oracle
//! nulls`) of each release with charts of its own.
//!
//! Output ([`trees`]): `index.rs`, the table the crate includes, with each
//! chart's schema as a static [`Schema`] tree and its defaults
//! ([`crate::defaults`]) as a static [`Json`] tree. Every slice of a tree
//! (an object's properties, an `anyOf`, an enum, a defaults object) is one
//! static, written once however many schemas, charts and releases hold
//! it: a chart that changed one field between two releases costs the
//! module only the path to that field; releases whose kinds are the same
//! share one table.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::build::Arena;
use crate::{Additional, Json, KEYWORDS, Schema, defaults, unsupported};

/// `schemas/index.json`: every shipped release, newest first (the first is
/// the policy's default).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    pub releases: Vec<IndexRelease>,
}

/// One release in the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexRelease {
    /// `v1.6.2`.
    pub version: String,
    /// The release whose charts these are (a patch release that changed
    /// none); its kinds are then that release's, and the rest is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_as: Option<String>,
    /// Charts no ApplicationDefinition serves: not shipped.
    #[serde(default)]
    pub unshipped: Vec<String>,
    /// Its kinds, in the order of their ApplicationDefinition files.
    #[serde(default)]
    pub apps: Vec<IndexApp>,
}

/// One kind in the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexApp {
    /// `spec.application.kind`: `Postgres`.
    pub kind: String,
    /// `spec.application.plural`: `postgreses`.
    pub plural: String,
    /// The chart whose schema the definition embeds: `apps-postgres`.
    pub chart: String,
    /// Its schema's file beside the index: `v1.6.2/apps-postgres.json`,
    /// under the newest release with that schema.
    pub schema: String,
    /// Dotted paths whose `x-kubernetes-validations` say `self == oldSelf`,
    /// sorted (the extension itself is not kept in the chart's JSON).
    pub immutable: Vec<String>,
    /// The addon charts a user's values reach verbatim whose schemas close
    /// some of their objects.
    pub addons: Vec<IndexAddon>,
}

/// An addon chart in the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexAddon {
    /// The block below `spec` the addon's chart validates.
    pub values: Vec<String>,
    /// The chart, under the release's `charts/`.
    pub chart: String,
    /// Its objects with `additionalProperties: false`.
    pub closed: Vec<IndexClosed>,
}

/// A closed object of an addon's schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexClosed {
    /// Below the addon's block.
    pub path: Vec<String>,
    /// Its declared keys, sorted.
    pub keys: Vec<String>,
}

/// A defaulted key whose `null` makes the chart fail to render, as the
/// Helm oracle found it (`<version>/nulls.json`, by kind).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NullFailure {
    /// The key's path below `spec`.
    pub path: Vec<String>,
    /// Where the render fails: `postgres/templates/db.yaml:224`.
    #[serde(rename = "where")]
    pub at: String,
    /// Helm's message there, on one line.
    pub helm: String,
}

/// The index file beside the chart schemas.
pub const INDEX: &str = "index.json";

/// The oracle's table of nulls under `<version>/`.
pub const NULLS: &str = "nulls.json";

/// The form a chart's JSON is committed in: keys sorted at every level,
/// minified, one line, so that the file does not depend on serde_json's
/// `preserve_order` and a diff of it is a diff of the schema.
pub fn canonical(schema: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(members) => {
                let ordered: BTreeMap<&String, Value> =
                    members.iter().map(|(k, v)| (k, sorted(v))).collect();
                Value::Object(ordered.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // Serialising a `Value` cannot fail: its keys are strings.
    serde_json::to_string(&sorted(schema)).unwrap_or_default() + "\n"
}

/// `Ok` when the validator implements every keyword of `schema`, the
/// `chart`'s schema for `kind` in `version`; otherwise the error naming
/// the keyword and its path.
pub fn supported(version: &str, chart: &str, kind: &str, schema: &Value) -> Result<(), String> {
    match unsupported(schema) {
        None => Ok(()),
        Some((path, what)) => Err(format!(
            "{version} chart {chart} ({kind}): {what} at {} is not supported by the policy's validator \
             (src/validate.rs implements: {}, and pattern only as the Kubernetes quantity regex)",
            if path.is_empty() { "/" } else { &path },
            KEYWORDS.join(", ")
        )),
    }
}

/// Every file [`trees`] writes, as `(path relative to the output
/// directory, contents)`, from the schemas in `dir`: `index.rs`.
pub fn trees(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let index_file = dir.join(INDEX);
    let index: Index = serde_json::from_str(&read(&index_file)?)
        .map_err(|e| format!("{}: {e}", index_file.display()))?;
    let mut emitter = Emitter::default();
    // Each release's table of kinds, by the release whose charts it is.
    let mut tables: BTreeMap<String, String> = BTreeMap::new();
    for release in index.releases.iter().filter(|r| r.same_as.is_none()) {
        let nulls_file = dir.join(&release.version).join(NULLS);
        let nulls: BTreeMap<String, Vec<NullFailure>> =
            serde_json::from_str(&read(&nulls_file)?)
                .map_err(|e| format!("{}: {e}", nulls_file.display()))?;
        let mut apps: Vec<(&IndexApp, (String, String))> = Vec::new();
        for app in &release.apps {
            let file = dir.join(&app.schema);
            let text = read(&file)?;
            let schema: Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            if canonical(&schema) != text {
                return Err(format!(
                    "{} is not in the form `make schemas` writes (sorted, minified): run `make schemas`",
                    file.display()
                ));
            }
            supported(&release.version, &app.chart, &app.kind, &schema)?;
            apps.push((app, emitter.chart(&schema)));
        }
        apps.sort_by(|a, b| a.0.kind.cmp(&b.0.kind));
        let mut table = String::from("[\n");
        for (app, (schema, defaults)) in &apps {
            let _ = writeln!(
                table,
                "    App {{\n        kind: {:?},\n        plural: {:?},\n        chart: {:?},\n        schema: &{schema},\n        defaults: {defaults},\n        immutable: &[{}],\n        nulls: &[{}],\n        addons: &[{}],\n    }},",
                app.kind,
                app.plural,
                app.chart,
                quoted(&app.immutable),
                null_failures(nulls.get(&app.kind)),
                addon_schemas(&app.addons),
            );
        }
        table.push(']');
        let ty = format!("[App<'static>; {}]", apps.len());
        let name = emitter.intern("APPS_", &ty, table);
        tables.insert(release.version.clone(), name);
    }
    let mut out = String::from(
        "// @generated by values-schema's build script from schemas/index.json and\n\
         // the chart schemas beside it (values-schema-tree's `write`): do not edit.\n\n\
         /// Every shipped release, newest first.\n\
         pub static RELEASES: &[Release] = &[\n",
    );
    for release in &index.releases {
        let mut own = release;
        for _ in 0..index.releases.len() {
            let Some(other) = &own.same_as else {
                break;
            };
            own = index
                .releases
                .iter()
                .find(|r| r.version == *other)
                .ok_or_else(|| format!("{}: sameAs names no release {other}", release.version))?;
        }
        let table = tables
            .get(&own.version)
            .ok_or_else(|| format!("{}: sameAs goes round in a circle", release.version))?;
        let _ = writeln!(out, "    Release {{");
        let _ = writeln!(out, "        version: {:?},", release.version);
        if !own.unshipped.is_empty() {
            let _ = writeln!(
                out,
                "        // Charts no ApplicationDefinition serves (not shipped): {}.",
                own.unshipped.join(", ")
            );
        }
        let _ = writeln!(out, "        apps: &{table},\n    }},");
    }
    out.push_str("];\n\n");
    out.push_str(&emitter.statics);
    Ok(vec![("index.rs".to_owned(), out)])
}

/// The statics of the trees, each distinct one written once.
#[derive(Default)]
struct Emitter {
    statics: String,
    /// `type = expression` -> the static's name.
    names: HashMap<String, String>,
}

impl Emitter {
    /// The name of a static of type `ty` holding `expression`, written
    /// unless an equal one was.
    fn intern(&mut self, prefix: &str, ty: &str, expression: String) -> String {
        let key = format!("{ty} = {expression}");
        if let Some(name) = self.names.get(&key) {
            return name.clone();
        }
        let name = format!("{prefix}{}", self.names.len());
        let _ = writeln!(self.statics, "static {name}: {ty} = {expression};");
        self.names.insert(key, name.clone());
        name
    }

    /// A chart's schema and defaults: the name of the schema's static and
    /// the defaults as a `&[(&str, Json)]` expression.
    fn chart(&mut self, schema: &Value) -> (String, String) {
        let tree = self.schema(leak(schema));
        let schema_name = self.intern("S_", "Schema<'static>", tree);
        let defaults = match defaults(schema) {
            Some(Value::Object(members)) => members,
            _ => Map::new(),
        };
        let defaults = match leak_json(&Value::Object(defaults)) {
            Json::Object(members) => self.members(members),
            _ => "&[]".to_owned(),
        };
        (schema_name, defaults)
    }

    /// `items` as a reference to a static array of `ty`, or `&[]`.
    fn slice(&mut self, prefix: &str, ty: &str, items: Vec<String>) -> String {
        if items.is_empty() {
            return "&[]".to_owned();
        }
        let ty = format!("[{ty}; {}]", items.len());
        let name = self.intern(prefix, &ty, format!("[{}]", items.join(", ")));
        format!("&{name}")
    }

    /// `schema` as an expression of type [`Schema`].
    fn schema(&mut self, schema: &Schema<'_>) -> String {
        if schema.never {
            return "Schema::FALSE".to_owned();
        }
        let mut fields = Vec::new();
        if schema.types != 0 {
            fields.push(format!("types: {:#04x}", schema.types));
        }
        if let Some(members) = schema.enumeration {
            let members = members.iter().map(|m| self.json(m)).collect();
            fields.push(format!(
                "enumeration: Some({})",
                self.slice("E_", "Json<'static>", members)
            ));
        }
        if let Some(named) = schema.properties {
            let named = named
                .iter()
                .map(|(name, sub)| format!("({name:?}, {})", self.schema(sub)))
                .collect();
            fields.push(format!(
                "properties: Some({})",
                self.slice("P_", "(&str, Schema<'static>)", named)
            ));
        }
        match schema.additional {
            Additional::Absent => {}
            Additional::Bool(b) => fields.push(format!("additional: Additional::Bool({b})")),
            Additional::Schema(sub) => {
                let sub = self.schema(sub);
                let name = self.intern("S_", "Schema<'static>", sub);
                fields.push(format!("additional: Additional::Schema(&{name})"));
            }
        }
        if let Some(sub) = schema.items {
            let sub = self.schema(sub);
            let name = self.intern("S_", "Schema<'static>", sub);
            fields.push(format!("items: Some(&{name})"));
        }
        if !schema.any_of.is_empty() {
            let alternatives = schema.any_of.iter().map(|s| self.schema(s)).collect();
            fields.push(format!(
                "any_of: {}",
                self.slice("A_", "Schema<'static>", alternatives)
            ));
        }
        if !schema.required.is_empty() {
            let keys = schema.required.iter().map(|k| format!("{k:?}")).collect();
            fields.push(format!("required: {}", self.slice("R_", "&str", keys)));
        }
        if schema.quantity {
            fields.push("quantity: true".to_owned());
        }
        if schema.preserve_unknown {
            fields.push("preserve_unknown: true".to_owned());
        }
        if fields.is_empty() {
            "Schema::TRUE".to_owned()
        } else {
            format!("Schema {{ {}, ..Schema::TRUE }}", fields.join(", "))
        }
    }

    /// `value` as an expression of type [`Json`].
    fn json(&mut self, value: &Json<'_>) -> String {
        match value {
            Json::Null => "Json::Null".to_owned(),
            Json::Bool(b) => format!("Json::Bool({b})"),
            Json::Uint(n) => format!("Json::Uint({n})"),
            Json::Int(n) => format!("Json::Int({n})"),
            Json::Float(f) => format!("Json::Float({f:?})"),
            Json::String(text) => format!("Json::String({text:?})"),
            Json::Array(items) => {
                let items = items.iter().map(|i| self.json(i)).collect();
                format!("Json::Array({})", self.slice("J_", "Json<'static>", items))
            }
            Json::Object(members) => format!("Json::Object({})", self.members(members)),
        }
    }

    /// An object's members as a `&[(&str, Json)]` expression.
    fn members(&mut self, members: &[(&str, Json<'_>)]) -> String {
        let members = members
            .iter()
            .map(|(key, value)| format!("({key:?}, {})", self.json(value)))
            .collect();
        self.slice("M_", "(&str, Json<'static>)", members)
    }
}

/// `items` as Rust string literals, comma-separated.
fn quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("{i:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The index's `addons` of one kind.
fn addon_schemas(addons: &[IndexAddon]) -> String {
    let mut out = String::new();
    for addon in addons {
        let mut closed = String::new();
        for object in &addon.closed {
            let _ = write!(
                closed,
                "\n                Closed {{ path: &[{}], keys: &[{}] }},",
                quoted(&object.path),
                quoted(&object.keys)
            );
        }
        let _ = write!(
            out,
            "\n            AddonSchema {{\n                values: &[{}],\n                chart: {:?},\n                closed: &[{closed}\n                ],\n            }},\n        ",
            quoted(&addon.values),
            addon.chart
        );
    }
    out
}

/// The index's `nulls` of one kind.
fn null_failures(found: Option<&Vec<NullFailure>>) -> String {
    let entries: Vec<String> = found
        .into_iter()
        .flatten()
        .map(|null| {
            format!(
                "\n            NullFailure {{\n                path: &[{}],\n                at: {:?},\n                helm: {:?},\n            }},",
                quoted(&null.path),
                null.at,
                null.helm
            )
        })
        .collect();
    if entries.is_empty() {
        String::new()
    } else {
        format!("{}\n        ", entries.concat())
    }
}

/// `schema` (a schema [`unsupported`] accepts) as a [`Schema`] tree,
/// leaked: the writer's in-memory form, which it prints, and the tests'
/// way to a [`Schema`].
pub fn leak(schema: &Value) -> &'static Schema<'static> {
    let arena: &'static Arena = Box::leak(Box::new(Arena::new()));
    let value: &'static Value = Box::leak(Box::new(schema.clone()));
    arena.alloc(crate::build::schema(arena, value))
}

/// `value` as a [`Json`] tree, leaked (object members in the map's order).
pub fn leak_json(value: &Value) -> Json<'static> {
    let arena: &'static Arena = Box::leak(Box::new(Arena::new()));
    let value: &'static Value = Box::leak(Box::new(value.clone()));
    crate::build::json(arena, value)
}

fn pad(depth: usize) -> String {
    "    ".repeat(depth)
}

/// `schema` as a Rust expression of type [`Schema`], at `depth`.
fn emit_schema(schema: &Schema, depth: usize, out: &mut String) {
    if schema.never {
        out.push_str("Schema::FALSE");
        return;
    }
    let mut fields = String::new();
    let inner = pad(depth + 1);
    if schema.types != 0 {
        let _ = writeln!(fields, "{inner}types: {:#04x},", schema.types);
    }
    if let Some(members) = schema.enumeration {
        let _ = write!(fields, "{inner}enumeration: Some(&[");
        for (i, member) in members.iter().enumerate() {
            if i > 0 {
                fields.push_str(", ");
            }
            emit_json(member, depth + 1, &mut fields);
        }
        fields.push_str("]),\n");
    }
    if let Some(named) = schema.properties {
        let _ = writeln!(fields, "{inner}properties: Some(&[");
        for (name, sub) in named {
            let _ = write!(fields, "{}({name:?}, ", pad(depth + 2));
            emit_schema(sub, depth + 2, &mut fields);
            fields.push_str("),\n");
        }
        let _ = writeln!(fields, "{inner}]),");
    }
    match schema.additional {
        Additional::Absent => {}
        Additional::Bool(b) => {
            let _ = writeln!(fields, "{inner}additional: Additional::Bool({b}),");
        }
        Additional::Schema(sub) => {
            let _ = write!(fields, "{inner}additional: Additional::Schema(&");
            emit_schema(sub, depth + 1, &mut fields);
            fields.push_str("),\n");
        }
    }
    if let Some(sub) = schema.items {
        let _ = write!(fields, "{inner}items: Some(&");
        emit_schema(sub, depth + 1, &mut fields);
        fields.push_str("),\n");
    }
    if !schema.any_of.is_empty() {
        let _ = writeln!(fields, "{inner}any_of: &[");
        for sub in schema.any_of {
            fields.push_str(&pad(depth + 2));
            emit_schema(sub, depth + 2, &mut fields);
            fields.push_str(",\n");
        }
        let _ = writeln!(fields, "{inner}],");
    }
    if !schema.required.is_empty() {
        let keys: Vec<String> = schema.required.iter().map(|k| format!("{k:?}")).collect();
        let _ = writeln!(fields, "{inner}required: &[{}],", keys.join(", "));
    }
    if schema.quantity {
        let _ = writeln!(fields, "{inner}quantity: true,");
    }
    if schema.preserve_unknown {
        let _ = writeln!(fields, "{inner}preserve_unknown: true,");
    }
    if fields.is_empty() {
        out.push_str("Schema::TRUE");
    } else {
        let _ = write!(
            out,
            "Schema {{\n{fields}{inner}..Schema::TRUE\n{}}}",
            pad(depth)
        );
    }
}

/// `value` as a Rust expression of type [`Json`].
fn emit_json(value: &Json, depth: usize, out: &mut String) {
    match value {
        Json::Null => out.push_str("Json::Null"),
        Json::Bool(b) => {
            let _ = write!(out, "Json::Bool({b})");
        }
        Json::Uint(n) => {
            let _ = write!(out, "Json::Uint({n})");
        }
        Json::Int(n) => {
            let _ = write!(out, "Json::Int({n})");
        }
        Json::Float(f) => {
            let _ = write!(out, "Json::Float({f:?})");
        }
        Json::String(text) => {
            let _ = write!(out, "Json::String({text:?})");
        }
        Json::Array(items) => {
            out.push_str("Json::Array(&[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                emit_json(item, depth, out);
            }
            out.push_str("])");
        }
        Json::Object(members) => {
            out.push_str("Json::Object(");
            emit_members(members, depth, out);
            out.push(')');
        }
    }
}

/// An object's members as a Rust `&[(&str, Json)]`.
fn emit_members(members: &[(&str, Json)], depth: usize, out: &mut String) {
    if members.is_empty() {
        out.push_str("&[]");
        return;
    }
    out.push_str("&[\n");
    for (key, value) in members {
        let _ = write!(out, "{}({key:?}, ", pad(depth + 1));
        emit_json(value, depth + 1, out);
        out.push_str("),\n");
    }
    let _ = write!(out, "{}]", pad(depth));
}

/// `schema`, the JSON of a tree, as the text [`trees`] writes for it: how
/// the policy's tests compare an embedded tree with its committed JSON.
pub fn schema_text(schema: &Schema) -> String {
    let mut out = String::new();
    emit_schema(schema, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_rebuild_values_yaml() {
        let schema = json!({
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "default": 2},
                "tls": {"type": "object", "default": {}, "properties": {"enabled": {"type": "boolean"}}},
                "postgresql": {"type": "object", "default": {}, "properties": {
                    "parameters": {"type": "object", "default": {"max_connections": "100"}}}},
                "backup": {"type": "object", "properties": {
                    "enabled": {"type": "boolean", "default": false},
                    "s3": {"type": "object", "properties": {"name": {"type": "string", "default": ""}}}}},
                "users": {"type": "object", "default": {},
                          "additionalProperties": {"type": "object", "properties": {
                              "password": {"type": "string", "default": "x"}}}},
                "nothing": {"type": "string"},
                "preset": {"type": "object", "default": {"a": 1}, "properties": {
                    "a": {"type": "integer", "default": 2}, "b": {"type": "integer", "default": 3}}}
            }
        });
        assert_eq!(
            defaults(&schema),
            Some(json!({
                "replicas": 2,
                "tls": {},
                "postgresql": {"parameters": {"max_connections": "100"}},
                "backup": {"enabled": false, "s3": {"name": ""}},
                "users": {},
                "preset": {"a": 1, "b": 3}
            }))
        );
        assert_eq!(defaults(&json!({"type": "string"})), None);
    }

    #[test]
    fn canonical_sorts_every_level_and_ends_the_line() {
        let text = canonical(&json!({"b": [{"z": 1, "a": 2}], "a": null}));
        assert_eq!(text, "{\"a\":null,\"b\":[{\"a\":2,\"z\":1}]}\n");
    }

    #[test]
    fn unsupported_keywords_name_the_chart() {
        let schema = json!({"type": "object", "properties": {"subnets": {"minProperties": 1}}});
        let error = supported("v9.9.9", "apps-vpc", "VirtualPrivateCloud", &schema)
            .err()
            .unwrap_or_default();
        assert!(
            error.contains("apps-vpc")
                && error.contains("keyword minProperties at /properties/subnets/minProperties"),
            "{error}"
        );
        assert_eq!(
            supported("v9.9.9", "apps-vpc", "VirtualPrivateCloud", &json!({})),
            Ok(())
        );
    }

    /// A schemas directory with the releases of `index`, their charts'
    /// files and each release's nulls.
    fn write_dir(dir: &Path, index: &Index, charts: &[(&str, Value)], nulls: &str) {
        let _ = std::fs::remove_dir_all(dir);
        for release in index.releases.iter().filter(|r| r.same_as.is_none()) {
            std::fs::create_dir_all(dir.join(&release.version)).ok();
            std::fs::write(dir.join(&release.version).join(NULLS), nulls).ok();
        }
        for (file, schema) in charts {
            std::fs::write(dir.join(file), canonical(schema)).ok();
        }
        std::fs::write(
            dir.join(INDEX),
            serde_json::to_string(index).unwrap_or_default(),
        )
        .ok();
    }

    fn app(kind: &str, chart: &str, schema: &str) -> IndexApp {
        IndexApp {
            kind: kind.to_owned(),
            plural: format!("{}s", kind.to_lowercase()),
            chart: chart.to_owned(),
            schema: schema.to_owned(),
            immutable: vec!["spec.storageClass".to_owned()],
            addons: Vec::new(),
        }
    }

    fn release(version: &str, apps: Vec<IndexApp>) -> IndexRelease {
        IndexRelease {
            version: version.to_owned(),
            same_as: None,
            unshipped: Vec::new(),
            apps,
        }
    }

    #[test]
    fn trees_are_shared_between_charts_and_releases() {
        let dir = std::env::temp_dir().join(format!("values-schema-tree-{}", std::process::id()));
        let mut newest = release(
            "v9.9.9",
            vec![app(
                "VirtualPrivateCloud",
                "apps-vpc",
                "v9.9.9/apps-vpc.json",
            )],
        );
        newest.unshipped = vec!["extra-gateway".to_owned()];
        let index = Index {
            releases: vec![
                newest,
                release(
                    "v9.9.8",
                    vec![app(
                        "VirtualPrivateCloud",
                        "apps-vpc",
                        "v9.9.8/apps-vpc.json",
                    )],
                ),
                IndexRelease {
                    same_as: Some("v9.9.8".to_owned()),
                    ..release("v9.9.7", Vec::new())
                },
            ],
        };
        let subnets = json!({"type": "object", "default": {}, "properties": {
            "cidr": {"type": "string", "enum": ["a", "b"]}, "gateway": {"type": "string"}}});
        let new = json!({"type": "object", "properties": {"subnets": subnets, "zone": {"type": "integer"}}});
        let old = json!({"type": "object", "properties": {"subnets": subnets}});
        write_dir(
            &dir,
            &index,
            &[("v9.9.9/apps-vpc.json", new), ("v9.9.8/apps-vpc.json", old)],
            r#"{"VirtualPrivateCloud": [{"path": ["subnets"], "where": "vpc/templates/vpc.yaml:3", "helm": "<.Values.subnets>: nil"}]}"#,
        );
        let files = trees(&dir).unwrap();
        let [(path, index_rs)] = files.as_slice() else {
            panic!("one file: {files:?}");
        };
        assert_eq!(path, "index.rs");
        assert!(
            index_rs.contains("not shipped): extra-gateway."),
            "{index_rs}"
        );
        // The two releases' tables differ in `zone` only: the subnets
        // object's properties, and its enum, are one static each.
        assert_eq!(index_rs.matches("(\"cidr\", ").count(), 1, "{index_rs}");
        assert_eq!(
            index_rs.matches("Json::String(\"a\")").count(),
            1,
            "{index_rs}"
        );
        assert_eq!(index_rs.matches("static APPS_").count(), 2, "{index_rs}");
        // v9.9.7 has v9.9.8's charts: its table.
        let table = |version: &str| {
            let at = index_rs.find(&format!("version: {version:?}")).unwrap();
            let rest = &index_rs[at..];
            let apps = rest.find("apps: &").unwrap();
            rest[apps..].split(',').next().unwrap().to_owned()
        };
        assert_eq!(table("v9.9.7"), table("v9.9.8"));
        assert_ne!(table("v9.9.9"), table("v9.9.8"));
        assert!(
            index_rs.contains(
                "path: &[\"subnets\"],\n                at: \"vpc/templates/vpc.yaml:3\","
            ),
            "{index_rs}"
        );
        assert!(
            index_rs.contains("(\"subnets\", Json::Object(&[]))"),
            "{index_rs}"
        );

        // A chart file not in canonical form, or with a keyword the
        // validator lacks, stops the build with the file or keyword named.
        std::fs::write(dir.join("v9.9.8/apps-vpc.json"), "{ \"type\": \"object\" }").ok();
        let error = trees(&dir).err().unwrap_or_default();
        assert!(
            error.contains("v9.9.8/apps-vpc.json is not in the form"),
            "{error}"
        );
        std::fs::write(
            dir.join("v9.9.8/apps-vpc.json"),
            canonical(&json!({"minProperties": 1})),
        )
        .ok();
        let error = trees(&dir).err().unwrap_or_default();
        assert!(
            error.contains("v9.9.8 chart apps-vpc (VirtualPrivateCloud): keyword minProperties"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
