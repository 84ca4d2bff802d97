//! `cargo xtask case-files` and `run`: one case split into the files
//! `kwctl run` takes, and run through our host with kwctl's flags.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use layout::checkout as root;

fn xtask(root: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The compiled modules a cache directory holds (testkit).
fn compiled(cache: &Path) -> Vec<testkit::Compiled> {
    testkit::compiled_modules(cache).unwrap()
}

/// `run` on a no-delete case with `--root` at `home` (where it keeps its
/// compiled modules): its exit code and the AdmissionResponse it prints.
fn run_cached(home: &Path, files: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let request = files.join("request.json");
    let settings = files.join("settings.json");
    let module = root().join("dist/no-delete.wasm");
    let mut args = vec![
        "run",
        "--request-path",
        request.to_str().unwrap(),
        "--settings-path",
        settings.to_str().unwrap(),
    ];
    args.extend(extra);
    args.push(module.to_str().unwrap());
    let output = xtask(home, &args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.code(), stdout)
}

#[test]
fn run_keeps_compiled_modules_as_kwctl_does_unless_told_not_to() {
    let home = scratch("run-cache");
    let files = home.join("case");
    let split = xtask(
        &root(),
        &[
            "case-files",
            "policies/no-delete/tests/cases/delete-custom-label-key.yaml",
            files.to_str().unwrap(),
        ],
    );
    assert!(split.status.success(), "{split:?}");

    let uncached = home.join("uncached");
    std::fs::create_dir_all(&uncached).unwrap();
    let (code, fresh) = run_cached(&uncached, &files, &["--disable-wasmtime-cache"]);
    assert_eq!(code, Some(0));
    assert!(fresh.contains("\"allowed\":false"), "{fresh}");
    assert!(
        !uncached.join("target").exists(),
        "--disable-wasmtime-cache wrote a cache"
    );

    let cached = home.join("cached");
    std::fs::create_dir_all(&cached).unwrap();
    let store = cached.join("target/xtask/compiled");
    let (_, first) = run_cached(&cached, &files, &[]);
    let stored = compiled(&store);
    assert_eq!(stored.len(), 1, "one compiled module: {stored:?}");
    let (_, second) = run_cached(&cached, &files, &[]);
    assert_eq!(first, fresh);
    assert_eq!(second, fresh);
    assert!(
        compiled(&store) == stored,
        "the second run compiled the module again"
    );
    std::fs::remove_dir_all(&home).unwrap();
}

#[test]
fn help_lists_every_task() {
    let output = xtask(&root(), &["--help"]);
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    // Every folder of src/commands is a task (tests/commands.rs).
    let mut tasks: Vec<String> = std::fs::read_dir(root().join("xtask/src/commands"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .map(|path| {
            path.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .replace('_', "-")
        })
        .collect();
    tasks.sort();
    assert!(tasks.len() > 3, "{tasks:?}");
    for task in &tasks {
        let task = task.as_str();
        assert!(
            help.lines()
                .any(|line| line.split_whitespace().next() == Some(task)),
            "{task} is not listed: {help}"
        );
    }
}
