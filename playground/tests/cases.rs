//! Every case of every policy, as the page loads it from the case list,
//! through the playground's engine: its answer is judged by the one judge
//! of a case (`testkit::case::judge`, as under our host; cases that replay
//! cluster answers aside, since the page has no cluster), and every
//! rejection is rendered with its fields located in the editors.

use std::path::Path;

use admission::AdmissionResponse;
use cozystack_playground::{Answer, Input, answer, cases, evaluate};
use testkit::case::{
    Case, Runner, SettingsAnswer, SettingsJudged, case_files, judge, judge_settings,
};
use testkit::rules::KnownRules;
use wasm_meta::Metadata;

#[test]
fn every_case_gets_its_verdict_and_highlights() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let policies = cases::read(root).unwrap();
    let dirs = layout::policies(root).unwrap();
    assert_eq!(
        policies.len(),
        dirs.len(),
        "every policy crate is in the page"
    );
    let mut judged = 0;
    let mut located = 0;
    let mut too_deep = 0;
    for (policy, dir) in policies.iter().zip(&dirs) {
        assert_eq!(policy.name, dir.name);
        assert!(!policy.cases.is_empty(), "{}: no cases", policy.name);
        let metadata = Metadata::from_yaml_file(&dir.metadata_path()).unwrap();
        let rules = KnownRules::load(&dir.dir).unwrap();
        let files = case_files(&dir.cases_dir()).unwrap();
        assert_eq!(
            files.len(),
            policy.cases.len(),
            "{}: every case",
            policy.name
        );
        for (example, file) in policy.cases.iter().zip(&files) {
            if example.replays_cluster {
                continue;
            }
            let case = Case::load(file).unwrap();
            let name = format!("{}/{}", policy.name, example.file);
            let input = Input {
                policy: policy.name.clone(),
                operation: example.operation.clone(),
                object: example.object.clone(),
                old_object: example.old_object.clone(),
                settings: example.settings.clone(),
                request: example.request.clone(),
            };
            let answered = match answer(&input) {
                Ok(answered) => answered,
                // Nesting deeper than serde-saphyr's default budget is
                // refused in the page, before any policy sees it
                // (hostile-input cases).
                Err(output)
                    if output
                        .problems
                        .iter()
                        .any(|p| p.message.contains("budget breached")) =>
                {
                    too_deep += 1;
                    continue;
                }
                Err(output) => panic!("{name}: {:?}", output.problems),
            };
            let expect = case.expectation(Runner::Host);
            let settings = match &answered {
                Answer::SettingsRefused(message) => SettingsAnswer::Refused(message.clone()),
                Answer::Validated(_) => SettingsAnswer::Accepted,
            };
            let settings =
                judge_settings(expect, &settings).unwrap_or_else(|e| panic!("{name}: {e}"));
            let Answer::Validated(response) = answered else {
                assert_eq!(settings, SettingsJudged::RefusedAsExpected);
                continue;
            };
            let response = AdmissionResponse::from_validation("", response);
            let request = case.admission_request().unwrap();
            judge(expect, &response, metadata.matches(&request), &rules)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            judged += 1;
            let verdict = evaluate(&input).verdict.expect("a verdict");
            located += verdict.findings.iter().filter(|f| f.at.is_some()).count();
        }
    }
    assert!(too_deep <= 8, "{too_deep} cases refused as too deep");
    assert!(judged > 300, "only {judged} cases judged");
    assert!(located > 100, "only {located} findings located");
}
