//! `run`: one request through one module with `kwctl run`'s flags and output.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use reading::yaml::{self, Limit};

use layout::resolve;

/// Evaluate one request with one module through the host, with the flags
/// and output of `kwctl run`: a case run by hand where kwctl is not
/// installed.
#[derive(clap::Args)]
pub struct Args {
    /// The annotated module.
    pub module: PathBuf,
    #[arg(short = 'r', long)]
    pub request_path: PathBuf,
    #[arg(long)]
    pub settings_path: Option<PathBuf>,
    #[arg(long)]
    pub settings_json: Option<String>,
    #[arg(long)]
    pub replay_host_capabilities_interactions: Option<PathBuf>,
    /// Accepted for compatibility: the module's contextAwareResources
    /// are always the allow-list.
    #[arg(long)]
    pub allow_context_aware: bool,
    /// Compile the module afresh instead of taking it from the cache of
    /// compiled modules in target/xtask/compiled (kwctl's flag, and as
    /// kwctl, cached by default).
    #[arg(long)]
    pub disable_wasmtime_cache: bool,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let Args {
        module,
        request_path,
        settings_path,
        settings_json,
        replay_host_capabilities_interactions,
        allow_context_aware: _,
        disable_wasmtime_cache,
    } = args;
    if !disable_wasmtime_cache {
        let cache = resolve(root, Path::new(COMPILED));
        if let Err(error) = host::cache_compiled_modules(&cache) {
            eprintln!("warning: compiled modules are not cached ({error})");
        }
    }
    run_like_kwctl(
        &resolve(root, &module),
        &resolve(root, &request_path),
        settings_path.map(|p| resolve(root, &p)).as_deref(),
        settings_json.as_deref(),
        replay_host_capabilities_interactions
            .map(|p| resolve(root, &p))
            .as_deref(),
    )
}

/// Where compiled modules are kept between runs, as kwctl keeps them.
const COMPILED: &str = "target/xtask/compiled";

/// `kwctl run`: prints the AdmissionResponse; refused settings exit 1 with
/// kwctl's message.
fn run_like_kwctl(
    module: &Path,
    request: &Path,
    settings_path: Option<&Path>,
    settings_json: Option<&str>,
    session: Option<&Path>,
) -> Result<ExitCode> {
    let settings = match (settings_path, settings_json) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            serde_json::to_value(yaml::document::<serde_json::Value>(&text, Limit::Cases)?)?
        }
        (None, Some(json)) => serde_json::from_str(json)?,
        (None, None) => serde_json::Value::Null,
    };
    let request_text = std::fs::read_to_string(request)
        .with_context(|| format!("reading {}", request.display()))?;
    let request = host::AdmissionRequest::from_value(serde_json::from_str(&request_text)?)?;
    let capabilities = match session {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let entries: Vec<capabilities::replay::SessionEntry> =
                yaml::document(&text, Limit::Cases)?;
            host::HostCapabilities::Replay(capabilities::replay::Session::from_entries(&entries)?)
        }
        None => host::HostCapabilities::offline(),
    };
    let module = host::PolicyModule::from_file(module)?;
    let policy = match module.configure(settings) {
        Ok(policy) => policy,
        Err(error @ host::HostError::InvalidSettings { .. }) => {
            eprintln!("{error}");
            return Ok(ExitCode::from(1));
        }
        Err(other) => return Err(other.into()),
    };
    let evaluation = policy.evaluate(&request, capabilities);
    println!("{}", serde_json::to_string(&evaluation.response)?);
    Ok(ExitCode::SUCCESS)
}
