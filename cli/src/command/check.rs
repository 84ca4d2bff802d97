//! `check`: every policy over manifests, before and after a change.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use super::{Modules, snapshot};
use crate::workspace::resolve;
use crate::{check, preflight};

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
    pub format: check::Format,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Which findings fail the check (exit 1).
    #[arg(long, value_enum, default_value = "violation")]
    pub fail_on: check::FailOn,
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
    } = args;
    let mut bundle = modules.bundle(root)?;
    if checklist {
        bundle = bundle.at_release(preflight::BEFORE_THE_UPGRADE, shared::Release::V1_5_4);
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
    let options = check::Options {
        old: old
            .map(|o| check::old(&o, &resolve(root, Path::new(&o)), &paths))
            .transpose()?,
        paths,
        strict,
        vars: check::vars::Vars::load(&vars, &vars_from)?,
        format: if json { check::Format::Json } else { format },
        fail_on,
        baseline: baseline.map(|p| resolve(root, &p)),
        write_baseline: write_baseline.map(|p| resolve(root, &p)),
        cluster: snapshot(root, &cluster)?,
        checklist,
        allow_incomplete,
    };
    Ok(check::run(&options, &bundle)?.code())
}
