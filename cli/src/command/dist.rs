//! `dist`: cargo's wasm artifacts annotated into `dist/<policy>.wasm`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::workspace::resolve;
use crate::{dist, workspace};

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
        let size = dist::annotate(&policy, &wasm_dir, &out)?;
        println!(
            "{:<28} {:>8} bytes",
            policy.module_path(&out).display(),
            size
        );
    }
    Ok(ExitCode::SUCCESS)
}
