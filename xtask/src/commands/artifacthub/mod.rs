//! `artifacthub`: each policy's ArtifactHub package, written or checked.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use layout::resolve;

use crate::workspace;

mod package;

/// Write the ArtifactHub package of each policy (artifacthub-pkg.yml and
/// README.md under artifacthub/<policy>/), generated from its metadata.
#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "artifacthub")]
    pub out: PathBuf,
    /// Write nothing; exit 1 when a committed file differs.
    #[arg(long)]
    pub check: bool,
}

pub fn run(root: &Path, Args { out, check }: Args) -> Result<ExitCode> {
    let out = resolve(root, &out);
    let policies = workspace::policies(root)?;
    let mut drift = Vec::new();
    for policy in &policies {
        let files = package::generate(policy, &out)?;
        if check {
            drift.extend(files.drift());
        } else if files.write()? {
            println!("wrote {}", files.dir.display());
        }
    }
    drift.extend(package::orphans(&out, &policies)?);
    for path in &drift {
        eprintln!("out of date: {}", path.display());
    }
    Ok(if drift.is_empty() || !check {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
