//! `cargo xtask`: the tasks of the people who build this repository, kept
//! out of the users' CLI (cargo's xtask convention): annotating dist/, the
//! benchmarks, the files generated from the policies (the chart's, Artifact
//! Hub's), a starting manifest for a new policy, and one case run by hand.
//! The Makefile runs them; CONTRIBUTING.md's "Development" section names them.
//!
//! Each task is a folder under `commands/` with its arguments and its
//! `run`, listed once in [`commands`].

mod benchmark;
mod commands;
mod generated;
mod workspace;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(about, version)]
struct Xtask {
    /// The repository root (policies/, dist/, target/).
    #[arg(long, global = true, default_value = ".")]
    root: PathBuf,
    #[command(subcommand)]
    command: commands::Command,
}

fn main() -> ExitCode {
    let Xtask { root, command } = Xtask::parse();
    match command.run(&root) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
