//! `kwctl annotate` and our `dist` agree: the cargo artifact of each policy,
//! annotated by kwctl (`-m metadata.yml -u README.md`) and by `dist`, gives
//! modules that `kwctl inspect` shows identically, except for the
//! `io.kubewarden.kwctl` annotation kwctl adds with its own version.

use std::path::Path;
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

fn main() {
    let args = Arguments::from_args();
    let trials = trials()
        .unwrap_or_else(|error| vec![Trial::test("kwctl/set-up", move || Err(error.into()))]);
    libtest_mimic::run(&args, trials).exit();
}

fn trials() -> Result<Vec<Trial>, String> {
    let policies = e2e::policies()?;
    let names = policies.iter().map(|p| format!("annotate/{p}"));
    let Some(kwctl) = e2e::program("kwctl")? else {
        println!("kwctl is not on PATH: every test below is SKIPPED (`make setup` installs it)");
        return Ok(names
            .map(|name| Trial::test(name, || Ok(())).with_ignored_flag(true))
            .collect());
    };
    Ok(policies
        .into_iter()
        .map(|policy| {
            let kwctl = kwctl.clone();
            Trial::test(format!("annotate/{policy}"), move || {
                annotations_agree(&kwctl, &policy)
            })
        })
        .collect())
}

/// Runs kwctl; its standard output, or what went wrong.
fn kwctl(kwctl: &Path, args: &[&Path]) -> Result<String, Failed> {
    let output = Command::new(kwctl)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", kwctl.display()))?;
    if !output.status.success() {
        return Err(format!(
            "kwctl {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `kwctl inspect -o yaml`, without kwctl's own version annotation.
fn inspect(kwctl_path: &Path, module: &Path) -> Result<String, Failed> {
    let shown = kwctl(
        kwctl_path,
        &[
            Path::new("inspect"),
            Path::new("-o"),
            Path::new("yaml"),
            module,
        ],
    )?;
    Ok(shown
        .lines()
        .filter(|line| !line.trim_start().starts_with("io.kubewarden.kwctl:"))
        .collect::<Vec<_>>()
        .join("\n"))
}

fn annotations_agree(kwctl_path: &Path, policy: &str) -> Result<(), Failed> {
    let root = e2e::root();
    let dir = root.join("policies").join(policy);
    // What `make dist` annotates: cargo's artifact after wasm-opt.
    let artifact = root
        .join("target/wasm32-wasip1/policy-opt")
        .join(format!("{}.wasm", policy.replace('-', "_")));
    let by_kwctl = root
        .join("target/e2e/kwctl-annotate")
        .join(format!("{policy}.wasm"));
    if let Some(parent) = by_kwctl.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    kwctl(
        kwctl_path,
        &[
            Path::new("annotate"),
            Path::new("-m"),
            &dir.join("metadata.yml"),
            Path::new("-u"),
            &dir.join("README.md"),
            Path::new("-o"),
            &by_kwctl,
            &artifact,
        ],
    )?;
    let theirs = inspect(kwctl_path, &by_kwctl)?;
    let ours = inspect(kwctl_path, &e2e::module(policy))?;
    if theirs == ours {
        return Ok(());
    }
    let first = theirs
        .lines()
        .zip(ours.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| theirs.lines().count().min(ours.lines().count()));
    Err(format!(
        "kwctl inspect differs from line {}:\nkwctl annotate: {:?}\ndist:           {:?}",
        first + 1,
        theirs.lines().nth(first),
        ours.lines().nth(first)
    )
    .into())
}
