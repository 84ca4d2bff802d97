//! What changed from one release to the next: kinds, fields of each kind's
//! schema, the facts rules follow, and the charts' `fail`/`required` calls
//! with the rules whose source names their file.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::Facts;
use crate::rules::{Sourced, touching};
use crate::sites::Site;
use crate::tree::{Tree, read};

/// A field of a schema, `nodeGroups.*.podCpuLimit`, and what it takes:
/// `integer|string`, `string enum [a, b]`.
pub type Fields = BTreeMap<String, String>;

/// Every field of `schema`: properties by name, map values as `*`, list
/// items as `[]`.
pub fn fields(schema: &Value) -> Fields {
    fn walk(schema: &Value, path: &str, out: &mut Fields) {
        if !path.is_empty() {
            out.insert(path.to_owned(), takes(schema));
        }
        let join = |name: &str| {
            if path.is_empty() {
                name.to_owned()
            } else {
                format!("{path}.{name}")
            }
        };
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, sub) in properties {
                walk(sub, &join(name), out);
            }
        }
        if let Some(sub) = schema.get("additionalProperties").filter(|s| s.is_object()) {
            walk(sub, &join("*"), out);
        }
        if let Some(sub) = schema.get("items").filter(|s| s.is_object()) {
            walk(sub, &format!("{path}[]"), out);
        }
    }
    let mut out = Fields::new();
    walk(schema, "", &mut out);
    out
}

/// What a schema takes, in a few words.
fn takes(schema: &Value) -> String {
    let mut types: BTreeSet<String> = BTreeSet::new();
    let mut add = |value: Option<&Value>| match value {
        Some(Value::String(t)) => {
            types.insert(t.clone());
        }
        Some(Value::Array(ts)) => {
            types.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        _ => {}
    };
    add(schema.get("type"));
    for alternative in schema
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        add(alternative.get("type"));
    }
    let mut text = if types.is_empty() {
        "any".to_owned()
    } else {
        types.into_iter().collect::<Vec<_>>().join("|")
    };
    if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
        let choices: Vec<String> = choices.iter().map(Value::to_string).collect();
        let _ = write!(text, " enum [{}]", choices.join(", "));
    }
    text
}

/// The schema of each kind of the release at `tree` whose facts are
/// `facts`, as [`fields`].
pub fn kind_fields(tree: &Tree, facts: &Facts) -> Result<BTreeMap<String, Fields>, String> {
    let mut out = BTreeMap::new();
    for kind in &facts.kinds {
        let path = tree
            .root
            .join("apps")
            .join(kind.chart.replacen('/', "-", 1))
            .join("values.schema.json");
        let schema: Value =
            serde_json::from_str(&read(&path)?).map_err(|e| format!("{}: {e}", path.display()))?;
        out.insert(kind.kind.clone(), fields(&schema));
    }
    Ok(out)
}

/// One side of a comparison.
pub struct Side<'a> {
    pub version: &'a str,
    pub facts: &'a Facts,
    pub fields: &'a BTreeMap<String, Fields>,
}

/// The report of what changed from `old` to `new`, for a person.
pub fn report(old: &Side<'_>, new: &Side<'_>, rules: &[Sourced]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "What changed from {} to {}:", old.version, new.version);
    let old_kinds: BTreeMap<&str, &crate::Kind> = old
        .facts
        .kinds
        .iter()
        .map(|k| (k.kind.as_str(), k))
        .collect();
    let new_kinds: BTreeMap<&str, &crate::Kind> = new
        .facts
        .kinds
        .iter()
        .map(|k| (k.kind.as_str(), k))
        .collect();
    section(
        &mut out,
        "new kinds",
        new_kinds
            .iter()
            .filter(|(k, _)| !old_kinds.contains_key(*k))
            .map(|(k, kind)| {
                format!(
                    "{k} ({}, chart {}, release prefix {:?})",
                    kind.plural, kind.chart, kind.prefix
                )
            }),
    );
    section(
        &mut out,
        "removed kinds",
        old_kinds
            .keys()
            .filter(|k| !new_kinds.contains_key(*k))
            .map(|k| (*k).to_owned()),
    );
    section(
        &mut out,
        "kinds served differently",
        new_kinds.iter().filter_map(|(k, kind)| {
            let was = old_kinds.get(k)?;
            (was != kind).then(|| {
                format!(
                    "{k}: {} {} {:?} (was {} {} {:?})",
                    kind.plural, kind.chart, kind.prefix, was.plural, was.chart, was.prefix
                )
            })
        }),
    );
    let mut added = Vec::new();
    let mut removed = Vec::new();
    let mut retyped = Vec::new();
    for (kind, fields) in new.fields {
        let Some(before) = old.fields.get(kind) else {
            continue;
        };
        for (path, takes) in fields {
            match before.get(path) {
                None => added.push(format!("{kind} spec.{path}: {takes}")),
                Some(was) if was != takes => {
                    retyped.push(format!("{kind} spec.{path}: {takes} (was {was})"));
                }
                Some(_) => {}
            }
        }
        for path in before.keys().filter(|p| !fields.contains_key(*p)) {
            removed.push(format!("{kind} spec.{path}"));
        }
    }
    section(&mut out, "new fields", added.into_iter());
    section(&mut out, "removed fields", removed.into_iter());
    section(&mut out, "retyped fields", retyped.into_iter());
    let set = |items: &[String]| items.iter().cloned().collect::<BTreeSet<String>>();
    let (was, now) = (set(&old.facts.kubernetes), set(&new.facts.kubernetes));
    section(
        &mut out,
        "Kubernetes versions added",
        now.difference(&was).cloned(),
    );
    section(
        &mut out,
        "Kubernetes versions removed",
        was.difference(&now).cloned(),
    );
    let (was, now) = (set(&old.facts.facts), set(&new.facts.facts));
    section(
        &mut out,
        "facts that now hold (the rules that follow them change)",
        now.difference(&was).cloned(),
    );
    section(
        &mut out,
        "facts that no longer hold",
        was.difference(&now).cloned(),
    );
    section(
        &mut out,
        "names charts now require",
        new.facts
            .fixed_names
            .iter()
            .filter(|(k, n)| old.facts.fixed_names.get(*k) != Some(n))
            .map(|(k, n)| format!("{k}: {n}")),
    );
    fn keys(sites: &[Site]) -> BTreeSet<(&str, &str, &str, &str)> {
        sites.iter().map(Site::key).collect()
    }
    let (was, now) = (keys(&old.facts.sites), keys(&new.facts.sites));
    let new_sites: Vec<&Site> = new
        .facts
        .sites
        .iter()
        .filter(|s| !was.contains(&s.key()))
        .collect();
    let removed_sites: Vec<&Site> = old
        .facts
        .sites
        .iter()
        .filter(|s| !now.contains(&s.key()))
        .collect();
    sites(
        &mut out,
        "new template fail/required calls",
        &new_sites,
        rules,
    );
    sites(
        &mut out,
        "removed template fail/required calls",
        &removed_sites,
        rules,
    );
    out
}

/// Template calls by file, each file with the rules whose source names it.
fn sites(out: &mut String, title: &str, found: &[&Site], rules: &[Sourced]) {
    if found.is_empty() {
        let _ = writeln!(out, "- {title}: none");
        return;
    }
    let _ = writeln!(out, "- {title} ({}), by file:", found.len());
    let mut by_file: BTreeMap<String, Vec<&Site>> = BTreeMap::new();
    for site in found {
        by_file
            .entry(format!("{}/{}", site.chart, site.file))
            .or_default()
            .push(site);
    }
    for (file, calls) in by_file {
        let touched = touching(rules, &file);
        let _ = writeln!(
            out,
            "    {file} (rules whose source names it: {})",
            if touched.is_empty() {
                "none".to_owned()
            } else {
                touched.join(", ")
            }
        );
        for site in calls {
            let _ = writeln!(
                out,
                "        {} {} {:?}",
                site.line, site.call, site.message
            );
        }
    }
}

/// A titled list, or `title: none`.
fn section(out: &mut String, title: &str, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.collect();
    if items.is_empty() {
        let _ = writeln!(out, "- {title}: none");
        return;
    }
    let _ = writeln!(out, "- {title} ({}):", items.len());
    for item in items {
        let _ = writeln!(out, "    {item}");
    }
}

/// The fields of the schemas of the release whose data is at `dir`.
pub fn read_fields(dir: &Path, facts: &Facts) -> Result<BTreeMap<String, Fields>, String> {
    kind_fields(&Tree::at(dir)?, facts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_name_maps_lists_and_types() {
        let schema = json!({"type": "object", "properties": {
            "nodeGroups": {"type": "object", "additionalProperties": {"type": "object", "properties": {
                "podCpuLimit": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "roles": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}}},
            "version": {"type": "string", "enum": ["v1.35"]}}});
        let fields = fields(&schema);
        assert_eq!(fields["nodeGroups.*.podCpuLimit"], "integer|string");
        assert_eq!(fields["nodeGroups.*.roles[]"], "string enum [\"a\", \"b\"]");
        assert_eq!(fields["version"], "string enum [\"v1.35\"]");
        assert_eq!(fields["nodeGroups"], "object");
    }
}
