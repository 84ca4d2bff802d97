//! The check engine: the whole bundle over manifests (or a cluster
//! snapshot's objects), as a cluster would admit them, the findings
//! against a baseline, in each output format, and on request the upgrade
//! checklist. `check` and `preflight` both run it.

mod baseline;
mod git;
mod junit;
mod sarif;
mod text;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use admission::Operation;
use anyhow::Result;
use capabilities::snapshot::{Capture, Snapshot};
use host::HostCapabilities;

use crate::bundle::Bundle;
use crate::check_json::{CheckJson, Folded, Summary};
use crate::checklist::{self, CheckStatus, Conclusion};
use crate::finding::{Finding, Outcome};
use crate::manifests::vars::Vars;
use crate::manifests::{self, Loading};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Sarif,
    Junit,
}

/// How a run ends, as its exit code says: a clean run from one that
/// found what fails it, and both from one that could not check everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Exit 0.
    Clean,
    /// Exit 1: a finding (`--fail-on`) or a failed check.
    Failed,
    /// Exit 3: nothing failed, but the snapshot did not answer every read
    /// a rule made (`--allow-incomplete` accepts it).
    Incomplete,
    /// Exit 4: the checklist's cluster has run the 1.6 migrations already.
    AlreadyUpgraded,
}

impl Exit {
    pub fn code(self) -> std::process::ExitCode {
        match self {
            Exit::Clean => std::process::ExitCode::SUCCESS,
            Exit::Failed => std::process::ExitCode::from(1),
            Exit::Incomplete => std::process::ExitCode::from(3),
            Exit::AlreadyUpgraded => std::process::ExitCode::from(4),
        }
    }
}

/// Which findings fail the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Violation,
    Warning,
    Never,
}

/// Where the objects before the change come from.
#[derive(Debug, Clone)]
pub enum Old {
    Directory(PathBuf),
    Revision(String),
}

/// Everything `check` is asked.
#[derive(Debug)]
pub struct Options {
    pub paths: Vec<PathBuf>,
    pub old: Option<Old>,
    pub strict: bool,
    pub vars: Vars,
    pub format: Format,
    pub fail_on: FailOn,
    pub baseline: Option<PathBuf>,
    pub write_baseline: Option<PathBuf>,
    /// The cluster the policies' reads are answered from; none offline.
    pub cluster: Option<Arc<Snapshot>>,
    /// Print the 1.6 upgrade checklist (text or JSON) instead of the
    /// findings alone; needs `cluster`.
    pub checklist: bool,
    /// Exit 0 rather than 3 when, with a cluster snapshot, a rule could not
    /// check (or a check was not checked) and nothing failed.
    pub allow_incomplete: bool,
    /// Judge the snapshot's own objects, as it keeps them, rather than
    /// `paths` read again (`preflight`: one read of the file).
    pub judge_snapshot: bool,
    /// List every not-checked finding, even offline ([`fold`]).
    pub verbose: bool,
}

/// `--old` as given: a directory, or else a git revision.
pub fn old(spec: &str, resolved: &Path, inputs: &[PathBuf]) -> Result<Old> {
    if resolved.is_dir() {
        return Ok(Old::Directory(resolved.to_owned()));
    }
    let near = inputs
        .iter()
        .find(|p| p.as_path() != Path::new("-"))
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    if git::is_revision(&near, spec) {
        Ok(Old::Revision(spec.to_owned()))
    } else {
        anyhow::bail!(
            "--old {spec}: neither a directory nor a git revision of the inputs' repository"
        )
    }
}

/// Runs the check and prints; returns how it ends.
pub fn check(options: &Options, bundle: &Bundle) -> Result<Exit> {
    let loading = Loading {
        strict: options.strict,
        vars: &options.vars,
    };
    let old_sources = match &options.old {
        Some(Old::Directory(dir)) => manifests::read(std::slice::from_ref(dir))?,
        Some(Old::Revision(revision)) => git::sources(revision, &options.paths)?,
        None => Vec::new(),
    };
    let old = manifests::load(old_sources, loading)?;
    let (changes, skipped, unjudged) = match (&options.cluster, options.judge_snapshot) {
        (Some(snapshot), true) => {
            let file = options.paths.first().cloned().unwrap_or_default();
            let (changes, unjudged) =
                manifests::snapshot_changes(snapshot, &file, |request| bundle.judges(request))?;
            (changes, 0, unjudged)
        }
        _ => {
            let mut new = manifests::load(manifests::read(&options.paths)?, loading)?;
            // A snapshot's capture record describes the snapshot, not the cluster.
            new.manifests.retain(|m| !Capture::is_record(&m.object));
            for notice in &new.skipped {
                eprintln!("skipped {notice}");
            }
            let skipped = new.skipped.len();
            (
                manifests::changes(old.manifests, new.manifests)?,
                skipped,
                0,
            )
        }
    };
    if !options.checklist
        && let Some(warning) = options
            .cluster
            .as_deref()
            .and_then(checklist::credential_warning)
    {
        eprintln!("{warning}");
    }
    let capabilities = match &options.cluster {
        Some(snapshot) => HostCapabilities::Snapshot(Arc::clone(snapshot)),
        None => HostCapabilities::offline(),
    };
    let evaluation = bundle.evaluate(&changes, &capabilities)?;
    let mut findings = evaluation.findings;
    findings.sort_by_cached_key(|f| (f.location.clone(), f.rule.to_string()));
    if let Some(path) = &options.write_baseline {
        baseline::write(path, &findings)?;
    }
    let known = options
        .baseline
        .as_deref()
        .map(baseline::read)
        .transpose()?
        .unwrap_or_default();
    let before = findings.len();
    findings.retain(|f| !known.contains(&baseline::Entry::of(f)));
    let count = |op| changes.iter().filter(|c| c.operation == op).count();
    let outcomes = |outcome| findings.iter().filter(|f| f.outcome() == outcome).count();
    let (violations, warnings, not_checked) = (
        outcomes(Outcome::Fail),
        outcomes(Outcome::Warn),
        outcomes(Outcome::NotChecked),
    );
    let baselined = before - findings.len();
    let folded = if options.cluster.is_none() && !options.verbose {
        fold(&mut findings)
    } else {
        Vec::new()
    };
    let summary = Summary {
        objects: changes.len() + unjudged,
        create: count(Operation::Create) + unjudged,
        update: count(Operation::Update),
        delete: count(Operation::Delete),
        unmatched: evaluation.unmatched + unjudged,
        skipped,
        violations,
        warnings,
        not_checked,
        baselined,
        folded,
    };
    if options.checklist {
        return checklist(options, findings, summary);
    }
    let failed = options.write_baseline.is_none()
        && match options.fail_on {
            FailOn::Violation => summary.violations > 0,
            FailOn::Warning => summary.violations + summary.warnings > 0,
            FailOn::Never => false,
        };
    // Offline, every cluster read fails by design; with a snapshot, a rule
    // that could not check means the snapshot lacks what it reads.
    let incomplete = options.cluster.is_some()
        && summary.not_checked > 0
        && options.write_baseline.is_none()
        && !options.allow_incomplete
        && options.fail_on != FailOn::Never;
    let exit = if failed {
        Exit::Failed
    } else if incomplete {
        Exit::Incomplete
    } else {
        Exit::Clean
    };
    let lines: Vec<String> = summary
        .folded
        .iter()
        .map(Folded::line)
        .chain([summary.line()])
        .collect();
    match options.format {
        Format::Text => print!("{}", text::render(&findings, &summary, text::colour())),
        Format::Json => println!(
            "{}",
            CheckJson {
                checklist: Vec::new(),
                findings,
                summary,
            }
            .to_json()?
        ),
        Format::Sarif => println!(
            "{}",
            serde_json::to_string_pretty(&sarif::render(&findings, &summary.folded, bundle))?
        ),
        Format::Junit => println!("{}", junit::render(&findings, &summary.folded, &changes)?),
    }
    if options.format != Format::Text {
        for line in lines {
            eprintln!("{line}");
        }
    }
    Ok(exit)
}

/// Offline, every cluster read fails by design: a report-only policy's
/// not-checked findings (one per object and rule that reads the cluster)
/// say nothing an author can act on. They leave `findings` and come back
/// one per rule, counted.
fn fold(findings: &mut Vec<Finding>) -> Vec<Folded> {
    let mut folded: BTreeMap<String, usize> = BTreeMap::new();
    findings.retain(|finding| {
        let fold = finding.is_report_only_not_checked();
        if fold {
            *folded.entry(finding.rule.to_string()).or_default() += 1;
        }
        !fold
    });
    folded
        .into_iter()
        .map(|(rule, findings)| Folded { rule, findings })
        .collect()
}

/// Prints the upgrade checklist of the snapshot's findings; fails as
/// `--fail-on` says (on a failed check, or on a warned one too), and is
/// incomplete when a check was not checked.
fn checklist(options: &Options, findings: Vec<Finding>, summary: Summary) -> Result<Exit> {
    let Some(snapshot) = &options.cluster else {
        anyhow::bail!("the checklist judges a cluster: give its snapshot with --cluster");
    };
    let outcomes = checklist::judge(&findings, snapshot);
    let conclusion = Conclusion::of(&outcomes);
    let failed = match options.fail_on {
        FailOn::Violation => outcomes.iter().any(|o| o.status == CheckStatus::Fail),
        FailOn::Warning => outcomes
            .iter()
            .any(|o| matches!(o.status, CheckStatus::Fail | CheckStatus::Warn)),
        FailOn::Never => false,
    };
    let exit = if conclusion == Conclusion::AlreadyUpgraded {
        Exit::AlreadyUpgraded
    } else if failed {
        Exit::Failed
    } else if conclusion == Conclusion::Incomplete
        && !options.allow_incomplete
        && options.fail_on != FailOn::Never
    {
        Exit::Incomplete
    } else {
        Exit::Clean
    };
    match options.format {
        Format::Text => print!("{}", checklist::render(&outcomes, snapshot)),
        Format::Json => println!(
            "{}",
            CheckJson {
                checklist: outcomes,
                findings,
                summary,
            }
            .to_json()?
        ),
        Format::Sarif | Format::Junit => {
            anyhow::bail!("the checklist is printed as text or json")
        }
    }
    Ok(exit)
}
