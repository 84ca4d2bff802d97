//! The chart through Helm itself: `tools/helm-chart` run by the Python of
//! `target/helm-venv` (Helm v4.2.3's SDK, `tools/helm-venv` installs it).
//! Where the venv is missing the suites that need Helm say they are
//! skipped; under CI (`CI=true`) that is a failure.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One rendering: release name, namespace, values, and for an upgrade over
/// a cluster's objects, what that cluster holds.
#[derive(Debug, Clone, Serialize)]
pub struct Render {
    pub name: String,
    pub namespace: String,
    pub values: Value,
    /// Rendered as `helm upgrade` over a cluster that holds these, which
    /// the chart's `lookup` finds (a loopback API server serves them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Vec<ClusterResource>>,
    /// What the cluster serves, as Helm's `.Capabilities.APIVersions`
    /// lists it (`<group>/<version>`, `<group>/<version>/<Kind>`): an
    /// install on that cluster. `None`: offline, as `helm template`.
    #[serde(rename = "apiVersions", skip_serializing_if = "Option::is_none")]
    pub api_versions: Option<Vec<String>>,
}

/// A resource of the cluster an upgrade is rendered over: what discovery
/// says of it, and its objects.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResource {
    pub api_version: String,
    pub kind: String,
    /// The plural.
    pub resource: String,
    pub namespaced: bool,
    pub objects: Vec<Value>,
}

impl Render {
    /// The chart as `deploy/` renders it: release cozystack-policies in
    /// kubewarden.
    pub fn with(values: Value) -> Self {
        Self::in_namespace(values, "kubewarden")
    }

    /// Release cozystack-policies in `namespace`.
    pub fn in_namespace(values: Value, namespace: &str) -> Self {
        Self {
            name: "cozystack-policies".to_owned(),
            namespace: namespace.to_owned(),
            values,
            cluster: None,
            api_versions: None,
        }
    }

    /// The same rendering as an upgrade over a cluster holding `cluster`.
    pub fn upgrading(mut self, cluster: Vec<ClusterResource>) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// The same rendering on a cluster that serves `resources`, and
    /// Kubewarden's API: what `helm install` reads of its discovery.
    pub fn serving(mut self, resources: &[Served]) -> Self {
        let mut versions: Vec<String> = vec!["policies.kubewarden.io/v1".to_owned()];
        for served in resources {
            let group_version = if served.group.is_empty() {
                served.version.clone()
            } else {
                format!("{}/{}", served.group, served.version)
            };
            versions.push(format!("{group_version}/{}", served.kind));
            versions.push(group_version);
        }
        versions.sort();
        versions.dedup();
        self.api_versions = Some(versions);
        self
    }
}

/// A resource a cluster serves, as discovery says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Served {
    pub group: String,
    pub version: String,
    pub resource: String,
    pub kind: String,
    pub namespaced: bool,
    /// What serves it: `kubernetes`, the Package that installs it.
    pub source: String,
}

/// A cluster shape of the matrix (`cozystack_oracle.shapes`): the platform
/// chart of a release rendered with one of its values files and the
/// optional packages switched on or off, and what the cluster then serves.
#[derive(Debug, Clone, Deserialize)]
pub struct Shape {
    /// `v1.6.2/isp-full+bootbox`.
    pub name: String,
    pub release: String,
    pub packages: Vec<String>,
    pub resources: Vec<Served>,
}

/// What Helm made of one rendering: the manifests by template path, or the
/// error (values the schema refuses, a failed template).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rendered {
    Templates(BTreeMap<String, String>),
    Error(String),
}

impl Rendered {
    /// Every document of every template, in template order.
    pub fn documents(&self) -> Result<Vec<Value>, String> {
        match self {
            Rendered::Templates(templates) => {
                let mut all = Vec::new();
                for (path, text) in templates {
                    all.extend(
                        crate::manifests::documents(text).map_err(|e| format!("{path}: {e}"))?,
                    );
                }
                Ok(all)
            }
            Rendered::Error(error) => Err(format!("Helm refused the rendering: {error}")),
        }
    }
}

/// Helm's SDK, ready to run.
#[derive(Debug, Clone)]
pub struct Helm {
    python: PathBuf,
    script: PathBuf,
}

impl Helm {
    /// The venv `tools/helm-venv` made: `Ok(None)` where it is missing
    /// (skipped), an error under CI.
    pub fn find() -> Result<Option<Helm>, String> {
        let root = crate::root();
        let python = root.join("target/helm-venv/bin/python");
        if python.is_file() {
            return Ok(Some(Helm {
                python,
                script: root.join("tools/helm-chart"),
            }));
        }
        if std::env::var("CI").is_ok_and(|ci| ci == "true") {
            return Err(format!(
                "{} is missing, and under CI that is a failure: run tools/helm-venv",
                python.display()
            ));
        }
        Ok(None)
    }

    fn run(&self, args: &[&str], input: &[u8]) -> Result<String, String> {
        let mut child = Command::new(&self.python)
            .arg(&self.script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", self.python.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(input)
                .map_err(|e| format!("writing to tools/helm-chart: {e}"))?;
        }
        let output = child
            .wait_with_output()
            .map_err(|e| format!("tools/helm-chart: {e}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() {
            return Err(format!(
                "tools/helm-chart {}: {}\n{stdout}{}",
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        Ok(stdout)
    }

    /// Renders each request, in one run of Helm.
    pub fn render(&self, requests: &[Render]) -> Result<Vec<Rendered>, String> {
        let input = serde_json::to_vec(requests).map_err(|e| e.to_string())?;
        let output = self.run(&["render"], &input)?;
        serde_json::from_str(&output).map_err(|e| format!("tools/helm-chart render: {e}"))
    }

    /// `template` executed on `object` by Go's text/template, as
    /// `kubectl get -o go-template=<template>` executes it.
    pub fn go_template(&self, template: &str, object: &Value) -> Result<String, String> {
        let input = serde_json::json!({"template": template, "object": object});
        self.run(&["go-template"], input.to_string().as_bytes())
    }

    /// The cluster shapes of the matrix, from the platform charts of the
    /// fact base (`../shared/data`).
    pub fn shapes(&self) -> Result<Vec<Shape>, String> {
        let output = self.run(&["shapes"], b"")?;
        serde_json::from_str(&output).map_err(|e| format!("tools/helm-chart shapes: {e}"))
    }

    /// `helm lint --strict`: its findings when there are any.
    pub fn lint(&self) -> Result<(), String> {
        self.run(&["lint"], b"").map(drop)
    }

    /// Whether `deploy/bundle/` is the chart's rendering with its defaults.
    pub fn deploy_is_rendered(&self) -> Result<(), String> {
        self.run(&["deploy", "--check"], b"").map(drop)
    }

    /// `helm package` into `dir`: the archive.
    pub fn package(&self, dir: &Path) -> Result<PathBuf, String> {
        let dir = dir.to_string_lossy();
        Ok(PathBuf::from(self.run(&["package", &dir], b"")?.trim()))
    }

    /// `helm pull oci://<reference>` (`registry/path/name:version`) into
    /// `dir`: the archive.
    pub fn pull(&self, reference: &str, dir: &Path) -> Result<PathBuf, String> {
        let dir = dir.to_string_lossy();
        Ok(PathBuf::from(
            self.run(&["pull", reference, &dir], b"")?.trim(),
        ))
    }
}
