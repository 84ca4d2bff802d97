//! `report`: one readable report of policy findings, from PolicyReports,
//! OpenReports or the JSON of `check`, compared with a previous report on
//! request.

mod fix;
mod identify;
mod input;
mod message;
mod output;
mod policy_report;
mod render;
mod since;
mod totals;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};

use crate::finding::Finding;
use identify::Ours;

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// For a ticket or a pull-request comment.
    Markdown,
    Csv,
    /// What `--since` reads back.
    Json,
    /// One self-contained page: charts and a sortable, filterable table.
    Html,
}

/// One report of policy findings from PolicyReports, OpenReports or
/// `check --json` output: totals, every finding with its rule and fix,
/// and what changed since a previous report.
///
/// Only this bundle's findings unless --all-policies: a finding is ours
/// when its message starts with a `[policy/rule]` tag naming one of our
/// policies, or, untagged, when the deployed policy has one of our names.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files holding PolicyReports, ClusterPolicyReports, openreports.io
    /// Reports or ClusterReports (objects, Lists, multi-document YAML), the
    /// JSON of `check --json`, or of `preflight --format json` (its upgrade
    /// checklist comes first); `-` reads standard input.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// A previous input, or this command's `--format json` output: mark
    /// findings new or still open, and list the resolved ones.
    #[arg(long, value_name = "FILE")]
    pub since: Option<PathBuf>,
    /// Keep the findings of policies that are not this bundle's.
    #[arg(long)]
    pub all_policies: bool,
}

/// Reads the inputs and prints the report.
pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let ours = Ours::load()?;
    let mut findings = Vec::new();
    let mut checklist = Vec::new();
    for path in &args.inputs {
        let input = read_path(root, path, ours)?;
        findings.extend(input.findings);
        checklist.extend(input.checklist);
    }
    let keep = |f: &Finding| args.all_policies || f.ours;
    findings.retain(keep);
    let compared = args.since.is_some();
    let resolved = match &args.since {
        Some(path) => {
            let mut previous = read_path(root, path, ours)?.findings;
            previous.retain(keep);
            since::compare(&mut findings, &previous)
        }
        None => Vec::new(),
    };
    let mut report = output::Report::new(findings, resolved, compared);
    report.checklist = checklist;
    write_out(&render::render(&report, args.format)?)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the report; a reader that stops early (`| head`) is no error.
fn write_out(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the report"),
    }
}

fn read_path(root: &Path, path: &Path, ours: Ours) -> Result<input::Input> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading standard input")?;
        return input::read_input(&text, "standard input", ours);
    }
    let path = layout::resolve(root, path);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    input::read_input(&text, &path.display().to_string(), ours)
}
