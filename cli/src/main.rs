//! `cozystack-policies`: checks manifests against the policy bundle, and
//! builds, benchmarks and publishes the bundle's modules.

mod artifacthub;
mod bench;
mod bench_hostile;
mod bench_server;
mod bundle_source;
mod chart;
mod check;
mod command;
mod compile_cache;
mod deploy;
mod dist;
mod manifests;
mod preflight;
mod push;
mod registry_auth;
mod registry_source;
mod report;
mod settings_source;
mod sign;
mod workspace;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// The repository root (policies/, dist/).
    #[arg(long, global = true, default_value = ".")]
    root: PathBuf,
    #[command(subcommand)]
    command: Command,
}

/// What `--help` lists is what a user runs: check, preflight,
/// snapshot-command, report and push. The commands only the team runs
/// (building dist/, the benchmarks, the generated files, running one case
/// by hand) are hidden from it and still run; the README's "Development"
/// section names them. Each subcommand's arguments and `run` are in its
/// module under `command/` (`report/` for `report`).
#[derive(Subcommand)]
enum Command {
    /// Evaluate the whole bundle against Kubernetes manifests and print every
    /// violation; exits 1 when there is one, and with --cluster 3 when
    /// nothing failed but a rule could not check.
    ///
    /// With one tree every object is a CREATE (as audit-scanner sees live
    /// objects). With --old, objects only in the new tree are CREATE, changed
    /// ones UPDATE, objects only in the old tree DELETE.
    Check(command::check::Args),
    /// The Cozystack 1.6 upgrade checklist of a cluster snapshot: every
    /// object of it judged as audit-scanner would (a CREATE, through the
    /// policies with background audit), the policies' cluster reads
    /// answered from it, and the findings sorted into the release notes'
    /// checks: pass, fail, warn, not checked, not applicable or by hand.
    ///
    /// The same as `check --cluster SNAPSHOT --checklist SNAPSHOT` with
    /// those policies. Exits 1 when a check fails, 3 when none failed but
    /// one was not checked (INCOMPLETE: the snapshot did not read what it
    /// needs), 0 when every check was made and none failed, 2 on an error.
    Preflight(command::preflight::Args),
    /// Print the shell block that captures a cluster snapshot for
    /// `preflight` and `check --cluster`: a `kubectl get` of each kind the
    /// bundle's policies read and its checklist judges, a record of how
    /// each read ended (forbidden, timeout, not installed), and Secrets
    /// without their credentials. It exits 1 when a read failed.
    #[command(name = "snapshot-command")]
    Snapshot(command::snapshot::Args),
    /// One report of policy findings from PolicyReports, OpenReports or
    /// `check --json` output: totals, every finding with its rule and fix,
    /// and what changed since a previous report.
    ///
    /// Only this bundle's findings unless --all-policies: a finding is ours
    /// when its message starts with a `[policy/rule]` tag naming one of our
    /// policies, or, untagged, when the deployed policy has one of our names.
    Report(report::Args),
    /// Annotate cargo's wasm artifacts into dist/<policy>.wasm.
    #[command(hide = true)]
    Dist(command::dist::Args),
    /// Median evaluation time of each module next to the accept-all floor.
    #[command(hide = true)]
    Bench(command::bench::Args),
    /// Throughput and latency through Kubewarden's own policy-server, each
    /// policy next to the accept-all floor and the reading floor, under load
    /// from `hey`.
    #[command(hide = true)]
    BenchServer(command::bench_server::Args),
    /// Push annotated modules to an OCI registry as `kwctl push` does and
    /// print the immutable digest reference of each.
    ///
    /// Every module in --dist (or the ones named) goes to its metadata's
    /// `io.kubewarden.policy.ociUrl`, tagged `v<version>`; with --registry
    /// to `<registry>/<last segment of ociUrl>` instead. Registries on the
    /// loopback interface are spoken to over plain HTTP, all others over
    /// TLS. Unannotated modules are refused before anything is pushed.
    Push(command::push::Args),
    /// Write the ArtifactHub package of each policy (artifacthub-pkg.yml and
    /// README.md under artifacthub/<policy>/), generated from its metadata.
    #[command(hide = true)]
    Artifacthub(command::artifacthub::Args),
    /// Write the chart's files that follow from the policies
    /// (charts/cozystack-policies/files/policies.yaml from each metadata.yml,
    /// values.schema.json from each settings type).
    #[command(hide = true)]
    Chart(command::chart::Args),
    /// Print a starting ClusterAdmissionPolicy for a policy (from its
    /// metadata), the shape of its template in
    /// charts/cozystack-policies/templates/policies/<policy>.yaml.
    #[command(hide = true)]
    ScaffoldDeploy(command::scaffold_deploy::Args),
    /// Split a case file into the files `kwctl run` takes, to run it by hand.
    #[command(hide = true)]
    CaseFiles(command::case_files::Args),
    /// Evaluate one request with one module through the host, with the flags
    /// and output of `kwctl run`: a case run by hand where kwctl is not
    /// installed.
    #[command(hide = true)]
    Run(command::run::Args),
}

fn run(cli: Cli) -> Result<ExitCode> {
    let root = &cli.root;
    match cli.command {
        Command::Check(args) => command::check::run(root, args),
        Command::Preflight(args) => command::preflight::run(root, args),
        Command::Snapshot(args) => command::snapshot::run(root, args),
        Command::Report(args) => {
            report::run(root, &args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Dist(args) => command::dist::run(root, args),
        Command::Bench(args) => command::bench::run(root, args),
        Command::BenchServer(args) => command::bench_server::run(root, args),
        Command::Run(args) => command::run::run(root, args),
        Command::Push(args) => command::push::run(root, args),
        Command::Artifacthub(args) => command::artifacthub::run(root, args),
        Command::Chart(args) => command::chart::run(root, args),
        Command::ScaffoldDeploy(args) => command::scaffold_deploy::run(root, args),
        Command::CaseFiles(args) => command::case_files::run(root, args),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
