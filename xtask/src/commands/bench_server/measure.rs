//! `bench-server`: what a user waits for. Kubewarden's own policy-server
//! serves the accept-all floor module, the reading floor (which reads the
//! request as every policy does, then accepts) and every policy, each on the
//! policy's benchmark request, under load from `hey`; the three take turns,
//! so all see the same machine. Reported per policy: requests per second,
//! p50 and p99 for floor and policy, the ratio of their throughputs (the
//! budget's figure), that ratio split into what the shared reading costs
//! and what the rule costs, and the server's resident memory.

use reading::yaml::{self, Limit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use host::Metadata;
use e2e::policy_server::{
    PolicyEntry, PolicyServer, ServerConfig, admission_review, find_program,
};
use testkit::case::{Runner, benchmark_case, judge};
use testkit::rules::KnownRules;

use crate::workspace::{Budget, PolicyCrate, PolicyDir};

/// How the load is generated.
#[derive(Debug, Clone)]
pub struct Load {
    /// Each module's share of one round.
    pub duration: Duration,
    /// Rounds; each runs the floor and every policy once.
    pub rounds: usize,
    /// Concurrent connections (`hey -c`).
    pub concurrency: usize,
}

/// What `hey` measured in one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    pub requests_per_second: f64,
    pub p50: Duration,
    pub p99: Duration,
}

/// Medians over the rounds for one module.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub requests_per_second: f64,
    pub p50: Duration,
    pub p99: Duration,
}

/// One policy next to the floor.
#[derive(Debug)]
pub struct Measurement {
    pub policy: String,
    pub case: String,
    pub floor: Figures,
    pub figures: Figures,
    /// Throughput of the policy over the floor's: the median of the rounds'
    /// ratios. Each round's pair ran back to back, so a drift of the
    /// machine's speed between rounds cancels out of its ratio.
    pub ratio: f64,
    /// The reading floor's throughput over the floor's: what reading the
    /// request costs before any rule runs.
    pub reading: f64,
    /// The policy's throughput over the reading floor's: what its rule
    /// costs by itself.
    pub rule: f64,
    /// The lowest ratio the policy's budget allows: what a user waits for
    /// may grow by a tenth at most, unless the policy states otherwise.
    pub min_ratio: f64,
}

/// The fewest rounds whose median ratio the budget is judged on: one
/// round's ratio moves by ±4–6 % here, more than the budgets' margins.
pub const MIN_ROUNDS: usize = 8;

impl Measurement {
    /// What a user waits for beyond the floor: the policy's p50 and p99
    /// less the floor's (negative within the noise).
    pub fn added_latency(&self) -> (f64, f64) {
        (
            millis(self.figures.p50) - millis(self.floor.p50),
            millis(self.figures.p99) - millis(self.floor.p99),
        )
    }

    /// The budget this measurement breaks, in words; `None` within it.
    pub fn below_budget(&self) -> Option<String> {
        (self.ratio < self.min_ratio).then(|| {
            format!(
                "{}: throughput {:.3}× the floor's < {:.2}×",
                self.policy, self.ratio, self.min_ratio
            )
        })
    }
}

/// The median of the policy-over-floor throughput ratios of paired runs.
pub fn paired_ratio(floor_runs: &[Run], policy_runs: &[Run]) -> f64 {
    let ratios: Vec<f64> = floor_runs
        .iter()
        .zip(policy_runs)
        .map(|(floor, policy)| {
            policy.requests_per_second / floor.requests_per_second.max(f64::MIN_POSITIVE)
        })
        .collect();
    median_by(&ratios, |ratio| *ratio)
}

/// Reads `hey`'s summary: `Requests/sec:` and the 50 % and 99 % lines of
/// the latency distribution. Fails unless every response was a 200.
pub fn parse_hey(output: &str) -> Result<Run> {
    let field = |prefix: &str| {
        output
            .lines()
            .map(str::trim)
            .find_map(|line| line.strip_prefix(prefix))
            .map(str::trim)
    };
    let seconds = |percent: &str| -> Result<Duration> {
        let text = field(&format!("{percent}% in "))
            .and_then(|rest| rest.strip_suffix("secs"))
            .with_context(|| format!("no {percent}% latency in hey's output:\n{output}"))?;
        let value: f64 = text.trim().parse().context("hey's latency")?;
        Ok(Duration::from_secs_f64(value))
    };
    let requests_per_second = field("Requests/sec:")
        .with_context(|| format!("no Requests/sec in hey's output:\n{output}"))?
        .parse()
        .context("hey's Requests/sec")?;
    let statuses: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with('[') && line.contains("responses"))
        .collect();
    if statuses.is_empty() || statuses.iter().any(|line| !line.starts_with("[200]")) {
        bail!("not every response was a 200:\n{output}");
    }
    if output.contains("Error distribution:") {
        bail!("hey saw errors:\n{output}");
    }
    Ok(Run {
        requests_per_second,
        p50: seconds("50")?,
        p99: seconds("99")?,
    })
}

fn median_by<T: Copy>(values: &[T], key: impl Fn(&T) -> f64) -> f64 {
    let mut keys: Vec<f64> = values.iter().map(key).collect();
    keys.sort_by(f64::total_cmp);
    keys.get(keys.len() / 2).copied().unwrap_or_default()
}

/// Medians of each figure over the runs.
pub fn summarise(runs: &[Run]) -> Figures {
    Figures {
        requests_per_second: median_by(runs, |r| r.requests_per_second),
        p50: Duration::from_secs_f64(median_by(runs, |r| r.p50.as_secs_f64())),
        p99: Duration::from_secs_f64(median_by(runs, |r| r.p99.as_secs_f64())),
    }
}

/// A floor module, annotated so that policy-server loads it as `name`: it
/// matches everything.
fn annotated_floor(floor: &Path, name: &str, out: &Path) -> Result<PathBuf> {
    let wasm = std::fs::read(floor)
        .with_context(|| format!("reading {}; run `make floors` first", floor.display()))?;
    let metadata: Metadata = yaml::document(
        &format!(
            "rules: [{{apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], operations: ['*']}}]\n\
         mutating: false\n\
         annotations: {{io.kubewarden.policy.title: {name}}}\n",
        ),
        Limit::Cases,
    )?;
    let annotated = metadata.annotate(&wasm, None)?;
    let path = out.join(format!("{name}.wasm"));
    std::fs::write(&path, annotated).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// One `hey` run against `url` with `body`.
fn hey(hey: &Path, url: &str, body: &Path, load: &Load) -> Result<Run> {
    let output = Command::new(hey)
        .arg("-z")
        .arg(format!("{}ms", load.duration.as_millis()))
        .args(["-c", &load.concurrency.to_string()])
        .args(["-m", "POST", "-T", "application/json", "-D"])
        .arg(body)
        .arg(url)
        .output()
        .with_context(|| format!("running {}", hey.display()))?;
    if !output.status.success() {
        bail!("hey failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    parse_hey(&String::from_utf8_lossy(&output.stdout))
}

/// The server's binary and settings, and where to work.
#[derive(Debug, Clone)]
pub struct Setup {
    pub policy_server: PathBuf,
    pub trust_config: Option<PathBuf>,
    pub dist: PathBuf,
    pub floor: PathBuf,
    pub reading_floor: PathBuf,
    pub work: PathBuf,
}

/// What the whole run measured.
#[derive(Debug)]
pub struct ServerRun {
    pub measurements: Vec<Measurement>,
    pub resident_start_kib: Option<u64>,
    pub resident_end_kib: Option<u64>,
    pub load: Load,
}

/// The three modules in the order `round` loads them: each goes first,
/// second and third equally often, so none gains from a machine that speeds
/// up or slows down within a round.
fn in_turn<T>(modules: &mut [T; 3], round: usize) -> impl Iterator<Item = &mut T> {
    let (before, after) = modules.split_at_mut(round % 3);
    after.iter_mut().chain(before)
}

/// The policy ids the two floors are served under.
const FLOOR: &str = "floor";
const READING_FLOOR: &str = "reading-floor";

/// Starts one server with both floors and `policies`, checks that each
/// benchmark request gets the case's verdict, then loads the floors and the
/// policy in turns.
pub fn measure(policies: &[PolicyDir], setup: &Setup, load: &Load) -> Result<ServerRun> {
    if load.rounds < MIN_ROUNDS {
        bail!(
            "--rounds {}: the throughput budget is judged on the median of at least {MIN_ROUNDS} rounds",
            load.rounds
        );
    }
    let hey_path = find_program("hey").context("hey is not on PATH (Debian package hey)")?;
    std::fs::create_dir_all(&setup.work)
        .with_context(|| format!("creating {}", setup.work.display()))?;
    let mut entries = BTreeMap::new();
    for (name, module) in [(FLOOR, &setup.floor), (READING_FLOOR, &setup.reading_floor)] {
        let annotated = annotated_floor(module, name, &setup.work)?;
        entries.insert(
            name.to_owned(),
            PolicyEntry::new(&annotated, serde_json::json!({})),
        );
    }
    let mut bodies = Vec::new();
    for policy in policies {
        let (name, case) = benchmark_case(&policy.cases_dir())?;
        let settings = if case.settings.is_null() {
            serde_json::json!({})
        } else {
            case.settings.clone()
        };
        let mut entry = PolicyEntry::new(&policy.module_path(&setup.dist), settings);
        entry.context_aware_resources = policy.metadata()?.context_aware_resources;
        entries.insert(policy.name.clone(), entry);
        let body = setup.work.join(format!("{}.json", policy.name));
        std::fs::write(&body, serde_json::to_vec(&admission_review(&case.request))?)?;
        bodies.push((policy, name, case, body));
    }
    let config = ServerConfig {
        binary: setup.policy_server.clone(),
        policies: entries,
        trust_config: setup.trust_config.clone(),
        workers: None,
        registry: None,
    };
    let server = PolicyServer::start(&config, &setup.work.join("server"))?;
    let resident_start_kib = server.resident_kib();
    for (policy, _, case, body) in &bodies {
        let answer = server.post(&policy.name, &std::fs::read(body)?)?;
        let response = answer.response().map_err(anyhow::Error::msg)?;
        let request = case.admission_request().map_err(anyhow::Error::msg)?;
        let matches_rules = policy.metadata()?.matches(&request);
        let known = KnownRules::load(&policy.dir).map_err(anyhow::Error::msg)?;
        judge(
            case.expectation(Runner::PolicyServer),
            &response,
            matches_rules,
            &known,
        )
        .map_err(|e| {
            anyhow::anyhow!(
                "{}: policy-server does not judge the benchmark request as its case says: {e}",
                policy.name
            )
        })?;
    }
    let mut measurements = Vec::new();
    for (policy, case_name, _, body) in &bodies {
        let mut modules = [FLOOR, READING_FLOOR, policy.name.as_str()].map(|id| (id, Vec::new()));
        for round in 0..load.rounds {
            for (id, runs) in in_turn(&mut modules, round) {
                runs.push(hey(&hey_path, &server.validate_url(id), body, load)?);
            }
        }
        let [(_, floor_runs), (_, reading_runs), (_, policy_runs)] = &modules;
        measurements.push(Measurement {
            policy: policy.name.clone(),
            case: case_name.clone(),
            floor: summarise(floor_runs),
            figures: summarise(policy_runs),
            ratio: paired_ratio(floor_runs, policy_runs),
            reading: paired_ratio(floor_runs, reading_runs),
            rule: paired_ratio(reading_runs, policy_runs),
            min_ratio: policy.budget()?.server_ratio,
        });
    }
    Ok(ServerRun {
        measurements,
        resident_start_kib,
        resident_end_kib: server.resident_kib(),
        load: load.clone(),
    })
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn mib(kib: Option<u64>) -> String {
    kib.and_then(|k| u32::try_from(k).ok()).map_or_else(
        || "-".to_owned(),
        |k| format!("{:.1} MiB", f64::from(k) / 1024.0),
    )
}

/// The table `bench-server` prints.
pub fn render(report: &ServerRun) -> String {
    let load = &report.load;
    let mut out = format!(
        "policy-server on loopback, hey -c {} for {:.1} s per module and round, {} rounds, floor, reading floor and policy in turns; medians.\n\
         ratio: the policy's throughput over the floor's (the budget's figure) = reading (the reading floor's over the floor's) × rule (the policy's over the reading floor's), each the median of its rounds.\n\
         added: what a user waits for beyond the floor, the policy's p50 and p99 less the floor's.\n\
         {:<24} {:>10} {:>8} {:>8} {:>10} {:>8} {:>8} {:>15} {:>7} {:>8} {:>6}  {}\n",
        load.concurrency,
        load.duration.as_secs_f64(),
        load.rounds,
        "policy",
        "floor r/s",
        "p50",
        "p99",
        "policy r/s",
        "p50",
        "p99",
        "added p50/p99",
        "ratio",
        "reading",
        "rule",
        "request (case)"
    );
    for m in &report.measurements {
        let added = m.added_latency();
        out.push_str(&format!(
            "{:<24} {:>10.0} {:>6.2}ms {:>6.2}ms {:>10.0} {:>6.2}ms {:>6.2}ms {:>15} {:>6.3}x {:>7.3}x {:>5.3}x  {}{}\n",
            m.policy,
            m.floor.requests_per_second,
            millis(m.floor.p50),
            millis(m.floor.p99),
            m.figures.requests_per_second,
            millis(m.figures.p50),
            millis(m.figures.p99),
            format!("{:+.2}/{:+.2}ms", added.0, added.1),
            m.ratio,
            m.reading,
            m.rule,
            m.case,
            if m.below_budget().is_some() {
                "  below budget"
            } else {
                ""
            }
        ));
    }
    let bundle = Budget::default().server_ratio;
    let exceptions: String = report
        .measurements
        .iter()
        .filter(|m| m.min_ratio != bundle)
        .map(|m| format!(", {} ≥ {:.2}×", m.policy, m.min_ratio))
        .collect();
    out.push_str(&format!(
        "budget: throughput ≥ {bundle:.2}× the floor's{exceptions} (ratio: median of the rounds' ratios)\n\
         policy-server resident memory: {} after start-up, {} after the run\n",
        mib(report.resident_start_kib),
        mib(report.resident_end_kib)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEY: &str = "
Summary:
  Total:	5.0031 secs
  Slowest:	0.0310 secs
  Fastest:	0.0006 secs
  Average:	0.0033 secs
  Requests/sec:	2436.4911

Latency distribution:
  10% in 0.0015 secs
  50% in 0.0016 secs
  99% in 0.0035 secs

Status code distribution:
  [200]	12190 responses
";

    #[test]
    fn reads_heys_summary() {
        let run = parse_hey(HEY).unwrap();
        assert!((run.requests_per_second - 2436.4911).abs() < 1e-9);
        assert_eq!(run.p50, Duration::from_micros(1600));
        assert_eq!(run.p99, Duration::from_micros(3500));
    }

    #[test]
    fn refuses_runs_with_other_statuses_or_errors() {
        let with_errors = HEY.replace(
            "[200]\t12190 responses",
            "[200]\t1 responses\n  [500]\t2 responses",
        );
        assert!(parse_hey(&with_errors).is_err());
        let refused = format!("{HEY}\nError distribution:\n  [3]\tdial tcp: connection refused\n");
        assert!(parse_hey(&refused).is_err());
        assert!(parse_hey("nothing").is_err());
    }

    #[test]
    fn medians_of_the_rounds() {
        let run = |rps: f64, ms: u64| Run {
            requests_per_second: rps,
            p50: Duration::from_millis(ms),
            p99: Duration::from_millis(ms * 2),
        };
        let figures = summarise(&[run(100.0, 3), run(300.0, 1), run(200.0, 2)]);
        assert!((figures.requests_per_second - 200.0).abs() < 1e-9);
        assert_eq!(figures.p50, Duration::from_millis(2));
        assert_eq!(figures.p99, Duration::from_millis(4));
    }

    #[test]
    fn the_ratio_pairs_runs_of_the_same_round() {
        let run = |rps: f64| Run {
            requests_per_second: rps,
            p50: Duration::ZERO,
            p99: Duration::ZERO,
        };
        // The machine slows down by half in the second round: the ratio of
        // the medians would say 0.75, each round says 0.9 or more.
        let floor = [run(1000.0), run(500.0), run(1000.0)];
        let policy = [run(900.0), run(475.0), run(950.0)];
        assert!((paired_ratio(&floor, &policy) - 0.95).abs() < 1e-9);
        assert_eq!(paired_ratio(&[], &[]), 0.0);
    }

    #[test]
    fn every_module_takes_every_turn() {
        let mut modules = [(0, [0; 3]), (1, [0; 3]), (2, [0; 3])];
        for round in 0..6 {
            let order: Vec<usize> = in_turn(&mut modules, round)
                .enumerate()
                .map(|(position, (module, turns))| {
                    turns[position] += 1;
                    *module
                })
                .collect();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                [0, 1, 2],
                "round {round} runs each module once: {order:?}"
            );
        }
        assert!(
            modules.iter().all(|(_, turns)| *turns == [2; 3]),
            "{modules:?}"
        );
    }

    #[test]
    fn the_table_splits_the_ratio_into_reading_and_rule() {
        let figures = Figures {
            requests_per_second: 3000.0,
            p50: Duration::from_micros(2100),
            p99: Duration::from_micros(3500),
        };
        let slower = Figures {
            requests_per_second: 2580.0,
            p50: Duration::from_micros(2350),
            p99: Duration::from_micros(4100),
        };
        let measurement = |policy: &str, ratio: f64, min_ratio: f64| Measurement {
            policy: policy.to_owned(),
            case: "some-case".to_owned(),
            floor: figures,
            figures: slower,
            ratio,
            reading: 0.95,
            rule: ratio / 0.95,
            min_ratio,
        };
        let report = ServerRun {
            measurements: vec![
                measurement("slow", 0.84, 0.85),
                measurement("odd", 0.86, 0.8),
            ],
            resident_start_kib: Some(2048),
            resident_end_kib: None,
            load: Load {
                duration: Duration::from_millis(2500),
                rounds: 8,
                concurrency: 8,
            },
        };
        let table = render(&report);
        let row = |policy: &str| -> Vec<&str> {
            let line = table
                .lines()
                .find(|line| line.starts_with(policy))
                .expect("a row per policy");
            line.split_whitespace().collect()
        };
        assert_eq!(
            row("slow")[7..13],
            [
                "+0.25/+0.60ms",
                "0.840x",
                "0.950x",
                "0.884x",
                "some-case",
                "below"
            ]
        );
        assert_eq!(
            row("odd")[7..12],
            ["+0.25/+0.60ms", "0.860x", "0.950x", "0.905x", "some-case"]
        );
        assert_eq!(row("odd").len(), 12, "within its own budget");
        assert_eq!(
            report.measurements[0].below_budget().as_deref(),
            Some("slow: throughput 0.840× the floor's < 0.85×")
        );
        assert_eq!(report.measurements[1].below_budget(), None);
        assert!(table.contains("budget: throughput ≥ 0.85× the floor's, odd ≥ 0.80×"));
        assert!(table.contains("2.0 MiB after start-up, - after the run"));
    }
}
