//! `--policy registry://host/repo:tag[@sha256:…]`: published modules, pulled
//! with the OCI client `push` uses and cached by digest, as kwctl keeps its
//! store, so CI judges with exactly what a cluster pulls.
//!
//! The cache (`$XDG_CACHE_HOME/cozystack-policies`, else
//! `~/.cache/cozystack-policies`) holds manifests and modules under their
//! sha256, checked on every read: a pinned reference found there needs no
//! network, a tag is resolved by the registry each time. A pinned digest
//! the registry's manifest does not hash to is an error.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use host::PolicyModule;
use oci_client::Reference;
use oci_client::manifest::{OciImageManifest, WASM_LAYER_MEDIA_TYPE};

use crate::cache;
use crate::oci::{self, auth, digest};

/// How a `--policy` argument names a registry reference.
pub const SCHEME: &str = "registry://";

/// Pulls (or reads from the cache) and compiles the module `reference`
/// names, `host/repo:tag[@sha256:…]`; the policy name is the repository's
/// last segment.
pub fn load(reference: &str) -> Result<PolicyModule> {
    let parsed: Reference = reference.parse().with_context(|| {
        format!("--policy {SCHEME}{reference}: expected registry://host/repo:tag[@sha256:…]")
    })?;
    let repository = parsed.repository();
    let name = repository
        .rsplit_once('/')
        .map_or(repository, |(_, last)| last)
        .to_owned();
    let cache = Cache::new(cache::dir()?);
    let wasm = fetch(&parsed, &cache).with_context(|| format!("{SCHEME}{reference}"))?;
    PolicyModule::from_bytes(name, &wasm).with_context(|| format!("loading {SCHEME}{reference}"))
}

/// The module of one reference: from the cache when its manifest is there,
/// from the registry otherwise.
fn fetch(reference: &Reference, cache: &Cache) -> Result<Vec<u8>> {
    let pinned = reference.digest().map(str::to_owned);
    let manifest_bytes = match pinned.as_deref().map(|d| cache.read(d)).transpose()? {
        Some(Some(bytes)) => bytes,
        _ => {
            let bytes = pull_manifest(reference)?;
            let digest = digest(&bytes);
            if let Some(pinned) = &pinned
                && *pinned != digest
            {
                bail!(
                    "the registry's manifest has digest {digest}, not the pinned {pinned}: \
                     the reference or the registry is wrong; pin the digest you reviewed"
                );
            }
            cache.write(&digest, &bytes)?;
            bytes
        }
    };
    let manifest: OciImageManifest =
        serde_json::from_slice(&manifest_bytes).context("parsing the image manifest")?;
    let layer = manifest
        .layers
        .iter()
        .find(|l| l.media_type == WASM_LAYER_MEDIA_TYPE)
        .with_context(|| {
            format!("the manifest has no {WASM_LAYER_MEDIA_TYPE} layer: not a Kubewarden policy")
        })?;
    if let Some(wasm) = cache.read(&layer.digest)? {
        return Ok(wasm);
    }
    let wasm = pull_blob(reference, layer)?;
    let pulled = digest(&wasm);
    if pulled != layer.digest {
        bail!(
            "the module pulled has digest {pulled}, the manifest says {}",
            layer.digest
        );
    }
    cache.write(&pulled, &wasm)?;
    Ok(wasm)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

fn pull_manifest(reference: &Reference) -> Result<Vec<u8>> {
    let client = oci::client(reference.resolve_registry())?;
    let auth = auth::for_registry(reference.resolve_registry());
    let (bytes, _) = runtime()?
        .block_on(client.pull_manifest_raw(
            reference,
            &auth,
            &[oci_client::manifest::OCI_IMAGE_MEDIA_TYPE],
        ))
        .map_err(|e| auth::explain(reference.resolve_registry(), &auth, e))
        .context("pulling the manifest")?;
    Ok(bytes.to_vec())
}

fn pull_blob(
    reference: &Reference,
    layer: &oci_client::manifest::OciDescriptor,
) -> Result<Vec<u8>> {
    let client = oci::client(reference.resolve_registry())?;
    let auth = auth::for_registry(reference.resolve_registry());
    let mut wasm = Vec::new();
    runtime()?
        .block_on(async {
            client
                .store_auth_if_needed(reference.resolve_registry(), &auth)
                .await;
            client.pull_blob(reference, layer, &mut wasm).await
        })
        .map_err(|e| auth::explain(reference.resolve_registry(), &auth, e))
        .context("pulling the module")?;
    Ok(wasm)
}

/// Content-addressed files: `<dir>/sha256/<hex>`.
struct Cache {
    dir: PathBuf,
}

impl Cache {
    fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    fn path(&self, digest: &str) -> Result<PathBuf> {
        match digest.split_once(':') {
            Some(("sha256", hex))
                if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                Ok(self.dir.join("sha256").join(hex))
            }
            _ => bail!("unsupported digest {digest:?}: only sha256 is"),
        }
    }

    /// The cached bytes of `digest`; `None` when absent or no longer
    /// matching (a damaged file is pulled again).
    fn read(&self, digest: &str) -> Result<Option<Vec<u8>>> {
        let path = self.path(digest)?;
        match std::fs::read(&path) {
            Ok(bytes) if oci::digest(&bytes) == digest => Ok(Some(bytes)),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading the cache {}", path.display())),
        }
    }

    /// Stores verified bytes; written aside and renamed so that a check
    /// running at the same time never reads half a file.
    fn write(&self, digest: &str, bytes: &[u8]) -> Result<()> {
        let path = self.path(digest)?;
        let dir = self.dir.join("sha256");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let partial = path.with_extension(format!("partial-{}", std::process::id()));
        std::fs::write(&partial, bytes)
            .with_context(|| format!("writing {}", partial.display()))?;
        std::fs::rename(&partial, &path).with_context(|| format!("writing {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    // A test: a panic is a failing assertion.
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn the_cache_returns_what_was_stored_and_drops_what_no_longer_matches() {
        let dir = std::env::temp_dir().join(format!("cozystack-cache-{}", std::process::id()));
        let cache = Cache::new(dir.clone());
        let digest = digest(b"module");
        assert_eq!(cache.read(&digest).unwrap(), None);
        cache.write(&digest, b"module").unwrap();
        assert_eq!(
            cache.read(&digest).unwrap().as_deref(),
            Some(&b"module"[..])
        );
        std::fs::write(cache.path(&digest).unwrap(), b"tampered").unwrap();
        assert_eq!(
            cache.read(&digest).unwrap(),
            None,
            "a damaged entry is a miss"
        );
        assert!(cache.path("sha512:00").is_err());
        assert!(cache.path("sha256:../../etc").is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
