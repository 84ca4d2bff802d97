//! `cozystack-policies`: checks manifests and cluster snapshots against the
//! policy bundle, reports what a cluster's policies found, and publishes
//! the bundle's modules. Each subcommand is a folder under `commands/`;
//! the modules beside it hold what they share.

mod bundle;
mod cache;
mod check_json;
mod checklist;
mod commands;
mod engine;
mod finding;
mod installation;
mod manifests;
mod oci;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// The repository root (policies/, dist/).
    #[arg(long, global = true, default_value = ".")]
    root: PathBuf,
    #[command(subcommand)]
    command: commands::Command,
}

fn main() -> ExitCode {
    let Cli { root, command } = Cli::parse();
    match command.run(&root) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
