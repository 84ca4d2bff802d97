//! The values Helm validates: the chart's defaults coalesced under the
//! user's, as `helm.sh/helm` does before `ValidateAgainstSchema`
//! (`pkg/chartutil/values.go` `ToRenderValues` → `CoalesceValues`; Helm 4:
//! `pkg/chart/common/util/coalesce.go`).
//!
//! The chart's `values.yaml` is not in the release data, only its schema;
//! Cozystack generates both from the same annotated `values.yaml`
//! (cozyvalues-gen), each key's value becoming its `default`. [`defaults`]
//! rebuilds the file from the schema at generation time (the index holds
//! the result as a static tree, so a request parses nothing): an object's own `default`, under
//! which each declared property's rebuilt default fills a key the object
//! default leaves out. For v1.6.2 and v1.5.4 this gives each chart's
//! `values.yaml` exactly, but for two deviations that do not change a
//! verdict: Monitoring's `grafana.resources.limits.cpu` and
//! `alerta.resources.limits.cpu` (`1` in the schema, `"1"` in the file; the
//! field takes both) and KubernetesNodes' `kubelet.evictionSoftMemory` and
//! `evictionHardMemory` (defaulted in the schema, commented out in the
//! file).

use serde_json::{Map, Value};

use crate::schemas::Json;

/// The chart's default values, rebuilt from its schema; `None` when the
/// schema defaults nothing.
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
            defaults(&schema).unwrap(),
            json!({
                "replicas": 2,
                "tls": {},
                "postgresql": {"parameters": {"max_connections": "100"}},
                "backup": {"enabled": false, "s3": {"name": ""}},
                "users": {},
                "preset": {"a": 1, "b": 3}
            })
        );
        assert_eq!(defaults(&json!({"type": "string"})), None);
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
        let Json::Object(chart) = crate::generate::leak_json(&chart_value) else {
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
