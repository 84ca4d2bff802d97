//! Runs every case of every policy through the host against the built
//! module in `dist/`, one test per case (`cargo test -p cozystack-policy-host
//! --test cases -- no-delete/` filters by policy).
//!
//! The modules are what `make dist` produced; a module older than its
//! sources fails here rather than silently testing stale code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use host::PolicyModule;
use host::case::{Case, case_files};
use libtest_mimic::{Arguments, Failed, Trial};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn newest_mtime(dir: &Path) -> Option<SystemTime> {
    let mut newest = None;
    for entry in std::fs::read_dir(dir).ok()?.filter_map(Result::ok) {
        let path = entry.path();
        let mtime = if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|n| n == "tests" || n == "target")
            {
                continue;
            }
            newest_mtime(&path)
        } else {
            entry.metadata().and_then(|m| m.modified()).ok()
        };
        newest = newest.max(mtime);
    }
    newest
}

/// Loads `dist/<policy>.wasm`, refusing a module older than its sources.
fn load_module(root: &Path, policy: &str) -> Result<PolicyModule, String> {
    let dist = std::env::var_os("COZYSTACK_POLICIES_DIST")
        .map_or_else(|| root.join("dist"), PathBuf::from);
    let module = dist.join(format!("{policy}.wasm"));
    let built = std::fs::metadata(&module)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{}: {e}; run `make dist` first", module.display()))?;
    let sources = [root.join("policies").join(policy), root.join("shared")];
    if let Some(source) = sources.iter().filter_map(|d| newest_mtime(d)).max()
        && source > built
    {
        return Err(format!(
            "{} is older than its sources; run `make dist`",
            module.display()
        ));
    }
    PolicyModule::from_file(&module).map_err(|e| e.to_string())
}

fn main() {
    let args = Arguments::from_args();
    let root = workspace_root();
    let mut trials = Vec::new();
    let mut policies: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let policy_dirs = std::fs::read_dir(root.join("policies")).map(|dirs| {
        dirs.filter_map(Result::ok)
            .map(|d| d.path())
            .filter(|p| p.join("Cargo.toml").exists())
            .collect::<Vec<_>>()
    });
    for dir in policy_dirs.unwrap_or_default() {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        policies.insert(
            name,
            case_files(&dir.join("tests/cases")).unwrap_or_default(),
        );
    }
    for (policy, files) in policies {
        let module = Arc::new(load_module(&root, &policy));
        if files.is_empty() {
            trials.push(Trial::test(format!("{policy}/has-cases"), || {
                Err("no cases".into())
            }));
        }
        for file in files {
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let module = Arc::clone(&module);
            trials.push(Trial::test(format!("{policy}/{stem}"), move || {
                let module = module
                    .as_ref()
                    .as_ref()
                    .map_err(|e| Failed::from(e.as_str()))?;
                let case = Case::load(&file).map_err(|e| Failed::from(e.to_string()))?;
                case.run(module)
                    .map_err(|e| Failed::from(format!("{}: {e}", case.description)))
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
