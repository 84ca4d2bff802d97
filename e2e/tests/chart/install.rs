//! `install/…`: the Flux HelmRelease and the Cozystack PackageSource and
//! Package of `charts/install/`, typed, pointing at the published chart,
//! their values rendered by Helm, and shown verbatim in docs/install.md.

use e2e::helm::{Helm, Render, Rendered};
use libtest_mimic::Failed;
use serde_json::{Value, json};

use crate::{Bundle, field, read, text};

pub(crate) const CHART_REPOSITORY: &str =
    "ghcr.io/cozystack/cozystack-policies/charts/cozystack-policies";

pub(crate) const HELM_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";

/// Only these keys (dotted paths) may appear: the fields of the Go types
/// the objects are decoded into (Flux's source and helm APIs, Cozystack's
/// `api/v1alpha1/packagesource_types.go` and `package_types.go` of v1.6.2),
/// so a misspelt one fails here.
pub(crate) fn only_fields(value: &Value, allowed: &[&str]) -> Result<(), String> {
    /// Dotted paths, list indices as `*`; below a `values` key anything
    /// goes (the chart's values, checked by Helm).
    fn walk(value: &Value, path: &str, allowed: &[&str], out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    let here = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    if !allowed.contains(&here.as_str()) {
                        out.push(here);
                    } else if !here.ends_with("values") {
                        walk(value, &here, allowed, out);
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    walk(item, &format!("{path}.*"), allowed, out);
                }
            }
            _ => {}
        }
    }
    let mut unknown = Vec::new();
    walk(value, "", allowed, &mut unknown);
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}: unknown fields {unknown:?}",
            text(value, "/kind")
        ))
    }
}

pub(crate) const OCI_REPOSITORY_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "metadata.name",
    "metadata.namespace",
    "spec",
    "spec.interval",
    "spec.url",
    "spec.ref",
    "spec.ref.tag",
    "spec.ref.semver",
    "spec.layerSelector",
    "spec.layerSelector.mediaType",
    "spec.layerSelector.operation",
    "spec.verify",
    "spec.verify.provider",
    "spec.verify.secretRef",
    "spec.verify.secretRef.name",
    "spec.verify.matchOIDCIdentity",
    "spec.verify.matchOIDCIdentity.*.issuer",
    "spec.verify.matchOIDCIdentity.*.subject",
];

/// The OCIRepository of the published chart: its URL, the chart's version,
/// Helm's layer, verified with cosign.
pub(crate) fn check_oci_repository(
    bundle: &Bundle,
    repository: &Value,
    operation: &str,
) -> Result<(), String> {
    only_fields(repository, OCI_REPOSITORY_FIELDS)?;
    let want = [
        ("/apiVersion", json!("source.toolkit.fluxcd.io/v1")),
        ("/spec/url", json!(format!("oci://{CHART_REPOSITORY}"))),
        ("/spec/ref/tag", bundle.chart["version"].clone()),
        ("/spec/layerSelector/mediaType", json!(HELM_LAYER)),
        ("/spec/layerSelector/operation", json!(operation)),
        ("/spec/verify/provider", json!("cosign")),
    ];
    for (pointer, value) in want {
        if field(repository, pointer)? != &value {
            return Err(format!(
                "OCIRepository {pointer} is {}, not {value}",
                field(repository, pointer)?
            ));
        }
    }
    Ok(())
}

/// The Flux and Cozystack manifests of docs/install.md (`charts/install/<file>.yaml`)
/// are typed, point at the published chart, and their values render.
pub(crate) fn install(helm: &Helm, bundle: &Bundle, file: &str) -> Result<(), Failed> {
    let path = format!("charts/install/{file}.yaml");
    let written = read(&path)?;
    let page = read("docs/install.md")?;
    let body = written
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    if !page.contains(body.trim()) {
        return Err(format!("docs/install.md does not show {path} as it is").into());
    }
    let documents = e2e::manifests::documents(&written)?;
    let by_kind = |kind: &str| {
        documents
            .iter()
            .find(|d| d["kind"] == kind)
            .ok_or_else(|| format!("{path}: no {kind}"))
    };
    let repository = by_kind("OCIRepository")?;
    let values = match file {
        "flux" => {
            // helm-controller installs the chart from the copied layer.
            check_oci_repository(bundle, repository, "copy")?;
            let release = by_kind("HelmRelease")?;
            only_fields(
                release,
                &[
                    "apiVersion",
                    "kind",
                    "metadata",
                    "metadata.name",
                    "metadata.namespace",
                    "spec",
                    "spec.interval",
                    "spec.releaseName",
                    "spec.chartRef",
                    "spec.chartRef.kind",
                    "spec.chartRef.name",
                    "spec.chartRef.namespace",
                    "spec.install",
                    "spec.install.remediation",
                    "spec.install.remediation.retries",
                    "spec.upgrade",
                    "spec.upgrade.remediation",
                    "spec.upgrade.remediation.retries",
                    "spec.values",
                ],
            )?;
            if text(release, "/apiVersion") != "helm.toolkit.fluxcd.io/v2"
                || text(release, "/spec/chartRef/kind") != "OCIRepository"
                || text(release, "/spec/chartRef/name") != text(repository, "/metadata/name")
                || text(release, "/metadata/namespace") != "kubewarden"
            {
                return Err(format!(
                    "the HelmRelease does not install the chart in kubewarden: {release}"
                )
                .into());
            }
            release["spec"]["values"].clone()
        }
        _ => {
            // The PackageSource's ArtifactGenerator copies the extracted
            // chart directory (`<source>/<path>/**`).
            check_oci_repository(bundle, repository, "extract")?;
            let source = by_kind("PackageSource")?;
            let package = by_kind("Package")?;
            only_fields(
                source,
                &[
                    "apiVersion",
                    "kind",
                    "metadata",
                    "metadata.name",
                    "metadata.annotations",
                    "metadata.annotations.operator.cozystack.io/skip-cozystack-values",
                    "spec",
                    "spec.sourceRef",
                    "spec.sourceRef.kind",
                    "spec.sourceRef.name",
                    "spec.sourceRef.namespace",
                    "spec.sourceRef.path",
                    "spec.variants",
                    "spec.variants.*",
                    "spec.variants.*.name",
                    "spec.variants.*.dependsOn",
                    "spec.variants.*.components",
                    "spec.variants.*.components.*",
                    "spec.variants.*.components.*.name",
                    "spec.variants.*.components.*.path",
                    "spec.variants.*.components.*.install",
                    "spec.variants.*.components.*.install.namespace",
                    "spec.variants.*.components.*.install.releaseName",
                ],
            )?;
            only_fields(
                package,
                &[
                    "apiVersion",
                    "kind",
                    "metadata",
                    "metadata.name",
                    "spec",
                    "spec.variant",
                    "spec.components",
                    "spec.components.cozystack-policies",
                    "spec.components.cozystack-policies.enabled",
                    "spec.components.cozystack-policies.values",
                ],
            )?;
            let component = &source["spec"]["variants"][0]["components"][0];
            let checks = [
                (
                    text(source, "/apiVersion") == "cozystack.io/v1alpha1",
                    "apiVersion",
                ),
                // The Package reconciler reads the PackageSource of its own name.
                (
                    text(source, "/metadata/name") == text(package, "/metadata/name"),
                    "the Package's name is the PackageSource's",
                ),
                (
                    text(source, "/spec/sourceRef/kind") == "OCIRepository",
                    "sourceRef.kind",
                ),
                (
                    text(source, "/spec/sourceRef/name") == text(repository, "/metadata/name"),
                    "sourceRef.name",
                ),
                (
                    text(source, "/spec/sourceRef/namespace")
                        == text(repository, "/metadata/namespace"),
                    "sourceRef.namespace",
                ),
                // The extracted archive's one directory is the chart's name.
                (
                    text(component, "/path") == text(&bundle.chart, "/name"),
                    "the component's path is the chart's directory",
                ),
                (
                    text(component, "/install/namespace") == "kubewarden",
                    "the release goes to Kubewarden's namespace",
                ),
                (
                    text(component, "/name") == "cozystack-policies",
                    "the component's name",
                ),
                // No cozystack-values Secret exists in kubewarden: without
                // the annotation the HelmRelease would wait for one.
                (
                    text(
                        source,
                        "/metadata/annotations/operator.cozystack.io~1skip-cozystack-values",
                    ) == "true",
                    "skip-cozystack-values",
                ),
                (
                    text(&source["spec"]["variants"][0], "/name") == text(package, "/spec/variant"),
                    "the Package's variant is the PackageSource's",
                ),
            ];
            for (ok, what) in checks {
                if !ok {
                    return Err(format!("{path}: {what}").into());
                }
            }
            package["spec"]["components"]["cozystack-policies"]["values"].clone()
        }
    };
    match helm.render(&[Render::with(values.clone())])?.pop() {
        Some(Rendered::Templates(_)) => Ok(()),
        Some(Rendered::Error(error)) => {
            Err(format!("{path}: Helm refuses the values {values}: {error}").into())
        }
        None => Err("no answer from Helm".into()),
    }
}
