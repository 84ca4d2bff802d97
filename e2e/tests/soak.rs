//! The soak: Kubewarden's policy-server with the bundle exactly as
//! `deploy/` configures it, under a mixed load of every case for
//! `SOAK_SECONDS` (300 by default) from a few concurrent clients on
//! loopback. It fails on any answer but a 200 with a verdict, on a case
//! whose verdict changes from the one it had at the start, and on resident
//! memory growing more than 10 % past its value after the warm-up
//! (`e2e::soak::warm_up`). `make soak` runs it.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use e2e::policy_server::{PolicyMode, PolicyServer, ServerConfig, admission_review};
use e2e::soak::{Decision, Sample, check_growth, per_second, reference, table};

/// Concurrent clients: enough to keep every worker of a small machine busy.
const CLIENTS: usize = 4;
/// Rows of the printed memory table.
const ROWS: usize = 20;
/// Failures kept for the report; the count goes on.
const KEPT_FAILURES: usize = 20;

/// One request of the mixed load.
struct Work {
    /// `<policy id> <case id>`, for messages.
    name: String,
    policy_id: String,
    body: Vec<u8>,
    /// The verdict of the first answer, which every later one must repeat.
    verdict: Decision,
}

fn main() -> ExitCode {
    match soak() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("soak: {error}");
            ExitCode::FAILURE
        }
    }
}

fn seconds() -> Result<Duration, String> {
    match std::env::var("SOAK_SECONDS") {
        Err(_) => Ok(Duration::from_secs(300)),
        Ok(text) => text
            .parse::<u64>()
            .ok()
            .filter(|s| *s >= 6)
            .map(Duration::from_secs)
            .ok_or_else(|| format!("SOAK_SECONDS={text:?}: give whole seconds, at least 6")),
    }
}

fn soak() -> Result<(), String> {
    let run = seconds()?;
    let Some(binary) = e2e::program("policy-server")? else {
        println!("soak: policy-server is not on PATH: SKIPPED (`make setup` installs it)");
        return Ok(());
    };
    // The shipped ids, and a protect twin of each monitor-mode one so its
    // rejections are answered, not only logged.
    let mut policies = BTreeMap::new();
    let mut ids_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for policy in e2e::deployed()?.values() {
        let entry = e2e::deployed_entry(policy)?;
        let id = e2e::deployed_id(policy);
        let name = e2e::policies()?
            .into_iter()
            .find(|name| entry.module.ends_with(&format!("/{name}.wasm")))
            .ok_or_else(|| format!("{id}: module {} is no policy of policies/", entry.module))?;
        let ids = ids_of.entry(name).or_default();
        if entry.policy_mode == PolicyMode::Monitor {
            let mut protect = entry.clone();
            protect.policy_mode = PolicyMode::Protect;
            policies.insert(format!("{id}-protect"), protect);
            ids.push(format!("{id}-protect"));
        }
        policies.insert(id.clone(), entry);
        ids.push(id);
    }
    let config = ServerConfig {
        binary,
        policies,
        trust_config: e2e::trust_config(),
        workers: None,
        registry: None,
    };
    let server = PolicyServer::start(&config, &e2e::root().join("target/soak/policy-server"))
        .map_err(|e| testkit::with_causes(&e))?;
    let (work, skipped) = first_answers(&server, &ids_of)?;
    println!(
        "soak: {} requests in the mix ({} policy ids, {CLIENTS} clients, {}s); {} cases left out:",
        work.len(),
        config.policies.len(),
        run.as_secs(),
        skipped.len()
    );
    for line in &skipped {
        println!("  {line}");
    }
    let (samples, requests, failures) = load(&server, &work, run);
    report(&samples, requests, run, &failures)
}

/// Every case whose request reaches a policy, posted once to each id of
/// its policy; the answers are the verdicts to keep. Cases whose request
/// policy-server refuses before any policy (400, 413) are left out of the
/// mix and listed: the policy-server suite checks those answers.
fn first_answers(
    server: &PolicyServer,
    ids_of: &BTreeMap<String, Vec<String>>,
) -> Result<(Vec<Work>, Vec<String>), String> {
    let mut work = Vec::new();
    let mut skipped = Vec::new();
    for case in e2e::cases()? {
        let Some(ids) = ids_of.get(&case.policy) else {
            skipped.push(format!("{}: {} is not in deploy/", case.id(), case.policy));
            continue;
        };
        let body = serde_json::to_vec(&admission_review(&case.case.request))
            .map_err(|e| format!("{}: {e}", case.id()))?;
        for id in ids {
            let answer = server
                .post(id, &body)
                .map_err(|e| testkit::with_causes(&e))?;
            if answer.status != 200 {
                skipped.push(format!("{} to {id}: HTTP {}", case.id(), answer.status));
                continue;
            }
            let response = answer
                .response()
                .map_err(|e| format!("{}: {e}", case.id()))?;
            work.push(Work {
                name: format!("{id} {}", case.id()),
                policy_id: id.clone(),
                body: body.clone(),
                verdict: Decision::from(&response),
            });
        }
    }
    if work.is_empty() {
        return Err("no case reaches a policy".to_owned());
    }
    Ok((work, skipped))
}

/// Failures seen by the clients: the first few in full, and how many.
#[derive(Default)]
struct Failures {
    kept: Vec<String>,
    count: u64,
}

impl Failures {
    fn add(&mut self, failure: String) {
        self.count += 1;
        if self.kept.len() < KEPT_FAILURES {
            self.kept.push(failure);
        }
    }
}

/// One client: the mix in order from `start`, round and round, until
/// `until`; each answer checked against its first.
fn client(
    server: &PolicyServer,
    work: &[Work],
    start: usize,
    until: Instant,
    requests: &AtomicU64,
    failures: &Mutex<Failures>,
) {
    for item in work.iter().cycle().skip(start) {
        if Instant::now() >= until {
            return;
        }
        let failure = match server.post(&item.policy_id, &item.body) {
            Err(error) => Some(testkit::with_causes(&error)),
            Ok(answer) => match answer.response() {
                Err(error) => Some(error),
                Ok(response) if Decision::from(&response) != item.verdict => Some(format!(
                    "verdict changed from {:?} to {:?}",
                    item.verdict,
                    Decision::from(&response)
                )),
                Ok(_) => None,
            },
        };
        requests.fetch_add(1, Ordering::Relaxed);
        if let Some(failure) = failure
            && let Ok(mut failures) = failures.lock()
        {
            failures.add(format!("{}: {failure}", item.name));
        }
    }
}

/// Runs the clients for `run`, sampling the server's memory each second.
fn load(server: &PolicyServer, work: &[Work], run: Duration) -> (Vec<Sample>, u64, Failures) {
    let requests = AtomicU64::new(0);
    let failures = Mutex::new(Failures::default());
    let started = Instant::now();
    let until = started + run;
    let mut samples = Vec::new();
    std::thread::scope(|scope| {
        for i in 0..CLIENTS {
            let (requests, failures) = (&requests, &failures);
            let start = i * work.len() / CLIENTS;
            scope.spawn(move || client(server, work, start, until, requests, failures));
        }
        let mut next = started + Duration::from_secs(1);
        while next <= until {
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            if let Some(resident_kib) = server.resident_kib() {
                samples.push(Sample {
                    at: next - started,
                    resident_kib,
                    requests: requests.load(Ordering::Relaxed),
                });
            }
            next += Duration::from_secs(1);
        }
    });
    let failures = failures.into_inner().unwrap_or_default();
    (samples, requests.load(Ordering::Relaxed), failures)
}

fn report(
    samples: &[Sample],
    requests: u64,
    run: Duration,
    failures: &Failures,
) -> Result<(), String> {
    print!("{}", table(samples, ROWS));
    let reference = reference(samples, run).ok_or("no memory sample after the warm-up")?;
    let end = samples.last().copied().ok_or("no memory sample")?;
    println!(
        "soak: {requests} requests in {}s ({}/s), {} failed; RSS {} KiB at {}s (reference), {} KiB at {}s (end)",
        run.as_secs(),
        per_second(requests, run),
        failures.count,
        reference.resident_kib,
        reference.at.as_secs(),
        end.resident_kib,
        end.at.as_secs()
    );
    for failure in &failures.kept {
        println!("  FAILED {failure}");
    }
    if failures.count > 0 {
        return Err(format!(
            "{} answers were not the first verdict",
            failures.count
        ));
    }
    check_growth(reference, end)
}
