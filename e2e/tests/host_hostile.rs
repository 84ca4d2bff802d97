//! Every hostile case of every policy (`testkit::hostile`) through our host
//! against the module in `dist/`: the body through policy-server's door
//! (`testkit::front_door`), then the policy, twice, and a third time under
//! the fuel-metered engine; the answers must be the same, the third within
//! `host::FUEL_BUDGET`, and what the case expects
//! (`cargo test --test host_hostile -- no-delete/`).

use std::sync::Arc;

use admission::AdmissionResponse;

use host::{FUEL_BUDGET, HostCapabilities, PolicyModule};
use libtest_mimic::{Arguments, Failed, Trial};
use testkit::case::{Runner, judge, judge_refusal};
use testkit::front_door::read_review;
use testkit::hostile::HostileCase;
use testkit::rules::KnownRules;

fn main() {
    let args = Arguments::from_args();
    let root = e2e::root();
    let mut trials = Vec::new();
    let policies = e2e::policies().unwrap_or_else(|e| {
        trials.push(Trial::test("policies", move || Err(e.into())));
        Vec::new()
    });
    for policy in policies {
        let module = Arc::new(e2e::load_module(&policy));
        let rules = Arc::new(KnownRules::load(&root.join("policies").join(&policy)));
        let dir = root.join("policies").join(&policy).join("tests/cases");
        match testkit::hostile::cases(&policy, &dir) {
            Ok(cases) => {
                for case in cases {
                    let module = Arc::clone(&module);
                    let rules = Arc::clone(&rules);
                    let trial = Trial::test(case.id(), move || {
                        let module = module
                            .as_ref()
                            .as_ref()
                            .map_err(|e| Failed::from(e.as_str()))?;
                        let rules = rules
                            .as_ref()
                            .as_ref()
                            .map_err(|e| Failed::from(e.as_str()))?;
                        run(module, rules, &case)
                    });
                    trials.push(trial);
                }
            }
            Err(e) => {
                let message = e.with_causes();
                trials.push(Trial::test(format!("{policy}/hostile"), move || {
                    Err(message.into())
                }));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// How the policy is run: through wasmtime-provider under the deadline, or
/// under the fuel budget.
#[derive(Clone, Copy, PartialEq)]
enum Engine {
    Deadline,
    Fuel,
}

/// The answer, and the fuel burnt when metered.
type Answer = Result<(AdmissionResponse, Option<u64>), (u16, String)>;

fn answer(module: &PolicyModule, case: &HostileCase, engine: Engine) -> Answer {
    let request = read_review(case.body.as_bytes()).map_err(|r| (r.status, r.body))?;
    let policy = module
        .configure(case.case.settings.clone())
        .map_err(|e| (0, e.to_string()))?;
    Ok(match engine {
        Engine::Deadline => (
            policy
                .evaluate(&request, HostCapabilities::offline())
                .response,
            None,
        ),
        Engine::Fuel => {
            let metered = policy.evaluate_metered(&request, HostCapabilities::offline());
            (metered.evaluation.response, Some(metered.fuel))
        }
    })
}

fn run(module: &PolicyModule, rules: &KnownRules, case: &HostileCase) -> Result<(), Failed> {
    let expect = case.case.expectation(Runner::Host);
    let first = answer(module, case, Engine::Deadline);
    let second = answer(module, case, Engine::Deadline);
    if first != second {
        return Err(format!("two answers differ: {first:?} then {second:?}").into());
    }
    let metered = answer(module, case, Engine::Fuel);
    let fuel = metered.as_ref().ok().and_then(|(_, fuel)| *fuel);
    if fuel.is_some_and(|fuel| fuel >= FUEL_BUDGET) {
        return Err(format!("the metered evaluation used up the fuel budget: {metered:?}").into());
    }
    let strip = |answer: Answer| answer.map(|(response, _)| response);
    let (first, metered) = (strip(first), strip(metered));
    if first != metered {
        return Err(
            format!("the fuel engine answers {metered:?}, wasmtime-provider {first:?}").into(),
        );
    }
    match first {
        Ok(response) => {
            let request = read_review(case.body.as_bytes()).map_err(|r| r.body)?;
            let matches = module.metadata().is_none_or(|m| m.matches(&request));
            judge(expect, &response, matches, rules).map_err(Failed::from)
        }
        Err((status, body)) => judge_refusal(expect, status, &body).map_err(Failed::from),
    }
}
