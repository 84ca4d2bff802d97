//! What `push` and `--policy registry://` share of talking to an OCI
//! registry: the client (TLS but on loopback), the credentials
//! ([`auth`]), and the digests both check; pulling published modules is
//! [`pull`].

pub mod auth;
pub mod pull;

use std::net::IpAddr;

use anyhow::{Context, Result};
use oci_client::Client;
use oci_client::client::{ClientConfig, ClientProtocol};
use sha2::{Digest as _, Sha256};

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

/// `sha256:<hex>` of `bytes`, as OCI writes digests.
pub fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

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
