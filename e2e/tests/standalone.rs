//! The installed CLI (`make standalone`: `cargo install` with dist/
//! embedded, CONTRIBUTING.md "Building the CLI") over its three inputs in every
//! output format. Run by name only (`test = false`): e2e/standalone.sh
//! installs the binary, then runs `cargo test --test standalone`.
//!
//! Each run starts the binary that `COZYSTACK_POLICIES_STANDALONE` names
//! (e2e/standalone.sh sets it) from a new empty directory, with nothing of
//! this machine's user (a scratch `HOME` and `XDG_CACHE_HOME`), over a
//! directory of manifests, a multi-document stream on standard input, and
//! a git revision diff (`--old HEAD~1 .`, where the findings exist only as
//! changes). Each run's findings must be exactly the expected ones, at the
//! file, line and column the fixture text gives (never read back from the
//! output), in the shape its `--format` documents, and its exit code must
//! follow `--fail-on`. Compiling the modules dominates a run, so the
//! fail-on values rotate over the formats instead of multiplying them;
//! every input still meets each fail-on value.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// A Postgres whose preset is none of the chart's: a violation as written.
const POSTGRES: &str = "\
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata:
  name: db
  namespace: tenant-foo
spec:
  resourcesPreset: huge
";

/// A Kafka exposed without TLS: allowed with a warning.
const KAFKA: &str = "\
apiVersion: apps.cozystack.io/v1alpha1
kind: Kafka
metadata:
  name: events
  namespace: tenant-foo
spec:
  external: true
  tls:
    enabled: false
";

/// Each fine as a CREATE; changed as [`CHANGES`] says, each is a finding
/// only as an UPDATE: a storage class is immutable, a Kubernetes version
/// may not go down.
const BASE: &[(&str, &str)] = &[
    (
        "postgres.yaml",
        "\
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata:
  name: db
  namespace: tenant-foo
spec:
  storageClass: replicated
",
    ),
    (
        "kubernetes.yaml",
        "\
apiVersion: apps.cozystack.io/v1alpha1
kind: Kubernetes
metadata:
  name: dev
  namespace: tenant-foo
spec:
  version: v1.34
  storageClass: replicated
  nodeHealthCheck:
    maxUnhealthy: 0%
",
    ),
];

const CHANGES: &[(&str, &str, &str)] = &[
    (
        "postgres.yaml",
        "storageClass: replicated",
        "storageClass: local",
    ),
    ("kubernetes.yaml", "version: v1.34", "version: v1.33"),
];

const FORMATS: [&str; 4] = ["text", "json", "sarif", "junit"];
const FAIL_ON: [&str; 3] = ["violation", "warning", "never"];

/// A finding as every format can state it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Expected {
    file: String,
    line: usize,
    column: usize,
    rule: &'static str,
    severity: &'static str,
    field: &'static str,
}

/// A finding as a format printed it: place, rule, severity, and the field
/// (JSON) or the text that starts with it (the others).
type Printed = (String, usize, usize, String, String, String);

/// Line and column (from 1) of the first line where `key` is written,
/// `offset` lines further down (the documents before it in a stream).
fn at(text: &str, key: &str, offset: usize) -> (usize, usize) {
    text.lines()
        .enumerate()
        .find_map(|(number, line)| {
            line.find(key)
                .map(|column| (number + 1 + offset, column + 1))
        })
        .unwrap_or_else(|| panic!("the fixture has no {key:?}"))
}

fn expected(
    file: &str,
    text: &str,
    key: &str,
    offset: usize,
    (rule, severity, field): (&'static str, &'static str, &'static str),
) -> Expected {
    let (line, column) = at(text, key, offset);
    Expected {
        file: file.to_owned(),
        line,
        column,
        rule,
        severity,
        field,
    }
}

const PRESET: (&str, &str, &str) = (
    "values-schema/schema-violation",
    "violation",
    "spec.resourcesPreset",
);
const NO_TLS: (&str, &str, &str) = (
    "chart-render/external-without-tls",
    "warning",
    "spec.tls.enabled",
);
const CLASS_CHANGED: (&str, &str, &str) = (
    "storageclass-immutable/storage-class-changed",
    "violation",
    "spec.storageClass",
);
const DOWNGRADE: (&str, &str, &str) = ("chart-render/version-downgrade", "warning", "spec.version");

/// The SARIF artifact URI docs/ci.md promises: relative, no `./`, `<` and
/// `>` escaped.
fn uri(file: &str) -> String {
    file.strip_prefix("./")
        .unwrap_or(file)
        .replace('<', "%3C")
        .replace('>', "%3E")
}

/// `file:line:col`, split from the right (a file name may hold a colon).
fn place(text: &str) -> Option<(String, usize, usize)> {
    let mut parts = text.rsplitn(3, ':');
    let column = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    Some((parts.next()?.to_owned(), line, column))
}

/// `file:line:col: rule: error|warning: …`, one line per finding; the
/// summary and blank lines between files aside.
fn parse_text(out: &str) -> Result<Vec<Printed>, String> {
    let mut found = Vec::new();
    for line in out.lines() {
        if line.is_empty() || is_summary(line) {
            continue;
        }
        let unreadable = || format!("not `file:line:col: rule: error|warning: …`: {line:?}");
        let mut parts = line.splitn(4, ": ");
        let (Some(at), Some(rule), Some(label), Some(rest)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(unreadable());
        };
        let (file, line_no, column) = place(at).ok_or_else(unreadable)?;
        let severity = match label {
            "error" => "violation",
            "warning" => "warning",
            _ => return Err(unreadable()),
        };
        found.push((
            file,
            line_no,
            column,
            rule.to_owned(),
            severity.to_owned(),
            rest.to_owned(),
        ));
    }
    Ok(found)
}

/// `N violation(s), N warning(s), N not checked in …`.
fn is_summary(line: &str) -> bool {
    line.split_once(" violation(s), ")
        .and_then(|(n, rest)| {
            n.parse::<usize>().ok()?;
            let (n, rest) = rest.split_once(" warning(s), ")?;
            n.parse::<usize>().ok()?;
            let (n, rest) = rest.split_once(" not checked in ")?;
            n.parse::<usize>().ok().map(|_| rest)
        })
        .is_some()
}

fn text_of(value: &Value) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{value} is not a string"))
}

fn number(value: &Value) -> Result<usize, String> {
    value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("{value} is not a number"))
}

fn parse_json(out: &str) -> Result<Vec<Printed>, String> {
    let document: Value = serde_json::from_str(out).map_err(|e| e.to_string())?;
    let findings = document["findings"].as_array().ok_or("no findings list")?;
    findings
        .iter()
        .map(|f| {
            Ok((
                text_of(&f["file"])?,
                number(&f["line"])?,
                number(&f["column"])?,
                text_of(&f["rule"])?,
                text_of(&f["severity"])?,
                text_of(&f["field"])?,
            ))
        })
        .collect()
}

fn parse_sarif(out: &str) -> Result<Vec<Printed>, String> {
    let document: Value = serde_json::from_str(out).map_err(|e| e.to_string())?;
    let runs = document["runs"].as_array().ok_or("no runs")?;
    let [run] = runs.as_slice() else {
        return Err(format!("{} runs, not one", runs.len()));
    };
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .ok_or("no rules")?
        .iter()
        .filter_map(|rule| rule["id"].as_str())
        .collect();
    let mut found = Vec::new();
    for result in run["results"].as_array().ok_or("no results")? {
        let rule = text_of(&result["ruleId"])?;
        if rules.get(number(&result["ruleIndex"])?) != Some(&rule.as_str()) {
            return Err(format!("ruleIndex does not point at {rule}"));
        }
        let locations = result["locations"].as_array().ok_or("no locations")?;
        let [location] = locations.as_slice() else {
            return Err(format!("{} locations, not one", locations.len()));
        };
        let physical = &location["physicalLocation"];
        let severity = match result["level"].as_str() {
            Some("error") => "violation",
            Some("warning") => "warning",
            other => return Err(format!("level {other:?}")),
        };
        found.push((
            text_of(&physical["artifactLocation"]["uri"])?,
            number(&physical["region"]["startLine"])?,
            number(&physical["region"]["startColumn"])?,
            rule,
            severity.to_owned(),
            text_of(&result["message"]["text"])?,
        ));
    }
    Ok(found)
}

/// A testsuite per file; a failure per violation (its message, text and
/// type agreeing), the warnings in the case's output, each
/// `file:line:col: rule: …` in its file's testsuite.
fn parse_junit(out: &str) -> Result<Vec<Printed>, String> {
    use quick_xml::events::{BytesStart, Event};
    use quick_xml::{Reader, XmlVersion};

    let attribute = |start: &BytesStart<'_>, name: &str| {
        start
            .attributes()
            .filter_map(Result::ok)
            .find(|a| AsRef::<str>::as_ref(&a.key) == name)
            .and_then(|a| {
                a.normalized_value(XmlVersion::Explicit1_0)
                    .ok()
                    .map(|v| v.into_owned())
            })
    };
    let mut found = Vec::new();
    let mut add = |suite: &str, text: &str, severity: &str, kind: Option<&str>| {
        let unreadable = || format!("not `file:line:col: rule: …`: {text:?}");
        let mut parts = text.splitn(3, ": ");
        let (Some(at), Some(rule), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(unreadable());
        };
        let (file, line, column) = place(at).ok_or_else(unreadable)?;
        if file != suite {
            return Err(format!("{text:?} is in the testsuite of {suite}"));
        }
        if kind.is_some_and(|kind| kind != rule) {
            return Err(format!("failure type {kind:?} but text {text:?}"));
        }
        found.push((
            file,
            line,
            column,
            rule.to_owned(),
            severity.to_owned(),
            rest.to_owned(),
        ));
        Ok(())
    };
    let mut reader = Reader::from_str(out);
    let mut suite = String::new();
    // The element whose text is being read (`failure` with its message and
    // type, or `system-out`), and the text so far: quick-xml gives the
    // text and each entity reference in it as events of their own.
    let mut open: Option<(&str, Option<String>, Option<String>)> = None;
    let mut text = String::new();
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Eof => break,
            Event::Start(start) | Event::Empty(start)
                if AsRef::<str>::as_ref(&start.name()) == "testsuite" =>
            {
                suite = attribute(&start, "name").ok_or("a testsuite without a name")?;
            }
            Event::Start(start) if AsRef::<str>::as_ref(&start.name()) == "failure" => {
                open = Some((
                    "failure",
                    attribute(&start, "message"),
                    attribute(&start, "type"),
                ));
                text.clear();
            }
            Event::Start(start) if AsRef::<str>::as_ref(&start.name()) == "system-out" => {
                open = Some(("system-out", None, None));
                text.clear();
            }
            Event::Text(part) if open.is_some() => text.push_str(&part.xml10_content()),
            Event::GeneralRef(reference) if open.is_some() => {
                let entity = match reference.resolve_char_ref().map_err(|e| e.to_string())? {
                    Some(c) => c.to_string(),
                    None => match reference.into_inner().as_ref() {
                        "amp" => "&".to_owned(),
                        "lt" => "<".to_owned(),
                        "gt" => ">".to_owned(),
                        "quot" => "\"".to_owned(),
                        "apos" => "'".to_owned(),
                        other => return Err(format!("unknown entity &{other};")),
                    },
                };
                text.push_str(&entity);
            }
            Event::End(_) => match open.take() {
                Some(("failure", message, kind)) => {
                    if message.as_deref() != Some(text.as_str()) {
                        return Err(format!("failure message and text differ: {text:?}"));
                    }
                    add(&suite, &text, "violation", kind.as_deref())?;
                }
                Some(("system-out", ..)) => {
                    for line in text.lines() {
                        let line = line.strip_prefix("warning ").ok_or_else(|| {
                            format!("system-out line without `warning `: {line:?}")
                        })?;
                        add(&suite, line, "warning", None)?;
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    Ok(found)
}

fn parse(format: &str, out: &str) -> Result<Vec<Printed>, String> {
    match format {
        "text" => parse_text(out),
        "json" => parse_json(out),
        "sarif" => parse_sarif(out),
        "junit" => parse_junit(out),
        other => Err(format!("no format {other}")),
    }
}

/// How an input is laid out in its directory.
enum Setup {
    Files(Vec<(&'static str, &'static str)>),
    Nothing,
    GitChange,
}

/// One input: how to run it and what it must find.
struct Scenario {
    name: &'static str,
    args: Vec<&'static str>,
    expected: Vec<Expected>,
    setup: Setup,
    stdin: Option<String>,
    /// (format, fail-on) of each run; every format, fail-on rotating,
    /// when `None`.
    runs: Option<Vec<(&'static str, &'static str)>>,
}

/// The installed binary, run with nothing of this machine's user.
struct Runner {
    cli: PathBuf,
    scratch: PathBuf,
    home: PathBuf,
    cache: PathBuf,
    count: usize,
}

impl Runner {
    /// A runner whose scratch folder is `name`'s (tests run in parallel).
    fn new(cli: PathBuf, name: &str) -> Self {
        let scratch =
            std::env::temp_dir().join(format!("standalone-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        let (home, cache) = (scratch.join("home"), scratch.join("cache"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&cache).unwrap();
        Self {
            cli,
            scratch,
            home,
            cache,
            count: 0,
        }
    }

    fn empty_dir(&mut self) -> PathBuf {
        self.count += 1;
        let dir = self.scratch.join(format!("run{}", self.count));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn command(&self, program: &Path, cwd: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(cwd)
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
            )
            .env("HOME", &self.home)
            .env("XDG_CACHE_HOME", &self.cache)
            .env("NO_COLOR", "1")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "standalone")
            .env("GIT_AUTHOR_EMAIL", "standalone@example.org")
            .env("GIT_COMMITTER_NAME", "standalone")
            .env("GIT_COMMITTER_EMAIL", "standalone@example.org");
        command
    }

    /// The CLI's exit code, standard output and standard error.
    fn run(&self, args: &[&str], cwd: &Path, stdin: Option<&str>) -> (i32, String, String) {
        let mut child = self
            .command(&self.cli, cwd)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", self.cli.display()));
        let mut input = child.stdin.take().unwrap();
        input
            .write_all(stdin.unwrap_or_default().as_bytes())
            .unwrap();
        drop(input);
        let output = child.wait_with_output().unwrap();
        (
            output.status.code().unwrap(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    fn git(&self, cwd: &Path, args: &[&str]) {
        let output = self
            .command(Path::new("git"), cwd)
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// A repository whose last commit makes the [`CHANGES`] to [`BASE`].
    fn git_change(&self, dir: &Path) {
        self.git(dir, &["init", "-q"]);
        write(dir, BASE);
        self.git(dir, &["add", "-A"]);
        self.git(dir, &["commit", "-q", "-m", "base"]);
        let changed: Vec<(&str, String)> =
            BASE.iter().map(|(name, _)| (*name, after(name))).collect();
        for (name, text) in &changed {
            std::fs::write(dir.join(name), text).unwrap();
        }
        self.git(dir, &["commit", "-q", "-a", "-m", "change"]);
    }

    fn set_up(&self, setup: &Setup, dir: &Path) {
        match setup {
            Setup::Files(files) => write(dir, files),
            Setup::Nothing => {}
            Setup::GitChange => self.git_change(dir),
        }
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// A [`BASE`] file with its [`CHANGES`] made.
fn after(name: &str) -> String {
    let base = BASE.iter().find(|(n, _)| *n == name).unwrap().1;
    let (_, from, to) = CHANGES.iter().find(|(n, ..)| *n == name).unwrap();
    base.replace(from, to)
}

fn scenarios() -> Vec<Scenario> {
    let changed = [
        expected(
            "./postgres.yaml",
            &after("postgres.yaml"),
            "storageClass:",
            0,
            CLASS_CHANGED,
        ),
        expected(
            "./kubernetes.yaml",
            &after("kubernetes.yaml"),
            "version:",
            0,
            DOWNGRADE,
        ),
    ];
    // On standard input the documents follow each other: Kafka's lines
    // come after all of the Postgres document and its `---`.
    let offset = POSTGRES.lines().count() + 1;
    vec![
        Scenario {
            name: "directory",
            args: vec!["manifests"],
            expected: vec![
                expected(
                    "manifests/postgres.yaml",
                    POSTGRES,
                    "resourcesPreset:",
                    0,
                    PRESET,
                ),
                expected("manifests/kafka.yaml", KAFKA, "enabled:", 0, NO_TLS),
            ],
            setup: Setup::Files(vec![
                ("manifests/postgres.yaml", POSTGRES),
                ("manifests/kafka.yaml", KAFKA),
            ]),
            stdin: None,
            runs: None,
        },
        Scenario {
            name: "standard input",
            args: vec!["-"],
            expected: vec![
                expected("<stdin>", POSTGRES, "resourcesPreset:", 0, PRESET),
                expected("<stdin>", KAFKA, "enabled:", offset, NO_TLS),
            ],
            setup: Setup::Nothing,
            stdin: Some(format!("{POSTGRES}---\n{KAFKA}")),
            runs: None,
        },
        Scenario {
            name: "git diff",
            args: vec!["--old", "HEAD~1", "."],
            expected: changed.to_vec(),
            setup: Setup::GitChange,
            stdin: None,
            runs: None,
        },
        // One file of the diff, holding only the warning: --fail-on
        // violation passes it, --fail-on warning does not.
        Scenario {
            name: "git diff of one file",
            args: vec!["--old", "HEAD~1", "kubernetes.yaml"],
            expected: vec![Expected {
                file: "kubernetes.yaml".to_owned(),
                ..changed[1].clone()
            }],
            setup: Setup::GitChange,
            stdin: None,
            runs: Some(vec![("text", "violation"), ("sarif", "warning")]),
        },
    ]
}

fn is_not_checked(rule: &str) -> bool {
    rule.ends_with("-not-checked")
}

fn expected_code(findings: &[Expected], fail_on: &str) -> i32 {
    match fail_on {
        "never" => 0,
        "warning" => i32::from(!findings.is_empty()),
        _ => i32::from(findings.iter().any(|f| f.severity == "violation")),
    }
}

fn check_run(runner: &mut Runner, scenario: &Scenario, format: &str, fail_on: &str) {
    let label = format!("{}, --format {format} --fail-on {fail_on}", scenario.name);
    let dir = runner.empty_dir();
    runner.set_up(&scenario.setup, &dir);
    let (last, before) = scenario.args.split_last().unwrap();
    let mut args = vec!["check"];
    args.extend(before);
    args.extend(["--format", format, "--fail-on", fail_on, last]);
    let (code, out, err) = runner.run(&args, &dir, scenario.stdin.as_deref());
    let want = expected_code(&scenario.expected, fail_on);
    assert_eq!(
        code, want,
        "{label}: exit {code}, expected {want}\nstdout:\n{out}\nstderr:\n{err}"
    );
    let mut found =
        parse(format, &out).unwrap_or_else(|e| panic!("{label}: unreadable output ({e}):\n{out}"));
    found.sort();
    let mut wanted: Vec<(Expected, String)> = scenario
        .expected
        .iter()
        .map(|f| {
            let file = if format == "sarif" {
                uri(&f.file)
            } else {
                f.file.clone()
            };
            (Expected { file, ..f.clone() }, f.field.to_owned())
        })
        .collect();
    wanted.sort();
    let places = |found: &[Printed]| -> Vec<(String, usize, usize, String, String)> {
        found
            .iter()
            .map(|(file, line, column, rule, severity, _)| {
                (file.clone(), *line, *column, rule.clone(), severity.clone())
            })
            .collect()
    };
    let want_places: Vec<_> = wanted
        .iter()
        .map(|(f, _)| {
            (
                f.file.clone(),
                f.line,
                f.column,
                f.rule.to_owned(),
                f.severity.to_owned(),
            )
        })
        .collect();
    assert_eq!(
        places(&found),
        want_places,
        "{label}: findings (file, line, column, rule, severity)"
    );
    // Each format names the field: JSON in its own key, the others at the
    // start of the message.
    for ((place, field), (.., message)) in wanted.iter().zip(&found) {
        assert!(
            message == field || message.starts_with(&format!("{field}: ")),
            "{label}: the finding at {}:{} does not name {field}: {message:?}",
            place.file,
            place.line
        );
    }
    let summary = if format == "text" { &out } else { &err };
    let not_checked = scenario
        .expected
        .iter()
        .filter(|f| is_not_checked(f.rule))
        .count();
    let violations = scenario
        .expected
        .iter()
        .filter(|f| f.severity == "violation" && !is_not_checked(f.rule))
        .count();
    let warnings = scenario.expected.len() - violations - not_checked;
    let line =
        format!("{violations} violation(s), {warnings} warning(s), {not_checked} not checked in ");
    assert!(
        summary.lines().any(|l| l.starts_with(&line)),
        "{label}: no summary line `{line}…` on {}:\n{summary}",
        if format == "text" { "stdout" } else { "stderr" }
    );
    println!(
        "ok: {label}: exit {code}, {}",
        wanted
            .iter()
            .map(|(f, _)| format!("{} at {}:{}:{}", f.rule, f.file, f.line, f.column))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// The words of a shell line: single quotes (the capture block's only
/// quoting) keep what they enclose, `''` an empty word.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            c if c.is_whitespace() && !quoted => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// A snapshot whose capture record says every read `snapshot-command`
/// makes was answered, and which holds one replicated (DRBD) class, the
/// operator's Deployment of v1.6.2 and the ApplicationDefinitions of
/// Kubernetes and Postgres.
fn empty_cluster(runner: &Runner, dir: &Path) -> Value {
    let (code, block, err) = runner.run(&["snapshot-command"], dir, None);
    assert_eq!(code, 0, "snapshot-command: {err}");
    let reads: Vec<Value> = block
        .lines()
        .filter_map(|line| line.strip_prefix("capture "))
        .map(|line| {
            let words = shell_words(line);
            let mut read = json!({"apiVersion": words[0], "kind": words[1],
                "resource": words[2], "result": "captured"});
            if words.len() >= 5 && !words[4].is_empty() {
                if !words[3].is_empty() {
                    read["namespace"] = json!(words[3]);
                }
                read["name"] = json!(words[4]);
            }
            read
        })
        .collect();
    assert!(!reads.is_empty(), "no capture lines in:\n{block}");
    let replicated = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "replicated"}, "provisioner": "linstor.csi.linbit.com",
        "parameters": {"linstor.csi.linbit.com/layerList": "drbd storage"}});
    // What every Cozystack cluster records: its release, on the operator's
    // Deployment, and the ApplicationDefinitions of the kinds the change
    // holds (v1.6.2's, from the fact base).
    let operator = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "cozystack-operator", "namespace": "cozy-system"},
        "spec": {"template": {"spec": {"containers": [{"name": "cozystack-operator",
            "image": "ghcr.io/cozystack/cozystack/cozystack-operator:v1.6.2"}]}}}});
    let definitions = ["kubernetes", "postgres"].map(|app| {
        let path = e2e::root()
            .join("../shared/data/cozystack-v1.6.2/application-definitions")
            .join(format!("{app}.yaml"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_saphyr::from_str::<Value>(&text).unwrap()
    });
    let record = json!({"apiVersion": "cozystack-policies.io/v1alpha1", "kind": "SnapshotCapture",
        "metadata": {"name": "snapshot"}, "context": "standalone",
        "capturedAt": "2026-12-05T00:00:00Z", "reads": reads});
    let mut items = vec![replicated, operator];
    items.extend(definitions);
    items.push(record);
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// The installed binary e2e/standalone.sh names.
fn installed() -> PathBuf {
    std::env::var_os("COZYSTACK_POLICIES_STANDALONE")
        .map(PathBuf::from)
        .expect("COZYSTACK_POLICIES_STANDALONE names the installed binary (e2e/standalone.sh)")
}

/// Copies the folder `from` to `to`, files and folders alike.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// The repository's example change (`make check`), copied into an empty
/// directory: the embedded bundle finds its DELETE of a protected object,
/// at the files as given; settings from deploy/, as CI passes them, still
/// find it; a tree of one plain ConfigMap passes.
#[test]
fn the_installed_cli_judges_the_example_change_and_passes_a_clean_tree() {
    let mut runner = Runner::new(installed(), "example");
    let work = runner.empty_dir();
    let root = e2e::root();
    for folder in ["examples/before", "examples/after", "deploy"] {
        let from = root.join(folder);
        copy_tree(&from, &work.join(from.file_name().unwrap()));
    }

    let (code, out, err) = runner.run(
        &["check", "--json", "--old", "before", "after"],
        &work,
        None,
    );
    assert_eq!(
        code, 1,
        "the example change: exit {code}, expected 1\n{err}"
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["policy"] == "no-delete"
            && f["operation"] == "DELETE"
            && f["name"] == "cozystack-version"
            && f["field"] == r#"metadata.labels["platform.cozystack.io/no-delete"]"#),
        "no no-delete finding on the DELETE of cozystack-version: {findings:#?}"
    );
    for finding in findings {
        let file = finding["file"].as_str().unwrap();
        assert!(
            file.starts_with("before/") || file.starts_with("after/"),
            "a finding outside the files given: {finding}"
        );
    }
    println!("ok: the embedded bundle judges the example change from an empty directory");

    let (code, out, err) = runner.run(
        &[
            "check",
            "--from-deploy",
            "deploy",
            "--old",
            "before",
            "after",
        ],
        &work,
        None,
    );
    assert!(
        code == 1 && out.contains(" violation(s), "),
        "--from-deploy: exit {code}, expected 1 and a summary\nstdout:\n{out}\nstderr:\n{err}"
    );
    println!("ok: --from-deploy deploy/ configures the embedded bundle");

    let clean = runner.empty_dir();
    write(
        &clean,
        &[(
            "configmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n  namespace: default\ndata: {}\n",
        )],
    );
    let (code, out, err) = runner.run(&["check", "."], &clean, None);
    assert_eq!(
        code, 0,
        "a clean tree: exit {code}\nstdout:\n{out}\nstderr:\n{err}"
    );
    println!("ok: a clean tree exits 0");
}

#[test]
fn the_installed_cli_checks_a_directory_standard_input_and_a_git_diff_in_every_format() {
    let mut runner = Runner::new(installed(), "formats");
    // The diff's findings are the change's alone: the same tree on its own
    // is clean even with --fail-on warning, given a snapshot of a cluster
    // (without one, upgrade-gate says it did not read the registry mirrors
    // and the worker disks' class of each new Kubernetes). The snapshot
    // records every read the capture block makes as captured: a cluster
    // holding one replicated class, its release and the two kinds' definitions.
    let dir = runner.empty_dir();
    runner.git_change(&dir);
    let snapshot = runner.scratch.join("empty-cluster.json");
    std::fs::write(&snapshot, empty_cluster(&runner, &dir).to_string()).unwrap();
    let (code, out, err) = runner.run(
        &[
            "check",
            "--fail-on",
            "warning",
            "--cluster",
            snapshot.to_str().unwrap(),
            ".",
        ],
        &dir,
        None,
    );
    assert!(
        code == 0 && out.starts_with("0 violation(s), 0 warning(s), 0 not checked in 2 objects"),
        "the changed tree without --old: exit {code}, expected 0 and no findings\nstdout:\n{out}\nstderr:\n{err}"
    );
    println!("ok: the changed tree without --old: exit 0, no findings");
    for (index, scenario) in scenarios().iter().enumerate() {
        let runs = scenario.runs.clone().unwrap_or_else(|| {
            FORMATS
                .iter()
                .enumerate()
                .map(|(position, format)| (*format, FAIL_ON[(index + position) % FAIL_ON.len()]))
                .collect()
        });
        for (format, fail_on) in runs {
            check_run(&mut runner, scenario, format, fail_on);
        }
    }
}
