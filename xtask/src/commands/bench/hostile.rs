//! `bench`, after the table: per policy, the hostile case (`testkit::hostile`)
//! that costs the host most, timed through the host as policy-server runs
//! it, with the fuel one metered evaluation of it burns next to the budget
//! (`host::FUEL_BUDGET`). The fuel figure is what the budget's margin is
//! judged on; the time is only reported, never asserted.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use testkit::front_door::read_review;
use host::{FUEL_BUDGET, HostCapabilities, PolicyModule};
use testkit::case::{ExpectedResult, Runner};
use testkit::hostile::HostileCase;

use crate::workspace::PolicyDir;

/// One hostile case's cost.
#[derive(Debug, Clone)]
pub struct Cost {
    pub case: String,
    pub median: Duration,
    pub fuel: u64,
}

/// A policy's slowest hostile case and the one that burns most fuel.
#[derive(Debug)]
pub struct Hostile {
    pub policy: String,
    pub slowest: Cost,
    pub most_fuel: Cost,
}

/// Whether the case reaches the policy and can be timed: refused requests
/// never reach it.
fn timed(case: &HostileCase) -> bool {
    case.case.expectation(Runner::Host).result != ExpectedResult::Refused
}

/// Times every hostile case of `policy` (`runs` evaluations each, fresh
/// instances) and meters it once; `None` when no case reaches the policy.
pub fn measure(policy: &PolicyDir, dist: &Path, runs: usize) -> Result<Option<Hostile>> {
    let module = PolicyModule::from_file(&policy.module_path(dist))?;
    let mut costs = Vec::new();
    for case in testkit::hostile::cases(&policy.name, &policy.cases_dir())?
        .iter()
        .filter(|case| timed(case))
    {
        costs.push(cost(&module, case, runs)?);
    }
    let slowest = costs.iter().max_by_key(|c| c.median).cloned();
    let most_fuel = costs.iter().max_by_key(|c| c.fuel).cloned();
    Ok(slowest.zip(most_fuel).map(|(slowest, most_fuel)| Hostile {
        policy: policy.name.clone(),
        slowest,
        most_fuel,
    }))
}

fn cost(module: &PolicyModule, case: &HostileCase, runs: usize) -> Result<Cost> {
    let request = read_review(case.body.as_bytes()).map_err(|r| {
        anyhow!(
            "{}: the host refused it: {} {}",
            case.id(),
            r.status,
            r.body
        )
    })?;
    let policy = module.configure(case.case.settings.clone())?;
    let mut samples: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let start = Instant::now();
            let response = policy
                .evaluate(&request, HostCapabilities::offline())
                .response;
            let elapsed = start.elapsed();
            std::hint::black_box(response);
            elapsed
        })
        .collect();
    samples.sort_unstable();
    let median = samples.get(samples.len() / 2).copied().unwrap_or_default();
    let fuel = policy
        .evaluate_metered(&request, HostCapabilities::offline())
        .fuel;
    Ok(Cost {
        case: case.name.clone(),
        median,
        fuel,
    })
}

/// The lines `bench` prints after its table.
pub fn render(measured: &[Hostile], runs: usize) -> String {
    let mut out = format!(
        "hostile cases: the slowest per policy, median of {runs} fresh evaluations through the host; \
         fuel of one metered evaluation against the budget of {FUEL_BUDGET}.\n\
         skipped: `refused` cases (they never reach a policy).\n\
         {:<26} {:<34} {:>10} {:>14} {:>7}  {}\n",
        "module", "slowest case", "median", "fuel", "budget", "most fuel (case)"
    );
    for h in measured {
        out.push_str(&format!(
            "{:<26} {:<34} {:>8.1}ms {:>14} {:>6.2}%  {} ({})\n",
            h.policy,
            h.slowest.case,
            h.slowest.median.as_secs_f64() * 1e3,
            h.slowest.fuel,
            share(h.slowest.fuel),
            h.most_fuel.fuel,
            h.most_fuel.case
        ));
    }
    out
}

/// `fuel` as a percentage of the budget.
fn share(fuel: u64) -> f64 {
    // Both far below 2^52, where the conversion through u32 thousands loses
    // nothing a percentage shows.
    let thousands = |n: u64| f64::from(u32::try_from(n / 1000).unwrap_or(u32::MAX));
    100.0 * thousands(fuel) / thousands(FUEL_BUDGET).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hostile(policy: &str, fuel: u64) -> Hostile {
        let cost = |case: &str| Cost {
            case: case.to_owned(),
            median: Duration::from_micros(1500),
            fuel,
        };
        Hostile {
            policy: policy.to_owned(),
            slowest: cost("large"),
            most_fuel: cost("wide-list"),
        }
    }

    #[test]
    fn each_policy_gets_its_slowest_case_fuel_and_share_of_the_budget() {
        let out = render(&[hostile("no-delete", FUEL_BUDGET / 4)], 5);
        assert!(out.contains("median of 5 fresh evaluations"), "{out}");
        assert!(out.contains(&format!("budget of {FUEL_BUDGET}")), "{out}");
        let line = out
            .lines()
            .find(|l| l.starts_with("no-delete"))
            .unwrap_or_default();
        assert!(line.contains(" large "), "{line}");
        assert!(line.contains("1.5ms"), "{line}");
        assert!(line.contains("25.00%"), "{line}");
        assert!(
            line.ends_with(&format!("{} (wide-list)", FUEL_BUDGET / 4)),
            "{line}"
        );
    }

    #[test]
    fn refused_cases_are_not_timed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = root.join("policies/oidc-config/tests/cases");
        let cases = testkit::hostile::cases("oidc-config", &dir).unwrap_or_default();
        assert!(!cases.is_empty());
        let ids: Vec<String> = cases
            .iter()
            .filter(|c| timed(c))
            .map(HostileCase::id)
            .collect();
        assert!(ids.contains(&"oidc-config/large".to_owned()), "{ids:?}");
        assert!(ids.contains(&"oidc-config/wide-list".to_owned()), "{ids:?}");
        assert!(!ids.contains(&"oidc-config/too-deep".to_owned()), "{ids:?}");
        assert!(
            !ids.contains(&"oidc-config/over-limit".to_owned()),
            "{ids:?}"
        );
    }
}
