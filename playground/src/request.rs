//! The AdmissionRequest the page's editors describe.
//!
//! A person pastes a manifest, not a request: what the request editor
//! leaves out (kind, resource, name, namespace) is taken from the object as
//! the API server would fill it, so a pasted manifest is judged as its
//! CREATE, UPDATE or DELETE would be.

use serde_json::{Map, Value, json};

/// The operations the page offers, as the request spells them.
const OPERATIONS: &[&str] = &["CREATE", "UPDATE", "DELETE", "CONNECT"];

/// The request for `operation` over the objects, on top of `header` (the
/// request editor's map, if any).
pub fn build(
    operation: &str,
    header: Option<Value>,
    object: Option<Value>,
    old_object: Option<Value>,
) -> Result<Value, String> {
    if !OPERATIONS.contains(&operation) {
        return Err(format!(
            "operation {operation:?}: one of {}",
            OPERATIONS.join(", ")
        ));
    }
    let mut request = match header {
        None => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(format!(
                "the request editor holds {}, not a map of request fields (userInfo, kind, name...)",
                shared::Kind::of(&other).described()
            ));
        }
    };
    // A DELETE carries only the stored object; a CREATE only the new one.
    let object = (operation != "DELETE").then_some(object).flatten();
    let old_object = (operation != "CREATE").then_some(old_object).flatten();
    let subject = object.as_ref().or(old_object.as_ref());
    if let Some(subject) = subject {
        fill_from(&mut request, subject);
    }
    request
        .entry("uid")
        .or_insert_with(|| json!("00000000-0000-4000-8000-00000000beef"));
    request.insert("operation".to_owned(), json!(operation));
    request.insert("object".to_owned(), object.unwrap_or(Value::Null));
    request.insert("oldObject".to_owned(), old_object.unwrap_or(Value::Null));
    Ok(Value::Object(request))
}

/// Fills the header fields the request editor does not give from the
/// object, as the API server would ([`admission::object_fields`]).
fn fill_from(request: &mut Map<String, Value>, subject: &Value) {
    for (field, value) in admission::object_fields(subject) {
        request.entry(field).or_insert(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_filled_from_the_object() {
        let object = json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
            "metadata": {"name": "db", "namespace": "tenant-a"}});
        let request = build("CREATE", None, Some(object.clone()), Some(json!({}))).unwrap();
        assert_eq!(request["kind"]["group"], "apps.cozystack.io");
        assert_eq!(request["kind"]["version"], "v1alpha1");
        assert_eq!(request["resource"]["resource"], "postgreses");
        assert_eq!(request["name"], "db");
        assert_eq!(request["namespace"], "tenant-a");
        assert_eq!(request["object"], object);
        assert_eq!(
            request["oldObject"],
            Value::Null,
            "a CREATE has no old object"
        );
    }

    #[test]
    fn the_request_editor_wins_and_delete_reads_the_old_object() {
        let old = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
        let header = json!({"name": "given", "userInfo": {"username": "alice"}});
        let request = build("DELETE", Some(header), Some(json!({"a": 1})), Some(old)).unwrap();
        assert_eq!(request["name"], "given");
        assert_eq!(request["kind"]["group"], "");
        assert_eq!(request["resource"]["resource"], "configmaps");
        assert_eq!(request["object"], Value::Null, "a DELETE has no new object");
        assert_eq!(request["userInfo"]["username"], "alice");
    }

    #[test]
    fn bad_operations_and_headers_are_refused() {
        assert!(
            build("PATCH", None, None, None)
                .unwrap_err()
                .contains("CREATE")
        );
        let error = build("CREATE", Some(json!([1])), None, None).unwrap_err();
        assert!(error.contains("not a map"), "{error}");
    }

    #[test]
    fn an_application_is_served_under_its_definitions_plural() {
        let object = json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "ExternalDNS",
            "metadata": {"name": "dns", "namespace": "tenant-root"}});
        let request = build("CREATE", None, Some(object), None).unwrap();
        assert_eq!(request["resource"]["resource"], "externaldns");
    }
}
