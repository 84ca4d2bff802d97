"""Probes generated from the templates' conditions: for each ``fail`` or
``required`` site no sample reached, values that reach it, found by
rendering.

A site's candidates come from its template (:mod:`.templates`): the
``.Values`` paths its action reads and the paths the blocks around it
decide on, with the literals those compare them with. Where a template
reads through a helper the scan cannot follow (node groups built by an
``include``), the fields it names are looked up in the kind's schema. Each
read path is tried with values of every type, the schema's enum, the
literals and values no name or quantity can be; then with each guard set to
a value that opens it. The first object Helm refuses at the site is kept.

``tools/oracle probes --write`` searches and writes ``probes/sites.yaml``,
which the suite renders with every run (origin ``site``); a site the search
cannot reach goes to ``unreached.yaml`` with the line that proves it.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .coverage import Site, _pattern, _reached, sites
from .generate import SITE_PROBES, _base_spec, _object, _set, render_path, schema_paths
from .pool import Pool, Task
from .release import Release
from .render import Outcome
from .templates import _literals, scan_chart

PROBES = SITE_PROBES

#: Values tried at a path the site reads.
TRIED: tuple[Any, ...] = (
    None, "", "x", "UPPER case", "a" * 64, "-1", "0", "1.5", "abc%", "1e3", "0%", "101%",
    0, -1, 1, 2, 1.5, 1000000, True, False, [], [{}], ["x"], {}, {"x": {}},
)
#: Values tried to open a guard.
OPENING: tuple[Any, ...] = (True, "x", 1, [{}], {"x": {}})
#: Renders per site and kind at most, sent to the workers this many at a time.
BUDGET = 400
CHUNK = 24


@dataclass(frozen=True)
class Probe:
    where: str
    release: str
    kind: str
    note: str
    spec: dict
    #: The object's name and namespace, where the site reads the release's.
    name: str = ""
    namespace: str = ""


#: Names and namespaces tried where a site reads the release's.
NAMES = ("app2", "x", "bootbox", "etcd", "monitoring", "ingress")
NAMESPACES = ("tenant-root", "tenant-foo")


def _schema_at(schema: dict, path: tuple) -> dict | None:
    for step in path:
        if not isinstance(schema, dict):
            return None
        if isinstance(step, int):
            schema = schema.get("items")
        elif step in (schema.get("properties") or {}):
            schema = schema["properties"][step]
        elif isinstance(schema.get("additionalProperties"), dict):
            schema = schema["additionalProperties"]
        else:
            return None
    return schema if isinstance(schema, dict) else None


def _concrete(schema: dict, path: tuple[str, ...]) -> tuple | None:
    """``path`` with each ``*`` made a list index or a map key the schema
    allows; ``None`` where the schema has no such path."""
    out: list = []
    for step in path:
        here = _schema_at(schema, tuple(out))
        if here is None:
            return None
        if step == "*":
            out.append(0 if isinstance(here.get("items"), dict) or here.get("type") == "array" else "x")
        else:
            out.append(step)
    return tuple(out) if _schema_at(schema, tuple(out)) is not None or not out else tuple(out)


def _fields(call_text: str) -> set[str]:
    return set(re.findall(r"\$[A-Za-z_]\w*\.([A-Za-z_][\w-]*)", call_text))


def _candidates(kind_schema: dict, site_call, source: str) -> tuple[list[tuple], list[tuple]]:
    """``(reads, guards)``: concrete schema paths."""
    reads = [p for p in (_concrete(kind_schema, r) for r in site_call.reads) if p]
    guards = [p for p in (_concrete(kind_schema, g) for g in site_call.guards) if p and p not in reads]
    if not reads and not guards:
        names = _fields(source) | {lit for lit in site_call.literals if isinstance(lit, str)}
        for path, _ in schema_paths(kind_schema):
            if path and isinstance(path[-1], str) and path[-1] in names and path not in reads:
                reads.append(path)
    return reads, guards


def _values(schema: dict | None, literals: tuple) -> list[Any]:
    out: list[Any] = list((schema or {}).get("enum") or [])
    out += [lit for lit in literals if not isinstance(lit, str) or len(lit) < 40]
    out += list(TRIED)
    seen, unique = set(), []
    for value in out:
        key = json.dumps(value, sort_keys=True)
        if key not in seen:
            seen.add(key)
            unique.append(value)
    return unique


def _passing(schema: dict | None) -> Any:
    """A value a check of presence passes with: the schema's non-empty
    default, else one of its type."""
    schema = schema or {}
    default = schema.get("default")
    if default not in (None, "", [], {}, 0, False):
        return default
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    return {"boolean": True, "integer": 1, "number": 1, "array": ["x"], "object": {"x": {}}}.get(kind, "x")


def _plans(base: dict, kind_schema: dict, reads: list[tuple], guards: list[tuple], fills: list[tuple], literals: tuple):
    """``(note, spec)`` to try: each read path with each value, first on the
    base object, then with the checks before the site passed (``fills``),
    then also with each guard opened."""
    tried = reads or guards
    singles = [(path, value) for path in tried for value in _values(_schema_at(kind_schema, path), literals)]
    filled = base
    for path in fills:
        filled = _set(filled, path, _passing(_schema_at(kind_schema, path)))
    prefixes: list[tuple[str, dict]] = []
    choices = [lit for lit in literals if isinstance(lit, (str, int)) and not isinstance(lit, bool)][:4]
    opened = filled
    for path in guards:
        opened = _set(opened, path, _passing(_schema_at(kind_schema, path)))
    if guards and reads:
        prefixes.append(("guards open, checks before it passed; ", opened))
        for path in guards:
            for value in (*OPENING, *choices):
                prefixes.append((f"{render_path(path)} = {json.dumps(value)[:30]}; ", _set(filled, path, value)))
    if fills:
        prefixes.append(("checks before it passed; ", filled))
    prefixes.append(("", base))
    for (label, prefix), (path, value) in itertools.product(prefixes, singles):
        yield f"{label}{render_path(path)} = {json.dumps(value)[:40]}", _set(prefix, path, value)


def hits(site: Site, outcome: Outcome) -> bool:
    """Whether Helm refused at ``site``: at its line, or (a call in a
    ``define``, reported at the ``include``) by its message."""
    if outcome.stage != "template":
        return False
    if outcome.location == site.location:
        return True
    pattern = _pattern(site.message) if site.message else None
    return bool(pattern and site.chart.split("/")[-1] in outcome.message and pattern.search(outcome.message))


def search(data: Path, report: list[dict], versions: list[str], workdir: Path, workers: int) -> list[Probe]:
    """A probe for each site of ``versions`` that ``report`` shows no
    sample reached, where the search finds one."""
    found: list[Probe] = []
    pool = Pool(data, workdir, workers, keep=True)
    for version in versions:
        release = Release.at(data, version)
        reached = _reached(report, release)
        kinds_of = {}
        for kind, app in release.applications.items():
            kinds_of.setdefault(app.chart, []).append(kind)
        scans = {chart: scan_chart(release.chart_dir(chart)) for chart in kinds_of}
        todo = [s for s in sites(release) if not s.dead and not reached.get(s.location) and s.chart in kinds_of]
        for site in todo:
            call = next(c for c in scans[site.chart].calls if c.file == site.file and c.line == site.line)
            source = (release.chart_dir(site.chart) / site.file).read_text(errors="replace")
            lines = source.splitlines()
            context = "\n".join(lines[max(0, site.line - 40): site.line])
            for kind in kinds_of[site.chart]:
                app = release.applications[kind]
                base = _base_spec(kind)
                reads, guards = _candidates(app.schema, call, context)
                earlier = [c for c in scans[site.chart].calls
                           if c.file == site.file and c.line < site.line and c.define == call.define]
                fills = [p for c in earlier for p in (_concrete(app.schema, r) for r in c.reads)
                         if p and p not in reads and p not in guards]
                # The literals of the lines before the site too: the lists a
                # check compares with are often built there.
                nearby = [lit for lit in _literals(context) if isinstance(lit, str) and 0 < len(lit) < 32]
                literals = tuple(dict.fromkeys([*call.literals, *sorted(set(nearby), key=len)[:12]]))
                plans = [(note, spec, "", "") for note, spec in
                         itertools.islice(_plans(base, app.schema, reads, guards, fills, literals), BUDGET)]
                if call.release:
                    plans = [(f"metadata {name or '-'}/{namespace or '-'}", base, name, namespace)
                             for name in ("", *NAMES) for namespace in ("", *NAMESPACES)
                             if name or namespace] + plans
                hit = None
                for start in range(0, len(plans), CHUNK):
                    chunk = plans[start:start + CHUNK]
                    tasks = (Task(version, _object(app, spec, name or None, namespace or None)) for _, spec, name, namespace in chunk)
                    for index, outcome in pool.outcomes(tasks):
                        if hits(site, outcome) and (hit is None or start + index < hit):
                            hit = start + index
                    if hit is not None:
                        break
                if hit is not None:
                    note, spec, name, namespace = plans[hit]
                    found.append(Probe(site.location, version, kind, note, spec, name, namespace))
                    print(f"probes: {version} {site.location}: {note}")
                    break
            else:
                print(f"probes: {version} {site.location}: not reached ({len(plans)} tries)")
    pool.close()
    return found


def write(found: list[Probe], path: Path = PROBES) -> None:
    entries = []
    for p in sorted(found, key=lambda p: (p.release, p.where)):
        entry = {"where": p.where, "release": p.release, "kind": p.kind, "note": p.note, "spec": p.spec}
        if p.name or p.namespace:
            entry["metadata"] = {k: v for k, v in (("name", p.name), ("namespace", p.namespace)) if v}
        entries.append(entry)
    header = ("# Generated by `tools/oracle probes --write` (cozystack_oracle/probes.py): for each template\n"
              "# fail/required site no other sample reached, values its conditions led to that Helm refuses\n"
              "# there. Do not edit; the suite renders them on every run (origin `site`).\n")
    path.write_text(header + yaml.safe_dump(entries, sort_keys=False, width=120, allow_unicode=True))


def read(path: Path = PROBES) -> list[Probe]:
    entries = yaml.safe_load(path.read_text()) if path.is_file() else []
    return [Probe(e["where"], e["release"], e["kind"], e["note"], e["spec"],
                  (e.get("metadata") or {}).get("name", ""), (e.get("metadata") or {}).get("namespace", ""))
            for e in entries or []]
