//! Label and field selectors, as the API server applies them to a list.

use serde_json::{Map, Value};

/// One term of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Requirement {
    Exists(String),
    Absent(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

impl Requirement {
    pub(super) fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let value = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        match self {
            Requirement::Exists(key) => value(key).is_some(),
            Requirement::Absent(key) => value(key).is_none(),
            Requirement::In(key, values) => {
                value(key).is_some_and(|v| values.iter().any(|x| x == v))
            }
            Requirement::NotIn(key, values) => {
                value(key).is_none_or(|v| !values.iter().any(|x| x == v))
            }
        }
    }
}

/// The terms of a label selector, split at the commas outside `( )`.
fn terms(selector: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0_usize, 0);
    for (at, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.extend(selector.get(start..at));
                start = at + 1;
            }
            _ => {}
        }
    }
    terms.extend(selector.get(start..));
    terms
        .into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

pub(super) fn label_selector(selector: &str) -> Result<Vec<Requirement>, String> {
    let invalid =
        |term: &str| format!("unable to parse requirement {term:?} of label selector {selector:?}");
    terms(selector)
        .into_iter()
        .map(|term| {
            let set = |rest: &str| -> Option<Vec<String>> {
                let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
                Some(inner.split(',').map(|v| v.trim().to_owned()).collect())
            };
            if let Some((key, rest)) = term.split_once(" notin ") {
                return set(rest)
                    .map(|values| Requirement::NotIn(key.trim().to_owned(), values))
                    .ok_or_else(|| invalid(term));
            }
            if let Some((key, rest)) = term.split_once(" in ") {
                return set(rest)
                    .map(|values| Requirement::In(key.trim().to_owned(), values))
                    .ok_or_else(|| invalid(term));
            }
            if let Some((key, value)) = term.split_once("!=") {
                return Ok(Requirement::NotIn(
                    key.trim().to_owned(),
                    vec![value.trim().to_owned()],
                ));
            }
            if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
                return Ok(Requirement::In(
                    key.trim().to_owned(),
                    vec![value.trim().to_owned()],
                ));
            }
            if let Some(key) = term.strip_prefix('!') {
                return Ok(Requirement::Absent(key.trim().to_owned()));
            }
            if term.contains(char::is_whitespace) {
                return Err(invalid(term));
            }
            Ok(Requirement::Exists(term.to_owned()))
        })
        .collect()
}

/// A field selector: `metadata.name` or `metadata.namespace`, `=`, `==`
/// or `!=`, joined by commas, as the API server takes them for every kind.
pub(super) fn field_selector(selector: &str) -> Result<Vec<(String, bool, String)>, String> {
    terms(selector)
        .into_iter()
        .map(|term| {
            let (field, equal, value) = match term.split_once("!=") {
                Some((field, value)) => (field, false, value),
                None => {
                    let (field, value) = term
                        .split_once("==")
                        .or_else(|| term.split_once('='))
                        .ok_or_else(|| format!("invalid field selector {selector:?}"))?;
                    (field, true, value)
                }
            };
            let field = field.trim();
            if field != "metadata.name" && field != "metadata.namespace" {
                return Err(format!(
                    "field label not supported: {field} (the snapshot selects on metadata.name and metadata.namespace)"
                ));
            }
            Ok((field.to_owned(), equal, value.trim().to_owned()))
        })
        .collect()
}
