//! Generation of the embedded schemas (`schemas/`) from Cozystack's release
//! files: `make schemas` runs it through `examples/generate-schemas.rs`, and
//! `tests/drift.rs` runs it in memory and compares with the committed files.
//!
//! Input, per release (`../shared/data/cozystack-<version>/` from the
//! repository root): `apps/<group>-<chart>/values.schema.json` (the chart's
//! schema, `packages/<group>/<chart>/values.schema.json` upstream) and
//! `application-definitions/<name>.yaml` (the ApplicationDefinitions that
//! cozystack-api serves the kinds from). A kind belongs to the chart whose
//! schema equals the definition's `spec.application.openAPISchema` (the
//! definitions embed their chart's schema verbatim), so no name mapping is
//! guessed (`VirtualPrivateCloud` is `apps-vpc`). A chart no definition
//! embeds serves no kind and is not shipped (v1.6.2 and v1.5.4:
//! `extra-gateway`); a definition no chart matches is an error.
//!
//! Output: `schemas/<version>/<group>-<chart>.rs`, the schema as a static
//! [`Schema`] tree and the chart's defaults ([`crate::helm::defaults`]) as a
//! static [`Json`] tree, so that a request, which policy-server evaluates
//! in a fresh instance, parses no schema and rebuilds no defaults. A chart
//! whose tree is the same in several releases is written once, under the
//! newest of them, and the index points every release at it, so the module
//! carries each distinct schema once;
//! `schemas/<version>/<group>-<chart>.json`, the schema minified with
//! sorted keys, for the tests only (boon, the oracle, reads it; the module
//! does not embed it); both without annotations (`description`, `title`,
//! `examples`, `$comment`, `readOnly`, `writeOnly`, `deprecated` and every
//! `x-` extension but `x-kubernetes-preserve-unknown-fields`, which marks
//! free-form maps), and `schemas/index.rs`, the table the crate embeds.
//! `default` and every validating keyword are kept; a validating keyword
//! (or a `pattern`) that [`crate::validate`] does not implement is an
//! error naming the chart, the keyword and its path. Fields whose
//! `x-kubernetes-validations` say `self == oldSelf` (the charts'
//! `@immutable` storage classes) are listed in the index before the
//! extension is dropped.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Map, Value};

use crate::schemas::{Additional, Json, Schema};
use crate::validate::type_bits;

/// One chart's schema file.
#[derive(Debug, Clone)]
pub struct Chart {
    /// The directory under `apps/`: `<group>-<chart>` (`apps-postgres`).
    pub dir: String,
    /// The text of `values.schema.json`.
    pub schema: String,
}

/// One ApplicationDefinition.
#[derive(Debug, Clone)]
pub struct Definition {
    /// The file it was read from, for messages.
    pub file: String,
    /// `spec.application.kind`.
    pub kind: String,
    /// `spec.application.plural`.
    pub plural: String,
    /// `spec.application.openAPISchema`.
    pub schema: String,
}

/// A defaulted key whose `null` makes the chart fail to render, as the
/// Helm oracle found it (`schemas/<version>/nulls.json`, written by
/// `tools/oracle nulls`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct NullFailure {
    /// The key's path below `spec`.
    pub path: Vec<String>,
    /// Where the render fails: `postgres/templates/db.yaml:224`.
    #[serde(rename = "where")]
    pub at: String,
    /// Helm's message there, on one line.
    pub helm: String,
}

/// One Cozystack release's inputs.
#[derive(Debug, Clone)]
pub struct Release {
    /// `v1.6.2`.
    pub version: String,
    pub charts: Vec<Chart>,
    pub definitions: Vec<Definition>,
    /// Kind -> its keys whose `null` fails the render.
    pub nulls: BTreeMap<String, Vec<NullFailure>>,
    /// The addon charts whose schemas refuse keys they do not declare.
    pub addons: Vec<AddonInput>,
}

/// An addon release a chart renders from a user's `valuesOverride`, whose
/// chart's schema closes its objects (`additionalProperties: false`).
#[derive(Debug, Clone)]
pub struct AddonInput {
    pub kind: String,
    /// Below `spec`: the block the addon's chart validates.
    pub values: Vec<String>,
    /// The chart, under the release's `charts/`.
    pub chart: String,
    /// Its `values.schema.json`.
    pub schema: String,
}

/// The addons a user's values reach verbatim, with the block their chart
/// validates. Of the Kubernetes addons, only cert-manager's chart closes
/// its objects; velero's, cilium's, flux-operator's and flux-instance's
/// schemas allow any key (`apps/kubernetes/templates/helmreleases/`).
pub const ADDONS: &[(&str, &[&str], &str)] = &[(
    "Kubernetes",
    &["addons", "certManager", "valuesOverride", "cert-manager"],
    "system/cert-manager/charts/cert-manager",
)];

/// The releases the crate ships, newest first: the first is the default.
pub const VERSIONS: &[&str] = &["v1.6.2", "v1.5.4"];

/// Schema keywords that only annotate: dropped from the embedded copies.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "examples",
    "$comment",
    "readOnly",
    "writeOnly",
    "deprecated",
];

/// The one extension the rule reads: an object whose keys are free.
pub const PRESERVE_UNKNOWN: &str = "x-kubernetes-preserve-unknown-fields";

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

/// Reads one release from `dir` (`.../cozystack-v1.6.2`) and the oracle's
/// table of nulls that fail its render (`nulls`, a `nulls.json`); `yaml`
/// parses an ApplicationDefinition file into JSON.
pub fn read_release(
    dir: &Path,
    nulls: &Path,
    version: &str,
    yaml: &dyn Fn(&str) -> Result<Value, String>,
) -> Result<Release, String> {
    let read_dir = |sub: &str| -> Result<Vec<std::path::PathBuf>, String> {
        let path = dir.join(sub);
        let mut entries: Vec<_> = std::fs::read_dir(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .collect();
        entries.sort();
        Ok(entries)
    };
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let mut charts = Vec::new();
    for chart_dir in read_dir("apps")? {
        let file = chart_dir.join("values.schema.json");
        let name = chart_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        charts.push(Chart {
            dir: name,
            schema: read(&file)?,
        });
    }
    let mut definitions = Vec::new();
    for file in read_dir("application-definitions")? {
        if file.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let document = yaml(&read(&file)?).map_err(|e| format!("{}: {e}", file.display()))?;
        let field = |name: &str| {
            document
                .pointer(&format!("/spec/application/{name}"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("{}: no spec.application.{name}", file.display()))
        };
        definitions.push(Definition {
            file: file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            kind: field("kind")?,
            plural: field("plural")?,
            schema: field("openAPISchema")?,
        });
    }
    let nulls =
        serde_json::from_str(&read(nulls)?).map_err(|e| format!("{}: {e}", nulls.display()))?;
    let mut addons = Vec::new();
    for (kind, values, chart) in ADDONS {
        // Only releases whose data carry the platform's charts (v1.6.2).
        let file = dir.join("charts").join(chart).join("values.schema.json");
        if file.is_file() {
            addons.push(AddonInput {
                kind: (*kind).to_owned(),
                values: values.iter().map(|v| (*v).to_owned()).collect(),
                chart: (*chart).to_owned(),
                schema: read(&file)?,
            });
        }
    }
    Ok(Release {
        version: version.to_owned(),
        charts,
        definitions,
        nulls,
        addons,
    })
}

/// `value` with every object's keys in order, so the output does not
/// depend on serde_json's `preserve_order`.
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

/// One shipped kind, as the index lists it.
struct Shipped {
    kind: String,
    plural: String,
    dir: String,
    immutable: Vec<String>,
    /// The module `schemas/index.rs` includes the chart's tree in.
    module: String,
}

/// Every output file, as `(path relative to the crate, contents)`, sorted
/// by path.
pub fn generate(releases: &[Release]) -> Result<Vec<(String, String)>, String> {
    let mut files = Vec::new();
    // Every distinct chart tree, in the order first met: a chart whose
    // schema did not change between releases is embedded once.
    let mut trees: Vec<Tree> = Vec::new();
    let mut index = String::from(
        "// @generated by `make schemas` (policies/values-schema/examples/generate-schemas.rs)\n\
         // from Cozystack's chart schemas and ApplicationDefinitions: do not edit.\n\
         // tests/drift.rs fails when this file or a schema differs from what the\n\
         // generator makes of ../shared/data.\n\n\
         /// Every shipped release, newest first.\n\
         pub static RELEASES: &[Release] = &[\n",
    );
    for release in releases {
        let mut parsed = Vec::new();
        for chart in &release.charts {
            let schema: Value = serde_json::from_str(&chart.schema).map_err(|e| {
                format!("{} {}/values.schema.json: {e}", release.version, chart.dir)
            })?;
            parsed.push((chart, schema));
        }
        let mut shipped: Vec<Shipped> = Vec::new();
        for definition in &release.definitions {
            let schema: Value = serde_json::from_str(&definition.schema).map_err(|e| {
                format!(
                    "{} {}: openAPISchema: {e}",
                    release.version, definition.file
                )
            })?;
            let matching: Vec<&(&Chart, Value)> =
                parsed.iter().filter(|(_, s)| *s == schema).collect();
            let [(chart, chart_schema)] = matching.as_slice() else {
                return Err(format!(
                    "{} {}: the openAPISchema of {} equals {} chart schemas, expected exactly one",
                    release.version,
                    definition.file,
                    definition.kind,
                    matching.len()
                ));
            };
            if shipped.iter().any(|s| s.kind == definition.kind) {
                return Err(format!(
                    "{}: kind {} defined twice",
                    release.version, definition.kind
                ));
            }
            let stripped = strip(chart_schema);
            if let Some((path, what)) = crate::validate::unsupported(&stripped) {
                return Err(format!(
                    "{} chart {} ({}): {what} at {} is not supported by the policy's validator \
                     (src/validate.rs implements: {}, and pattern only as the Kubernetes quantity regex)",
                    release.version,
                    chart.dir,
                    definition.kind,
                    if path.is_empty() { "/" } else { &path },
                    crate::validate::KEYWORDS.join(", ")
                ));
            }
            let sorted = sorted(&stripped);
            let minified = serde_json::to_string(&sorted).map_err(|e| e.to_string())?;
            files.push((
                format!("schemas/{}/{}.json", release.version, chart.dir),
                minified + "\n",
            ));
            let body = chart_body(&sorted);
            let module = match trees.iter_mut().find(|tree| tree.body == body) {
                Some(tree) => {
                    if !tree.versions.contains(&release.version) {
                        tree.versions.push(release.version.clone());
                    }
                    tree.module.clone()
                }
                None => {
                    let tree = Tree {
                        module: format!("{}_{}", release.version, chart.dir)
                            .replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
                        file: format!("{}/{}.rs", release.version, chart.dir),
                        source: format!("{}/values.schema.json", chart.dir),
                        versions: vec![release.version.clone()],
                        body,
                    };
                    let module = tree.module.clone();
                    trees.push(tree);
                    module
                }
            };
            shipped.push(Shipped {
                kind: definition.kind.clone(),
                plural: definition.plural.clone(),
                dir: chart.dir.clone(),
                immutable: immutable_paths(chart_schema),
                module,
            });
        }
        shipped.sort_by(|a, b| a.kind.cmp(&b.kind));
        let unshipped: Vec<&str> = parsed
            .iter()
            .filter(|(chart, _)| !shipped.iter().any(|s| s.dir == chart.dir))
            .map(|(chart, _)| chart.dir.as_str())
            .collect();
        let _ = writeln!(index, "    Release {{");
        let _ = writeln!(index, "        version: {:?},", release.version);
        if !unshipped.is_empty() {
            let _ = writeln!(
                index,
                "        // Charts no ApplicationDefinition serves (not shipped): {}.",
                unshipped.join(", ")
            );
        }
        let _ = writeln!(index, "        apps: &[");
        for app in &shipped {
            let immutable: Vec<String> = app.immutable.iter().map(|p| format!("{p:?}")).collect();
            let _ = writeln!(
                index,
                "            App {{\n                kind: {:?},\n                plural: {:?},\n                chart: {:?},\n                schema: &{module}::SCHEMA,\n                defaults: {module}::DEFAULTS,\n                immutable: &[{}],\n                nulls: &[{}],\n                addons: &[{}],\n            }},",
                app.kind,
                app.plural,
                app.dir,
                immutable.join(", "),
                null_failures(release.nulls.get(&app.kind)),
                addon_schemas(&release.addons, &app.kind)?,
                module = app.module,
            );
        }
        let _ = writeln!(index, "        ],");
        let _ = writeln!(index, "    }},");
    }
    index.push_str("];\n");
    for tree in &trees {
        let uses = if tree.body.contains("Additional::") {
            "Additional, Json, Schema"
        } else {
            "Json, Schema"
        };
        let _ = write!(
            index,
            "\nmod {} {{\n    use super::{{{uses}}};\n    include!({:?});\n}}\n",
            tree.module, tree.file
        );
        files.push((format!("schemas/{}", tree.file), tree.contents()));
    }
    files.push(("schemas/index.rs".to_owned(), index));
    files.sort();
    Ok(files)
}

/// The objects of `schema` that refuse keys they do not declare
/// (`additionalProperties: false`), by path from its root, with their
/// declared keys sorted; local `$ref`s (`#/$defs/…`, `#/definitions/…`)
/// resolved.
pub fn closed_objects(schema: &Value) -> Vec<(Vec<String>, Vec<String>)> {
    fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
        for _ in 0..16 {
            let Some(target) = node.get("$ref").and_then(Value::as_str) else {
                break;
            };
            match target.strip_prefix('#').and_then(|p| root.pointer(p)) {
                Some(found) => node = found,
                None => break,
            }
        }
        node
    }
    fn walk(
        root: &Value,
        node: &Value,
        path: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, Vec<String>)>,
    ) {
        let node = resolve(root, node);
        if path.len() > 12 {
            return;
        }
        let properties = node.get("properties").and_then(Value::as_object);
        if node.get("additionalProperties") == Some(&Value::Bool(false)) {
            let mut keys: Vec<String> = properties
                .into_iter()
                .flat_map(|p| p.keys().cloned())
                .collect();
            keys.sort();
            out.push((path.clone(), keys));
        }
        for (name, sub) in properties.into_iter().flatten() {
            path.push(name.clone());
            walk(root, sub, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(schema, schema, &mut Vec::new(), &mut out);
    out
}

/// The index's `addons` of one kind.
fn addon_schemas(addons: &[AddonInput], kind: &str) -> Result<String, String> {
    let quoted = |items: &[String]| -> String {
        items
            .iter()
            .map(|i| format!("{i:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::new();
    for addon in addons.iter().filter(|a| a.kind == kind) {
        let schema: Value = serde_json::from_str(&addon.schema)
            .map_err(|e| format!("{}/values.schema.json: {e}", addon.chart))?;
        let mut closed = String::new();
        for (path, keys) in closed_objects(&schema) {
            let _ = write!(
                closed,
                "\n                        Closed {{ path: &[{}], keys: &[{}] }},",
                quoted(&path),
                quoted(&keys)
            );
        }
        let _ = write!(
            out,
            "\n                    AddonSchema {{\n                        values: &[{}],\n                        chart: {:?},\n                        closed: &[{closed}\n                        ],\n                    }},\n                ",
            quoted(&addon.values),
            addon.chart
        );
    }
    Ok(out)
}

/// The index's `nulls` of one kind.
fn null_failures(found: Option<&Vec<NullFailure>>) -> String {
    let entries: Vec<String> = found
        .into_iter()
        .flatten()
        .map(|null| {
            let path: Vec<String> = null.path.iter().map(|key| format!("{key:?}")).collect();
            format!(
                "\n                    NullFailure {{\n                        path: &[{}],\n                        at: {:?},\n                        helm: {:?},\n                    }},",
                path.join(", "),
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
    /// The module `schemas/index.rs` includes the tree in.
    module: String,
    /// The file under `schemas/`, named after the newest release with it.
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
            "// @generated by `make schemas` from Cozystack {} {}: do not edit.\n\n{}",
            self.versions.join(", "),
            self.source,
            self.body
        )
    }
}

/// A chart's schema and its defaults as static trees, which
/// `schemas/index.rs` includes in a module of its own.
fn chart_body(schema: &Value) -> String {
    let mut out = String::from("/// The chart's schema.\npub static SCHEMA: Schema = ");
    emit_schema(leak(schema), 0, &mut out);
    out.push_str(";\n\n/// The chart's defaults, as its `values.yaml` holds them.\npub const DEFAULTS: &[(&str, Json)] = ");
    let defaults = match crate::helm::defaults(schema) {
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

/// `schema` (a schema [`crate::validate::unsupported`] accepts) as a
/// [`Schema`] tree, leaked: the generator's in-memory form, which
/// [`emit_schema`] prints, and the unit tests' way to a [`Schema`].
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

/// Reads every shipped release below `data` (`../shared/data`), with the
/// oracle's tables of nulls in `schemas` (the crate's `schemas/`), and
/// generates the files.
pub fn generate_from(
    data: &Path,
    schemas: &Path,
    yaml: &dyn Fn(&str) -> Result<Value, String>,
) -> Result<Vec<(String, String)>, String> {
    let releases = VERSIONS
        .iter()
        .map(|version| {
            read_release(
                &data.join(format!("cozystack-{version}")),
                &schemas.join(version).join(NULLS),
                version,
                yaml,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    generate(&releases)
}

/// The oracle's table of nulls under `schemas/<version>/`: an input the
/// generator reads, never writes.
pub const NULLS: &str = "nulls.json";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strips_annotations_but_not_names_or_data() {
        let schema = json!({
            "title": "Chart Values",
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "a field named description"},
                "size": {"default": "10Gi", "x-kubernetes-int-or-string": true,
                         "x-kubernetes-validations": [{"rule": "self == oldSelf"}]},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "list": {"type": "array", "items": {"type": "string", "title": "x"}},
                "either": {"anyOf": [{"type": "integer", "$comment": "c"}]}
            },
            "default": {"description": "data"}
        });
        assert_eq!(
            strip(&schema),
            json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string"},
                    "size": {"default": "10Gi"},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "list": {"type": "array", "items": {"type": "string"}},
                    "either": {"anyOf": [{"type": "integer"}]}
                },
                "default": {"description": "data"}
            })
        );
        assert_eq!(immutable_paths(&schema), vec!["spec.size".to_owned()]);
    }

    #[test]
    fn kinds_follow_the_embedded_schema() {
        let release = Release {
            version: "v9.9.9".to_owned(),
            charts: vec![
                Chart {
                    dir: "apps-vpc".to_owned(),
                    schema: r#"{"type":"object","properties":{"subnets":{"type":"object"}}}"#
                        .to_owned(),
                },
                Chart {
                    dir: "extra-gateway".to_owned(),
                    schema: r#"{"type":"object"}"#.to_owned(),
                },
            ],
            definitions: vec![Definition {
                file: "virtualprivatecloud.yaml".to_owned(),
                kind: "VirtualPrivateCloud".to_owned(),
                plural: "virtualprivateclouds".to_owned(),
                schema: r#"{"properties":{"subnets":{"type":"object"}},"type":"object"}"#
                    .to_owned(),
            }],
            addons: Vec::new(),
            nulls: BTreeMap::from([(
                "VirtualPrivateCloud".to_owned(),
                vec![NullFailure {
                    path: vec!["subnets".to_owned()],
                    at: "vpc/templates/vpc.yaml:3".to_owned(),
                    helm: "<.Values.subnets>: nil".to_owned(),
                }],
            )]),
        };
        let files = generate(std::slice::from_ref(&release)).unwrap();
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "schemas/index.rs",
                "schemas/v9.9.9/apps-vpc.json",
                "schemas/v9.9.9/apps-vpc.rs"
            ]
        );
        let index = &files[0].1;
        assert!(index.contains("kind: \"VirtualPrivateCloud\""), "{index}");
        assert!(index.contains("not shipped): extra-gateway."), "{index}");
        assert!(
            index.contains(
                "path: &[\"subnets\"],\n                        at: \"vpc/templates/vpc.yaml:3\","
            ),
            "{index}"
        );
        let mut unsupported = release.clone();
        unsupported.charts[0].schema =
            r#"{"type":"object","properties":{"subnets":{"type":"object","minProperties":1}}}"#
                .to_owned();
        unsupported.definitions[0].schema = unsupported.charts[0].schema.clone();
        let error = generate(&[unsupported]).unwrap_err();
        assert!(
            error.contains("apps-vpc")
                && error.contains("keyword minProperties at /properties/subnets/minProperties"),
            "{error}"
        );
        let mut broken = release;
        broken.charts.truncate(0);
        assert!(
            generate(&[broken])
                .unwrap_err()
                .contains("equals 0 chart schemas")
        );
    }
}
