//! `check`: the whole bundle over manifests, before and after a change,
//! as a cluster would admit them, with findings at the file, line and
//! column of the field they name; with a cluster snapshot, the policies'
//! cluster reads answered from it, and on request its upgrade checklist.
//! The work is the check engine's ([`crate::engine`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use layout::resolve;

use crate::bundle::Modules;
use crate::checklist;
use crate::engine::{self, FailOn, Format, Options};
use crate::manifests;
use crate::manifests::vars::Vars;

/// Evaluate the whole bundle against Kubernetes manifests and print every
/// violation; exits 1 when there is one, and with --cluster 3 when
/// nothing failed but a rule could not check.
///
/// With one tree every object is a CREATE (as audit-scanner sees live
/// objects). With --old, objects only in the new tree are CREATE, changed
/// ones UPDATE, objects only in the old tree DELETE.
#[derive(clap::Args)]
pub struct Args {
    /// Manifest files or directories after the change (`-`: standard
    /// input).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Manifests before the change: a directory, or a git revision
    /// (`origin/main`) whose tree is read at the same paths.
    #[arg(long)]
    pub old: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Which findings fail the check (exit 1).
    #[arg(long, value_enum, default_value = "violation")]
    pub fail_on: FailOn,
    /// Refuse documents that are not Kubernetes objects instead of
    /// skipping them.
    #[arg(long)]
    pub strict: bool,
    /// A value for a Flux `${VAR}` placeholder; repeatable.
    #[arg(long = "var", value_name = "KEY=VALUE")]
    pub vars: Vec<String>,
    /// Placeholder values from KEY=VALUE lines or a ConfigMap/Secret
    /// manifest; repeatable.
    #[arg(long, value_name = "FILE")]
    pub vars_from: Vec<PathBuf>,
    /// Fail only on findings this file (from --write-baseline) lacks.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write every finding to FILE as a baseline, and exit 0.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    #[command(flatten)]
    pub modules: Modules,
    /// A snapshot of the cluster: files or directories of `kubectl get
    /// … -o json|yaml` output (Lists or objects; `snapshot-command`
    /// prints the command), repeatable. The policies' cluster reads are
    /// answered from its objects, as policy-server answers them from the
    /// live cluster; without it, context-aware checks keep their static
    /// verdict and say so.
    #[arg(long, value_name = "SNAPSHOT")]
    pub cluster: Vec<PathBuf>,
    /// Print the Cozystack 1.6 upgrade checklist of the findings (text
    /// or json) instead of the findings alone.
    #[arg(long, requires = "cluster")]
    pub checklist: bool,
    /// With --cluster, exit 0 rather than 3 when nothing failed but a rule
    /// could not check (the snapshot did not read what it needs).
    #[arg(long, requires = "cluster")]
    pub allow_incomplete: bool,
    /// List every not-checked finding. Without --cluster, a report-only
    /// policy's (upgrade-gate's, upgrade-readiness') are otherwise one line
    /// per rule: offline, what they read is never there.
    #[arg(long)]
    pub verbose: bool,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let Args {
        paths,
        old,
        format,
        json,
        fail_on,
        strict,
        vars,
        vars_from,
        baseline,
        write_baseline,
        modules,
        cluster,
        checklist,
        allow_incomplete,
        verbose,
    } = args;
    let mut bundle = modules.bundle(root)?;
    if checklist {
        bundle = checklist::configure(bundle);
    }
    if !cluster.is_empty() {
        bundle = bundle.at_cluster_release();
    }
    let paths: Vec<PathBuf> = paths
        .iter()
        .map(|p| {
            if p == Path::new("-") {
                p.clone()
            } else {
                resolve(root, p)
            }
        })
        .collect();
    let vars_from: Vec<PathBuf> = vars_from.iter().map(|p| resolve(root, p)).collect();
    let vars_from: Vec<&Path> = vars_from.iter().map(PathBuf::as_path).collect();
    let options = Options {
        old: old
            .map(|o| engine::old(&o, &resolve(root, Path::new(&o)), &paths))
            .transpose()?,
        paths,
        strict,
        vars: Vars::load(&vars, &vars_from)?,
        format: if json { Format::Json } else { format },
        fail_on,
        baseline: baseline.map(|p| resolve(root, &p)),
        write_baseline: write_baseline.map(|p| resolve(root, &p)),
        cluster: manifests::cluster(root, &cluster, Some(&bundle.reads()?))?,
        checklist,
        allow_incomplete,
        judge_snapshot: false,
        verbose,
    };
    Ok(engine::check(&options, &bundle)?.code())
}

