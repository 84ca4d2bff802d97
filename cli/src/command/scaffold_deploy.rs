//! `scaffold-deploy`: a starting ClusterAdmissionPolicy for a policy.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::deploy;
use crate::workspace::{self, PolicyCrate};

#[derive(clap::Args)]
pub struct Args {
    pub policy: String,
}

pub fn run(root: &Path, Args { policy }: Args) -> Result<ExitCode> {
    let selected = workspace::select(workspace::policies(root)?, &[policy])?;
    for policy in selected {
        print!(
            "{}",
            serde_saphyr::to_string(&deploy::scaffold(&policy.metadata()?)?)?
        );
    }
    Ok(ExitCode::SUCCESS)
}
