//! JUnit XML, which most CI systems show as a test report: one testsuite
//! per file, one testcase per object checked, a failure per violation; a
//! testcase whose object a rule could not judge, and that nothing failed,
//! is skipped; warnings and not-checked findings go to the testcase's
//! output. The rules folded offline are a testsuite of their own, a skipped
//! testcase each. Written with quick-xml.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use crate::check_json::Folded;
use crate::finding::{Finding, NOT_CHECKED_LABEL, Outcome};
use crate::manifests::Change;

/// The testsuite of the rules folded offline.
const FOLDED_SUITE: &str = "not checked offline";

/// One testcase: an object and its findings (for a folded rule: its line,
/// no findings).
struct Case<'a> {
    name: String,
    failures: Vec<&'a Finding>,
    /// Warnings and not-checked findings, in that order of arrival.
    output: Vec<&'a Finding>,
    /// Why the case was skipped: a rule could not judge its object.
    skipped: Option<String>,
}

impl Case<'_> {
    fn skipped(&self) -> Option<&str> {
        self.skipped.as_deref().filter(|_| self.failures.is_empty())
    }
}

/// The test cases of each file, by name.
type Files<'a> = BTreeMap<PathBuf, BTreeMap<String, Case<'a>>>;

/// The case `name` of `file`, made empty the first time.
fn case<'f, 'a>(files: &'f mut Files<'a>, file: &Path, name: String) -> &'f mut Case<'a> {
    files
        .entry(file.to_path_buf())
        .or_default()
        .entry(name.clone())
        .or_insert_with(|| Case {
            name,
            failures: Vec::new(),
            output: Vec::new(),
            skipped: None,
        })
}

fn line(finding: &Finding) -> String {
    let place = finding
        .location
        .as_ref()
        .map(|at| format!("{at}: "))
        .unwrap_or_default();
    format!("{place}{}: {}", finding.rule, finding.text_after_label())
}

/// The report of every object in `changes`, grouped by file, and of the
/// `folded` rules.
pub fn render(findings: &[Finding], folded: &[Folded], changes: &[Change]) -> Result<String> {
    let mut files: Files<'_> = BTreeMap::new();
    for change in changes {
        let name = format!("{} {}", change.operation, change.key.describe());
        case(&mut files, &change.manifest.file, name);
    }
    for finding in findings {
        let file = finding
            .location
            .as_ref()
            .map_or_else(|| Path::new(""), |at| at.file.as_path());
        let case = case(&mut files, file, finding.subject());
        // A rule that could not judge fails nothing: its line goes to the
        // case's output, and the case is skipped unless something failed.
        match finding.outcome() {
            Outcome::Fail | Outcome::Error => case.failures.push(finding),
            Outcome::Warn => case.output.push(finding),
            Outcome::NotChecked => {
                case.output.push(finding);
                case.skipped
                    .get_or_insert_with(|| format!("{NOT_CHECKED_LABEL}: {}", line(finding)));
            }
        }
    }
    for folded in folded {
        let case = case(&mut files, Path::new(FOLDED_SUITE), folded.rule.clone());
        case.skipped = Some(folded.line());
    }
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let all = || files.values().flat_map(BTreeMap::values);
    let tests = all().count();
    let failures = all().filter(|c| !c.failures.is_empty()).count();
    let skipped = all().filter(|c| c.skipped().is_some()).count();
    writer
        .create_element("testsuites")
        .with_attributes([
            ("name", "cozystack-policies check"),
            ("tests", tests.to_string().as_str()),
            ("failures", failures.to_string().as_str()),
            ("skipped", skipped.to_string().as_str()),
        ])
        .write_inner_content(|writer| {
            for (file, cases) in &files {
                let file = file.display().to_string();
                let failed = cases.values().filter(|c| !c.failures.is_empty()).count();
                let skipped = cases.values().filter(|c| c.skipped().is_some()).count();
                writer
                    .create_element("testsuite")
                    .with_attributes([
                        ("name", file.as_str()),
                        ("tests", cases.len().to_string().as_str()),
                        ("failures", failed.to_string().as_str()),
                        ("errors", "0"),
                        ("skipped", skipped.to_string().as_str()),
                    ])
                    .write_inner_content(|writer| {
                        for case in cases.values() {
                            write_case(writer, &file, case)?;
                        }
                        Ok(())
                    })?;
            }
            Ok(())
        })?;
    Ok(String::from_utf8(writer.into_inner())?)
}

fn write_case(writer: &mut Writer<Vec<u8>>, file: &str, case: &Case<'_>) -> std::io::Result<()> {
    let element = writer
        .create_element("testcase")
        .with_attributes([("name", case.name.as_str()), ("classname", file)]);
    if case.failures.is_empty() && case.output.is_empty() && case.skipped().is_none() {
        element.write_empty()?;
        return Ok(());
    }
    element.write_inner_content(|writer| {
        if let Some(why) = case.skipped() {
            writer
                .create_element("skipped")
                .with_attribute(("message", why))
                .write_empty()?;
        }
        for finding in &case.failures {
            let text = line(finding);
            let rule = finding.rule.to_string();
            writer
                .create_element("failure")
                .with_attributes([("message", text.as_str()), ("type", rule.as_str())])
                .write_text_content(BytesText::new(&text))?;
        }
        if !case.output.is_empty() {
            let text: Vec<String> = case
                .output
                .iter()
                .map(|finding| {
                    let label = match finding.outcome() {
                        Outcome::NotChecked => NOT_CHECKED_LABEL,
                        _ => "warning",
                    };
                    format!("{label} {}", line(finding))
                })
                .collect();
            writer
                .create_element("system-out")
                .write_text_content(BytesText::new(&text.join("\n")))?;
        }
        Ok(())
    })?;
    Ok(())
}
