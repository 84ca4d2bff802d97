//! What the integration tests share: the workspace and its built modules.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use host::PolicyModule;

pub fn workspace_root() -> PathBuf {
    // crates/host is two levels under the root.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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
pub fn load_module(root: &Path, policy: &str) -> Result<PolicyModule, String> {
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
