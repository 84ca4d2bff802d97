//! The values Helm validates: the chart's defaults coalesced under the
//! user's, as `helm.sh/helm` does before `ValidateAgainstSchema`
//! (`pkg/chartutil/values.go` `ToRenderValues` → `CoalesceValues`; Helm 4:
//! `pkg/chart/common/util/coalesce.go`).
//!
//! The chart's `values.yaml` is not in the release data, only its schema:
//! the build script rebuilds it from the schema (`tree::write::defaults`)
//! and the index holds the result as a static tree, so a request parses
//! nothing.

use serde_json::{Map, Value};

use crate::schemas::Json;

/// Helm's `coalesceValues` for the chart itself: `values` (the user's,
/// authoritative) over `chart` (the defaults). A key the user sets to
/// `null` is deleted and its default does not apply; a user table meets
/// its default table in [`coalesce_tables`]; any other user value wins
/// whole (a list is never merged). A null on a key the chart does not
/// default stays a null.
pub fn coalesce(values: &mut Map<String, Value>, chart: &[(&str, Json)]) {
    for (key, default) in chart {
        match values.get_mut(*key) {
            Some(Value::Null) => {
                values.remove(*key);
            }
            Some(Value::Object(table)) => {
                if let Json::Object(default_table) = default {
                    coalesce_tables(table, default_table);
                }
            }
            Some(_) => {}
            None => {
                values.insert((*key).to_owned(), default.to_value());
            }
        }
    }
}

/// Helm's `coalesceTablesFullKey` (merge off): every null of `dst` is
/// deleted (Helm first copies the nulls into the source table, then deletes
/// each key whose value is null, so no default replaces it), keys `dst`
/// lacks come from `src`, tables meet recursively.
fn coalesce_tables(dst: &mut Map<String, Value>, src: &[(&str, Json)]) {
    let nulls: Vec<String> = dst
        .iter()
        .filter(|(_, value)| value.is_null())
        .map(|(key, _)| key.clone())
        .collect();
    for key in &nulls {
        dst.remove(key);
    }
    for (key, default) in src {
        if nulls.iter().any(|null| null == key) {
            continue;
        }
        match dst.get_mut(*key) {
            None => {
                dst.insert((*key).to_owned(), default.to_value());
            }
            Some(Value::Object(table)) => {
                if let Json::Object(default_table) = default {
                    coalesce_tables(table, default_table);
                }
            }
            Some(_) => {}
        }
    }
}

/// The values Helm validates for `spec` (absent or null: no user values).
pub fn effective(spec: Option<&Map<String, Value>>, chart: &[(&str, Json)]) -> Value {
    let mut values = spec.cloned().unwrap_or_default();
    coalesce(&mut values, chart);
    Value::Object(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn coalesce_like_helm() {
        let chart_value = json!({
            "replicas": 2,
            "size": "10Gi",
            "users": {},
            "backup": {"enabled": false, "schedule": "0 2 * * *"},
            "resources": {},
            "list": [1, 2]
        });
        let Json::Object(chart) = tree::write::leak_json(&chart_value) else {
            panic!("not an object");
        };
        let mut values = map(json!({
            "replicas": null,
            "users": {"alice": null, "bob": {"password": null}},
            "backup": {"schedule": null, "enabled": true},
            "resources": "oops",
            "list": [3],
            "unknown": null
        }));
        coalesce(&mut values, chart);
        assert_eq!(
            Value::Object(values),
            json!({
                "size": "10Gi",
                // alice deleted (a null in a coalesced table); bob's own
                // table has no default table, so its null stays.
                "users": {"bob": {"password": null}},
                "backup": {"enabled": true},
                "resources": "oops",
                "list": [3],
                "unknown": null
            })
        );
        assert_eq!(effective(None, chart), chart_value);
    }
}
