//! `bench`: the cost of each policy per evaluation, next to the floor.
//!
//! Timing noise on shared machines is large between runs (±25 % here), so
//! the comparison happens inside one process: every round evaluates the
//! accept-all floor module and the policy on the same payload, alternating
//! which goes first, each in a fresh instance as policy-server does; the
//! figures are medians over the rounds. The request is each policy's case
//! marked `benchmark: true`.
//!
//! Each round also times one call in an instance kept across rounds (the
//! `warm` columns, floor / policy): the same work without instantiation
//! and teardown, from caches as cold as the fresh evaluations around it
//! leave them. The difference of the warm columns is the rule's own cost;
//! measured, it is most of the difference of the fresh medians.
//!
//! With `--cold`, every timed call starts from cold caches: a buffer larger
//! than the last-level cache is walked first, outside the timed span. That
//! is how policy-server runs a policy: between two evaluations it handles
//! HTTP, the AdmissionReview and its logs, which evict the guest's code and
//! data. Measured, a policy costs policy-server two to three times what the
//! warm figures say, and the cold figures show the same multiple, so they
//! predict `bench-server` in two minutes instead of six.
//!
//! The `fuel` column counts the guest's instructions in one metered
//! evaluation (floor / policy): exact and the same on any machine, where
//! the times move by several per cent from run to run. With the reading
//! floor as `--floor`, the policy's figure less the floor's is what its
//! rule alone executes.
//!
//! The `faults` columns count the page faults of a fresh evaluation (the
//! thread's minor faults, floor / policy, on Linux): each page of linear
//! memory an instance touches is one, and one costs 1–3 µs here, so a
//! policy that touches a page more than the floor pays for it in the
//! ratio.

use std::cell::RefCell;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use host::{HostCapabilities, PolicyModule};
use serde_json::Value;
use testkit::case::benchmark_case;

use crate::workspace::{Budget, PolicyCrate, PolicyDir};

/// How each timed call starts: from the caches the previous call left, or
/// from cold ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caches {
    Warm,
    Cold,
}

/// Walks a buffer larger than any last-level cache (and than what the TLBs
/// map), one write per cache line, so whatever runs next finds nothing of
/// its own in them.
struct Evictor(Vec<u8>);

impl Evictor {
    const BYTES: usize = 64 << 20;
    const LINE: usize = 64;

    fn new() -> Self {
        Self(vec![1; Self::BYTES])
    }

    fn evict(&mut self) {
        for byte in self.0.iter_mut().step_by(Self::LINE) {
            *byte = byte.wrapping_add(1);
        }
        std::hint::black_box(&self.0);
    }
}

/// One policy's measurements.
#[derive(Debug)]
pub struct Measurement {
    pub policy: String,
    pub case: String,
    /// The module without its metadata section, and as `dist` annotates it.
    pub size: usize,
    pub annotated_size: usize,
    pub floor: Duration,
    pub median: Duration,
    /// Medians of a call in a reused instance.
    pub floor_warm: Duration,
    pub warm: Duration,
    /// Mean page faults per fresh evaluation, when the platform counts them.
    pub faults: Option<(f64, f64)>,
    /// Guest instructions of one metered evaluation: floor, policy.
    pub fuel: (u64, u64),
    /// The budget the table reports against. The size budget is the
    /// module's own: the metadata `dist` attaches carries the policy's README
    /// as usage text, which grows with its documentation, not with its code.
    pub budget: Budget,
}

impl Measurement {
    /// What of its budget the measurement breaks, in words; empty when it
    /// is within budget. The median budget is set on warm caches, so a
    /// cold run is held to the size alone.
    pub fn over_budget(&self, caches: Caches) -> Vec<String> {
        let mut over = Vec::new();
        if self.size > self.budget.module_bytes {
            over.push(format!(
                "{}: module {} bytes > {} bytes",
                self.policy, self.size, self.budget.module_bytes
            ));
        }
        if caches == Caches::Warm && self.ratio() > self.budget.median_ratio {
            over.push(format!(
                "{}: median {:.2}× the floor > {:.2}×",
                self.policy,
                self.ratio(),
                self.budget.median_ratio
            ));
        }
        over
    }

    pub fn ratio(&self) -> f64 {
        self.median.as_secs_f64() / self.floor.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// The calling thread's minor page faults so far (Linux), from the tenth
/// field of `/proc/thread-self/stat`; `None` where that file is missing.
fn minor_faults() -> Option<u64> {
    minor_faults_in(&std::fs::read_to_string("/proc/thread-self/stat").ok()?)
}

fn minor_faults_in(stat: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses; fields resume after
    // the last `)`, starting with the third (state).
    let (_, fields) = stat.rsplit_once(')')?;
    fields.split_whitespace().nth(7)?.parse().ok()
}

/// Mean faults per round, when every round was counted.
fn mean(total: Option<u64>, rounds: usize) -> Option<f64> {
    let total = u32::try_from(total?).ok()?;
    let rounds = u32::try_from(rounds).ok().filter(|r| *r > 0)?;
    Some(f64::from(total) / f64::from(rounds))
}

/// Measures one policy against the floor.
pub fn measure(
    policy: &PolicyDir,
    dist: &Path,
    floor: &PolicyModule,
    rounds: usize,
    caches: Caches,
) -> Result<Measurement> {
    let (case_name, case) = benchmark_case(&policy.cases_dir())?;
    let path = policy.module_path(dist);
    let code_size = wasm_meta::sections::without_custom_section(
        &std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?,
        wasm_meta::sections::METADATA_SECTION,
    )?
    .len();
    let module = PolicyModule::from_file(&path)?;
    let configured = module.configure(case.settings.clone())?;
    let floor_policy = floor.configure(Value::Null)?;
    let request = case.admission_request().map_err(anyhow::Error::msg)?;
    let payload = configured.payload(&request)?;
    // Same bytes for both: the floor ignores the settings it is handed.
    let check = configured.evaluate_payload(&request.uid, &payload);
    if !(check.allowed || case.expect.result == testkit::case::ExpectedResult::Fail) {
        bail!(
            "{}: the benchmark case does not evaluate as expected",
            policy.name
        );
    }
    let fuel = (
        floor_policy
            .evaluate_metered(&request, HostCapabilities::offline())
            .fuel,
        configured
            .evaluate_metered(&request, HostCapabilities::offline())
            .fuel,
    );
    let warmup = rounds / 10 + 10;
    let mut floor_samples = Vec::with_capacity(rounds);
    let mut policy_samples = Vec::with_capacity(rounds);
    let mut floor_warm_samples = Vec::with_capacity(rounds);
    let mut warm_samples = Vec::with_capacity(rounds);
    let (mut floor_faults, mut policy_faults) = (Some(0u64), Some(0u64));
    let (floor_instance, instance) = (
        floor_policy.warm_instance(HostCapabilities::offline())?,
        configured.warm_instance(HostCapabilities::offline())?,
    );
    let evictor = RefCell::new((caches == Caches::Cold).then(Evictor::new));
    // Eviction, like the fault counter, happens outside the timed span.
    let cool = || {
        if let Some(evictor) = evictor.borrow_mut().as_mut() {
            evictor.evict();
        }
    };
    let time_warm = |instance: &host::WarmInstance| {
        cool();
        let start = Instant::now();
        let ok = instance.validate(&payload);
        (ok, start.elapsed())
    };
    let time = |policy: &host::Policy<'_>| {
        cool();
        let faults_before = minor_faults();
        let start = Instant::now();
        let response = policy.evaluate_payload(&request.uid, &payload);
        let elapsed = start.elapsed();
        std::hint::black_box(response);
        let faults = minor_faults()
            .zip(faults_before)
            .map(|(a, b)| a.saturating_sub(b));
        (elapsed, faults)
    };
    for round in 0..warmup + rounds {
        let ((floor_time, floor_fault), (policy_time, policy_fault)) = if round % 2 == 0 {
            let f = time(&floor_policy);
            (f, time(&configured))
        } else {
            let p = time(&configured);
            (time(&floor_policy), p)
        };
        let (floor_ok, floor_warm) = time_warm(&floor_instance);
        let (policy_ok, policy_warm) = time_warm(&instance);
        if !(floor_ok && policy_ok) {
            bail!("{}: a warm call failed", policy.name);
        }
        if round >= warmup {
            floor_samples.push(floor_time);
            policy_samples.push(policy_time);
            floor_warm_samples.push(floor_warm);
            warm_samples.push(policy_warm);
            floor_faults = floor_faults.zip(floor_fault).map(|(sum, n)| sum + n);
            policy_faults = policy_faults.zip(policy_fault).map(|(sum, n)| sum + n);
        }
    }
    Ok(Measurement {
        policy: policy.name.clone(),
        case: case_name,
        size: code_size,
        annotated_size: module.size(),
        floor: median(&mut floor_samples),
        median: median(&mut policy_samples),
        floor_warm: median(&mut floor_warm_samples),
        warm: median(&mut warm_samples),
        faults: mean(floor_faults, rounds).zip(mean(policy_faults, rounds)),
        fuel,
        budget: policy.budget()?,
    })
}

/// The table `bench` prints.
pub fn render(
    measurements: &[Measurement],
    floor_size: usize,
    rounds: usize,
    caches: Caches,
) -> String {
    let start = match caches {
        Caches::Warm => "",
        Caches::Cold => ", each from cold caches (as in policy-server)",
    };
    let mut out = format!(
        "{rounds} fresh-instance evaluations per module, interleaved with the floor{start}; medians.\n\
         extra: the policy's median minus the floor's.\n\
         warm: one call in a reused instance (the rule's own compute), floor / policy.\n\
         faults: page faults per fresh evaluation, floor / policy.\n\
         fuel: thousands of guest instructions in one evaluation, floor / policy.\n\
         size: the module without the metadata `dist` attaches (its README as usage text), then annotated.\n\
         {:<26} {:>9} {:>9} {:>11} {:>11} {:>7} {:>10} {:>17} {:>9} {:>13}  {}\n",
        "module",
        "size",
        "annotated",
        "floor",
        "policy",
        "ratio",
        "extra",
        "warm",
        "faults",
        "fuel",
        "request (case)"
    );
    out.push_str(&format!(
        "{:<26} {:>7.1}KB\n",
        "floor (accept-all)",
        kb(floor_size)
    ));
    for m in measurements {
        let over = if m.over_budget(caches).is_empty() {
            ""
        } else {
            "  over budget"
        };
        out.push_str(&format!(
            "{:<26} {:>7.1}KB {:>7.1}KB {:>9.1}µs {:>9.1}µs {:>6.2}x {:>8.1}µs {:>6.1}/{:>5.1}µs {:>9} {:>13}  {}{over}\n",
            m.policy,
            kb(m.size),
            kb(m.annotated_size),
            micros(m.floor),
            micros(m.median),
            m.ratio(),
            micros(m.median) - micros(m.floor),
            micros(m.floor_warm),
            micros(m.warm),
            m.faults
                .map_or_else(|| "-".to_owned(), |(f, p)| format!("{f:.1}/{p:.1}")),
            format!("{:.1}/{:.1}", thousands(m.fuel.0), thousands(m.fuel.1)),
            m.case
        ));
    }
    let bundle = Budget::default();
    if caches == Caches::Cold {
        out.push_str(
            "cold caches: the median budget is set on warm ones, so sizes only; no hostile cases.\n",
        );
    }
    out.push_str(&format!(
        "budgets (sizes in KB of 1,000 bytes, as registries show them): module ≤ {:.0}KB, \
         median ≤ {:.2}× floor",
        kb(bundle.module_bytes),
        bundle.median_ratio
    ));
    for m in measurements.iter().filter(|m| m.budget != bundle) {
        out.push_str(&format!(
            "; {}: module ≤ {:.0}KB, median ≤ {:.2}×",
            m.policy,
            kb(m.budget.module_bytes),
            m.budget.median_ratio
        ));
    }
    out.push('\n');
    out
}

fn kb(bytes: usize) -> f64 {
    // Module sizes are far below 2^52 bytes, so the conversion is exact.
    f64::from(u32::try_from(bytes).unwrap_or(u32::MAX)) / 1000.0
}

fn thousands(count: u64) -> f64 {
    // Fuel per evaluation is far below 2^52, so the conversion is exact.
    f64::from(u32::try_from(count).unwrap_or(u32::MAX)) / 1000.0
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minor_faults_are_the_tenth_field_whatever_the_command_name() {
        let stat = "4242 (bench (x) y) R 1 4242 4242 0 -1 4194560 1234 0 0 0 5 1 0 0 20 0";
        assert_eq!(minor_faults_in(stat), Some(1234));
        assert_eq!(minor_faults_in("4242 (short"), None);
        if std::path::Path::new("/proc/thread-self/stat").exists() {
            let before = minor_faults().unwrap();
            // Touch fresh pages: the count must move.
            let pages = vec![1u8; 64 << 20];
            std::hint::black_box(&pages);
            assert!(minor_faults().unwrap() > before);
        }
    }

    fn measured(size: usize, median_micros: u64) -> Measurement {
        Measurement {
            policy: "p".to_owned(),
            case: "c".to_owned(),
            size,
            annotated_size: size,
            floor: Duration::from_micros(100),
            median: Duration::from_micros(median_micros),
            floor_warm: Duration::from_micros(2),
            warm: Duration::from_micros(20),
            faults: Some((5.0, 7.0)),
            fuel: (7_502, 81_131),
            budget: Budget::default(),
        }
    }

    #[test]
    fn the_median_budget_is_judged_on_warm_caches_only() {
        let slow = [measured(200_000, 180)];
        let warm = render(&slow, 57_000, 10, Caches::Warm);
        assert!(warm.contains("1.80x     80.0µs"), "{warm}");
        assert!(warm.contains("over budget"), "{warm}");
        assert!(warm.contains("5.0/7.0      7.5/81.1  c"), "{warm}");
        let cold = render(&slow, 57_000, 10, Caches::Cold);
        assert!(cold.contains("from cold caches"), "{cold}");
        assert!(!cold.contains("over budget"), "{cold}");
        assert_eq!(slow[0].over_budget(Caches::Cold), Vec::<String>::new());
        assert_eq!(
            slow[0].over_budget(Caches::Warm),
            ["p: median 1.80× the floor > 1.60×"]
        );
        let within = [measured(300_000, 160)];
        assert!(within[0].over_budget(Caches::Warm).is_empty());
        let large = [measured(300_001, 110)];
        assert!(render(&large, 57_000, 10, Caches::Cold).contains("over budget"));
        assert_eq!(
            large[0].over_budget(Caches::Cold),
            ["p: module 300001 bytes > 300000 bytes"]
        );
    }

    #[test]
    fn eviction_rewrites_every_line_of_its_buffer() {
        let mut evictor = Evictor::new();
        evictor.evict();
        evictor.evict();
        let lines = evictor.0.iter().step_by(Evictor::LINE);
        assert!(lines.clone().all(|&b| b == 3));
        assert_eq!(lines.count(), Evictor::BYTES / Evictor::LINE);
    }

    #[test]
    fn mean_faults_need_every_round_counted() {
        assert_eq!(mean(Some(10), 4), Some(2.5));
        assert_eq!(mean(None, 4), None);
        assert_eq!(mean(Some(1), 0), None);
    }
}
