//! The schema the cluster applies to a kind: the `openAPISchema` of the
//! ApplicationDefinition that serves it (`cozystack.io/v1alpha1`,
//! cluster-scoped, `spec.application.{kind,openAPISchema}`), which
//! cozystack-api serves the kind from and which embeds the chart's
//! `values.schema.json` (so a release the bundle was not built with, or an
//! application an operator defined, is judged by the schema its chart
//! validates).
//!
//! Two reads: the definitions, masked to their names and kinds (the same
//! request every time, which policy-server answers from one watch), then
//! the one that serves the kind, masked to its schema. Any failure is the
//! caller's to report; it never passes for a schema that accepts all.

use serde_json::Value;
use shared::lookup::{Cluster, GetResource, ListAll, LookupError, list_items, object, text};
use tree::build::Arena;

use crate::schemas::App;

const API_VERSION: &str = "cozystack.io/v1alpha1";
const KIND: &str = "ApplicationDefinition";
const KIND_FIELD: &str = "spec.application.kind";
const PLURAL_FIELD: &str = "spec.application.plural";
const NAME_FIELD: &str = "metadata.name";
const SCHEMA_FIELD: &str = "spec.application.openAPISchema";

/// The ApplicationDefinition that serves a kind.
#[derive(Debug)]
pub struct Definition {
    /// Its name (`postgres`).
    pub name: String,
    /// `spec.application.plural`.
    pub plural: String,
    /// Its schema, parsed.
    pub schema: Value,
}

/// The definition that serves `kind`, `None` when none does.
pub fn definition(cluster: &dyn Cluster, kind: &str) -> Result<Option<Definition>, LookupError> {
    let listed = cluster.list_all(&ListAll {
        api_version: API_VERSION,
        kind: KIND,
        label_selector: None,
        field_selector: None,
        field_masks: Some(&[NAME_FIELD, KIND_FIELD, PLURAL_FIELD]),
    })?;
    let mut found = None;
    for definition in list_items(&listed)? {
        if text(&definition, KIND_FIELD)? == Some(kind) {
            let name = text(&definition, NAME_FIELD)?
                .unwrap_or_default()
                .to_owned();
            let plural = text(&definition, PLURAL_FIELD)?
                .unwrap_or_default()
                .to_owned();
            found = Some((name, plural));
            break;
        }
    }
    let Some((name, plural)) = found else {
        return Ok(None);
    };
    let answer = cluster.get(&GetResource {
        api_version: API_VERSION,
        kind: KIND,
        name: &name,
        namespace: None,
        disable_cache: false,
        field_masks: Some(&[SCHEMA_FIELD]),
    })?;
    let definition = object(&answer)?;
    let schema = text(&definition, SCHEMA_FIELD)?.ok_or_else(|| {
        LookupError(format!(
            "ApplicationDefinition {name} has no {SCHEMA_FIELD}"
        ))
    })?;
    let schema = serde_json::from_str(schema).map_err(|e| {
        LookupError(format!(
            "ApplicationDefinition {name}: {SCHEMA_FIELD} is not JSON: {e}"
        ))
    })?;
    Ok(Some(Definition {
        name,
        plural,
        schema,
    }))
}

/// What a kind's [`App`] is built from when the cluster's schema judges
/// it: the definition, the chart defaults its schema implies and the
/// fields it makes immutable, all owned by the request.
#[derive(Debug)]
pub struct Parts {
    pub definition: Definition,
    pub defaults: Value,
    pub immutable: Vec<String>,
}

impl Parts {
    /// The parts of `definition`'s schema, its annotations left out as
    /// `make schemas` leaves them out of the built-in ones; `Err` names the
    /// first keyword the validator does not implement.
    pub fn of(mut definition: Definition) -> Result<Parts, String> {
        let immutable = tree::immutable_paths(&definition.schema);
        definition.schema = tree::strip(&definition.schema);
        if let Some((path, what)) = tree::unsupported(&definition.schema) {
            return Err(format!(
                "its schema has {what} at {}, which this policy does not implement",
                if path.is_empty() { "/" } else { &path }
            ));
        }
        Ok(Parts {
            defaults: tree::defaults(&definition.schema).unwrap_or(Value::Null),
            immutable,
            definition,
        })
    }

    /// `kind` as these parts describe it, in `arena`, with what the
    /// templates of the release `templates` add (its nulls and addons).
    pub fn app<'a>(
        &'a self,
        arena: &'a Arena,
        kind: &'a str,
        immutable: &'a [&'a str],
        templates: Option<&App<'static>>,
    ) -> App<'a> {
        let defaults = match tree::build::json(arena, &self.defaults) {
            tree::Json::Object(members) => members,
            _ => &[],
        };
        App {
            kind,
            plural: &self.definition.plural,
            chart: &self.definition.name,
            schema: arena.alloc(tree::build::schema(arena, &self.definition.schema)),
            defaults,
            immutable,
            nulls: templates.map_or(&[], |app| app.nulls),
            addons: templates.map_or(&[], |app| app.addons),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::lookup::{GET, LIST_ALL};

    /// Answers the definitions' list and the get of one, counting calls.
    struct Definitions {
        schema: &'static str,
        calls: std::cell::Cell<u32>,
    }

    impl Cluster for Definitions {
        fn call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, LookupError> {
            self.calls.set(self.calls.get() + 1);
            let request: Value = serde_json::from_slice(request).unwrap();
            assert_eq!(request["kind"], "ApplicationDefinition");
            match operation {
                LIST_ALL => {
                    assert_eq!(
                        request["field_masks"],
                        serde_json::json!([
                            "metadata.name",
                            "spec.application.kind",
                            "spec.application.plural"
                        ])
                    );
                    Ok(br#"{"items": [
                        {"metadata": {"name": "postgres"}, "spec": {"application": {"kind": "Postgres", "plural": "postgreses"}}},
                        {"metadata": {"name": "my-db"}, "spec": {"application": {"kind": "MyDB", "plural": "mydbs"}}}]}"#
                        .to_vec())
                }
                GET => {
                    assert_eq!(request["name"], "my-db");
                    let object = serde_json::json!({"spec": {"application": {"openAPISchema": self.schema}}});
                    Ok(object.to_string().into_bytes())
                }
                other => panic!("unexpected {other}"),
            }
        }
    }

    #[test]
    fn the_definition_of_a_kind_is_listed_then_read() {
        let cluster = Definitions {
            schema: r#"{"type": "object", "title": "Chart Values", "properties": {"size": {"type": "integer", "default": 1, "description": "d",
                "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}"#,
            calls: std::cell::Cell::new(0),
        };
        let definition = definition(&cluster, "MyDB").unwrap().unwrap();
        assert_eq!(
            (definition.name.as_str(), definition.plural.as_str()),
            ("my-db", "mydbs")
        );
        assert_eq!(cluster.calls.get(), 2);
        let parts = Parts::of(definition).unwrap();
        assert_eq!(parts.defaults, serde_json::json!({"size": 1}));
        assert_eq!(parts.immutable, ["spec.size"]);
        let arena = Arena::new();
        let app = parts.app(&arena, "MyDB", &[], None);
        assert!(app.schema.property("size").is_some());
        assert_eq!(app.defaults.len(), 1);
        assert!(definition_of(&cluster, "Nothing").is_none());
    }

    fn definition_of(cluster: &dyn Cluster, kind: &str) -> Option<Definition> {
        definition(cluster, kind).unwrap()
    }

    #[test]
    fn a_schema_the_validator_cannot_apply_is_refused_by_keyword() {
        let cluster = Definitions {
            schema: r#"{"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}}"#,
            calls: std::cell::Cell::new(0),
        };
        let read = definition(&cluster, "MyDB").unwrap().unwrap();
        assert_eq!(
            Parts::of(read).unwrap_err(),
            "its schema has keyword minimum at /properties/size/minimum, which this policy does not implement"
        );
        let broken = Definitions {
            schema: "{not json",
            calls: std::cell::Cell::new(0),
        };
        assert!(definition(&broken, "MyDB").unwrap_err().0.starts_with(
            "ApplicationDefinition my-db: spec.application.openAPISchema is not JSON"
        ));
    }
}
