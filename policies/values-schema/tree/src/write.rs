//! The writer: the committed chart schemas and index in, the Rust trees
//! the module embeds out.
//!
//! Input, in the policy's `schemas/` (written by `make schemas`, the
//! `values-schema-generator` crate, from Cozystack's release files):
//! `index.json` ([`Index`]: the releases, their kinds and what the release
//! files say about them beyond the schema), `<version>/<chart>.json` (each
//! chart's schema without annotations, in [`canonical`] form) and
//! `<version>/nulls.json` (the Helm oracle's nulls that fail a render,
//! written by `tools/oracle nulls`).
//!
//! Output ([`trees`]): `index.rs`, the table the crate includes, and
//! `<version>/<chart>.rs`, each chart's schema as a static [`Schema`] tree
//! and its defaults ([`defaults`]) as a static [`Json`] tree. A chart whose
//! tree is the same in several releases is written once, under the newest
//! of them, and the index points every release at it, so the module carries
//! each distinct schema once.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Additional, Json, KEYWORDS, PRESERVE_UNKNOWN, Schema, type_bits, unsupported};

/// `schemas/index.json`: every shipped release, newest first (the first is
/// the policy's default).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    pub releases: Vec<IndexRelease>,
}

/// One release in the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexRelease {
    /// `v1.6.2`.
    pub version: String,
    /// Charts no ApplicationDefinition serves: not shipped.
    pub unshipped: Vec<String>,
    /// Its kinds, in the order of their ApplicationDefinition files, which
    /// is the order their trees are embedded in.
    pub apps: Vec<IndexApp>,
}

/// One kind in the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexApp {
    /// `spec.application.kind`: `Postgres`.
    pub kind: String,
    /// `spec.application.plural`: `postgreses`.
    pub plural: String,
    /// The chart whose schema the definition embeds: `apps-postgres`
    /// (`<chart>.json` beside the index).
    pub chart: String,
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
/// directory, contents)`, sorted by path, from the schemas in `dir`.
pub fn trees(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let index_file = dir.join(INDEX);
    let index: Index = serde_json::from_str(&read(&index_file)?)
        .map_err(|e| format!("{}: {e}", index_file.display()))?;
    let mut releases = Vec::new();
    for release in &index.releases {
        let nulls_file = dir.join(&release.version).join(NULLS);
        let nulls: BTreeMap<String, Vec<NullFailure>> =
            serde_json::from_str(&read(&nulls_file)?)
                .map_err(|e| format!("{}: {e}", nulls_file.display()))?;
        let mut schemas = Vec::new();
        for app in &release.apps {
            let file = dir
                .join(&release.version)
                .join(format!("{}.json", app.chart));
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
            schemas.push(schema);
        }
        releases.push((release, schemas, nulls));
    }
    let mut files = Vec::new();
    // Every distinct chart tree, in the order first met: a chart whose
    // schema did not change between releases is embedded once.
    let mut trees: Vec<Tree> = Vec::new();
    let mut out = String::from(
        "// @generated by values-schema's build script from schemas/index.json and\n\
         // the chart schemas beside it (values-schema-tree's `write`): do not edit.\n\n\
         /// Every shipped release, newest first.\n\
         pub static RELEASES: &[Release] = &[\n",
    );
    for (release, schemas, nulls) in &releases {
        let mut shipped: Vec<(&IndexApp, String)> = Vec::new();
        for (app, schema) in release.apps.iter().zip(schemas) {
            let body = chart_body(schema);
            let module = match trees.iter_mut().find(|tree| tree.body == body) {
                Some(tree) => {
                    if !tree.versions.contains(&release.version) {
                        tree.versions.push(release.version.clone());
                    }
                    tree.module.clone()
                }
                None => {
                    let tree = Tree {
                        module: format!("{}_{}", release.version, app.chart)
                            .replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
                        file: format!("{}/{}.rs", release.version, app.chart),
                        source: format!("{}/values.schema.json", app.chart),
                        versions: vec![release.version.clone()],
                        body,
                    };
                    let module = tree.module.clone();
                    trees.push(tree);
                    module
                }
            };
            shipped.push((app, module));
        }
        shipped.sort_by(|a, b| a.0.kind.cmp(&b.0.kind));
        let _ = writeln!(out, "    Release {{");
        let _ = writeln!(out, "        version: {:?},", release.version);
        if !release.unshipped.is_empty() {
            let _ = writeln!(
                out,
                "        // Charts no ApplicationDefinition serves (not shipped): {}.",
                release.unshipped.join(", ")
            );
        }
        let _ = writeln!(out, "        apps: &[");
        for (app, module) in &shipped {
            let _ = writeln!(
                out,
                "            App {{\n                kind: {:?},\n                plural: {:?},\n                chart: {:?},\n                schema: &{module}::SCHEMA,\n                defaults: {module}::DEFAULTS,\n                immutable: &[{}],\n                nulls: &[{}],\n                addons: &[{}],\n            }},",
                app.kind,
                app.plural,
                app.chart,
                quoted(&app.immutable),
                null_failures(nulls.get(&app.kind)),
                addon_schemas(&app.addons),
            );
        }
        let _ = writeln!(out, "        ],");
        let _ = writeln!(out, "    }},");
    }
    out.push_str("];\n");
    for tree in &trees {
        let uses = if tree.body.contains("Additional::") {
            "Additional, Json, Schema"
        } else {
            "Json, Schema"
        };
        let _ = write!(
            out,
            "\nmod {} {{\n    use super::{{{uses}}};\n    include!({:?});\n}}\n",
            tree.module, tree.file
        );
        files.push((tree.file.clone(), tree.contents()));
    }
    files.push(("index.rs".to_owned(), out));
    files.sort();
    Ok(files)
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
                "\n                        Closed {{ path: &[{}], keys: &[{}] }},",
                quoted(&object.path),
                quoted(&object.keys)
            );
        }
        let _ = write!(
            out,
            "\n                    AddonSchema {{\n                        values: &[{}],\n                        chart: {:?},\n                        closed: &[{closed}\n                        ],\n                    }},\n                ",
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
                "\n                    NullFailure {{\n                        path: &[{}],\n                        at: {:?},\n                        helm: {:?},\n                    }},",
                quoted(&null.path),
                null.at,
                null.helm
            )
        })
        .collect();
    if entries.is_empty() {
        String::new()
    } else {
        format!("{}\n                ", entries.concat())
    }
}

/// One chart tree the module embeds, and the releases that ship it.
struct Tree {
    /// The module `index.rs` includes the tree in.
    module: String,
    /// The file, named after the newest release with it.
    file: String,
    /// The chart's schema file, for the header.
    source: String,
    /// The releases whose chart has exactly this tree, newest first.
    versions: Vec<String>,
    /// The schema and defaults, as [`chart_body`] writes them.
    body: String,
}

impl Tree {
    /// The `.rs` file: a header naming the releases, then the body.
    fn contents(&self) -> String {
        format!(
            "// @generated at build time from Cozystack {} {}: do not edit.\n\n{}",
            self.versions.join(", "),
            self.source,
            self.body
        )
    }
}

/// A chart's schema and its defaults as static trees, which `index.rs`
/// includes in a module of its own.
fn chart_body(schema: &Value) -> String {
    let mut out = String::from("/// The chart's schema.\npub static SCHEMA: Schema = ");
    emit_schema(leak(schema), 0, &mut out);
    out.push_str(";\n\n/// The chart's defaults, as its `values.yaml` holds them.\npub const DEFAULTS: &[(&str, Json)] = ");
    let defaults = match defaults(schema) {
        Some(Value::Object(members)) => members,
        _ => Map::new(),
    };
    match leak_json(&Value::Object(defaults)) {
        Json::Object(members) => emit_members(members, 0, &mut out),
        _ => out.push_str("&[]"),
    }
    out.push_str(";\n");
    out
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

/// `schema` (a schema [`unsupported`] accepts) as a [`Schema`] tree,
/// leaked: the writer's in-memory form, which it prints, and the tests'
/// way to a [`Schema`].
pub fn leak(schema: &Value) -> &'static Schema {
    Box::leak(Box::new(tree(schema)))
}

fn tree(schema: &Value) -> Schema {
    let Value::Object(keywords) = schema else {
        return if schema == &Value::Bool(false) {
            Schema::FALSE
        } else {
            Schema::TRUE
        };
    };
    let leak_slice =
        |items: Vec<Schema>| -> &'static [Schema] { Box::leak(items.into_boxed_slice()) };
    let leak_str = |text: &str| -> &'static str { Box::leak(text.to_owned().into_boxed_str()) };
    Schema {
        never: false,
        types: keywords.get("type").map_or(0, type_bits),
        enumeration: keywords
            .get("enum")
            .and_then(Value::as_array)
            .map(|members| {
                let members: Vec<Json> = members.iter().map(leak_json).collect();
                &*Box::leak(members.into_boxed_slice())
            }),
        properties: keywords
            .get("properties")
            .and_then(Value::as_object)
            .map(|named| {
                let ordered: BTreeMap<&str, &Value> =
                    named.iter().map(|(k, v)| (k.as_str(), v)).collect();
                let named: Vec<(&'static str, Schema)> = ordered
                    .into_iter()
                    .map(|(name, sub)| (leak_str(name), tree(sub)))
                    .collect();
                &*Box::leak(named.into_boxed_slice())
            }),
        additional: match keywords.get("additionalProperties") {
            None => Additional::Absent,
            Some(Value::Bool(b)) => Additional::Bool(*b),
            Some(sub) => Additional::Schema(leak(sub)),
        },
        items: keywords.get("items").map(leak),
        any_of: keywords
            .get("anyOf")
            .and_then(Value::as_array)
            .map_or(&[], |alternatives| {
                leak_slice(alternatives.iter().map(tree).collect())
            }),
        required: keywords
            .get("required")
            .and_then(Value::as_array)
            .map_or(&[], |keys| {
                let keys: Vec<&'static str> = keys
                    .iter()
                    .filter_map(Value::as_str)
                    .map(leak_str)
                    .collect();
                &*Box::leak(keys.into_boxed_slice())
            }),
        quantity: keywords.get("pattern").is_some(),
        preserve_unknown: keywords.get(PRESERVE_UNKNOWN).and_then(Value::as_bool) == Some(true),
    }
}

/// `value` as a [`Json`] tree, leaked (object members in the map's order).
pub fn leak_json(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                Json::Uint(n)
            } else if let Some(n) = n.as_i64() {
                Json::Int(n)
            } else {
                Json::Float(n.as_f64().unwrap_or_default())
            }
        }
        Value::String(text) => Json::String(Box::leak(text.clone().into_boxed_str())),
        Value::Array(items) => {
            let items: Vec<Json> = items.iter().map(leak_json).collect();
            Json::Array(Box::leak(items.into_boxed_slice()))
        }
        Value::Object(members) => {
            let members: Vec<(&'static str, Json)> = members
                .iter()
                .map(|(k, v)| (&*Box::leak(k.clone().into_boxed_str()), leak_json(v)))
                .collect();
            Json::Object(Box::leak(members.into_boxed_slice()))
        }
    }
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

    /// A schemas directory with one release of two kinds whose charts
    /// share a tree across releases.
    fn write_dir(dir: &Path, index: &Index, charts: &[(&str, &str, Value)], nulls: &str) {
        let _ = std::fs::remove_dir_all(dir);
        for release in &index.releases {
            std::fs::create_dir_all(dir.join(&release.version)).ok();
            std::fs::write(dir.join(&release.version).join(NULLS), nulls).ok();
        }
        for (version, chart, schema) in charts {
            std::fs::write(
                dir.join(version).join(format!("{chart}.json")),
                canonical(schema),
            )
            .ok();
        }
        std::fs::write(
            dir.join(INDEX),
            serde_json::to_string(index).unwrap_or_default(),
        )
        .ok();
    }

    fn app(kind: &str, chart: &str) -> IndexApp {
        IndexApp {
            kind: kind.to_owned(),
            plural: format!("{}s", kind.to_lowercase()),
            chart: chart.to_owned(),
            immutable: vec!["spec.storageClass".to_owned()],
            addons: Vec::new(),
        }
    }

    #[test]
    fn a_tree_shared_by_two_releases_is_written_once() {
        let dir = std::env::temp_dir().join(format!("values-schema-tree-{}", std::process::id()));
        let index = Index {
            releases: vec![
                IndexRelease {
                    version: "v9.9.9".to_owned(),
                    unshipped: vec!["extra-gateway".to_owned()],
                    apps: vec![app("VirtualPrivateCloud", "apps-vpc")],
                },
                IndexRelease {
                    version: "v9.9.8".to_owned(),
                    unshipped: Vec::new(),
                    apps: vec![app("VirtualPrivateCloud", "apps-vpc")],
                },
            ],
        };
        let schema =
            json!({"type": "object", "properties": {"subnets": {"type": "object", "default": {}}}});
        write_dir(
            &dir,
            &index,
            &[
                ("v9.9.9", "apps-vpc", schema.clone()),
                ("v9.9.8", "apps-vpc", schema),
            ],
            r#"{"VirtualPrivateCloud": [{"path": ["subnets"], "where": "vpc/templates/vpc.yaml:3", "helm": "<.Values.subnets>: nil"}]}"#,
        );
        let files = trees(&dir);
        let paths: Vec<&str> = files
            .iter()
            .flatten()
            .map(|(path, _)| path.as_str())
            .collect();
        assert_eq!(paths, ["index.rs", "v9.9.9/apps-vpc.rs"], "{files:?}");
        let text: Vec<&str> = files.iter().flatten().map(|(_, t)| t.as_str()).collect();
        let (index_rs, tree_rs) = (text[0], text[1]);
        assert!(
            index_rs.contains("not shipped): extra-gateway."),
            "{index_rs}"
        );
        assert_eq!(
            index_rs.matches("schema: &v9_9_9_apps_vpc::SCHEMA").count(),
            2
        );
        assert!(
            index_rs.contains(
                "path: &[\"subnets\"],\n                        at: \"vpc/templates/vpc.yaml:3\","
            ),
            "{index_rs}"
        );
        assert!(
            tree_rs.starts_with("// @generated at build time from Cozystack v9.9.9, v9.9.8 apps-vpc/values.schema.json"),
            "{tree_rs}"
        );
        assert!(
            tree_rs.contains("(\"subnets\", Json::Object(&[]))"),
            "{tree_rs}"
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
