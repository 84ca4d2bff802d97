//! The subcommands: each owns its arguments (`Args`) and its `run`, which
//! `main.rs` dispatches to; what several share (where the modules come
//! from, paths under `--root`) is here.

pub mod artifacthub;
pub mod bench;
pub mod bench_server;
pub mod case_files;
pub mod chart;
pub mod check;
pub mod dist;
pub mod preflight;
pub mod push;
pub mod run;
pub mod scaffold_deploy;
pub mod snapshot;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::workspace::resolve;
use crate::{bundle_source, compile_cache, settings_source};

/// Where the modules come from and their settings (`check`, `preflight`).
#[derive(clap::Args)]
pub struct Modules {
    /// Policy settings: a YAML or JSON file mapping policy names to
    /// their settings, or POLICY=FILE for one policy; repeatable, later
    /// ones win.
    #[arg(long = "settings", value_name = "FILE|POLICY=FILE")]
    settings: Vec<String>,
    /// ClusterAdmissionPolicy and AdmissionPolicy manifests (a file or a
    /// directory, like deploy/): each policy gets the `spec.settings` of
    /// the manifest whose module names it; repeatable.
    #[arg(long, value_name = "PATH")]
    from_deploy: Vec<PathBuf>,
    /// The modules to check with instead of the bundle: a module file, a
    /// directory of modules, or registry://host/repo:tag[@sha256:…]
    /// (pulled and cached by digest); repeatable.
    #[arg(long, value_name = "MODULE")]
    policy: Vec<String>,
    /// Directory of the annotated modules: in a clone, it must hold every
    /// policy of the workspace; elsewhere, every .wasm in it is used.
    /// Without it (and without --policy) the modules embedded at build
    /// time are used, else dist/ of the clone.
    #[arg(long)]
    dist: Option<PathBuf>,
    /// Compile the modules afresh and keep nothing: by default compiled
    /// modules are kept in $XDG_CACHE_HOME/cozystack-policies/compiled
    /// (else ~/.cache/...), keyed by the module's bytes, so later runs
    /// skip compiling. The environment variable turns it on with any
    /// value but empty, 0, false, no or off.
    #[arg(
            long,
            env = "COZYSTACK_POLICIES_NO_COMPILE_CACHE",
            value_parser = clap::builder::FalseyValueParser::new()
        )]
    no_compile_cache: bool,
}

impl Modules {
    /// The bundle these flags name, with its settings.
    pub fn bundle(&self, root: &Path) -> Result<crate::check::Bundle> {
        if !self.no_compile_cache {
            compile_cache::enable();
        }
        let modules = self.load(root)?;
        let settings = settings_source::collect(root, &self.from_deploy, &self.settings)?;
        Ok(crate::check::Bundle::new(modules, settings))
    }

    pub fn load(&self, root: &Path) -> Result<Vec<host::PolicyModule>> {
        bundle_source::load(&bundle_source::Request {
            policies: &self.policy,
            dist: self.dist.as_ref().map(|d| resolve(root, d)).as_deref(),
            root,
        })
    }
}

/// The snapshot `--cluster` names, `None` without one.
pub fn snapshot(
    root: &Path,
    paths: &[PathBuf],
) -> Result<Option<std::sync::Arc<capabilities::snapshot::Snapshot>>> {
    if paths.is_empty() {
        return Ok(None);
    }
    let paths: Vec<PathBuf> = paths.iter().map(|p| resolve(root, p)).collect();
    let snapshot =
        crate::preflight::load_snapshot(&paths).context("reading the cluster snapshot")?;
    Ok(Some(std::sync::Arc::new(snapshot)))
}

/// What both benchmarks measure: the modules, and the floor they are set
/// against.
#[derive(clap::Args)]
pub struct Measured {
    #[arg(long, default_value = "dist")]
    pub dist: PathBuf,
    /// The floor module, built with the policies' profile.
    #[arg(
        long,
        default_value = "target/wasm32-wasip1/policy-opt/floor_policy.wasm"
    )]
    pub floor: PathBuf,
}

/// A benchmark's exit: a failure that names each budget broken, success
/// when none is (a figure above its budget is not a failure, however it
/// compares with the last run).
pub fn within_budget(broken: &[String]) -> ExitCode {
    if broken.is_empty() {
        return ExitCode::SUCCESS;
    }
    eprintln!("over budget:");
    for line in broken {
        eprintln!("  {line}");
    }
    ExitCode::FAILURE
}
