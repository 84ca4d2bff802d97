//! `--old <revision>`: the manifests as they were at a git revision of the
//! repository the inputs live in, read with `git` itself, so a pull request
//! is checked against its base without a second checkout.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::manifests::{Source, is_manifest_name};

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("running git (is it installed?)")?;
    if !output.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(output.stdout)
}

/// The directory git runs in for an input: the input if it is a directory,
/// else the directory holding it.
fn anchor(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.to_owned()
    } else {
        match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        }
    }
}

/// Whether `revision` names a commit in the repository holding `near`.
pub fn is_revision(near: &Path, revision: &str) -> bool {
    git(
        &anchor(near),
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{revision}^{{commit}}"),
        ],
    )
    .is_ok()
}

/// Every manifest file at `revision` under the same paths as the new
/// inputs, named as the inputs name them (`dir/file.yaml`), so objects
/// compare file by file and a deletion points where the file was.
pub fn sources(revision: &str, inputs: &[PathBuf]) -> Result<Vec<Source>> {
    let mut sources = Vec::new();
    for input in inputs {
        if input == Path::new("-") {
            bail!("--old {revision} reads the same paths as the inputs: standard input has none");
        }
        let dir = anchor(input);
        let top = String::from_utf8(git(&dir, &["rev-parse", "--show-toplevel"])?)
            .context("git printed a repository path that is not UTF-8")?;
        let top = std::fs::canonicalize(top.trim())?;
        let absolute = std::fs::canonicalize(input)
            .or_else(|_| std::path::absolute(input))
            .with_context(|| format!("resolving {}", input.display()))?;
        let relative = absolute.strip_prefix(&top).with_context(|| {
            format!(
                "{} is outside the repository {}",
                input.display(),
                top.display()
            )
        })?;
        let spec = relative.to_string_lossy().replace('\\', "/");
        let mut args = vec![
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            "--full-tree",
            revision,
        ];
        if !spec.is_empty() {
            args.extend(["--", spec.as_str()]);
        }
        let listing = git(&dir, &args)?;
        for name in listing.split(|b| *b == 0).filter(|n| !n.is_empty()) {
            let name = String::from_utf8_lossy(name).into_owned();
            if !is_manifest_name(Path::new(&name)) {
                continue;
            }
            let bytes = git(&dir, &["cat-file", "blob", &format!("{revision}:{name}")])?;
            let text = String::from_utf8(bytes)
                .with_context(|| format!("{revision}:{name} is not UTF-8 text"))?;
            // The same name the file has among the new inputs.
            let within = Path::new(&name)
                .strip_prefix(relative)
                .unwrap_or_else(|_| Path::new(""));
            let file = if within.as_os_str().is_empty() {
                input.clone()
            } else {
                input.join(within)
            };
            sources.push(Source { file, text });
        }
    }
    Ok(sources)
}
