//! `push`: publishes annotated modules to an OCI registry the way
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

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use bundle::metadata::VERSION_ANNOTATION;
use host::Metadata;
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::{
    OCI_IMAGE_MEDIA_TYPE, OciImageManifest, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE,
};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use serde::Serialize;

use crate::registry_auth;

/// Where a policy's OCI repository is written in its metadata.
pub const OCI_URL_ANNOTATION: &str = "io.kubewarden.policy.ociUrl";
/// The policy's source repository, mirrored into the OCI standard key.
pub const SOURCE_ANNOTATION: &str = "io.kubewarden.policy.source";
/// The OCI image-spec annotation registries and scanners read.
pub const OCI_SOURCE_ANNOTATION: &str = "org.opencontainers.image.source";

/// One annotated module ready to be pushed.
#[derive(Debug)]
pub struct Artifact {
    /// The module file.
    pub path: PathBuf,
    pub wasm: Vec<u8>,
    pub metadata: Metadata,
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
                     `cozystack-policies dist`; unannotated modules are never pushed",
                    path.display()
                )
            })?;
        metadata
            .check()
            .with_context(|| format!("{}: metadata", path.display()))?;
        if metadata.version().is_none_or(str::is_empty) {
            bail!(
                "{}: annotation {VERSION_ANNOTATION} is missing",
                path.display()
            );
        }
        Ok(Self {
            path: path.to_owned(),
            wasm,
            metadata,
        })
    }

    /// `v<version>`, the tag `kwctl push` users and the release workflow use.
    pub fn tag(&self) -> String {
        format!("v{}", self.metadata.version().unwrap_or_default())
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

/// Plain HTTP is used only for registries on the loopback interface (as
/// Docker treats `127.0.0.0/8`): a test or local registry has no
/// certificate, and nothing else should ever be reached without TLS.
pub fn is_loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => registry.split(':').next().unwrap_or(registry),
    };
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The client for one registry: rustls with the ring provider, HTTP only
/// for loopback registries.
pub fn client(registry: &str) -> Result<Client> {
    // Several calls in one process (tests) must not fail on the second.
    let _already_installed = rustls::crypto::ring::default_provider().install_default();
    let protocol = if is_loopback(registry) {
        ClientProtocol::HttpsExcept(vec![registry.to_owned()])
    } else {
        ClientProtocol::Https
    };
    Client::try_from(ClientConfig {
        protocol,
        ..ClientConfig::default()
    })
    .context("creating the OCI client")
}

/// What one push produced.
#[derive(Debug, Clone, Serialize)]
pub struct Pushed {
    pub module: PathBuf,
    /// The tag that was pushed, `<repository>:v<version>`.
    pub reference: String,
    /// `<repository>@sha256:…`, the same object as `reference` for good.
    pub immutable_ref: String,
}

/// Pushes one artifact and returns its references. Without `auth`, the
/// credentials come from the docker configuration
/// ([`registry_auth::for_registry`]).
pub async fn push(
    artifact: &Artifact,
    registry: Option<&str>,
    auth: Option<&RegistryAuth>,
) -> Result<Pushed> {
    let reference = format!("{}:{}", artifact.repository(registry)?, artifact.tag());
    let parsed: Reference = reference
        .parse()
        .with_context(|| format!("{reference:?} is not an OCI reference"))?;
    let client = client(parsed.resolve_registry())?;
    let auth = auth
        .cloned()
        .unwrap_or_else(|| registry_auth::for_registry(parsed.resolve_registry()));
    let explain = |error| registry_auth::explain(parsed.resolve_registry(), &auth, error);
    let layers = [ImageLayer::new(
        artifact.wasm.clone(),
        WASM_LAYER_MEDIA_TYPE.to_owned(),
        None,
    )];
    let config = Config::new(b"{}".to_vec(), WASM_CONFIG_MEDIA_TYPE.to_owned(), None);
    let mut manifest =
        OciImageManifest::build(&layers, &config, Some(artifact.manifest_annotations()));
    // kwctl leaves the field out and relies on the Content-Type header; the
    // image spec says it SHOULD be set, and some registries index by it.
    manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_owned());
    client
        .push(&parsed, &layers, config, &auth, Some(manifest))
        .await
        .map_err(explain)
        .with_context(|| format!("pushing {} to {reference}", artifact.path.display()))?;
    let digest = client
        .fetch_manifest_digest(&parsed, &auth)
        .await
        .map_err(explain)
        .with_context(|| format!("reading the digest of {reference}"))?;
    let repository = format!("{}/{}", parsed.registry(), parsed.repository());
    Ok(Pushed {
        module: artifact.path.clone(),
        immutable_ref: format!("{repository}@{digest}"),
        reference,
    })
}

/// Pushes every artifact in order, stopping at the first failure.
pub fn push_all(
    artifacts: &[Artifact],
    registry: Option<&str>,
    auth: Option<&RegistryAuth>,
    mut report: impl FnMut(&Pushed) -> Result<()>,
) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        for artifact in artifacts {
            report(&push(artifact, registry, auth).await?)?;
        }
        Ok(())
    })
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
        bundle::yaml::from_str(&format!(
            "rules:\n- apiGroups: [\"\"]\n  apiVersions: [v1]\n  resources: [pods]\n  operations: [CREATE]\n\
             mutating: false\nannotations:\n  io.kubewarden.policy.title: t\n  \
             io.kubewarden.policy.version: 1.2.3\n{extra}"
        ))
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
        let artifact = Artifact {
            path: PathBuf::from("p.wasm"),
            wasm,
            metadata,
        };
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

    #[test]
    fn plain_http_only_on_loopback() {
        for registry in [
            "127.0.0.1:5000",
            "localhost:5000",
            "[::1]:5000",
            "127.3.2.1",
        ] {
            assert!(is_loopback(registry), "{registry}");
        }
        for registry in ["ghcr.io", "10.0.0.1:5000", "registry.local:5000"] {
            assert!(!is_loopback(registry), "{registry}");
        }
    }
}
