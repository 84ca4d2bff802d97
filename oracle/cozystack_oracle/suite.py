"""The differential suite: every sample judged by Helm (the platform's
render, :mod:`.render`) and by the bundle (:mod:`.bundle`), every
disagreement either listed with its reason in ``exceptions.yaml`` or a
failure.

Per chart and in total it prints how often both deny, Helm fails and the
bundle allows (*missed*), Helm renders and the bundle denies (*false
denial*), and both allow; then every unlisted disagreement, and the
template locations where Helm failed with how many of those failures the
bundle caught.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from . import sdk

from .bundle import Verdict, judge
from .exceptions import load as load_exceptions
from .generate import Sample, on_variants, samples, stored, updates
from .pool import Pool, Task
from .release import Release, by_charts
from .render import Outcome


#: A kind's UPDATEs: one change in this many of its samples, each as a
#: PUT and as a merge PATCH.
UPDATE_SHARE = 4
#: Every how many samples of a kind are rendered again on each platform
#: variant (all of a kind a variant moves, the host ingress's Ingress).
VARIANT_EVERY = 4


@dataclass
class Judged:
    sample: Sample
    outcome: Outcome
    verdict: Verdict
    #: The reasons of the reviewed exceptions that accept a disagreement.
    excused: list[str] = field(default_factory=list)

    @property
    def category(self) -> str:
        if self.outcome.oracle_error:
            return "oracle error"
        helm_fails, denied = not self.outcome.ok, self.verdict.denied
        return {(True, True): "both deny", (True, False): "missed", (False, True): "false denial", (False, False): "both allow"}[(helm_fails, denied)]

    def to_json(self) -> dict:
        return {
            **self.sample.to_json(),
            "helm": self.outcome.to_json(),
            "bundle": {"violations": self.verdict.violations, "warnings": self.verdict.warnings},
            "category": self.category,
            "excused": self.excused,
        }


def _content(release: str, variant: str, obj: dict, old: dict | None) -> str:
    return json.dumps([release, variant, obj, old], sort_keys=True)


def _line(version: str) -> str:
    return ".".join(version.removeprefix("v").split(".")[:2])


def patches(versions: list[str]) -> set[str]:
    """The releases of ``versions`` (newest first) older than the newest of
    their line."""
    seen: set[str] = set()
    older: set[str] = set()
    for version in versions:
        if _line(version) in seen:
            older.add(version)
        seen.add(_line(version))
    return older


def per_release(versions: list[str], per_kind: int, patch_per_kind: int | None) -> dict[str, int]:
    """Samples per kind of each release: ``per_kind`` for the newest of
    each line (``versions`` is newest first), ``patch_per_kind`` for the
    older patch releases of a line."""
    older = patches(versions)
    return {v: patch_per_kind if v in older and patch_per_kind is not None else per_kind for v in versions}


def _versioned(root: Path) -> list[str]:
    """The policies with a ``cozystackVersion`` setting (their README's
    settings table lists it): a cluster of an older release sets it."""
    return sorted(
        readme.parent.name
        for readme in (root / "policies").glob("*/README.md")
        if "| `cozystackVersion` |" in readme.read_text()
    )


def _chart_defaults(release: Release) -> dict[str, dict]:
    return {app.chart: sdk.defaults(release.chart_dir(app.chart)) for app in release.applications.values()}


def run(
    data: Path,
    root: Path,
    bundle: Path,
    cli: Path,
    seed: int,
    per_kind: int,
    versions: list[str],
    exceptions: Path,
    report: Path,
    workdir: Path,
    workers: int,
    names: bool = True,
    variant_every: int = VARIANT_EVERY,
    updates_per_kind: int | None = None,
    helm_from: Path | None = None,
    patch_per_kind: int | None = None,
    patch_light: bool = False,
) -> int:
    """Renders samples of every kind of ``versions`` with Helm and judges them
    with the bundle of ``bundle``: its ``dist/`` and ``deploy/``, each
    release with ``cozystackVersion`` set to it. Releases with the same
    charts are rendered once, and the bundle must judge them alike. The
    samples come from ``root``'s cases, so an older bundle is measured on
    the same objects as this one."""
    started = time.monotonic()
    accepted = load_exceptions(exceptions)
    everything: list[Sample] = []
    groups = by_charts(versions)
    counts = per_release(list(groups), per_kind, patch_per_kind)
    older = patches(list(groups))
    releases = {version: Release.at(data, version) for version in groups}
    for version, release in releases.items():
        count = counts[version]
        light = patch_light and version in older
        found = samples(release, root / "policies", seed, count, _chart_defaults(release), names, light)
        found += on_variants(found, variant_every)
        everything += found + [stored(s, release) for s in found]
        everything += updates(found, release, count // UPDATE_SHARE if updates_per_kind is None else updates_per_kind, seed)
    shown = ", ".join(f"{v} ({counts[v]} per kind{', also ' + ', '.join(g[1:]) if len(g) > 1 else ''})" for v, g in groups.items())
    print(f"oracle: {len(everything)} objects ({shown}, seed {seed})", file=sys.stderr)

    outcomes: dict[int, Outcome] = {}
    known: dict[str, Outcome] = {}
    if helm_from is not None:
        # Helm's verdicts of an earlier run: only the bundle is judged
        # again (an older bundle, measured on the same samples). Matched by
        # content, as sample ids number a kind's samples in order; an
        # oracle error there is rendered again.
        for item in json.loads(helm_from.read_text()):
            outcome = Outcome.from_json(item["helm"])
            if not outcome.oracle_error:
                known[_content(item["release"], item.get("variant", "default"), item["object"], item.get("oldObject"))] = outcome
    keys = [_content(s.release, s.variant, s.obj, s.old) for s in everything]
    todo = [i for i, key in enumerate(keys) if key not in known]
    for i, key in enumerate(keys):
        if key in known:
            outcomes[i] = known[key]
    pool = Pool(data, workdir, workers)
    for index, outcome in pool.outcomes(Task(everything[i].release, everything[i].obj, everything[i].variant,
                                              everything[i].created, everything[i].installed) for i in todo):
        outcomes[todo[index]] = outcome
    print(f"oracle: Helm judged them in {time.monotonic() - started:.0f} s", file=sys.stderr)

    verdicts: dict[str, Verdict] = {}
    mismatches: list[str] = []
    for lead, members in groups.items():
        mine = [s for s in everything if s.release == lead]
        for version in members:
            settings = {p: {"cozystackVersion": version} for p in _versioned(bundle)}
            judged = judge(cli, bundle, mine, settings)
            if version == lead:
                verdicts.update(judged)
                continue
            # The same charts: the same verdicts, rule for rule.
            for sample in mine:
                ours, theirs = judged[sample.id], verdicts[sample.id]
                if (ours.violations, [w["rule"] for w in ours.warnings]) != (theirs.violations, [w["rule"] for w in theirs.warnings]):
                    mismatches.append(f"{sample.id}: {version} and {lead} have the same charts, but the bundle judged them apart")

    judged = [Judged(s, outcomes[i], verdicts[s.id]) for i, s in enumerate(everything)]
    for item in judged:
        kind, version = item.sample.kind, item.sample.release
        if item.category == "missed":
            item.excused = accepted.excuse_missed(kind, version, item.sample.variant, item.outcome, item.verdict.warnings)
        elif item.category == "false denial":
            item.excused = accepted.excuse_denied(kind, version, item.verdict.violations)

    _print_tables(judged, releases)
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps([j.to_json() for j in judged], indent=1))
    unlisted = [j for j in judged if j.category in ("missed", "false denial") and not j.excused]
    _print_unlisted(unlisted)
    errors = [j for j in judged if j.category == "oracle error"]
    for item in errors[:50]:
        print(f"ORACLE ERROR: {item.sample.id}: {item.outcome.stage}: {' '.join(item.outcome.message.split())[:300]}")
    for line in mismatches[:50]:
        print(f"RELEASE MISMATCH: {line}")
    for version in releases:
        mine = [j for j in judged if j.sample.release == version]
        bad = sum(1 for j in mine if j.category in ("missed", "false denial") and not j.excused)
        print(f"oracle: {version}{' (also ' + ', '.join(groups[version][1:]) + ')' if len(groups[version]) > 1 else ''}: "
              f"{len(mine)} objects, {bad} unlisted disagreement(s)")
    print(f"oracle: {len(judged)} objects in {time.monotonic() - started:.0f} s; "
          f"{len(unlisted)} unlisted disagreement(s), {len(errors)} oracle error(s), "
          f"{len(mismatches)} release mismatch(es); report in {report}")
    return 1 if unlisted or errors or mismatches else 0


def _print_tables(judged: list[Judged], releases: dict[str, Release]) -> None:
    columns = ("both deny", "missed", "false denial", "both allow", "oracle error")
    rows: dict[str, Counter] = defaultdict(Counter)
    families: dict[str, Counter] = defaultdict(Counter)
    for item in judged:
        chart = releases[item.sample.release].applications[item.sample.kind].chart
        label = f"{item.sample.release} {chart}"
        cell = item.category + (" (listed)" if item.excused else "")
        rows[label][cell] += 1
        family = f"{item.sample.release} {chart.split('/')[0]}"
        for key in (family, f"{family} {item.sample.operation}", "total"):
            families[key][item.category] += 1
            families[key]["listed"] += bool(item.excused)
    header = f"{'chart':34} " + " ".join(f"{c:>12}" for c in columns) + f" {'listed':>7}"
    print(header)
    for label in sorted(rows):
        counts = rows[label]
        listed = sum(v for k, v in counts.items() if k.endswith("(listed)"))
        print(f"{label:34} " + " ".join(f"{counts[c] + counts[c + ' (listed)']:>12}" for c in columns) + f" {listed:>7}")
    print()
    for label in sorted(families):
        counts = families[label]
        total = sum(counts[c] for c in columns)
        print(f"{label:34} " + " ".join(f"{counts[c]:>12}" for c in columns) + f" {counts['listed']:>7}  ({total} objects)")
    print()
    locations: dict[str, Counter] = defaultdict(Counter)
    for item in judged:
        if not item.outcome.ok:
            where = item.outcome.location or f"stage:{item.outcome.stage}"
            if item.outcome.nested:
                where += f" (in {'/'.join(item.outcome.nested)})"
            locations[f"{item.sample.release} {where}"]["failed"] += 1
            locations[f"{item.sample.release} {where}"]["caught" if item.verdict.denied else "listed" if item.excused else "missed"] += 1
    print(f"{'where Helm failed':70} {'failed':>7} {'caught':>7} {'listed':>7} {'missed':>7}")
    for where in sorted(locations):
        c = locations[where]
        print(f"{where[:70]:70} {c['failed']:>7} {c['caught']:>7} {c['listed']:>7} {c['missed']:>7}")
    print()


def _print_unlisted(unlisted: list[Judged]) -> None:
    for item in unlisted[:200]:
        s = item.sample
        print(f"UNLISTED {item.category}: {s.id} ({s.operation}, {s.variant}): {s.note}")
        print(f"  spec: {json.dumps(s.obj.get('spec'))[:300]}")
        if item.category == "missed":
            print(f"  helm: {item.outcome.stage} {item.outcome.location} {'/'.join(item.outcome.nested)}: "
                  f"{' '.join(item.outcome.message.split())[:400]}")
            for w in item.verdict.warnings[:3]:
                print(f"  bundle warns: {w['rule']} {w['field']}: {w['message'][:200]}")
        else:
            for v in item.verdict.violations[:3]:
                print(f"  bundle denies: {v['rule']} {v['field']}: {v['message'][:300]}")
    if len(unlisted) > 200:
        print(f"... and {len(unlisted) - 200} more (see the report)")
