//! Kubewarden's CRDs (`policies.kubewarden.io`): Kubewarden 1.35's, in the
//! team's fact base `../shared/data/kubewarden-v1.35.0/crds` (or
//! `KUBEWARDEN_CRDS`), and 1.37.2's PolicyServer and ClusterAdmissionPolicy
//! (`tests/data/kubewarden-crds-v1.37.2`), as the API server checks an
//! object against them:
//! each served version's `openAPIV3Schema`, with every object closed to the
//! fields it declares (the API server prunes the others without a word,
//! unless `x-kubernetes-preserve-unknown-fields` keeps them).

use std::collections::BTreeMap;
use std::path::PathBuf;

use libtest_mimic::Failed;
use reading::yaml::{self, Limit};
use serde_json::Value;

use crate::{Bundle, Rendering};

/// The compiled schemas, by `apiVersion` and `kind`.
pub struct Crds {
    schemas: boon::Schemas,
    by_kind: BTreeMap<(String, String), boon::SchemaIndex>,
}

impl Crds {
    /// The CRDs of the fact base: `Ok(None)` where it is missing (the check
    /// says it is skipped), an error under CI.
    pub fn find() -> Result<Option<Crds>, String> {
        let dir = std::env::var_os("KUBEWARDEN_CRDS").map_or_else(
            || e2e::root().join("../shared/data/kubewarden-v1.35.0/crds"),
            PathBuf::from,
        );
        Self::read(dir)
    }

    /// Kubewarden 1.37.2's, which declare the PolicyServer's `labels`,
    /// ports and `namespacedPoliciesCapabilities`.
    pub fn newest() -> Result<Crds, String> {
        Self::read(e2e::root().join("e2e/tests/data/kubewarden-crds-v1.37.2"))?
            .ok_or_else(|| "e2e/tests/data/kubewarden-crds-v1.37.2 is missing".to_owned())
    }

    fn read(dir: PathBuf) -> Result<Option<Crds>, String> {
        if !dir.is_dir() {
            if std::env::var("CI").is_ok_and(|ci| ci == "true") {
                return Err(format!(
                    "{} is missing, and under CI that is a failure",
                    dir.display()
                ));
            }
            return Ok(None);
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| {
                path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with("policies.kubewarden.io_") && n.ends_with(".yaml")
                })
            })
            .collect();
        files.sort();
        let mut compiler = boon::Compiler::new();
        let mut locations = Vec::new();
        for file in &files {
            let text =
                std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
            let crd: Value = yaml::document(&text, Limit::Cases)
                .map_err(|e| format!("{}: {e}", file.display()))?;
            let group = crd
                .pointer("/spec/group")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let kind = crd
                .pointer("/spec/names/kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            for version in crd
                .pointer("/spec/versions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = version["name"].as_str().unwrap_or_default();
                let Some(schema) = version.pointer("/schema/openAPIV3Schema") else {
                    continue;
                };
                let mut schema = schema.clone();
                close(&mut schema);
                let location = format!("crd:{group}/{name}/{kind}");
                compiler
                    .add_resource(&location, schema)
                    .map_err(|e| format!("{}: {e}", file.display()))?;
                locations.push(((format!("{group}/{name}"), kind.to_owned()), location));
            }
        }
        let mut schemas = boon::Schemas::new();
        let mut by_kind = BTreeMap::new();
        for (key, location) in locations {
            let index = compiler
                .compile(&location, &mut schemas)
                .map_err(|e| format!("{location}: {e}"))?;
            by_kind.insert(key, index);
        }
        if by_kind.is_empty() {
            return Err(format!("{}: no Kubewarden CRD", dir.display()));
        }
        Ok(Some(Crds { schemas, by_kind }))
    }

    /// Whether `document` was checked (it is of a kind the CRDs define),
    /// or what its CRD refuses.
    pub fn check(&self, document: &Value) -> Result<bool, String> {
        let text = |key: &str| document[key].as_str().unwrap_or_default().to_owned();
        let Some(index) = self.by_kind.get(&(text("apiVersion"), text("kind"))) else {
            return Ok(false);
        };
        self.schemas.validate(document, *index).map_err(|error| {
            format!(
                "{} {}: its CRD refuses it: {error:#}",
                text("kind"),
                document
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            )
        })?;
        Ok(true)
    }
}

/// Every object schema that declares properties refuses others, as the
/// API server's pruning drops them, unless the CRD keeps unknown fields.
fn close(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let keeps = map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
            if map.contains_key("properties") && !map.contains_key("additionalProperties") && !keeps
            {
                map.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            map.values_mut().for_each(close);
        }
        Value::Array(items) => items.iter_mut().for_each(close),
        _ => {}
    }
}

/// Every Kubewarden object of a rendering satisfies Kubewarden's own CRD
/// (its openAPIV3Schema, each object closed to the fields it declares, as
/// the API server prunes the rest); the types of `e2e::manifests` already
/// read every object whole.
pub(crate) fn typed_against_the_crds(bundle: &Bundle, rendering: &Rendering) -> Result<(), Failed> {
    let documents = rendering.documents.as_ref().map_err(Clone::clone)?;
    // `every-value` sets the PolicyServer fields 1.37 added (labels, ports,
    // namespacedPoliciesCapabilities): Kubewarden 1.35 would prune them.
    let mut releases = vec![("1.37.2", &bundle.newest_crds)];
    match &bundle.crds {
        Some(crds) if rendering.name != "every-value" => releases.push(("1.35", crds)),
        Some(_) => {}
        None => println!(
            "{}: Kubewarden 1.35's CRDs are missing: that half is SKIPPED",
            rendering.name
        ),
    }
    let mut problems = Vec::new();
    for (release, crds) in releases {
        let mut checked = 0;
        for document in documents {
            match crds.check(document) {
                Ok(true) => checked += 1,
                Ok(false) => {}
                Err(error) => problems.push(format!("Kubewarden {release}: {error}")),
            }
        }
        if checked == 0 {
            problems.push(format!(
                "Kubewarden {release}: no object checked against a CRD"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}
