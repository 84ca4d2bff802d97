#!/usr/bin/env python3
"""The installed CLI's three inputs in every output format (e2e/standalone.sh).

`standalone_check.py CLI`: runs CLI, each time from a new empty directory
with HOME and XDG_CACHE_HOME in scratch directories, over a directory of
manifests, a multi-document stream on standard input, and a git revision
diff (`--old HEAD~1 .`, where the findings exist only as changes). Each
run's findings must be exactly the expected ones, at the file, line and
column the fixture text gives (never read back from the output), in the
shape its `--format` documents, and its exit code must follow `--fail-on`.
Compiling the modules dominates a run, so the fail-on values rotate over
the formats instead of multiplying them; every input still meets each
fail-on value. Prints one `ok:` line per run; the first mismatch exits 1
with a `FAIL:` line saying which run and what differed.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path

# A Postgres whose preset is none of the chart's: a violation as written.
POSTGRES = """\
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata:
  name: db
  namespace: tenant-foo
spec:
  resourcesPreset: huge
"""

# A Kafka exposed without TLS: allowed with a warning.
KAFKA = """\
apiVersion: apps.cozystack.io/v1alpha1
kind: Kafka
metadata:
  name: events
  namespace: tenant-foo
spec:
  external: true
  tls:
    enabled: false
"""

# Each fine as a CREATE; changed as CHANGES says, each is a finding only as
# an UPDATE: a storage class is immutable, a Kubernetes version may not go
# down.
BASE = {
    "postgres.yaml": """\
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata:
  name: db
  namespace: tenant-foo
spec:
  storageClass: replicated
""",
    "kubernetes.yaml": """\
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
""",
}
CHANGES = {
    "postgres.yaml": ("storageClass: replicated", "storageClass: local"),
    "kubernetes.yaml": ("version: v1.34", "version: v1.33"),
}

FORMATS = ["text", "json", "sarif", "junit"]
FAIL_ON = ["violation", "warning", "never"]


@dataclass(frozen=True)
class Finding:
    """A finding as every format can state it."""

    file: str
    line: int
    column: int
    rule: str
    severity: str
    field: str


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def at(text, key, offset=0):
    """Line and column (from 1) of the first line where `key` is written,
    `offset` lines further down (the documents before it in a stream)."""
    for number, line in enumerate(text.splitlines(), start=1):
        column = line.find(key)
        if column >= 0:
            return number + offset, column + 1
    raise ValueError(f"the fixture has no {key!r}")


def violation(file, text, key, rule, field, offset=0):
    return Finding(file, *at(text, key, offset), rule, "violation", field)


def warning(file, text, key, rule, field, offset=0):
    return Finding(file, *at(text, key, offset), rule, "warning", field)


def uri(file):
    """The SARIF artifact URI the README promises: relative, no `./`,
    `<` and `>` escaped."""
    file = file.removeprefix("./")
    return file.replace("<", "%3C").replace(">", "%3E")


# Parsers: the findings a format prints, each as (file, line, column, rule,
# severity, then the field for JSON or the text that starts with it for the
# others). Output that does not parse fails the run.

TEXT_LINE = re.compile(r"^(.+?):(\d+):(\d+): (\S+): (error|warning): (.*)$")
SUMMARY = re.compile(r"^\d+ violation\(s\), \d+ warning\(s\), \d+ not checked in ")


def parse_text(out):
    found = []
    for line in out.splitlines():
        if not line or SUMMARY.match(line):
            continue
        match = TEXT_LINE.match(line)
        if not match:
            raise ValueError(f"not `file:line:col: rule: error|warning: ...`: {line!r}")
        file, line_no, column, rule, label, rest = match.groups()
        severity = "violation" if label == "error" else "warning"
        found.append((file, int(line_no), int(column), rule, severity, rest))
    return found


def parse_json(out):
    document = json.loads(out)
    return [
        (f["file"], f["line"], f["column"], f["rule"], f["severity"], f["field"])
        for f in document["findings"]
    ]


def parse_sarif(out):
    document = json.loads(out)
    [run] = document["runs"]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    found = []
    for result in run["results"]:
        if rules[result["ruleIndex"]] != result["ruleId"]:
            raise ValueError(f"ruleIndex does not point at {result['ruleId']}")
        [location] = result["locations"]
        physical = location["physicalLocation"]
        severity = {"error": "violation", "warning": "warning"}[result["level"]]
        found.append((
            physical["artifactLocation"]["uri"],
            physical["region"]["startLine"],
            physical["region"]["startColumn"],
            result["ruleId"],
            severity,
            result["message"]["text"],
        ))
    return found


JUNIT_LINE = re.compile(r"^(.+?):(\d+):(\d+): (\S+): (.*)$")


def parse_junit(out):
    found = []

    def add(suite, text, severity, rule=None):
        match = JUNIT_LINE.match(text)
        if not match:
            raise ValueError(f"not `file:line:col: rule: ...`: {text!r}")
        file, line_no, column, line_rule, rest = match.groups()
        if file != suite:
            raise ValueError(f"{text!r} is in the testsuite of {suite}")
        if rule is not None and rule != line_rule:
            raise ValueError(f"failure type {rule} but text {text!r}")
        found.append((file, int(line_no), int(column), line_rule, severity, rest))

    for suite in ET.fromstring(out).iter("testsuite"):
        name = suite.get("name")
        for case in suite.iter("testcase"):
            for failure in case.iter("failure"):
                if failure.get("message") != failure.text:
                    raise ValueError(f"failure message and text differ: {failure.text!r}")
                add(name, failure.text or "", "violation", failure.get("type"))
            for output in case.iter("system-out"):
                for line in (output.text or "").splitlines():
                    if not line.startswith("warning "):
                        raise ValueError(f"system-out line without `warning `: {line!r}")
                    add(name, line.removeprefix("warning "), "warning")
    return found


PARSERS = {"text": parse_text, "json": parse_json, "sarif": parse_sarif, "junit": parse_junit}


@dataclass
class Scenario:
    """One input: how to run it and what it must find."""

    name: str
    args: list
    expected: list
    setup: object  # callable(directory) writing the fixture
    stdin: str = None
    # (format, fail-on) of each run; None: every format, fail-on rotating.
    runs: list = None


class Runner:
    def __init__(self, cli, scratch):
        self.cli = cli
        self.scratch = Path(scratch)
        home = self.scratch / "home"
        cache = self.scratch / "cache"
        home.mkdir()
        cache.mkdir()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CACHE_HOME": str(cache),
            "NO_COLOR": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "standalone",
            "GIT_AUTHOR_EMAIL": "standalone@example.org",
            "GIT_COMMITTER_NAME": "standalone",
            "GIT_COMMITTER_EMAIL": "standalone@example.org",
        }
        self.count = 0

    def empty_dir(self):
        self.count += 1
        directory = self.scratch / f"run{self.count}"
        directory.mkdir()
        return directory

    def run(self, args, cwd, stdin=None):
        result = subprocess.run(
            [self.cli, *args], cwd=cwd, env=self.env, input=stdin,
            capture_output=True, text=True, check=False,
        )
        return result.returncode, result.stdout, result.stderr

    def git(self, cwd, *args):
        result = subprocess.run(
            ["git", *args], cwd=cwd, env=self.env, capture_output=True, text=True,
            check=False,
        )
        if result.returncode != 0:
            fail(f"git {' '.join(args)}: {result.stderr.strip()}")


def write(directory, files):
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def after(name):
    """A BASE file with its CHANGES made."""
    return BASE[name].replace(*CHANGES[name])


def git_change(runner):
    """A repository whose last commit makes the CHANGES to BASE."""

    def setup(directory):
        runner.git(directory, "init", "-q")
        write(directory, BASE)
        runner.git(directory, "add", "-A")
        runner.git(directory, "commit", "-q", "-m", "base")
        write(directory, {name: after(name) for name in BASE})
        runner.git(directory, "commit", "-q", "-a", "-m", "change")

    return setup


def scenarios(runner):
    postgres_file = violation(
        "manifests/postgres.yaml", POSTGRES, "resourcesPreset:",
        "values-schema/schema-violation", "spec.resourcesPreset")
    kafka_file = warning(
        "manifests/kafka.yaml", KAFKA, "enabled:",
        "chart-render/external-without-tls", "spec.tls.enabled")
    # On standard input the documents follow each other: Kafka's lines
    # come after all of the Postgres document and its `---`.
    stream = POSTGRES + "---\n" + KAFKA
    offset = len(POSTGRES.splitlines()) + 1
    manifests = {"manifests/postgres.yaml": POSTGRES, "manifests/kafka.yaml": KAFKA}
    changed = [
        violation("./postgres.yaml", after("postgres.yaml"), "storageClass:",
                  "storageclass-immutable/storage-class-changed", "spec.storageClass"),
        warning("./kubernetes.yaml", after("kubernetes.yaml"), "version:",
                "chart-render/version-downgrade", "spec.version"),
    ]
    return [
        Scenario("directory", ["manifests"], [postgres_file, kafka_file],
                 lambda d: write(d, manifests)),
        Scenario("standard input", ["-"], [
            violation("<stdin>", POSTGRES, "resourcesPreset:",
                      "values-schema/schema-violation", "spec.resourcesPreset"),
            warning("<stdin>", KAFKA, "enabled:",
                    "chart-render/external-without-tls", "spec.tls.enabled", offset),
        ], lambda d: None, stdin=stream),
        Scenario("git diff", ["--old", "HEAD~1", "."], changed, git_change(runner)),
        # One file of the diff, holding only the warning: --fail-on
        # violation passes it, --fail-on warning does not.
        Scenario("git diff of one file", ["--old", "HEAD~1", "kubernetes.yaml"],
                 [replace(changed[1], file="kubernetes.yaml")], git_change(runner),
                 runs=[("text", "violation"), ("sarif", "warning")]),
    ]


def expected_code(findings, fail_on):
    if fail_on == "never":
        return 0
    if fail_on == "warning":
        return int(bool(findings))
    return int(any(f.severity == "violation" for f in findings))


def check_run(runner, scenario, fmt, fail_on):
    label = f"{scenario.name}, --format {fmt} --fail-on {fail_on}"
    directory = runner.empty_dir()
    scenario.setup(directory)
    args = ["check", *scenario.args[:-1], "--format", fmt, "--fail-on", fail_on,
            scenario.args[-1]]
    code, out, err = runner.run(args, directory, scenario.stdin)
    want = expected_code(scenario.expected, fail_on)
    if code != want:
        fail(f"{label}: exit {code}, expected {want}\nstdout:\n{out}\nstderr:\n{err}")
    try:
        found = PARSERS[fmt](out)
    except (ValueError, KeyError, IndexError, TypeError, ET.ParseError) as e:
        fail(f"{label}: unreadable output ({e}):\n{out}")
    wanted = sorted(
        ((uri(f.file) if fmt == "sarif" else f.file, f.line, f.column, f.rule, f.severity),
         f.field)
        for f in scenario.expected
    )
    got = sorted(found)
    if [g[:5] for g in got] != [w for w, _ in wanted]:
        fail(f"{label}: findings (file, line, column, rule, severity) are\n  "
             + "\n  ".join(str(g[:5]) for g in got)
             + "\nexpected\n  " + "\n  ".join(str(w) for w, _ in wanted))
    # Each format names the field: JSON in its own key, the others at the
    # start of the message.
    for (place, field), (*_, message) in zip(wanted, got):
        if message != field and not message.startswith(f"{field}: "):
            fail(f"{label}: the finding at {place[0]}:{place[1]} does not name "
                 f"{field}: {message!r}")
    summary = out if fmt == "text" else err
    not_checked = sum(f.rule.endswith("-not-checked") for f in scenario.expected)
    violations = sum(f.severity == "violation" and not f.rule.endswith("-not-checked")
                     for f in scenario.expected)
    warnings = len(scenario.expected) - violations - not_checked
    line = f"{violations} violation(s), {warnings} warning(s), {not_checked} not checked in "
    if not any(l.startswith(line) for l in summary.splitlines()):
        fail(f"{label}: no summary line `{line}…` on "
             f"{'stdout' if fmt == 'text' else 'stderr'}:\n{summary}")
    print(f"ok: {label}: exit {code}, "
          + ", ".join(f"{w[3]} at {w[0]}:{w[1]}:{w[2]}" for w, _ in wanted), flush=True)


def empty_cluster(runner, directory):
    """A snapshot whose capture record says every read `snapshot-command`
    makes was answered, and which holds one replicated (DRBD) class."""
    code, block, err = runner.run(["snapshot-command"], directory)
    if code != 0:
        fail(f"snapshot-command: exit {code}\n{err}")
    reads = []
    for line in block.splitlines():
        if not line.startswith("capture "):
            continue
        words = shlex.split(line)[1:]
        read = {"apiVersion": words[0], "kind": words[1], "resource": words[2],
                "result": "captured"}
        if len(words) >= 5 and words[4]:
            if words[3]:
                read["namespace"] = words[3]
            read["name"] = words[4]
        reads.append(read)
    replicated = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                  "metadata": {"name": "replicated"}, "provisioner": "linstor.csi.linbit.com",
                  "parameters": {"linstor.csi.linbit.com/layerList": "drbd storage"}}
    record = {"apiVersion": "cozystack-policies.io/v1alpha1", "kind": "SnapshotCapture",
              "metadata": {"name": "snapshot"}, "context": "standalone",
              "capturedAt": "2026-12-05T00:00:00Z", "reads": reads}
    return {"apiVersion": "v1", "kind": "List", "items": [replicated, record]}


def main():
    if len(sys.argv) != 2:
        fail("usage: standalone_check.py CLI")
    cli = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as scratch:
        runner = Runner(cli, scratch)
        all_scenarios = scenarios(runner)
        # The diff's findings are the change's alone: the same tree on its
        # own is clean even with --fail-on warning, given a snapshot of a
        # cluster (without one, upgrade-gate says it did not read the
        # registry mirrors and the worker disks' class of each new
        # Kubernetes). The snapshot records every read the capture block
        # makes as captured: a cluster holding one replicated class and
        # nothing else.
        directory = runner.empty_dir()
        git_change(runner)(directory)
        snapshot = Path(scratch) / "empty-cluster.json"
        snapshot.write_text(json.dumps(empty_cluster(runner, directory)))
        code, out, err = runner.run(
            ["check", "--fail-on", "warning", "--cluster", str(snapshot), "."], directory)
        if code != 0 or not out.startswith("0 violation(s), 0 warning(s), 0 not checked in 2 objects"):
            fail(f"the changed tree without --old: exit {code}, expected 0 and no "
                 f"findings\nstdout:\n{out}\nstderr:\n{err}")
        print("ok: the changed tree without --old: exit 0, no findings", flush=True)
        for index, scenario in enumerate(all_scenarios):
            runs = scenario.runs or [
                (fmt, FAIL_ON[(index + position) % len(FAIL_ON)])
                for position, fmt in enumerate(FORMATS)
            ]
            for fmt, fail_on in runs:
                check_run(runner, scenario, fmt, fail_on)


if __name__ == "__main__":
    main()
