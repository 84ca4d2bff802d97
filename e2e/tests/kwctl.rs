//! Kubewarden's `kwctl` against the bundle:
//!
//! - `annotate/<policy>`: `kwctl annotate` and our `dist` agree: the cargo
//!   artifact of each policy, annotated by kwctl (`-m metadata.yml -u
//!   README.md`) and by `dist`, gives modules that `kwctl inspect` shows
//!   identically, except for the `io.kubewarden.kwctl` annotation kwctl
//!   adds with its own version.
//! - `case/<policy>/<case>`: every case file, split into the files `kwctl
//!   run` takes (`testkit::case::Case::write_files`, under
//!   `target/e2e/cases/`) and judged by `testkit::case::judge` as under our
//!   host (`runners.kwctl` where kwctl answers otherwise).
//! - `hostile/<policy>/<case>`: every hostile request (`testkit::hostile`),
//!   written to `target/hostile/<policy>/` as the exact bytes, through
//!   `kwctl run` with the module in `dist/`, judged like under our host
//!   (`runners.kwctl` where kwctl answers otherwise: it has no body limit,
//!   and stops with an error on a file it cannot parse). One kwctl per case,
//!   as many at once as the test threads (one per core by default).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use admission::AdmissionResponse;
use e2e::PolicyCase;
use libtest_mimic::{Arguments, Failed, Trial};
use testkit::case::{ExpectedResult, Runner, SettingsAnswer, judge, judge_exit, judge_settings};
use testkit::hostile::HostileCase;
use testkit::rules::KnownRules;
use wasm_meta::Metadata;

/// How long one `kwctl run` may take: far above what any case needs, so
/// that a stalled policy fails its test instead of hanging the suite.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

fn main() {
    let args = Arguments::from_args();
    let trials = trials()
        .unwrap_or_else(|error| vec![Trial::test("kwctl/set-up", move || Err(error.into()))]);
    libtest_mimic::run(&args, trials).exit();
}

/// What judging a policy's answers needs: its README's rule ids and its
/// module's metadata.
struct PolicyFacts {
    rules: KnownRules,
    metadata: Metadata,
}

fn trials() -> Result<Vec<Trial>, String> {
    let policies = e2e::policies()?;
    let cases = e2e::cases()?;
    let hostile = e2e::hostile::cases()?;
    let mut names: Vec<String> = policies.iter().map(|p| format!("annotate/{p}")).collect();
    names.extend(cases.iter().map(|c| format!("case/{}", c.id())));
    names.extend(hostile.iter().map(|c| format!("hostile/{}", c.id())));
    let Some(kwctl) = e2e::program("kwctl")? else {
        println!("kwctl is not on PATH: every test below is SKIPPED (`make setup` installs it)");
        return Ok(names
            .into_iter()
            .map(|name| Trial::test(name, || Ok(())).with_ignored_flag(true))
            .collect());
    };
    let mut trials: Vec<Trial> = policies
        .iter()
        .map(|policy| {
            let (kwctl, policy) = (kwctl.clone(), policy.clone());
            Trial::test(format!("annotate/{policy}"), move || {
                annotations_agree(&kwctl, &policy)
            })
        })
        .collect();
    let mut facts = BTreeMap::new();
    for policy in &policies {
        let rules = KnownRules::load(&e2e::root().join("policies").join(policy))?;
        let metadata = e2e::module_metadata(policy)?;
        facts.insert(policy.clone(), PolicyFacts { rules, metadata });
    }
    let (facts, kwctl) = (Arc::new(facts), Arc::new(kwctl));
    for case in cases {
        let (facts, kwctl) = (Arc::clone(&facts), Arc::clone(&kwctl));
        let trial = Trial::test(format!("case/{}", case.id()), move || {
            let facts = facts
                .get(&case.policy)
                .ok_or_else(|| format!("no facts about {}", case.policy))?;
            run_case(&kwctl, facts, &case)
        });
        trials.push(trial);
    }
    for case in hostile {
        let (facts, kwctl) = (Arc::clone(&facts), Arc::clone(&kwctl));
        let trial = Trial::test(format!("hostile/{}", case.id()), move || {
            let facts = facts
                .get(&case.policy)
                .ok_or_else(|| format!("no facts about {}", case.policy))?;
            run_hostile(&kwctl, facts, &case)
        });
        trials.push(trial);
    }
    Ok(trials)
}

/// What `kwctl run` ended with: a verdict, or its refusal to give one (its
/// exit status, and its standard output and error, where it says why).
enum Ran {
    Verdict(AdmissionResponse),
    Exit {
        code: i32,
        stdout: String,
        stderr: String,
    },
}

/// `kwctl run` of one request file with `settings` (`--settings-json` or
/// `--settings-path`, as `settings` says) and, when given, a session of
/// host-capability exchanges to replay. Its output goes to files beside
/// the request, so a failed test leaves them to read.
fn kwctl_run(
    kwctl: &Path,
    policy: &str,
    request: &Path,
    settings: [&OsStr; 2],
    session: Option<&Path>,
) -> Result<Ran, Failed> {
    let (stdout_path, stderr_path) = (request.with_extension("out"), request.with_extension("err"));
    let create =
        |path: &Path| std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()));
    let mut command = Command::new(kwctl);
    command
        .arg("run")
        .arg("--request-path")
        .arg(request)
        .args(settings);
    if let Some(session) = session {
        command
            .arg("--allow-context-aware")
            .arg("--replay-host-capabilities-interactions")
            .arg(session);
    }
    // kwctl would wait for Sigstore's trust root on the network otherwise.
    if let Some(trust) = e2e::trust_config() {
        command.arg("--sigstore-trust-config").arg(trust);
    }
    let mut child = command
        .arg(e2e::module(policy))
        .stdin(Stdio::null())
        .stdout(create(&stdout_path)?)
        .stderr(create(&stderr_path)?)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", kwctl.display()))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > RUN_TIMEOUT {
            // Already gone is fine: the point is that nothing outlives the test.
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("kwctl run took more than {RUN_TIMEOUT:?}").into());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let read =
        |path: &Path| std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()));
    let (stdout, stderr) = (read(&stdout_path)?, read(&stderr_path)?);
    let Some(code) = status.code() else {
        return Err(format!("kwctl was killed ({status}): {stderr}").into());
    };
    if code != 0 {
        return Ok(Ran::Exit {
            code,
            stdout,
            stderr,
        });
    }
    let answer = stdout
        .lines()
        .rfind(|line| line.starts_with('{'))
        .ok_or_else(|| format!("no AdmissionResponse in: {stdout}"))?;
    let response = serde_json::from_str(answer).map_err(|e| format!("{e}: {answer}"))?;
    Ok(Ran::Verdict(response))
}

/// One case file through `kwctl run`, judged as under our host
/// (`runners.kwctl` where kwctl answers otherwise): kwctl checks the
/// settings first and stops, naming them, when the policy refuses them.
fn run_case(kwctl: &Path, facts: &PolicyFacts, case: &PolicyCase) -> Result<(), Failed> {
    let dir = e2e::root()
        .join("target/e2e/cases")
        .join(&case.policy)
        .join(&case.name);
    let files = case
        .case
        .write_files(&dir, Runner::Kwctl)
        .map_err(|e| e.to_string())?;
    let settings = [OsStr::new("--settings-path"), files.settings.as_os_str()];
    let ran = kwctl_run(
        kwctl,
        &case.policy,
        &files.request,
        settings,
        files.session.as_deref(),
    )?;
    let expect = case.case.expectation(Runner::Kwctl);
    let response = match ran {
        Ran::Exit { stdout, stderr, .. } if expect.result == ExpectedResult::InvalidSettings => {
            judge_settings(
                expect,
                &SettingsAnswer::Refused(format!("{stdout}{stderr}")),
            )?;
            return Ok(());
        }
        Ran::Exit { code, stderr, .. } => {
            return judge_exit(expect, code, &stderr).map_err(Failed::from);
        }
        Ran::Verdict(response) => response,
    };
    judge_settings(expect, &SettingsAnswer::Accepted)?;
    let request = case.case.admission_request()?;
    judge(
        expect,
        &response,
        facts.metadata.matches(&request),
        &facts.rules,
    )
    .map_err(Failed::from)
}

/// `kwctl run` of the hostile case's request file with its settings,
/// judged: a verdict on standard output, or kwctl's refusal of the file
/// (its exit status and standard error).
fn run_hostile(kwctl: &Path, facts: &PolicyFacts, case: &HostileCase) -> Result<(), Failed> {
    let request = e2e::hostile::write_request(case)?;
    let settings = e2e::hostile::settings(case).to_string();
    let settings = [OsStr::new("--settings-json"), OsStr::new(&settings)];
    let expect = case.case.expectation(Runner::Kwctl);
    match kwctl_run(kwctl, &case.policy, &request, settings, None)? {
        Ran::Exit { code, stderr, .. } => {
            // The first line says why; a backtrace follows.
            let reason = stderr
                .lines()
                .find(|l| l.starts_with("Error:"))
                .unwrap_or(&stderr);
            judge_exit(expect, code, reason).map_err(Failed::from)
        }
        Ran::Verdict(response) => {
            let matches = e2e::hostile::matches_rules(Some(&facts.metadata), case);
            judge(expect, &response, matches, &facts.rules).map_err(Failed::from)
        }
    }
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
