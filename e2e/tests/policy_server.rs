//! Every case through Kubewarden's own policy-server, over HTTP on
//! loopback, and what only a real server shows.
//!
//! - `case/<policy>/<case>`: one policy id per distinct (policy, settings)
//!   pair among the cases; each case is POSTed as an AdmissionReview and
//!   judged like under our host (`runners.policy-server` where it differs).
//! - `start-up/<policy>/<case>`: settings a case expects refused stop the
//!   server at start-up, and its log names the policy and the setting.
//! - `deploy/<policy>/…`: the policy configured exactly as `deploy/`
//!   configures its ClusterAdmissionPolicy. In `monitor` mode (as shipped)
//!   every request is allowed and the violation only logged; in `protect`
//!   mode (`deploy/protect`) each case with the shipped settings gets the
//!   case's verdict; and no request ever gets a 500, even for a
//!   context-aware policy with no cluster behind the server.
//! - `hostile/<policy>/<case>`: every hostile request (`testkit::hostile`),
//!   its body POSTed byte for byte to the policy id of its settings: a 200
//!   with the verdict the case expects, or the server's own refusal before
//!   any policy (413 above its body limit, 400 for a body its JSON parser
//!   refuses).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use e2e::PolicyCase;
use e2e::policy_server::{
    Answer, PolicyEntry, PolicyMode, PolicyServer, ServerConfig, ServerError, admission_review,
};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use testkit::case::{Expectation, ExpectedResult, Runner, judge, judge_refusal};
use testkit::hostile::HostileCase;
use testkit::rules::KnownRules;
use wasm_meta::Metadata;

fn main() {
    let args = Arguments::from_args();
    let trials = trials().unwrap_or_else(|error| {
        vec![Trial::test("policy-server/set-up", move || {
            Err(error.into())
        })]
    });
    libtest_mimic::run(&args, trials).exit();
}

/// Everything one suite run needs: the server with every policy id, and
/// what each policy's module declares.
struct Suite {
    server: PolicyServer,
    /// Policy id of each (policy, settings) pair among the cases.
    case_ids: BTreeMap<(String, String), String>,
    metadata: BTreeMap<String, Metadata>,
    /// The rule ids each policy's README documents.
    rules: BTreeMap<String, KnownRules>,
    deployed: BTreeMap<String, Deployed>,
}

/// A policy as `deploy/` ships it.
#[derive(Clone)]
struct Deployed {
    /// The id as shipped (monitor mode) and its `deploy/protect` twin.
    monitor_id: String,
    protect_id: String,
    entry: PolicyEntry,
}

fn settings_key(settings: &Value) -> String {
    settings.to_string()
}

fn is_refused_at_start_up(case: &PolicyCase) -> bool {
    case.case.expectation(Runner::PolicyServer).result == ExpectedResult::InvalidSettings
}

fn trials() -> Result<Vec<Trial>, String> {
    let cases = e2e::cases()?;
    let deployed = e2e::deployed()?;
    let mut names: Vec<String> = Vec::new();
    for case in &cases {
        let kind = if is_refused_at_start_up(case) {
            "start-up"
        } else {
            "case"
        };
        names.push(format!("{kind}/{}", case.id()));
    }
    for policy in deployed.keys() {
        for check in ["monitor", "protect", "never-500"] {
            names.push(format!("deploy/{policy}/{check}"));
        }
    }
    let hostile = e2e::hostile::cases()?;
    names.extend(hostile.iter().map(|c| format!("hostile/{}", c.id())));
    let Some(binary) = e2e::program("policy-server")? else {
        println!(
            "policy-server is not on PATH: every test below is SKIPPED (`make setup` installs it)"
        );
        return Ok(names
            .into_iter()
            .map(|name| Trial::test(name, || Ok(())).with_ignored_flag(true))
            .collect());
    };
    let suite = Arc::new(start(&binary, &cases, &deployed)?);
    let binary = Arc::new(binary);
    let mut trials = Vec::new();
    for case in cases {
        let name = if is_refused_at_start_up(&case) {
            let (binary, suite) = (Arc::clone(&binary), Arc::clone(&suite));
            let name = format!("start-up/{}", case.id());
            Trial::test(name, move || refused_at_start_up(&binary, &suite, &case))
        } else {
            let suite = Arc::clone(&suite);
            Trial::test(format!("case/{}", case.id()), move || judged(&suite, &case))
        };
        trials.push(name);
    }
    let all_cases = Arc::new(e2e::cases()?);
    for policy in suite.deployed.keys() {
        for check in ["monitor", "protect", "never-500"] {
            let (suite, cases, policy) =
                (Arc::clone(&suite), Arc::clone(&all_cases), policy.clone());
            trials.push(Trial::test(
                format!("deploy/{policy}/{check}"),
                move || match check {
                    "monitor" => monitor_only_logs(&suite, &cases, &policy),
                    "protect" => protect_judges(&suite, &cases, &policy),
                    _ => never_500(&suite, &cases, &policy),
                },
            ));
        }
    }
    for case in hostile {
        let suite = Arc::clone(&suite);
        let trial = Trial::test(format!("hostile/{}", case.id()), move || {
            judged_hostile(&suite, &case)
        });
        trials.push(trial);
    }
    Ok(trials)
}

/// Starts one server with a policy id per (policy, settings) pair of the
/// cases and two per deployed policy.
fn start(
    binary: &Path,
    cases: &[PolicyCase],
    deployed: &BTreeMap<String, e2e::ClusterAdmissionPolicy>,
) -> Result<Suite, String> {
    let mut policies = BTreeMap::new();
    let mut case_ids = BTreeMap::new();
    let mut metadata = BTreeMap::new();
    let mut rules = BTreeMap::new();
    for case in cases.iter().filter(|c| !is_refused_at_start_up(c)) {
        if !rules.contains_key(&case.policy) {
            let known = KnownRules::load(&e2e::root().join("policies").join(&case.policy))?;
            rules.insert(case.policy.clone(), known);
        }
        if !metadata.contains_key(&case.policy) {
            metadata.insert(case.policy.clone(), e2e::module_metadata(&case.policy)?);
        }
        let key = (case.policy.clone(), settings_key(&case.settings()));
        if !case_ids.contains_key(&key) {
            let id = format!("{}-{}", case.policy, case_ids.len());
            let mut entry = PolicyEntry::new(&e2e::module(&case.policy), case.settings());
            // What `kwctl run --allow-context-aware` grants: the resources
            // the module's metadata declares.
            entry.context_aware_resources = metadata
                .get(&case.policy)
                .map(|m| m.context_aware_resources.clone())
                .unwrap_or_default();
            policies.insert(id.clone(), entry);
            case_ids.insert(key, id);
        }
    }
    let mut shipped = BTreeMap::new();
    for (name, policy) in deployed {
        let entry = e2e::deployed_entry(policy)?;
        let monitor_id = e2e::deployed_id(policy);
        let protect_id = format!("{monitor_id}-protect");
        let mut protect = entry.clone();
        protect.policy_mode = PolicyMode::Protect;
        let mut monitor = entry.clone();
        monitor.policy_mode = PolicyMode::Monitor;
        policies.insert(monitor_id.clone(), monitor);
        policies.insert(protect_id.clone(), protect);
        shipped.insert(
            name.clone(),
            Deployed {
                monitor_id,
                protect_id,
                entry,
            },
        );
    }
    let config = ServerConfig {
        binary: binary.to_path_buf(),
        policies,
        trust_config: e2e::trust_config(),
        workers: None,
        registry: None,
    };
    let dir = e2e::root().join("target/e2e/policy-server");
    let server = PolicyServer::start(&config, &dir).map_err(|e| testkit::with_causes(&e))?;
    println!(
        "policy-server: {} policy ids, resident memory {} KiB",
        config.policies.len(),
        server.resident_kib().unwrap_or_default()
    );
    Ok(Suite {
        server,
        case_ids,
        metadata,
        rules,
        deployed: shipped,
    })
}

/// Posts `case`'s request (with `uid` when given) to `policy_id`: a
/// verdict, or the server's refusal of the request (a body nested deeper
/// than it parses).
fn post(
    suite: &Suite,
    policy_id: &str,
    case: &PolicyCase,
    uid: Option<&str>,
) -> Result<Answer, Failed> {
    let mut review = admission_review(&case.case.request);
    if let (Some(uid), Some(request)) = (uid, review.get_mut("request")) {
        request["uid"] = Value::from(uid);
    }
    let body = serde_json::to_vec(&review).map_err(|e| e.to_string())?;
    Ok(suite
        .server
        .post(policy_id, &body)
        .map_err(|e| testkit::with_causes(&e))?)
}

/// `answer` judged against `expect`: a verdict, or a refusal before any
/// policy.
fn judge_answer(
    expect: &Expectation,
    answer: &Answer,
    matches_rules: bool,
    rules: &KnownRules,
) -> Result<(), String> {
    if answer.status != 200 {
        return judge_refusal(expect, answer.status, &answer.body);
    }
    judge(expect, &answer.response()?, matches_rules, rules)
}

fn matches_rules(suite: &Suite, case: &PolicyCase) -> Result<bool, Failed> {
    let request = case.case.admission_request()?;
    Ok(suite
        .metadata
        .get(&case.policy)
        .is_none_or(|m| m.matches(&request)))
}

fn known_rules<'s>(suite: &'s Suite, case: &PolicyCase) -> Result<&'s KnownRules, Failed> {
    Ok(suite
        .rules
        .get(&case.policy)
        .ok_or_else(|| format!("no README rules of {}", case.policy))?)
}

fn judged(suite: &Suite, case: &PolicyCase) -> Result<(), Failed> {
    let key = (case.policy.clone(), settings_key(&case.settings()));
    let id = suite.case_ids.get(&key).ok_or("no policy id")?;
    let answer = post(suite, id, case, None)?;
    judge_answer(
        case.case.expectation(Runner::PolicyServer),
        &answer,
        matches_rules(suite, case)?,
        known_rules(suite, case)?,
    )
    .map_err(|e| format!("{}: {e}", case.case.description).into())
}

/// POSTs the hostile body as it is to the policy id of its settings and
/// judges the answer: a verdict, or the server's refusal of the request.
fn judged_hostile(suite: &Suite, case: &HostileCase) -> Result<(), Failed> {
    let key = (
        case.policy.clone(),
        settings_key(&e2e::hostile::settings(case)),
    );
    let id = suite
        .case_ids
        .get(&key)
        .ok_or("no policy id with the case's settings")?;
    let answer = suite
        .server
        .post_once(id, case.body.as_bytes())
        .map_err(|e| testkit::with_causes(&e))?;
    let rules = suite
        .rules
        .get(&case.policy)
        .ok_or_else(|| format!("no README rules of {}", case.policy))?;
    let matches = e2e::hostile::matches_rules(suite.metadata.get(&case.policy), case);
    judge_answer(
        case.case.expectation(Runner::PolicyServer),
        &answer,
        matches,
        rules,
    )
    .map_err(Failed::from)
}

/// A server given the case's settings for the shipped policy refuses to
/// start, naming the policy and the setting.
fn refused_at_start_up(binary: &Path, suite: &Suite, case: &PolicyCase) -> Result<(), Failed> {
    let shipped = suite
        .deployed
        .get(&case.policy)
        .ok_or_else(|| format!("deploy/ does not ship {}", case.policy))?;
    let mut entry = shipped.entry.clone();
    entry.settings = case.settings();
    let config = ServerConfig {
        binary: binary.to_path_buf(),
        policies: BTreeMap::from([(shipped.monitor_id.clone(), entry)]),
        trust_config: e2e::trust_config(),
        workers: Some(1),
        registry: None,
    };
    let dir = e2e::root()
        .join("target/e2e/start-up")
        .join(&case.policy)
        .join(&case.name);
    match PolicyServer::start(&config, &dir) {
        Ok(_) => Err("policy-server started with settings the case expects refused".into()),
        Err(ServerError::Exited { log, .. }) => {
            // The one line an operator reads in the crash-looping pod's log.
            let error = log
                .lines()
                .find(|line| line.starts_with("Error:"))
                .ok_or_else(|| format!("no `Error:` line in the log:\n{log}"))?;
            let expect = case.case.expectation(Runner::PolicyServer);
            let named = format!("{} settings: ", case.policy);
            let mut wanted = vec![named.as_str()];
            wanted.extend(expect.message.iter().map(String::as_str));
            match wanted.iter().find(|fragment| !error.contains(*fragment)) {
                Some(missing) => Err(format!("the error does not say {missing:?}: {error}").into()),
                None => Ok(()),
            }
        }
        Err(other) => Err(other.to_string().into()),
    }
}

/// The cases of `policy` that run with the settings `deploy/` ships.
fn with_shipped_settings<'c>(
    suite: &Suite,
    cases: &'c [PolicyCase],
    policy: &str,
) -> Result<(Deployed, Vec<&'c PolicyCase>), Failed> {
    let shipped = suite
        .deployed
        .get(policy)
        .ok_or_else(|| format!("deploy/ does not ship {policy}"))?
        .clone();
    let matching = cases
        .iter()
        .filter(|c| c.policy == policy && !is_refused_at_start_up(c))
        .filter(|c| e2e::runs_with(c, &shipped.entry.settings))
        .collect();
    Ok((shipped, matching))
}

fn monitor_only_logs(suite: &Suite, cases: &[PolicyCase], policy: &str) -> Result<(), Failed> {
    let (shipped, matching) = with_shipped_settings(suite, cases, policy)?;
    let rejected: Vec<&&PolicyCase> = matching
        .iter()
        .filter(|c| c.case.expectation(Runner::PolicyServer).result == ExpectedResult::Fail)
        .collect();
    if rejected.is_empty() {
        return Err(format!("no `fail` case of {policy} runs with the shipped settings").into());
    }
    for case in rejected {
        let uid = format!("monitor-{}", case.id().replace('/', "-"));
        let response = post(suite, &shipped.monitor_id, case, Some(&uid))?.response()?;
        if !response.allowed || response.status.is_some() {
            return Err(format!("{}: monitor mode answered {response:?}", case.id()).into());
        }
        let log = suite.server.log();
        let logged = e2e::monitor_mode_log(&log, &shipped.monitor_id, &uid)
            .ok_or_else(|| format!("{}: nothing logged in monitor mode", case.id()))?;
        let expect = case.case.expectation(Runner::PolicyServer);
        // The log holds the response's Debug form, which escapes as `{:?}`.
        let escaped = |f: &String| {
            let debug = format!("{f:?}");
            debug.get(1..debug.len() - 1).unwrap_or_default().to_owned()
        };
        if !logged.contains("allowed: false")
            || !expect.message.iter().all(|f| logged.contains(&escaped(f)))
        {
            return Err(format!(
                "{}: the log does not hold the rejection: {logged}",
                case.id()
            )
            .into());
        }
    }
    Ok(())
}

fn protect_judges(suite: &Suite, cases: &[PolicyCase], policy: &str) -> Result<(), Failed> {
    let (shipped, matching) = with_shipped_settings(suite, cases, policy)?;
    if matching.is_empty() {
        return Err(format!("no case of {policy} runs with the shipped settings").into());
    }
    for case in matching {
        let answer = post(suite, &shipped.protect_id, case, None)?;
        judge_answer(
            case.case.expectation(Runner::PolicyServer),
            &answer,
            matches_rules(suite, case)?,
            known_rules(suite, case)?,
        )
        .map_err(|e| format!("{}: {e}", case.id()))?;
    }
    Ok(())
}

fn never_500(suite: &Suite, cases: &[PolicyCase], policy: &str) -> Result<(), Failed> {
    let shipped = suite
        .deployed
        .get(policy)
        .ok_or_else(|| format!("deploy/ does not ship {policy}"))?;
    for case in cases
        .iter()
        .filter(|c| c.policy == policy && !is_refused_at_start_up(c))
    {
        if case.case.admission_request().is_err() {
            continue; // Not an AdmissionRequest: the server answers 400 before any policy.
        }
        let answer = post(suite, &shipped.protect_id, case, None)?;
        // A refusal before any policy (a body nested too deep) is the
        // server's 400; only a 500, from the server or the policy, fails.
        let code = match answer.status {
            200 => answer.response()?.code(),
            status => Some(status),
        };
        if code == Some(500) {
            return Err(
                format!("{}: 500 from {}: {answer:?}", case.id(), shipped.protect_id).into(),
            );
        }
    }
    Ok(())
}
