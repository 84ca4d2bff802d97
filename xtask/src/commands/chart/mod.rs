//! `chart`: the chart's files that follow from the policies, written or
//! checked.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

mod generate;

/// Write the chart's files that follow from the policies
/// (charts/cozystack-policies/files/policies.yaml from each metadata.yml,
/// values.schema.json from each settings type, templates/policies/ from
/// each policy's cluster-admission-policy.yaml).
#[derive(clap::Args)]
pub struct Args {
    /// Write nothing; exit 1 when a committed file differs.
    #[arg(long)]
    pub check: bool,
}

pub fn run(root: &Path, Args { check }: Args) -> Result<ExitCode> {
    generate::generate(root)?.commit(root, check)
}
