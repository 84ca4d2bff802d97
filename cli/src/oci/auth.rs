//! Registry credentials as docker, kwctl and CI login steps leave them:
//! `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`, with its
//! `auths` entries, `credsStore` and `credHelpers`. A registry with no
//! credentials there is used anonymously, as kwctl does, so public
//! registries need no set-up.

use docker_credential::{CredentialRetrievalError, DockerCredential};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;

/// The credentials the docker configuration holds for `registry` (a host,
/// with its port when it has one), else anonymous access.
pub fn for_registry(registry: &str) -> RegistryAuth {
    match docker_credential::get_credential(registry) {
        Ok(DockerCredential::UsernamePassword(user, password)) => {
            RegistryAuth::Basic(user, password)
        }
        // An identity token is an OAuth refresh token to exchange, not a
        // bearer token; kwctl does not use it either.
        Ok(DockerCredential::IdentityToken(_)) => {
            eprintln!(
                "notice: the docker configuration holds an identity token for {registry}, which is not supported; pulling anonymously (log in with a user and password or token instead)"
            );
            RegistryAuth::Anonymous
        }
        Err(
            CredentialRetrievalError::ConfigNotFound
            | CredentialRetrievalError::ConfigReadError
            | CredentialRetrievalError::NoCredentialConfigured,
        ) => RegistryAuth::Anonymous,
        Err(error) => {
            eprintln!(
                "notice: cannot read the credentials for {registry} from the docker configuration ({}); going on anonymously",
                error.to_string().trim_end()
            );
            RegistryAuth::Anonymous
        }
    }
}

/// Whether the registry turned a request away for want of (valid)
/// credentials rather than for any other reason.
fn wants_credentials(error: &OciDistributionError) -> bool {
    match error {
        OciDistributionError::AuthenticationFailure(_)
        | OciDistributionError::UnauthorizedError { .. } => true,
        OciDistributionError::RegistryError { envelope, .. } => envelope
            .errors
            .iter()
            .any(|e| matches!(e.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)),
        _ => false,
    }
}

/// A registry's error, with what to do when it wants credentials.
pub fn explain(registry: &str, auth: &RegistryAuth, error: OciDistributionError) -> anyhow::Error {
    if wants_credentials(&error) {
        anyhow::Error::new(error).context(login_hint(registry, auth))
    } else {
        error.into()
    }
}

/// What to do when a registry wants credentials, naming where they are
/// read from.
fn login_hint(registry: &str, auth: &RegistryAuth) -> String {
    match auth {
        RegistryAuth::Anonymous => format!(
            "{registry} may need credentials: run `docker login {registry}` (they are read from $DOCKER_CONFIG/config.json or ~/.docker/config.json)"
        ),
        RegistryAuth::Basic(..) | RegistryAuth::Bearer(_) => format!(
            "{registry} refused the credentials of the docker configuration: run `docker login {registry}` again"
        ),
    }
}
