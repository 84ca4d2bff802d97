"""The bundle's verdict on application objects, as ``cozystack-policies
check`` gives it with the settings ``deploy/`` installs: what a CI pipeline
and the cluster see."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .generate import Sample


@dataclass
class Verdict:
    """What the bundle says about one object."""

    #: ``<policy>/<rule>`` of each violation, with its field and message.
    violations: list[dict] = field(default_factory=list)
    warnings: list[dict] = field(default_factory=list)

    @property
    def denied(self) -> bool:
        return bool(self.violations)

    def rules(self, severity: str = "violation") -> set[str]:
        return {f["rule"] for f in (self.violations if severity == "violation" else self.warnings)}


def _identity(sample: Sample) -> tuple[str, str, str]:
    meta = sample.obj.get("metadata") or {}
    return sample.kind, str(meta.get("namespace")), str(meta.get("name"))


def _batches(samples: list[Sample]) -> list[list[Sample]]:
    """Samples grouped so no batch holds two objects of one identity
    (``check`` refuses an object defined twice)."""
    counts: dict[tuple, int] = defaultdict(int)
    batches: list[list[Sample]] = []
    for sample in samples:
        n = counts[_identity(sample)]
        counts[_identity(sample)] += 1
        while len(batches) <= n:
            batches.append([])
        batches[n].append(sample)
    return batches


def judge(cli: Path, root: Path, samples: list[Sample], settings: dict[str, dict]) -> dict[str, Verdict]:
    """Sample id -> the bundle's verdict on it: a CREATE, or an UPDATE
    from its ``old`` object (``check --old``). ``settings`` overrides a
    policy's deployed settings (values-schema's ``cozystackVersion`` for a
    v1.5.4 sample)."""
    verdicts = {sample.id: Verdict() for sample in samples}
    with tempfile.TemporaryDirectory(prefix="oracle-bundle-") as tmp:
        work = Path(tmp)
        overrides = []
        for policy, value in settings.items():
            path = work / f"{policy}.settings.json"
            path.write_text(json.dumps(value))
            overrides += ["--settings", f"{policy}={path}"]
        for n, batch in enumerate(_batches(samples)):
            folder = work / f"batch-{n}"
            olds = work / f"batch-{n}-old"
            folder.mkdir()
            olds.mkdir()
            names = {}
            for i, sample in enumerate(batch):
                name = f"{i}.json"
                (folder / name).write_text(json.dumps(sample.obj))
                if sample.old is not None:
                    (olds / name).write_text(json.dumps(sample.old))
                names[str(folder / name)] = sample.id
            result = subprocess.run(
                [str(cli), "--root", str(root), "check", "--format", "json", "--fail-on", "never",
                 "--from-deploy", str(root / "deploy"), *overrides, "--old", str(olds), str(folder)],
                capture_output=True, text=True,
            )
            if result.returncode != 0:
                raise RuntimeError(f"cozystack-policies check failed on {folder}: {result.stderr.strip()}")
            for finding in json.loads(result.stdout)["findings"]:
                verdict = verdicts[names[finding["file"]]]
                entry = {"rule": finding["rule"], "field": finding["field"], "message": finding["message"]}
                # A rule that could not read the cluster (offline, every lookup
                # fails) judged nothing: no denial, whichever way its policy
                # answered (upgrade-gate denies so audit-scanner records it).
                denied = finding["severity"] == "violation" and not finding["rule"].endswith("-not-checked")
                (verdict.violations if denied else verdict.warnings).append(entry)
    return verdicts
