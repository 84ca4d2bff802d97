//! Flux post-build substitution: `${VAR}` placeholders filled as a Flux
//! Kustomization's `postBuild.substitute`/`substituteFrom` fills them, so
//! the objects judged are the ones Flux would apply.
//!
//! Flux substitutes in the object's YAML text (so `replicas: ${N}` becomes
//! a number), supports `${VAR}`, `${VAR:-default}`, `${VAR:=default}`,
//! `${VAR-default}` and `${VAR=default}`, leaves `$VAR` alone, reads `$${`
//! as a literal `${`, and skips objects annotated
//! `kustomize.toolkit.fluxcd.io/substitute: disabled`.

use reading::yaml::{self, Limit};
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use base64::Engine;
use serde_json::Value;
use shared::FieldPath;

/// The annotation that turns substitution off for one object.
const DISABLED: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// Variable values, by name.
#[derive(Debug, Clone, Default)]
pub struct Vars(BTreeMap<String, String>);

/// One `${...}` found in a text.
struct Placeholder<'t> {
    /// Byte range of the whole placeholder.
    start: usize,
    end: usize,
    name: &'t str,
    /// The default and whether it applies to an empty value too (`:-`).
    default: Option<(&'t str, bool)>,
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The next placeholder at or after `from`, skipping `$${` escapes (the
/// flag says an escape was passed, so the caller drops one `$`).
fn next_placeholder(text: &str, from: usize) -> Option<Placeholder<'_>> {
    let mut at = from;
    while let Some(found) = text.get(at..).and_then(|t| t.find("${")) {
        let start = at + found;
        let escaped = start > 0 && text.get(start - 1..start) == Some("$");
        let body_start = start + 2;
        let close = text.get(body_start..).and_then(|t| t.find('}'))?;
        let body = text.get(body_start..body_start + close).unwrap_or_default();
        let end = body_start + close + 1;
        if !escaped {
            let split = body.find([':', '-', '=']).unwrap_or(body.len());
            let name = body.get(..split).unwrap_or_default();
            let rest = body.get(split..).unwrap_or_default();
            let default =
                if let Some(d) = rest.strip_prefix(":-").or_else(|| rest.strip_prefix(":=")) {
                    Some((d, true))
                } else if let Some(d) = rest.strip_prefix('-').or_else(|| rest.strip_prefix('=')) {
                    Some((d, false))
                } else if rest.is_empty() {
                    None
                } else {
                    at = end;
                    continue;
                };
            if valid_name(name) {
                return Some(Placeholder {
                    start,
                    end,
                    name,
                    default,
                });
            }
        }
        at = end;
    }
    None
}

impl Vars {
    /// Variables from `KEY=VALUE` arguments and files, later ones winning.
    pub fn load(pairs: &[String], files: &[&Path]) -> Result<Self> {
        let mut vars = BTreeMap::new();
        for file in files {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading --vars-from {}", file.display()))?;
            vars.extend(
                parse_file(&text).with_context(|| format!("--vars-from {}", file.display()))?,
            );
        }
        for pair in pairs {
            let (key, value) = pair
                .split_once('=')
                .with_context(|| format!("--var {pair:?}: expected KEY=VALUE"))?;
            if !valid_name(key) {
                bail!("--var {pair:?}: {key:?} is not a variable name (letters, digits, _)");
            }
            vars.insert(key.to_owned(), value.to_owned());
        }
        Ok(Self(vars))
    }

    /// The value a placeholder takes, None when it stays unresolved.
    fn value<'a>(&'a self, placeholder: &Placeholder<'a>) -> Option<&'a str> {
        let set = self.0.get(placeholder.name).map(String::as_str);
        match (set, placeholder.default) {
            (Some(""), Some((default, true))) => Some(default),
            (Some(value), _) => Some(value),
            (None, Some((default, _))) => Some(default),
            (None, None) => None,
        }
    }

    /// `text` with every placeholder that has a value filled in and every
    /// `$${` escape reduced to `${`; unresolved placeholders stay.
    pub fn substitute(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut at = 0;
        while let Some(found) = text.get(at..).and_then(|t| t.find("${")) {
            let start = at + found;
            if start > 0 && text.get(start - 1..start) == Some("$") {
                // `$${`: drop the escaping `$`.
                out.push_str(text.get(copied..start - 1).unwrap_or_default());
                copied = start;
                at = start + 2;
                continue;
            }
            match next_placeholder(text, start).filter(|p| p.start == start) {
                Some(placeholder) => {
                    if let Some(value) = self.value(&placeholder) {
                        out.push_str(text.get(copied..start).unwrap_or_default());
                        out.push_str(value);
                        copied = placeholder.end;
                    }
                    at = placeholder.end;
                }
                None => at = start + 2,
            }
        }
        out.push_str(text.get(copied..).unwrap_or_default());
        out
    }

    /// Names of the placeholders in `text` that no variable or default fills.
    pub fn unresolved<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut names = Vec::new();
        let mut at = 0;
        while let Some(placeholder) = next_placeholder(text, at) {
            if self.value(&placeholder).is_none() {
                names.push(placeholder.name);
            }
            at = placeholder.end;
        }
        names
    }
}

/// Whether Flux would substitute in this object.
pub fn enabled(object: &Value) -> bool {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(DISABLED))
        .and_then(Value::as_str)
        != Some("disabled")
}

/// Every string field of `object` holding a placeholder that stays
/// unresolved, with the variable names.
pub fn unresolved_fields(vars: &Vars, object: &Value) -> Vec<(FieldPath, Vec<String>)> {
    let mut found = Vec::new();
    walk(vars, object, FieldPath::root(), &mut found);
    found
}

fn walk(vars: &Vars, value: &Value, path: FieldPath, found: &mut Vec<(FieldPath, Vec<String>)>) {
    match value {
        Value::String(text) => {
            let names = vars.unresolved(text);
            if !names.is_empty() {
                found.push((path, names.into_iter().map(str::to_owned).collect()));
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                walk(vars, item, path.index(index), found);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                walk(vars, item, path.key(key), found);
            }
        }
        _ => {}
    }
}

/// `KEY=VALUE` lines (blank lines and `#` comments ignored), or a ConfigMap
/// or Secret manifest whose `data`/`stringData` are the variables, as
/// Flux's `substituteFrom` reads them.
fn parse_file(text: &str) -> Result<BTreeMap<String, String>> {
    let object: Option<Value> = yaml::document(text, Limit::Manifests).ok();
    if let Some(object) = object.filter(|o| o.get("kind").is_some()) {
        return from_object(&object);
    }
    let mut vars = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .with_context(|| format!("line {}: expected KEY=VALUE", number + 1))?;
        let key = key.trim();
        if !valid_name(key) {
            bail!("line {}: {key:?} is not a variable name", number + 1);
        }
        vars.insert(key.to_owned(), value.to_owned());
    }
    Ok(vars)
}

fn from_object(object: &Value) -> Result<BTreeMap<String, String>> {
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let strings = |field: &str| -> Vec<(String, String)> {
        object
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(key, value)| {
                let text = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (key.clone(), text)
            })
            .collect()
    };
    let mut vars = BTreeMap::new();
    match kind {
        "ConfigMap" => vars.extend(strings("data")),
        "Secret" => {
            for (key, encoded) in strings("data") {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(encoded.trim())
                    .with_context(|| format!("data.{key} is not base64"))?;
                let text = String::from_utf8(bytes)
                    .with_context(|| format!("data.{key} is not UTF-8 text"))?;
                vars.insert(key, text);
            }
            vars.extend(strings("stringData"));
        }
        other => {
            bail!("a {other} holds no variables: give a ConfigMap, a Secret or KEY=VALUE lines")
        }
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vars {
        Vars(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn placeholders_fill_as_flux_fills_them() {
        let v = vars(&[("A", "1"), ("EMPTY", "")]);
        assert_eq!(v.substitute("x: ${A}"), "x: 1");
        assert_eq!(v.substitute("${B:-d} ${B:=e} ${B-f} ${B=g}"), "d e f g");
        assert_eq!(v.substitute("${EMPTY:-d}|${EMPTY-d}"), "d|");
        assert_eq!(v.substitute("$A $${A} ${B} ${1X}"), "$A ${A} ${B} ${1X}");
        assert_eq!(v.unresolved("${A} ${B} $${C} ${D:-x} ${E}"), vec!["B", "E"]);
    }

    #[test]
    fn variables_come_from_lines_configmaps_and_secrets() {
        let lines = parse_file("# c\nA=1\n\nB = two=2\n").unwrap();
        assert_eq!(lines.get("A").map(String::as_str), Some("1"));
        assert_eq!(lines.get("B").map(String::as_str), Some(" two=2"));
        let cm = parse_file("apiVersion: v1\nkind: ConfigMap\ndata: {A: x}\n").unwrap();
        assert_eq!(cm.get("A").map(String::as_str), Some("x"));
        let secret =
            parse_file("apiVersion: v1\nkind: Secret\ndata: {A: eA==}\nstringData: {B: why}\n")
                .unwrap();
        assert_eq!(secret.get("A").map(String::as_str), Some("x"));
        assert_eq!(secret.get("B").map(String::as_str), Some("why"));
        assert!(parse_file("not a pair\n").is_err());
    }

    #[test]
    fn unresolved_fields_are_named_by_path() {
        let object = serde_json::json!({"spec": {"host": "${HOST}", "list": ["ok", "${A}-${B}"]}});
        let found = unresolved_fields(&vars(&[("A", "1")]), &object);
        let rendered: Vec<(String, Vec<String>)> =
            found.into_iter().map(|(p, n)| (p.to_string(), n)).collect();
        assert_eq!(
            rendered,
            vec![
                ("spec.host".to_owned(), vec!["HOST".to_owned()]),
                ("spec.list[1]".to_owned(), vec!["B".to_owned()]),
            ]
        );
    }
}
