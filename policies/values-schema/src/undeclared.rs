//! Keys the chart does not declare. No v1.6.2 or v1.5.4 schema closes its
//! objects (`additionalProperties: false`), so JSON Schema accepts any
//! extra key and Helm silently ignores a misspelt one (`replcas: 3` keeps
//! the default of 2). An object whose schema declares `properties` and says
//! nothing of `additionalProperties` or `patternProperties` is taken as
//! closed in spirit: each key it does not declare is reported, naming the
//! closest declared one. Free-form maps (an object without `properties`,
//! `additionalProperties` with a schema, `x-kubernetes-preserve-unknown-fields`
//! such as `valuesOverride`) are not checked; the values of a map whose
//! `additionalProperties` is a schema are walked with that schema.

use serde_json::Value;
use shared::FieldPath;

use crate::schemas::{Additional, Schema};

/// One undeclared key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undeclared {
    pub path: FieldPath,
    /// The closest declared key's path, when one is close enough.
    pub suggestion: Option<FieldPath>,
}

/// Every undeclared key of `value` (at `path`) under `schema`. Null values
/// are skipped: Helm deletes them. At the top level (`spec`), keys starting
/// with `_` are cozystack-api's (`_cluster`, `_namespace`) and skipped.
pub fn undeclared(value: &Value, schema: &Schema, path: &FieldPath) -> Vec<Undeclared> {
    let mut out = Vec::new();
    walk(value, schema, path, &mut Vec::new(), &mut out);
    out
}

/// One step below the walk's starting path. The walk keeps these on a
/// stack and builds a [`FieldPath`] only for what it reports: most specs
/// have no undeclared key, and a path per visited member costs more than
/// the walk itself.
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

fn path_of(base: &FieldPath, steps: &[Step<'_>]) -> FieldPath {
    steps.iter().fold(base.clone(), |path, step| match step {
        Step::Key(key) => path.key(key),
        Step::Index(index) => path.index(*index),
    })
}

fn walk<'v>(
    value: &'v Value,
    schema: &Schema,
    base: &FieldPath,
    steps: &mut Vec<Step<'v>>,
    out: &mut Vec<Undeclared>,
) {
    if schema.preserve_unknown {
        return;
    }
    match value {
        Value::Object(members) => {
            // The generator refuses `patternProperties`.
            let closed =
                schema.properties.is_some() && matches!(schema.additional, Additional::Absent);
            for (key, member) in members {
                if member.is_null() {
                    continue;
                }
                let sub = schema.property(key).or(match schema.additional {
                    Additional::Schema(sub) => Some(sub),
                    _ => None,
                });
                if let Some(sub) = sub {
                    steps.push(Step::Key(key));
                    walk(member, sub, base, steps, out);
                    steps.pop();
                } else if closed && !(steps.is_empty() && key.starts_with('_')) {
                    let parent = path_of(base, steps);
                    let suggestion = schema
                        .properties
                        .and_then(|p| closest(key, p.iter().map(|(name, _)| *name)))
                        .map(|best| parent.key(best));
                    out.push(Undeclared {
                        path: parent.key(key),
                        suggestion,
                    });
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.items {
                for (i, item) in items.iter().enumerate() {
                    steps.push(Step::Index(i));
                    walk(item, sub, base, steps, out);
                    steps.pop();
                }
            }
        }
        _ => {}
    }
}

/// Levenshtein distance over characters.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = i;
        let mut left = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row.get(j + 1).copied().unwrap_or(usize::MAX);
            let cost = diagonal + usize::from(ca != *cb);
            let next = cost.min(up.saturating_add(1)).min(left + 1);
            diagonal = up;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = next;
            }
            left = next;
        }
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
    }
    row.last().copied().unwrap_or_default()
}

/// `word` without its digits.
fn letters(word: &str) -> String {
    word.chars().filter(|c| !c.is_ascii_digit()).collect()
}

/// The candidate closest to `word`, ignoring case first, if it is close
/// enough to be a plausible misspelling: at most a third of the longer
/// word's characters differ (at least two may). Words that differ only in
/// their digits (`v19` and `v13`) are different values, not misspellings.
pub fn closest<'c>(word: &str, candidates: impl Iterator<Item = &'c str>) -> Option<&'c str> {
    let lower = word.to_lowercase();
    let word_letters = letters(word);
    candidates
        .filter(|c| *c != word && letters(c) != word_letters)
        .map(|c| {
            let folded = distance(&lower, &c.to_lowercase());
            (folded, distance(word, c), c)
        })
        .filter(|(folded, _, c)| {
            let longest = word.chars().count().max(c.chars().count());
            *folded <= (longest / 3).max(2).min(longest.saturating_sub(1))
        })
        .min()
        .map(|(_, _, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn distances() {
        assert_eq!(distance("replcas", "replicas"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("same", "same"), 0);
    }

    #[test]
    fn suggestions_are_plausible() {
        let keys = ["replicas", "resources", "storageClass", "size", "tls"];
        assert_eq!(closest("replcas", keys.into_iter()), Some("replicas"));
        assert_eq!(
            closest("storageclass", keys.into_iter()),
            Some("storageClass")
        );
        assert_eq!(closest("sise", keys.into_iter()), Some("size"));
        assert_eq!(closest("version", keys.into_iter()), None);
        assert_eq!(closest("ab", ["tls"].into_iter()), None);
        assert_eq!(closest("v19", ["v18", "v13"].into_iter()), None);
        assert_eq!(
            closest("t1.smal", ["t1.small", "t1.nano"].into_iter()),
            Some("t1.small")
        );
    }

    #[test]
    fn walks_declared_objects_maps_and_lists() {
        let schema = tree::write::leak(&json!({
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "users": {"type": "object", "additionalProperties": {
                    "type": "object", "properties": {"password": {"type": "string"}}}},
                "valuesOverride": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "labels": {"type": "object"},
                "groups": {"type": "array", "items": {"type": "object", "properties": {"name": {}}}}
            }
        }));
        let value = json!({
            "replcas": 3,
            "_cluster": {},
            "gone": null,
            "users": {"alice": {"pasword": "x"}},
            "valuesOverride": {"anything": {"at": "all"}},
            "labels": {"free": "x"},
            "groups": [{"name": "a"}, {"nmae": "b"}]
        });
        let mut found: Vec<String> = undeclared(&value, schema, &FieldPath::parse("spec"))
            .into_iter()
            .map(|u| format!("{} -> {:?}", u.path, u.suggestion.map(|s| s.to_string())))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                "spec.groups[1].nmae -> Some(\"spec.groups[1].name\")",
                "spec.replcas -> Some(\"spec.replicas\")",
                "spec.users.alice.pasword -> Some(\"spec.users.alice.password\")",
            ]
        );
    }
}
