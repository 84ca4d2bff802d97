//! Where `check` takes its modules from, first match wins: the `--policy`
//! arguments, a `--dist` directory named on the command line (in a clone,
//! the module of every policy of its workspace; elsewhere, every module the
//! directory holds), the modules embedded at build time (CONTRIBUTING.md:
//! "Building the CLI"), `dist/` of the clone the command runs in.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use host::PolicyModule;
use rayon::prelude::*;

use crate::oci::pull;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_modules.rs"));
}

/// The modules this binary was built with, by policy name; empty when it
/// was built without `COZYSTACK_POLICIES_DIST`.
pub fn embedded() -> &'static [(&'static str, &'static [u8])] {
    embedded::MODULES
}

/// What the user asked for on the command line.
pub struct Request<'a> {
    /// `--policy`: module files, directories of modules, or `registry://`
    /// references.
    pub policies: &'a [String],
    /// `--dist`, when given.
    pub dist: Option<&'a Path>,
    /// `--root`, where a clone's `policies/` and `dist/` are.
    pub root: &'a Path,
}

/// Compiles the modules the request names, in the order of the lookup.
pub fn load(request: &Request) -> Result<Vec<PolicyModule>> {
    if !request.policies.is_empty() {
        let mut modules = Vec::new();
        for policy in request.policies {
            modules.extend(load_policy_arg(policy, request.root)?);
        }
        return Ok(modules);
    }
    if let Some(dist) = request.dist {
        return if is_clone(request.root) {
            load_dist(dist, request.root)
        } else {
            load_directory(dist, "--dist")
        };
    }
    if !embedded().is_empty() {
        return in_order(embedded().par_iter().map(|(name, bytes)| {
            PolicyModule::from_bytes((*name).to_owned(), bytes)
                .with_context(|| format!("loading the embedded module {name}"))
        }));
    }
    if !is_clone(request.root) {
        bail!(
            "this cozystack-policies carries no embedded modules (it was built without \
             COZYSTACK_POLICIES_DIST) and {} is not a clone of the repository: pass \
             --policy with module files or registry:// references, or use a released \
             binary (CONTRIBUTING.md: \"Building the CLI\")",
            request.root.display()
        );
    }
    load_dist(&request.root.join("dist"), request.root)
}

/// Every policy's module of the clone at `root`, from `dist`.
fn load_dist(dist: &Path, root: &Path) -> Result<Vec<PolicyModule>> {
    let policies = layout::policies(root)?;
    if policies.is_empty() {
        bail!(
            "no policy crates under {}",
            root.join(layout::POLICIES).display()
        );
    }
    let paths: Vec<PathBuf> = policies.iter().map(|p| p.module_path(dist)).collect();
    if let Some(missing) = paths.iter().find(|m| !m.is_file()) {
        bail!(
            "{} is missing: build the bundle with `make dist`, or pass --policy",
            missing.display()
        );
    }
    load_files(&paths)
}

/// One `--policy` argument: a registry reference, a directory of modules or
/// a module file.
fn load_policy_arg(arg: &str, root: &Path) -> Result<Vec<PolicyModule>> {
    if let Some(reference) = arg.strip_prefix(pull::SCHEME) {
        return Ok(vec![pull::load(reference)?]);
    }
    let path = layout::resolve(root, Path::new(arg));
    if path.is_dir() {
        return load_directory(&path, "--policy");
    }
    Ok(vec![load_file(&path).with_context(|| {
        format!("--policy {arg}: expected a module file, a directory of modules or registry://host/repo:tag")
    })?])
}

/// Whether `root` is a clone of the repository, whose workspace names the
/// policies `dist/` must hold.
fn is_clone(root: &Path) -> bool {
    root.join("policies").is_dir()
}

/// Every `.wasm` module of `dir`, by file name: a `--policy` directory, or
/// a `--dist` directory outside a clone (a release's modules unpacked
/// anywhere). `flag` names the option in errors.
fn load_directory(dir: &Path, flag: &str) -> Result<Vec<PolicyModule>> {
    let reading = || format!("{flag} {}: reading the directory", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(reading)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(reading)?;
    files.retain(|f| f.extension().is_some_and(|e| e == "wasm"));
    files.sort();
    if files.is_empty() {
        bail!(
            "{flag} {}: the directory holds no .wasm module",
            dir.display()
        );
    }
    load_files(&files)
}

/// Compiles the modules on every core: wasmtime spreads one module's
/// functions over the cores too, but a small module leaves them idle while
/// it reads and links.
fn load_files(paths: &[PathBuf]) -> Result<Vec<PolicyModule>> {
    in_order(paths.par_iter().map(|path| load_file(path)))
}

/// The modules in the order asked, or the first one's error.
fn in_order(
    modules: impl IndexedParallelIterator<Item = Result<PolicyModule>>,
) -> Result<Vec<PolicyModule>> {
    let modules: Vec<Result<PolicyModule>> = modules.collect();
    modules.into_iter().collect()
}

fn load_file(path: &Path) -> Result<PolicyModule> {
    PolicyModule::from_file(path).with_context(|| format!("loading {}", path.display()))
}
