//! JUnit XML, which most CI systems show as a test report: one testsuite
//! per file, one testcase per object checked, a failure per violation;
//! warnings go to the testcase's output. Written with quick-xml.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use crate::finding::{Answered, Finding};
use crate::manifests::Change;

/// One testcase: an object and its findings.
struct Case<'a> {
    name: String,
    failures: Vec<&'a Finding>,
    warnings: Vec<&'a Finding>,
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
            warnings: Vec::new(),
        })
}

fn line(finding: &Finding) -> String {
    let place = finding
        .location
        .as_ref()
        .map(|at| format!("{at}: "))
        .unwrap_or_default();
    format!("{place}{}: {}", finding.rule, finding.text())
}

/// The report of every object in `changes`, grouped by file.
pub fn render(findings: &[Finding], changes: &[Change]) -> Result<String> {
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
        // A rule that could not judge fails nothing: its line goes with
        // the warnings, which JUnit prints as the case's output.
        match finding.answered {
            Answered::Violation | Answered::Error if !finding.is_not_checked() => {
                case.failures.push(finding)
            }
            Answered::Violation | Answered::Error | Answered::Warning => {
                case.warnings.push(finding)
            }
        }
    }
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let tests: usize = files.values().map(BTreeMap::len).sum();
    let failures: usize = files
        .values()
        .flat_map(BTreeMap::values)
        .filter(|c| !c.failures.is_empty())
        .count();
    writer
        .create_element("testsuites")
        .with_attributes([
            ("name", "cozystack-policies check"),
            ("tests", tests.to_string().as_str()),
            ("failures", failures.to_string().as_str()),
        ])
        .write_inner_content(|writer| {
            for (file, cases) in &files {
                let file = file.display().to_string();
                let failed = cases.values().filter(|c| !c.failures.is_empty()).count();
                writer
                    .create_element("testsuite")
                    .with_attributes([
                        ("name", file.as_str()),
                        ("tests", cases.len().to_string().as_str()),
                        ("failures", failed.to_string().as_str()),
                        ("errors", "0"),
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
    if case.failures.is_empty() && case.warnings.is_empty() {
        element.write_empty()?;
        return Ok(());
    }
    element.write_inner_content(|writer| {
        for finding in &case.failures {
            let text = line(finding);
            let rule = finding.rule.to_string();
            writer
                .create_element("failure")
                .with_attributes([("message", text.as_str()), ("type", rule.as_str())])
                .write_text_content(BytesText::new(&text))?;
        }
        if !case.warnings.is_empty() {
            let text: Vec<String> = case
                .warnings
                .iter()
                .map(|r| format!("warning {}", line(r)))
                .collect();
            writer
                .create_element("system-out")
                .write_text_content(BytesText::new(&text.join("\n")))?;
        }
        Ok(())
    })?;
    Ok(())
}
