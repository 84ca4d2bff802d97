//! `dist`: cargo's wasm artifacts turned into the modules users run,
//! `dist/<policy>.wasm`.
//!
//! Each module is annotated as `kwctl annotate -m metadata.yml -u README.md`
//! does: the metadata, with `protocolVersion: v1` and the README as usage,
//! as JSON in the `io.kubewarden.metadata` custom section. Like kwctl, the
//! module is loaded and asked for its protocol version first, so a module
//! that does not start never reaches `dist/`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail, ensure};
use host::PolicyModule;
use layout::resolve;
use wasm_meta::metadata::VERSION_ANNOTATION;

use crate::workspace::{self, PolicyCrate, PolicyDir};

/// Annotate cargo's wasm artifacts into dist/<policy>.wasm.
#[derive(clap::Args)]
pub struct Args {
    /// Where cargo wrote the wasm artifacts.
    #[arg(long, default_value = "target/wasm32-wasip1/policy")]
    pub wasm_dir: PathBuf,
    #[arg(long, default_value = "dist")]
    pub out: PathBuf,
    /// Only these policies (all by default).
    pub policies: Vec<String>,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let Args {
        wasm_dir,
        out,
        policies,
    } = args;
    let (wasm_dir, out) = (resolve(root, &wasm_dir), resolve(root, &out));
    for policy in workspace::select(workspace::policies(root)?, &policies)? {
        let size = annotate(&policy, &wasm_dir, &out)?;
        println!(
            "{:<28} {:>8} bytes",
            policy.module_path(&out).display(),
            size
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Annotates one policy's artifact into `out`; returns the module size.
fn annotate(policy: &PolicyDir, wasm_dir: &Path, out: &Path) -> Result<usize> {
    let metadata = policy.metadata()?;
    let version = policy.crate_version()?;
    match metadata.version() {
        Some(annotated) if annotated == version => {}
        Some(annotated) => bail!(
            "{}: {VERSION_ANNOTATION} is {annotated} but Cargo.toml says {version}; they must agree",
            policy.metadata_path().display()
        ),
        None => bail!(
            "{}: {VERSION_ANNOTATION} is missing",
            policy.metadata_path().display()
        ),
    }
    let artifact = policy.cargo_artifact(wasm_dir);
    let wasm =
        std::fs::read(&artifact).with_context(|| format!("reading {}", artifact.display()))?;
    let usage = std::fs::read_to_string(policy.readme_path())
        .with_context(|| format!("reading {}", policy.readme_path().display()))?;
    let annotated = metadata.annotate(&wasm, Some(&usage))?;
    let module = PolicyModule::from_bytes(policy.name.clone(), &annotated)?;
    let protocol = module.protocol_version()?;
    ensure!(
        protocol == "v1",
        "{}: protocol_version answered {protocol:?}, not \"v1\"",
        policy.name
    );
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let target = policy.module_path(out);
    std::fs::write(&target, &annotated).with_context(|| format!("writing {}", target.display()))?;
    Ok(annotated.len())
}
