"""Which ``null`` values make a chart fail to render.

Helm v4.1.1 deletes a key set to ``null`` together with its chart default
(:func:`.values.coalesce`); a template that then reads it fails, or quietly
renders without it. Which of the two happens is decided by rendering: for
every key the chart defaults, the kind's base object with ``null`` there
and nothing else changed. values-schema ships the result
(``policies/values-schema/schemas/<version>/nulls.json``) and denies the
nulls that fail, naming the template; the suite checks that table against
Helm on every run, through its ``null`` samples.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from . import sdk

from .generate import _null_paths, _object, _base_spec, _set, render_path
from .pool import Pool, Task
from .release import Release, entries, versions


def _message(text: str) -> str:
    """Helm's error in one line, without the render's call stack: the
    innermost failing action and what it says (``<.Values.tls.enabled>:
    nil pointer evaluating interface {}.enabled``), or a ``fail``'s text."""
    flat = " ".join(text.split())
    actions = re.findall(r"at (<[^>]*>): (.*?)(?= [\w./-]+:\d+:\d+ executing |$)", flat)
    if actions:
        expression, message = actions[-1]
        return f"{expression}: {message.removeprefix('error calling include: ')}"
    failed = re.search(r"execution error at \([^)]*\): (.*)", flat)
    return failed.group(1) if failed else flat


def table(data: Path, version: str, workdir: Path, workers: int) -> dict[str, list[dict]]:
    """Kind -> the defaulted paths whose ``null`` fails the render, with the
    template location and Helm's message."""
    release = Release.at(data, version)
    jobs: list[tuple[str, tuple]] = []
    tasks: list[Task] = []
    for kind in sorted(release.applications):
        app = release.applications[kind]
        defaults = sdk.defaults(release.chart_dir(app.chart))
        base = _base_spec(kind)
        for path in _null_paths({k: v for k, v in defaults.items() if not k.startswith("_")}):
            jobs.append((kind, path))
            tasks.append(Task(version, _object(app, _set(base, path, None))))
    found: dict[str, list[dict]] = {}
    for index, outcome in Pool(data, workdir, workers).outcomes(tasks):
        if outcome.oracle_error:
            raise RuntimeError(f"{jobs[index][0]} {render_path(jobs[index][1])}: the oracle could not render: {outcome.message}")
        if outcome.stage == "resources":
            # A render cut short says nothing about the null: a table
            # written from it would deny what Helm renders.
            raise RuntimeError(f"{jobs[index][0]} {render_path(jobs[index][1])}: {outcome.message}; run again on a quieter machine")
        if outcome.ok or outcome.stage == "schema":
            continue
        kind, path = jobs[index]
        where = outcome.location or outcome.stage
        if outcome.nested:
            where += f" (HelmRelease {'/'.join(outcome.nested)})"
        found.setdefault(kind, []).append({"path": list(path), "where": where, "helm": _message(outcome.message)})
    for entries in found.values():
        entries.sort(key=lambda e: e["path"])
    return found


def own_charts() -> list[str]:
    """Every release of ``releases/`` with charts of its own, candidates
    included: each has a table (one that shares another's charts, its)."""
    known = entries()
    return [v for v in versions(candidates=True) if "charts" in known[v]]


def write(data: Path, root: Path, wanted: list[str], workdir: Path, workers: int) -> None:
    for version in wanted:
        out = root / "policies" / "values-schema" / "schemas" / version / "nulls.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        found = table(data, version, workdir, workers)
        out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        count = sum(len(v) for v in found.values())
        print(f"{out}: {count} null values fail the {version} charts' render")
        for kind, entries in sorted(found.items()):
            for entry in entries:
                print(f"  {kind} {render_path(tuple(entry['path']))}: {entry['where']}")
