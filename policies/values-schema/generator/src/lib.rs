//! `make schemas`: values-schema's committed inputs from Cozystack's
//! release files. The policy's build script turns what this writes into
//! the trees its module embeds (`values-schema-tree`'s `write`); this crate
//! is the only one that reads the release files, so a clean clone builds
//! and tests the policy without them.
//!
//! Input: every release of `releases/` (the `releases` crate), and of
//! each its data folder (`../shared/data/cozystack-<version>/` from the
//! repository root): `apps/<group>-<chart>/values.schema.json` (the chart's
//! schema, `packages/<group>/<chart>/values.schema.json` upstream),
//! `application-definitions/<name>.yaml` (the ApplicationDefinitions that
//! cozystack-api serves the kinds from), and the addon charts of
//! [`ADDONS`] under the `charts/` of its system charts' folder. A release
//! whose charts are another's (`sameChartsAs`) is that release's in the
//! index. A kind belongs to the chart whose schema
//! equals the definition's `spec.application.openAPISchema` (the
//! definitions embed their chart's schema verbatim), so no name mapping is
//! guessed (`VirtualPrivateCloud` is `apps-vpc`). A chart no definition
//! embeds serves no kind and is not shipped (v1.6.2 and v1.5.4:
//! `extra-gateway`); a definition no chart matches is an error.
//!
//! Output, in the policy's `schemas/`: `<version>/<group>-<chart>.json`,
//! each shipped chart's schema, written once under the newest release with
//! it (the index names that file for every release with the same schema),
//! without annotations (`description`,
//! `title`, `examples`, `$comment`, `readOnly`, `writeOnly`, `deprecated`
//! and every `x-` extension but `x-kubernetes-preserve-unknown-fields`,
//! which marks free-form maps) in canonical form; and `index.json`, the
//! kinds, plurals and charts, the fields whose `x-kubernetes-validations`
//! say `self == oldSelf` (the charts' `@immutable` storage classes, listed
//! before the extension is dropped) and the addons' closed objects.
//! `default` and every validating keyword are kept; a validating keyword
//! (or a `pattern`) the policy's validator does not implement is an error
//! naming the chart, the keyword and its path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use reading::yaml::{self, Limit};
use serde_json::Value;
use tree::write::{Index, IndexAddon, IndexApp, IndexClosed, IndexRelease, canonical, supported};
use tree::{immutable_paths, strip};

/// The addons a user's values reach verbatim, with the block their chart
/// validates. Of the Kubernetes addons, only cert-manager's chart closes
/// its objects; velero's, cilium's, flux-operator's and flux-instance's
/// schemas allow any key (`apps/kubernetes/templates/helmreleases/`).
pub const ADDONS: &[(&str, &[&str], &str)] = &[(
    "Kubernetes",
    &["addons", "certManager", "valuesOverride", "cert-manager"],
    "system/cert-manager/charts/cert-manager",
)];

/// One chart's schema file.
#[derive(Debug, Clone)]
pub struct Chart {
    /// The directory under `apps/`: `<group>-<chart>` (`apps-postgres`).
    pub dir: String,
    /// The text of `values.schema.json`.
    pub schema: String,
}

/// One ApplicationDefinition.
#[derive(Debug, Clone)]
pub struct Definition {
    /// The file it was read from, for messages.
    pub file: String,
    /// `spec.application.kind`.
    pub kind: String,
    /// `spec.application.plural`.
    pub plural: String,
    /// `spec.application.openAPISchema`.
    pub schema: String,
}

/// An addon release a chart renders from a user's `valuesOverride`.
#[derive(Debug, Clone)]
pub struct AddonInput {
    pub kind: String,
    /// Below `spec`: the block the addon's chart validates.
    pub values: Vec<String>,
    /// The chart, under the release's `charts/`.
    pub chart: String,
    /// Its `values.schema.json`.
    pub schema: String,
}

/// One Cozystack release's inputs.
#[derive(Debug, Clone)]
pub struct Release {
    /// `v1.6.2`.
    pub version: String,
    /// The release whose charts these are; the rest is then empty.
    pub same_as: Option<String>,
    pub charts: Vec<Chart>,
    /// In file-name order.
    pub definitions: Vec<Definition>,
    /// The addon charts whose schemas refuse keys they do not declare.
    pub addons: Vec<AddonInput>,
}

/// Reads one release from `dir` (`.../cozystack-v1.6.2`), its addon charts
/// from `system` (the folder whose `charts/system/` renders its nested
/// releases).
pub fn read_release(dir: &Path, system: &Path, version: &str) -> Result<Release, String> {
    let read_dir = |sub: &str| -> Result<Vec<PathBuf>, String> {
        let path = dir.join(sub);
        let mut entries: Vec<_> = std::fs::read_dir(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .collect();
        entries.sort();
        Ok(entries)
    };
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let file_name = |path: &Path| {
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| format!("{} has no file name", path.display()))
    };
    let mut charts = Vec::new();
    for chart_dir in read_dir("apps")? {
        charts.push(Chart {
            dir: file_name(&chart_dir)?,
            schema: read(&chart_dir.join("values.schema.json"))?,
        });
    }
    let mut definitions = Vec::new();
    for file in read_dir("application-definitions")? {
        if file.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let document: Value = yaml::document(&read(&file)?, Limit::Cases)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        let field = |name: &str| {
            document
                .pointer(&format!("/spec/application/{name}"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("{}: no spec.application.{name}", file.display()))
        };
        definitions.push(Definition {
            file: file_name(&file)?,
            kind: field("kind")?,
            plural: field("plural")?,
            schema: field("openAPISchema")?,
        });
    }
    let mut addons = Vec::new();
    for (kind, values, chart) in ADDONS {
        let file = system.join("charts").join(chart).join("values.schema.json");
        if file.is_file() {
            addons.push(AddonInput {
                kind: (*kind).to_owned(),
                values: values.iter().map(|v| (*v).to_owned()).collect(),
                chart: (*chart).to_owned(),
                schema: read(&file)?,
            });
        }
    }
    Ok(Release {
        version: version.to_owned(),
        same_as: None,
        charts,
        definitions,
        addons,
    })
}

/// The objects of `schema` that refuse keys they do not declare
/// (`additionalProperties: false`), by path from its root, with their
/// declared keys sorted; local `$ref`s (`#/$defs/…`, `#/definitions/…`)
/// resolved.
pub fn closed_objects(schema: &Value) -> Vec<IndexClosed> {
    fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
        for _ in 0..16 {
            let Some(target) = node.get("$ref").and_then(Value::as_str) else {
                break;
            };
            match target.strip_prefix('#').and_then(|p| root.pointer(p)) {
                Some(found) => node = found,
                None => break,
            }
        }
        node
    }
    fn walk(root: &Value, node: &Value, path: &mut Vec<String>, out: &mut Vec<IndexClosed>) {
        let node = resolve(root, node);
        if path.len() > 12 {
            return;
        }
        let properties = node.get("properties").and_then(Value::as_object);
        if node.get("additionalProperties") == Some(&Value::Bool(false)) {
            let mut keys: Vec<String> = properties
                .into_iter()
                .flat_map(|p| p.keys().cloned())
                .collect();
            keys.sort();
            out.push(IndexClosed {
                path: path.clone(),
                keys,
            });
        }
        for (name, sub) in properties.into_iter().flatten() {
            path.push(name.clone());
            walk(root, sub, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(schema, schema, &mut Vec::new(), &mut out);
    out
}

/// Every file `make schemas` writes, as `(path relative to the policy's
/// `schemas/`, contents)`, sorted by path.
pub fn generate(releases: &[Release]) -> Result<Vec<(String, String)>, String> {
    let mut files = BTreeMap::new();
    // `(chart, canonical schema)` -> the file that holds it.
    let mut written: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut index = Index {
        releases: Vec::new(),
    };
    for release in releases {
        if let Some(same_as) = &release.same_as {
            index.releases.push(IndexRelease {
                version: release.version.clone(),
                same_as: Some(same_as.clone()),
                unshipped: Vec::new(),
                apps: Vec::new(),
            });
            continue;
        }
        let mut parsed = Vec::new();
        for chart in &release.charts {
            let schema: Value = serde_json::from_str(&chart.schema).map_err(|e| {
                format!("{} {}/values.schema.json: {e}", release.version, chart.dir)
            })?;
            parsed.push((chart, schema));
        }
        let mut apps: Vec<IndexApp> = Vec::new();
        for definition in &release.definitions {
            let schema: Value = serde_json::from_str(&definition.schema).map_err(|e| {
                format!(
                    "{} {}: openAPISchema: {e}",
                    release.version, definition.file
                )
            })?;
            let matching: Vec<&(&Chart, Value)> =
                parsed.iter().filter(|(_, s)| *s == schema).collect();
            let [(chart, chart_schema)] = matching.as_slice() else {
                return Err(format!(
                    "{} {}: the openAPISchema of {} equals {} chart schemas, expected exactly one",
                    release.version,
                    definition.file,
                    definition.kind,
                    matching.len()
                ));
            };
            if apps.iter().any(|app| app.kind == definition.kind) {
                return Err(format!(
                    "{}: kind {} defined twice",
                    release.version, definition.kind
                ));
            }
            let stripped = strip(chart_schema);
            supported(&release.version, &chart.dir, &definition.kind, &stripped)?;
            let text = canonical(&stripped);
            let file = written
                .entry((chart.dir.clone(), text.clone()))
                .or_insert_with(|| {
                    let file = format!("{}/{}.json", release.version, chart.dir);
                    files.insert(file.clone(), text);
                    file
                })
                .clone();
            let mut addons = Vec::new();
            for addon in release.addons.iter().filter(|a| a.kind == definition.kind) {
                let schema: Value = serde_json::from_str(&addon.schema)
                    .map_err(|e| format!("{}/values.schema.json: {e}", addon.chart))?;
                addons.push(IndexAddon {
                    values: addon.values.clone(),
                    chart: addon.chart.clone(),
                    closed: closed_objects(&schema),
                });
            }
            apps.push(IndexApp {
                kind: definition.kind.clone(),
                plural: definition.plural.clone(),
                chart: chart.dir.clone(),
                schema: file,
                immutable: immutable_paths(chart_schema),
                addons,
            });
        }
        let unshipped = parsed
            .iter()
            .filter(|(chart, _)| !apps.iter().any(|app| app.chart == chart.dir))
            .map(|(chart, _)| chart.dir.clone())
            .collect();
        index.releases.push(IndexRelease {
            version: release.version.clone(),
            same_as: None,
            unshipped,
            apps,
        });
    }
    let index = serde_json::to_string_pretty(&index).map_err(|e| e.to_string())? + "\n";
    files.insert(tree::write::INDEX.to_owned(), index);
    Ok(files.into_iter().collect())
}

/// Reads every release of `root`'s `releases/` from its folder below
/// `data` (`../shared/data`) and generates the files.
pub fn generate_from(root: &Path, data: &Path) -> Result<Vec<(String, String)>, String> {
    let entries = releases::read_all(root)?;
    let mut out = Vec::new();
    for entry in &entries {
        match (&entry.same_charts_as, &entry.charts) {
            (Some(same_as), _) => out.push(Release {
                version: entry.version.clone(),
                same_as: Some(same_as.clone()),
                charts: Vec::new(),
                definitions: Vec::new(),
                addons: Vec::new(),
            }),
            (None, Some(charts)) => out.push(read_release(
                &data.join(&charts.data),
                &data.join(&charts.system_charts),
                &entry.version,
            )?),
            (None, None) => return Err(format!("release {} has no charts", entry.version)),
        }
    }
    generate(&out)
}

/// Writes the files of [`generate_from`] into `schemas` (the policy's
/// `schemas/`) and removes the ones it no longer makes; the bytes written.
pub fn write(root: &Path, data: &Path, schemas: &Path) -> Result<usize, String> {
    let files = generate_from(root, data)?;
    for stale in stale(schemas, &files) {
        std::fs::remove_file(schemas.join(&stale))
            .map_err(|e| format!("cannot remove {stale}: {e}"))?;
    }
    let mut bytes = 0;
    for (path, contents) in &files {
        let target = schemas.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&target, contents).map_err(|e| format!("cannot write {path}: {e}"))?;
        bytes += contents.len();
    }
    Ok(bytes)
}

/// The files under `schemas` (the policy's `schemas/`) that `make schemas`
/// writes and would not write from `files` any more: every `.json` but the
/// oracle's `nulls.json`, which it reads.
pub fn stale(schemas: &Path, files: &[(String, String)]) -> Vec<String> {
    let mut stale = Vec::new();
    for version in std::fs::read_dir(schemas).into_iter().flatten().flatten() {
        if !version.path().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(version.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let relative = format!(
                "{}/{}",
                version.file_name().to_string_lossy(),
                file.file_name().to_string_lossy()
            );
            if file.file_name() != tree::write::NULLS
                && !files.iter().any(|(path, _)| *path == relative)
            {
                stale.push(relative);
            }
        }
    }
    stale.sort();
    stale
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strips_annotations_but_not_names_or_data() {
        let schema = json!({
            "title": "Chart Values",
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "a field named description"},
                "size": {"default": "10Gi", "x-kubernetes-int-or-string": true,
                         "x-kubernetes-validations": [{"rule": "self == oldSelf"}]},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "list": {"type": "array", "items": {"type": "string", "title": "x"}},
                "either": {"anyOf": [{"type": "integer", "$comment": "c"}]}
            },
            "default": {"description": "data"}
        });
        assert_eq!(
            strip(&schema),
            json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string"},
                    "size": {"default": "10Gi"},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "list": {"type": "array", "items": {"type": "string"}},
                    "either": {"anyOf": [{"type": "integer"}]}
                },
                "default": {"description": "data"}
            })
        );
        assert_eq!(immutable_paths(&schema), vec!["spec.size".to_owned()]);
    }

    #[test]
    fn kinds_follow_the_embedded_schema() {
        let release = Release {
            version: "v9.9.9".to_owned(),
            same_as: None,
            charts: vec![
                Chart {
                    dir: "apps-vpc".to_owned(),
                    schema: r#"{"type":"object","properties":{"subnets":{"type":"object","description":"d"}}}"#
                        .to_owned(),
                },
                Chart {
                    dir: "extra-gateway".to_owned(),
                    schema: r#"{"type":"object"}"#.to_owned(),
                },
            ],
            definitions: vec![Definition {
                file: "virtualprivatecloud.yaml".to_owned(),
                kind: "VirtualPrivateCloud".to_owned(),
                plural: "virtualprivateclouds".to_owned(),
                schema: r#"{"properties":{"subnets":{"description":"d","type":"object"}},"type":"object"}"#
                    .to_owned(),
            }],
            addons: Vec::new(),
        };
        let files = generate(std::slice::from_ref(&release)).unwrap();
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["index.json", "v9.9.9/apps-vpc.json"]);
        assert_eq!(
            files[1].1,
            "{\"properties\":{\"subnets\":{\"type\":\"object\"}},\"type\":\"object\"}\n"
        );
        let index: Index = serde_json::from_str(&files[0].1).unwrap();
        let [release_index] = index.releases.as_slice() else {
            panic!("one release: {index:?}");
        };
        assert_eq!(release_index.unshipped, ["extra-gateway"]);
        assert_eq!(release_index.apps[0].kind, "VirtualPrivateCloud");
        assert_eq!(release_index.apps[0].chart, "apps-vpc");

        let mut unsupported = release.clone();
        unsupported.charts[0].schema =
            r#"{"type":"object","properties":{"subnets":{"type":"object","minProperties":1}}}"#
                .to_owned();
        unsupported.definitions[0].schema = unsupported.charts[0].schema.clone();
        let error = generate(&[unsupported]).unwrap_err();
        assert!(
            error.contains("apps-vpc")
                && error.contains("keyword minProperties at /properties/subnets/minProperties"),
            "{error}"
        );
        let mut broken = release;
        broken.charts.truncate(0);
        assert!(
            generate(&[broken])
                .unwrap_err()
                .contains("equals 0 chart schemas")
        );
    }

    #[test]
    fn closed_objects_follow_local_refs() {
        let schema = json!({
            "$defs": {"tls": {"type": "object", "additionalProperties": false,
                              "properties": {"b": {}, "a": {}}}},
            "properties": {"tls": {"$ref": "#/$defs/tls"}, "open": {"type": "object"}}
        });
        assert_eq!(
            closed_objects(&schema),
            [IndexClosed {
                path: vec!["tls".to_owned()],
                keys: vec!["a".to_owned(), "b".to_owned()],
            }]
        );
    }
}
