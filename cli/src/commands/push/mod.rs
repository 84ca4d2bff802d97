//! `push`: annotated modules (and the chart) to an OCI registry, each
//! signed on request ([`sign`]), as `kwctl push` lays them out
//! ([`upload`]).

mod sign;
mod upload;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use layout::resolve;

/// Push annotated modules to an OCI registry as `kwctl push` does and
/// print the immutable digest reference of each.
///
/// Every module in --dist (or the ones named) goes to its metadata's
/// `io.kubewarden.policy.ociUrl`, tagged `v<version>`; with --registry
/// to `<registry>/<last segment of ociUrl>` instead. Registries on the
/// loopback interface are spoken to over plain HTTP, all others over
/// TLS. Unannotated modules are refused before anything is pushed.
#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "dist")]
    pub dist: PathBuf,
    /// Registry and namespace replacing the metadata's, e.g.
    /// `127.0.0.1:5000/cozystack-policies`.
    #[arg(long)]
    pub registry: Option<String>,
    /// User for the registry (the password is read from standard input).
    #[arg(long, requires = "password_stdin")]
    pub username: Option<String>,
    /// Read the registry password or token from standard input.
    #[arg(long, requires = "username")]
    pub password_stdin: bool,
    /// Print one JSON object per module (`immutable_ref` as `kwctl push
    /// -o json`), instead of text.
    #[arg(long)]
    pub json: bool,
    /// The chart archive (`make chart-package`) to push after the
    /// modules, to `<registry>/charts/<name>:<version>`.
    #[arg(long, value_name = "ARCHIVE")]
    pub chart: Option<PathBuf>,
    /// Sign every module and the chart with this unencrypted PEM P-256
    /// private key (cosign's simple signing, verified by `kwctl verify
    /// -k` and policy-server's `pubKey` verification).
    #[arg(long, value_name = "KEY")]
    pub sign_key: Option<PathBuf>,
    /// Push the chart only, no module.
    #[arg(long, requires = "chart")]
    pub chart_only: bool,
    /// Policy names or module paths (every module in --dist by default).
    pub modules: Vec<String>,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let Args {
        dist,
        registry,
        username,
        password_stdin,
        json,
        chart,
        sign_key,
        chart_only,
        modules,
    } = args;
    let auth = match username {
        Some(user) if password_stdin => {
            let mut password = String::new();
            std::io::stdin()
                .read_line(&mut password)
                .context("reading the password from standard input")?;
            Some(oci_client::secrets::RegistryAuth::Basic(
                user,
                password.trim_end().to_owned(),
            ))
        }
        // From the docker configuration, registry by registry.
        _ => None,
    };
    // Everything is read, and so checked, before anything is pushed.
    let artifacts = if chart_only {
        Vec::new()
    } else {
        upload::select(&resolve(root, &dist), &modules)?
    };
    let chart = chart
        .map(|path| upload::ChartArchive::load(&resolve(root, &path)))
        .transpose()?;
    let key = sign_key
        .map(|path| sign::SigningKey::from_pem_file(&resolve(root, &path)))
        .transpose()?;
    upload::push_all(
        &artifacts,
        chart.as_ref(),
        registry.as_deref(),
        auth.as_ref(),
        key.as_ref(),
        |pushed| {
            if json {
                println!("{}", serde_json::to_string(pushed)?);
            } else {
                println!("{} {}", pushed.reference, pushed.immutable_ref);
                if let Some(signature) = &pushed.signature {
                    println!("  signed: {signature}");
                }
            }
            Ok(())
        },
    )?;
    Ok(ExitCode::SUCCESS)
}
