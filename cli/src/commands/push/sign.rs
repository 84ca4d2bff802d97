//! Signatures in cosign's "simple signing" format, with a key: what `cosign
//! sign --key` writes and Kubewarden's verifiers (sigstore-rs in kwctl and
//! policy-server, `pubKey` in a verification config) read.
//!
//! The signature of `<repository>@sha256:<hex>` is an OCI image in the same
//! repository, tagged `sha256-<hex>.sig`: one layer of media type
//! `application/vnd.dev.cosign.simplesigning.v1+json` whose blob is the
//! payload (a JSON document naming the repository and the manifest digest:
//! what is signed), and, in that layer's annotation
//! `dev.cosignproject.cosign/signature`, the base64 of the ECDSA P-256
//! SHA-256 signature of those exact bytes, DER encoded. A verifier checks
//! the signature with its public key, then that the payload names the digest
//! it is about to load: a tag moved to another module finds no signature for
//! the new digest.
//!
//! Writing a signature replaces the signature image of that digest, so the
//! signatures of other signers on the same digest (the release's keyless
//! ones) are not kept: sign a registry of your own, or sign with cosign.

use std::path::Path;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use oci_client::Reference;
use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciImageManifest};
use p256::ecdsa::signature::Signer as _;
use p256::pkcs8::DecodePrivateKey as _;

/// The media type of a simple-signing payload layer.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation that carries the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The signature image's config: an OCI image configuration, as cosign
/// writes it.
const IMAGE_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";

/// An ECDSA P-256 private key.
pub struct SigningKey(p256::ecdsa::SigningKey);

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(P-256)")
    }
}

impl SigningKey {
    /// Reads an unencrypted PEM private key: PKCS#8 (`BEGIN PRIVATE KEY`,
    /// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`) or
    /// SEC1 (`BEGIN EC PRIVATE KEY`, `openssl ecparam -genkey`).
    pub fn from_pem_file(path: &Path) -> Result<Self> {
        let pem = std::fs::read_to_string(path)
            .with_context(|| format!("reading the signing key {}", path.display()))?;
        Self::from_pem(&pem).with_context(|| format!("the signing key {}", path.display()))
    }

    pub fn from_pem(pem: &str) -> Result<Self> {
        if pem.contains("ENCRYPTED") {
            bail!(
                "an encrypted key (cosign's own format) cannot be read: give an unencrypted \
                 PKCS#8 or SEC1 P-256 key, or sign with cosign"
            );
        }
        if pem.contains("BEGIN EC PRIVATE KEY") {
            let secret =
                p256::SecretKey::from_sec1_pem(pem).context("not a SEC1 P-256 private key")?;
            return Ok(Self(secret.into()));
        }
        Ok(Self(
            p256::ecdsa::SigningKey::from_pkcs8_pem(pem)
                .context("not a PKCS#8 P-256 private key")?,
        ))
    }

    /// A key from its 32-byte scalar.
    #[cfg(test)]
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<Self> {
        Ok(Self(
            p256::ecdsa::SigningKey::from_bytes(bytes.into()).context("not a P-256 scalar")?,
        ))
    }

    /// The public key as `cosign.pub` holds it (PEM SubjectPublicKeyInfo),
    /// what `kwctl verify -k` and a verification config's `key` take.
    #[cfg(test)]
    pub fn public_key_pem(&self) -> Result<String> {
        use p256::pkcs8::{EncodePublicKey as _, LineEnding};
        self.0
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .context("encoding the public key")
    }

    /// The base64 DER signature of `payload`.
    fn sign(&self, payload: &[u8]) -> String {
        let signature: p256::ecdsa::Signature = self.0.sign(payload);
        base64::engine::general_purpose::STANDARD.encode(signature.to_der().as_bytes())
    }
}

/// The simple-signing payload for `repository` (`registry/path`, no tag) at
/// `digest`, as cosign writes it.
pub fn payload(repository: &str, digest: &str) -> Vec<u8> {
    let document = serde_json::json!({
        "critical": {
            "identity": {"docker-reference": repository},
            "image": {"docker-manifest-digest": digest},
            "type": "cosign container image signature",
        },
        "optional": null,
    });
    document.to_string().into_bytes()
}

/// `sha256-<hex>.sig`, the tag of a digest's signature image.
pub fn signature_tag(digest: &str) -> Result<String> {
    let hex = digest
        .strip_prefix("sha256:")
        .filter(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .with_context(|| format!("{digest:?} is not a sha256 digest"))?;
    Ok(format!("sha256-{hex}.sig"))
}

/// What one signature produced.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Signed {
    /// `<repository>:sha256-<hex>.sig`
    pub signature: String,
}

/// Signs `<repository>@<digest>` with `key` and pushes the signature image
/// beside it.
pub async fn sign(
    client: &oci_client::Client,
    auth: &oci_client::secrets::RegistryAuth,
    repository: &str,
    digest: &str,
    key: &SigningKey,
) -> Result<Signed> {
    let payload = payload(repository, digest);
    let signature = key.sign(&payload);
    let payload_digest = crate::oci::digest(&payload);
    let layers = [ImageLayer::new(
        payload,
        SIMPLE_SIGNING_MEDIA_TYPE.to_owned(),
        Some([(SIGNATURE_ANNOTATION.to_owned(), signature)].into()),
    )];
    let config = serde_json::json!({
        "architecture": "",
        "config": {},
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": [payload_digest]},
    });
    let config = Config::new(
        config.to_string().into_bytes(),
        IMAGE_CONFIG_MEDIA_TYPE.to_owned(),
        None,
    );
    let mut manifest = OciImageManifest::build(&layers, &config, None);
    manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_owned());
    let tag = format!("{repository}:{}", signature_tag(digest)?);
    let reference: Reference = tag
        .parse()
        .with_context(|| format!("{tag:?} is not an OCI reference"))?;
    client
        .push(&reference, &layers, config, auth, Some(manifest))
        .await
        .with_context(|| format!("pushing the signature {tag}"))?;
    Ok(Signed { signature: tag })
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier as _;
    use p256::pkcs8::{DecodePublicKey as _, LineEnding};

    #[test]
    fn signatures_verify_with_the_public_key_and_name_the_digest() {
        let key = SigningKey::from_bytes(&[7; 32]).unwrap();
        let digest = format!("sha256:{}", "ab".repeat(32));
        let payload = payload("127.0.0.1:5000/p/no-delete", &digest);
        let text: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        assert_eq!(text["critical"]["image"]["docker-manifest-digest"], digest);
        let der = base64::engine::general_purpose::STANDARD
            .decode(key.sign(&payload))
            .unwrap();
        let signature = p256::ecdsa::Signature::from_der(&der).unwrap();
        let public =
            p256::ecdsa::VerifyingKey::from_public_key_pem(&key.public_key_pem().unwrap()).unwrap();
        assert!(public.verify(&payload, &signature).is_ok());
        assert!(public.verify(b"another payload", &signature).is_err());
    }

    #[test]
    fn keys_are_read_from_pkcs8_and_sec1_pem_and_encrypted_ones_refused() {
        let key = SigningKey::from_bytes(&[9; 32]).unwrap();
        let pkcs8 = {
            use p256::pkcs8::EncodePrivateKey as _;
            key.0.to_pkcs8_pem(LineEnding::LF).unwrap().to_string()
        };
        let sec1 = p256::SecretKey::from(&key.0)
            .to_sec1_pem(LineEnding::LF)
            .unwrap()
            .to_string();
        for pem in [pkcs8, sec1] {
            let read = SigningKey::from_pem(&pem).unwrap();
            assert_eq!(
                read.public_key_pem().unwrap(),
                key.public_key_pem().unwrap()
            );
        }
        let error = SigningKey::from_pem("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----")
            .unwrap_err()
            .to_string();
        assert!(error.contains("encrypted key"), "{error}");
    }

    #[test]
    fn signature_tags_follow_the_digest() {
        let digest = format!("sha256:{}", "0f".repeat(32));
        assert_eq!(
            signature_tag(&digest).unwrap(),
            format!("sha256-{}.sig", "0f".repeat(32))
        );
        assert!(signature_tag("sha256:xyz").is_err());
    }
}
