//! Every case of every policy, as the page loads it from the case list,
//! through the playground's engine: the verdict is the case's (cases that
//! replay cluster answers aside, since the page has no cluster), and every
//! rejection is rendered with its fields located in the editors.

use bundle::case::Outcome;
use cozystack_playground::{Input, Severity, cases, evaluate};

#[test]
fn every_case_gets_its_verdict_and_highlights() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let policies = cases::read(std::path::Path::new(root)).unwrap();
    let crates = std::fs::read_dir(std::path::Path::new(root).join("policies"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("Cargo.toml").is_file())
        .count();
    assert_eq!(policies.len(), crates, "every policy crate is in the page");
    let mut judged = 0;
    let mut located = 0;
    let mut too_deep = 0;
    for policy in &policies {
        assert!(!policy.cases.is_empty(), "{}: no cases", policy.name);
        for case in policy.cases.iter().filter(|c| !c.replays_cluster) {
            let input = Input {
                policy: policy.name.clone(),
                operation: case.operation.clone(),
                object: case.object.clone(),
                old_object: case.old_object.clone(),
                settings: case.settings.clone(),
                request: case.request.clone(),
            };
            let output = evaluate(&input);
            let name = format!("{}/{}", policy.name, case.file);
            // Nesting deeper than serde-saphyr's default budget is refused
            // in the page, before any policy sees it (hostile-input cases).
            if output
                .problems
                .iter()
                .any(|p| p.message.contains("budget breached"))
            {
                too_deep += 1;
                continue;
            }
            assert!(output.problems.is_empty(), "{name}: {:?}", output.problems);
            if case.expect == Outcome::InvalidSettings {
                assert!(
                    output.settings_refused.is_some(),
                    "{name}: settings accepted"
                );
                continue;
            }
            let verdict = output
                .verdict
                .unwrap_or_else(|| panic!("{name}: no verdict"));
            let warned = verdict
                .findings
                .iter()
                .any(|f| f.severity == Severity::Warning);
            let as_expected = match case.expect {
                Outcome::Fail => !verdict.allowed,
                Outcome::Pass => verdict.allowed && !warned,
                Outcome::Warn => verdict.allowed && warned,
                Outcome::Skip => verdict.allowed,
                // Either verdict passes; refusals happen before any policy.
                Outcome::Any => true,
                Outcome::InvalidSettings | Outcome::Refused => false,
            };
            assert!(
                as_expected,
                "{name}: expected {:?}, got {verdict:?}",
                case.expect
            );
            judged += 1;
            located += verdict.findings.iter().filter(|f| f.at.is_some()).count();
        }
    }
    assert!(too_deep <= 8, "{too_deep} cases refused as too deep");
    assert!(judged > 300, "only {judged} cases judged");
    assert!(located > 100, "only {located} findings located");
}
