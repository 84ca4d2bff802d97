//! Publishing annotated modules to an OCI registry the way
//! `kwctl push` does, so policy-server, kwctl and ArtifactHub read them like
//! any Kubewarden policy.
//!
//! The artifact is one layer of media type
//! `application/vnd.wasm.content.layer.v1+wasm` (the module as built by
//! `dist`), a `{}` config of media type `application/vnd.wasm.config.v1+json`,
//! and the metadata's single-line annotations on the manifest, with
//! `io.kubewarden.policy.source` repeated as `org.opencontainers.image.source`.
//! The tag is `v<io.kubewarden.policy.version>`; what is printed is the
//! immutable `<repository>@sha256:…` reference the registry answers for it,
//! the one to sign and to pin in a ClusterAdmissionPolicy.
//!
//! The chart goes beside the modules as `helm push` lays it out: the
//! archive `helm package` wrote as the one layer
//! (`application/vnd.cncf.helm.chart.content.v1.tar+gzip`), its Chart.yaml
//! as JSON for the config (`application/vnd.cncf.helm.config.v1+json`),
//! tagged with the chart's version under `<registry>/charts/<name>`, so
//! `helm install oci://…`, `helm pull` and Flux's OCIRepository read it.
//! With a signing key, each digest pushed is signed ([`super::sign`]).

use reading::yaml::{self, Limit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use host::Metadata;
use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::{
    OCI_IMAGE_MEDIA_TYPE, OciImageManifest, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE,
};
use oci_client::secrets::RegistryAuth;
use oci_client::Reference;
use serde::Serialize;
use wasm_meta::metadata::{
    MODULE_REGISTRY, OCI_URL_ANNOTATION, SOURCE_ANNOTATION, VERSION_ANNOTATION,
};

use super::sign::{self, SigningKey};
use crate::oci::{self, auth};

/// The layer of a chart archive in Helm's OCI layout.
pub const HELM_CHART_LAYER_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/// The config of a chart in Helm's OCI layout: Chart.yaml as JSON.
pub const HELM_CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
/// The OCI image-spec annotation registries and scanners read.
pub const OCI_SOURCE_ANNOTATION: &str = "org.opencontainers.image.source";

/// One annotated module ready to be pushed.
#[derive(Debug)]
pub struct Artifact {
    /// The module file.
    pub path: PathBuf,
    pub wasm: Vec<u8>,
    pub metadata: Metadata,
    /// The metadata's version annotation, which `load` requires.
    version: String,
}

impl Artifact {
    /// Reads a module, refusing one without Kubewarden metadata (as
    /// `kwctl push` does without `--force`) or without a version to tag.
    pub fn load(path: &Path) -> Result<Self> {
        let wasm = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let metadata = Metadata::from_wasm(&wasm)
            .with_context(|| format!("{}: reading the metadata section", path.display()))?
            .with_context(|| {
                format!(
                    "{} is not annotated (no io.kubewarden.metadata section): build it with \
                     `make dist`; unannotated modules are never pushed",
                    path.display()
                )
            })?;
        metadata
            .check()
            .with_context(|| format!("{}: metadata", path.display()))?;
        let Some(version) = metadata.version().filter(|v| !v.is_empty()) else {
            bail!(
                "{}: annotation {VERSION_ANNOTATION} is missing",
                path.display()
            );
        };
        Ok(Self {
            path: path.to_owned(),
            wasm,
            version: version.to_owned(),
            metadata,
        })
    }

    /// `v<version>`, the tag `kwctl push` users and the release workflow use.
    pub fn tag(&self) -> String {
        format!("v{}", self.version)
    }

    /// The repository to push to: the metadata's `ociUrl`, or its last
    /// path segment under `registry` when one is given (a mirror, a test
    /// registry, a fork's namespace).
    pub fn repository(&self, registry: Option<&str>) -> Result<String> {
        let oci_url = self
            .metadata
            .annotations
            .get(OCI_URL_ANNOTATION)
            .filter(|url| !url.is_empty())
            .with_context(|| {
                format!(
                    "{}: annotation {OCI_URL_ANNOTATION} is missing",
                    self.path.display()
                )
            })?;
        Ok(match registry {
            None => oci_url.clone(),
            Some(prefix) => {
                let name = oci_url.rsplit('/').next().unwrap_or(oci_url);
                format!("{}/{name}", prefix.trim_end_matches('/'))
            }
        })
    }

    /// The manifest annotations `kwctl push` writes.
    pub fn manifest_annotations(&self) -> BTreeMap<String, String> {
        manifest_annotations(&self.metadata)
    }
}

/// The metadata's annotations without multi-line values (OCI annotations
/// are meant to be short; the README travels in the module), plus the
/// source repository under the OCI standard key.
pub fn manifest_annotations(metadata: &Metadata) -> BTreeMap<String, String> {
    let mut annotations: BTreeMap<String, String> = metadata
        .annotations
        .iter()
        .filter(|(_, value)| !value.contains('\n'))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    if let Some(source) = metadata.annotations.get(SOURCE_ANNOTATION) {
        annotations.insert(OCI_SOURCE_ANNOTATION.to_owned(), source.clone());
    }
    annotations
}

/// What one push produced.
#[derive(Debug, Clone, Serialize)]
pub struct Pushed {
    /// The module or chart archive that was pushed.
    pub path: PathBuf,
    /// The tag that was pushed, `<repository>:<tag>`.
    pub reference: String,
    /// `<repository>@sha256:…`, the same object as `reference` for good.
    pub immutable_ref: String,
    /// `<repository>:sha256-<hex>.sig`, with `--sign-key`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// One OCI artifact: its layer, config and manifest annotations.
struct Image {
    layer: ImageLayer,
    config: Config,
    annotations: BTreeMap<String, String>,
}

/// Pushes `image` to `reference`, signs its digest with `key` when one is
/// given, and returns the references.
async fn push_image(
    path: &Path,
    reference: String,
    image: Image,
    auth: Option<&RegistryAuth>,
    key: Option<&SigningKey>,
) -> Result<Pushed> {
    let parsed: Reference = reference
        .parse()
        .with_context(|| format!("{reference:?} is not an OCI reference"))?;
    let client = oci::client(parsed.resolve_registry())?;
    let auth = auth
        .cloned()
        .unwrap_or_else(|| auth::for_registry(parsed.resolve_registry()));
    let explain = |error| auth::explain(parsed.resolve_registry(), &auth, error);
    let layers = [image.layer];
    let mut manifest = OciImageManifest::build(&layers, &image.config, Some(image.annotations));
    // kwctl leaves the field out and relies on the Content-Type header; the
    // image spec says it SHOULD be set, and some registries index by it.
    manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_owned());
    client
        .push(&parsed, &layers, image.config, &auth, Some(manifest))
        .await
        .map_err(explain)
        .with_context(|| format!("pushing {} to {reference}", path.display()))?;
    let digest = client
        .fetch_manifest_digest(&parsed, &auth)
        .await
        .map_err(explain)
        .with_context(|| format!("reading the digest of {reference}"))?;
    let repository = format!("{}/{}", parsed.registry(), parsed.repository());
    let signature = match key {
        Some(key) => Some(
            sign::sign(&client, &auth, &repository, &digest, key)
                .await?
                .signature,
        ),
        None => None,
    };
    Ok(Pushed {
        path: path.to_owned(),
        immutable_ref: format!("{repository}@{digest}"),
        reference,
        signature,
    })
}

/// Pushes one module as `kwctl push` lays it out. Without `auth`, the
/// credentials come from the docker configuration
/// ([`auth::for_registry`]).
pub async fn push(
    artifact: &Artifact,
    registry: Option<&str>,
    auth: Option<&RegistryAuth>,
    key: Option<&SigningKey>,
) -> Result<Pushed> {
    let reference = format!("{}:{}", artifact.repository(registry)?, artifact.tag());
    let image = Image {
        layer: ImageLayer::new(
            artifact.wasm.clone(),
            WASM_LAYER_MEDIA_TYPE.to_owned(),
            None,
        ),
        config: Config::new(b"{}".to_vec(), WASM_CONFIG_MEDIA_TYPE.to_owned(), None),
        annotations: artifact.manifest_annotations(),
    };
    push_image(&artifact.path, reference, image, auth, key).await
}

/// Pushes the chart archive as `helm push` lays it out.
pub async fn push_chart(
    chart: &ChartArchive,
    registry: Option<&str>,
    auth: Option<&RegistryAuth>,
    key: Option<&SigningKey>,
) -> Result<Pushed> {
    let image = Image {
        layer: ImageLayer::new(
            chart.archive.clone(),
            HELM_CHART_LAYER_MEDIA_TYPE.to_owned(),
            None,
        ),
        config: Config::new(
            serde_json::to_vec(&chart.metadata)?,
            HELM_CONFIG_MEDIA_TYPE.to_owned(),
            None,
        ),
        annotations: chart.manifest_annotations(),
    };
    push_image(&chart.path, chart.reference(registry)?, image, auth, key).await
}

/// Pushes every module in order, then the chart, stopping at the first
/// failure.
pub fn push_all(
    artifacts: &[Artifact],
    chart: Option<&ChartArchive>,
    registry: Option<&str>,
    auth: Option<&RegistryAuth>,
    key: Option<&SigningKey>,
    mut report: impl FnMut(&Pushed) -> Result<()>,
) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        for artifact in artifacts {
            report(&push(artifact, registry, auth, key).await?)?;
        }
        if let Some(chart) = chart {
            report(&push_chart(chart, registry, auth, key).await?)?;
        }
        Ok(())
    })
}

/// A chart archive as `helm package` writes it.
#[derive(Debug)]
pub struct ChartArchive {
    pub path: PathBuf,
    pub archive: Vec<u8>,
    /// `Chart.yaml`, as JSON: the config `helm push` writes.
    pub metadata: serde_json::Value,
}

impl ChartArchive {
    /// Reads the archive and the `<name>/Chart.yaml` in it.
    pub fn load(path: &Path) -> Result<Self> {
        let archive = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let mut entries = tar::Archive::new(flate2::read::GzDecoder::new(archive.as_slice()));
        let mut chart_yaml = None;
        for entry in entries
            .entries()
            .with_context(|| format!("{} is not a chart archive (.tgz)", path.display()))?
        {
            let mut entry = entry.with_context(|| format!("reading {}", path.display()))?;
            let name = entry.path()?.to_string_lossy().into_owned();
            if name.split('/').count() == 2 && name.ends_with("/Chart.yaml") {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut entry, &mut text)
                    .with_context(|| format!("{}: reading {name}", path.display()))?;
                chart_yaml = Some(text);
                break;
            }
        }
        let text = chart_yaml
            .with_context(|| format!("{} holds no <chart>/Chart.yaml", path.display()))?;
        let metadata: serde_json::Value = yaml::document(&text, Limit::Cases)
            .with_context(|| format!("{}: Chart.yaml", path.display()))?;
        for key in ["name", "version"] {
            if !metadata.get(key).is_some_and(serde_json::Value::is_string) {
                bail!("{}: Chart.yaml has no {key}", path.display());
            }
        }
        Ok(Self {
            path: path.to_owned(),
            archive,
            metadata,
        })
    }

    fn field(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(serde_json::Value::as_str)
    }

    /// `<registry>/charts/<name>:<version>`, the reference `helm push
    /// <archive> oci://<registry>/charts` writes (`+` is no tag character,
    /// Helm writes `_`).
    pub fn reference(&self, registry: Option<&str>) -> Result<String> {
        let name = self.field("name").context("Chart.yaml has no name")?;
        let version = self.field("version").context("Chart.yaml has no version")?;
        let registry = registry.unwrap_or(MODULE_REGISTRY);
        Ok(format!(
            "{}/charts/{name}:{}",
            registry.trim_end_matches('/'),
            version.replace('+', "_")
        ))
    }

    /// The manifest annotations `helm push` writes from Chart.yaml (less
    /// `created`, so that a push of the same archive is the same manifest).
    pub fn manifest_annotations(&self) -> BTreeMap<String, String> {
        let mut annotations = BTreeMap::new();
        for (key, field) in [
            ("org.opencontainers.image.title", "name"),
            ("org.opencontainers.image.version", "version"),
            ("org.opencontainers.image.description", "description"),
            ("org.opencontainers.image.url", "home"),
        ] {
            if let Some(value) = self.field(field).filter(|v| !v.is_empty()) {
                annotations.insert(key.to_owned(), value.trim().to_owned());
            }
        }
        if let Some(source) = self
            .metadata
            .pointer("/sources/0")
            .and_then(serde_json::Value::as_str)
        {
            annotations.insert(OCI_SOURCE_ANNOTATION.to_owned(), source.to_owned());
        }
        annotations
    }
}

/// The modules to push: the named ones (policy names or paths), or every
/// `.wasm` in `dist`. Every one is loaded, and so checked, before anything
/// is pushed, so a bad module never leaves half a bundle in the registry.
pub fn select(dist: &Path, names: &[String]) -> Result<Vec<Artifact>> {
    let paths: Vec<PathBuf> = if names.is_empty() {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dist)
            .with_context(|| format!("reading {}", dist.display()))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "wasm"))
            .collect();
        found.sort();
        if found.is_empty() {
            bail!(
                "no modules in {}: build the bundle with `make dist`",
                dist.display()
            );
        }
        found
    } else {
        names
            .iter()
            .map(|name| {
                if name.ends_with(".wasm") {
                    PathBuf::from(name)
                } else {
                    dist.join(format!("{name}.wasm"))
                }
            })
            .collect()
    };
    paths.iter().map(|path| Artifact::load(path)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(extra: &str) -> Metadata {
        yaml::document(&format!(
            "rules:\n- apiGroups: [\"\"]\n  apiVersions: [v1]\n  resources: [pods]\n  operations: [CREATE]\n\
             mutating: false\nannotations:\n  io.kubewarden.policy.title: t\n  \
             io.kubewarden.policy.version: 1.2.3\n{extra}"
            ),
            Limit::Cases,
        )
        .unwrap()
    }

    #[test]
    fn annotations_drop_multiline_values_and_mirror_the_source() {
        let mut metadata = metadata("  io.kubewarden.policy.source: https://example.com/src\n");
        metadata.annotations.insert(
            "io.kubewarden.policy.usage".to_owned(),
            "# title\n\ntext".to_owned(),
        );
        let annotations = manifest_annotations(&metadata);
        assert_eq!(
            annotations["org.opencontainers.image.source"],
            "https://example.com/src"
        );
        assert_eq!(annotations["io.kubewarden.policy.version"], "1.2.3");
        assert!(!annotations.contains_key("io.kubewarden.policy.usage"));
    }

    #[test]
    fn refuses_unannotated_modules() {
        let dir = std::env::temp_dir().join(format!("push-unannotated-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("raw.wasm");
        std::fs::write(&path, b"\0asm\x01\0\0\0").unwrap();
        let error = Artifact::load(&path).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(error.contains("is not annotated"), "{error}");
    }

    #[test]
    fn repository_follows_oci_url_or_the_registry_given() {
        let metadata =
            metadata("  io.kubewarden.policy.ociUrl: ghcr.io/cozystack/cozystack-policies/p\n");
        let wasm = metadata.annotate(b"\0asm\x01\0\0\0", None).unwrap();
        let dir = std::env::temp_dir().join(format!("push-repository-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.wasm");
        std::fs::write(&path, wasm).unwrap();
        let artifact = Artifact::load(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(artifact.tag(), "v1.2.3");
        assert_eq!(
            artifact.repository(None).unwrap(),
            "ghcr.io/cozystack/cozystack-policies/p"
        );
        assert_eq!(
            artifact.repository(Some("127.0.0.1:5000/test/")).unwrap(),
            "127.0.0.1:5000/test/p"
        );
    }
}
