//! A tenant's `resourceQuotas` as cozystack-api decodes them.
//!
//! v1.6.2 `pkg/registry/apps/application/quota.go` (`parseDeclaredQuotas`)
//! unmarshals the tenant's values with encoding/json into
//! `map[string]resource.Quantity`, and k8s.io/apimachinery v0.35
//! `Quantity.UnmarshalJSON` reads each value:
//!
//! - `null` is a zero quantity, and the key stays: a map of nulls is a
//!   bounded map there;
//! - a string loses its quotes, then `strings.TrimSpace`, then
//!   `ParseQuantity`; a number's text goes to `ParseQuantity` as it is;
//! - anything else, and any value `ParseQuantity` refuses, fails the whole
//!   map (encoding/json stops at the first error): the tenant being written
//!   is refused (`decode tenant values: ...`), a sibling or pool member is
//!   skipped whole, not in part.
//!
//! `UnmarshalJSON` sees the raw JSON text, before any escape is read: a
//! whitespace that JSON escapes (a tab, a newline, U+2028, U+2029, which
//! the API server's encoder writes as `\t`, `\u2028`, ...) reaches
//! `TrimSpace` as a backslash and fails; the spaces it writes as they are
//! (` `, U+00A0, U+3000, ...) are trimmed.

use std::collections::BTreeMap;

use shared::Value;

use crate::quantity::Quantity;

/// Quotas by key, as declared (`cpu`, `memory`, `storage`, ...).
pub type Quotas = BTreeMap<String, Quantity>;

/// A value cozystack-api cannot decode, at its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecodable {
    /// The key in `resourceQuotas`; empty when the map itself is not a map.
    pub key: String,
    /// The value as JSON.
    pub value: String,
    /// Why `ParseQuantity` or encoding/json refuses it.
    pub why: &'static str,
}

/// `resourceQuotas` as cozystack-api decodes it: every undecodable value
/// when any is (one is enough to refuse the map).
pub fn quotas(map: Option<&Value>) -> Result<Quotas, Vec<Undecodable>> {
    let entries = match map {
        None | Some(Value::Null) => return Ok(Quotas::new()),
        Some(Value::Object(entries)) => entries,
        Some(other) => {
            return Err(vec![Undecodable {
                key: String::new(),
                value: other.to_string(),
                why: "not a map of quantities",
            }]);
        }
    };
    let mut found = Quotas::new();
    let mut bad = Vec::new();
    for (key, value) in entries {
        match quantity(value) {
            Ok(quantity) => {
                found.insert(key.clone(), quantity);
            }
            Err(why) => bad.push(Undecodable {
                key: key.clone(),
                value: value.to_string(),
                why,
            }),
        }
    }
    if bad.is_empty() { Ok(found) } else { Err(bad) }
}

/// One value, as `Quantity.UnmarshalJSON` reads it.
fn quantity(value: &Value) -> Result<Quantity, &'static str> {
    match value {
        Value::Null => Ok(Quantity::zero()),
        Value::String(text) => Quantity::parse(text.trim_matches(trimmed_raw))
            .ok_or("not a quantity (ParseQuantity refuses it)"),
        Value::Number(number) => {
            Quantity::parse(&number.to_string()).ok_or("not a quantity (ParseQuantity refuses it)")
        }
        Value::Bool(_) | Value::Array(_) | Value::Object(_) => {
            Err("neither a quantity string, a number nor null")
        }
    }
}

/// The whitespace `strings.TrimSpace` removes from a string's raw JSON
/// text: Go's `unicode.IsSpace` (Unicode `White_Space`, as Rust's
/// `char::is_whitespace`), less what the encoder escapes.
fn trimmed_raw(c: char) -> bool {
    c.is_whitespace()
        && !matches!(
            c,
            '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | '\u{2028}' | '\u{2029}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn q(text: &str) -> Quantity {
        Quantity::parse(text).unwrap_or_else(|| panic!("{text}"))
    }

    #[test]
    fn null_is_a_zero_that_keeps_its_key() {
        let decoded = quotas(Some(&json!({"cpu": null}))).ok();
        assert_eq!(
            decoded,
            Some(Quotas::from([("cpu".to_owned(), Quantity::zero())]))
        );
        assert_eq!(quotas(Some(&Value::Null)), Ok(Quotas::new()));
        assert_eq!(quotas(None), Ok(Quotas::new()));
    }

    #[test]
    fn trims_the_spaces_the_raw_text_keeps() {
        let decoded = quotas(Some(&json!({
            "cpu": " 2 ", "memory": "\u{a0}4Gi\u{3000}", "pods": 10, "storage": 1.5
        })));
        assert_eq!(
            decoded,
            Ok(Quotas::from([
                ("cpu".to_owned(), q("2")),
                ("memory".to_owned(), q("4Gi")),
                ("pods".to_owned(), q("10")),
                ("storage".to_owned(), q("1500m")),
            ]))
        );
        // Escaped in the raw text, so not trimmed: refused.
        for escaped in ["\t2", "2\n", "\u{2028}2", "2\r"] {
            assert!(
                quotas(Some(&json!({"cpu": escaped}))).is_err(),
                "{escaped:?}"
            );
        }
        // NEL (U+0085) is written as it is, and Go's IsSpace takes it.
        assert_eq!(
            quotas(Some(&json!({"cpu": "\u{85}2"}))),
            Ok(Quotas::from([("cpu".to_owned(), q("2"))]))
        );
    }

    #[test]
    fn one_bad_value_fails_the_whole_map() {
        let decoded = quotas(Some(&json!({"cpu": "2", "memory": "4 Gi", "pods": true})));
        let keys: Vec<String> = decoded
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|b| b.key)
            .collect();
        assert_eq!(keys, ["memory", "pods"]);
        let list = quotas(Some(&json!([{"cpu": "2"}])));
        assert_eq!(list.err().map(|b| b.len()), Some(1));
    }
}
