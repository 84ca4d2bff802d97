"""The reviewed disagreements between Helm and the bundle
(``oracle/exceptions.yaml``), and the rules that keep each one tight.

An exception excuses one failure, not an object:

- a **missed** entry names its kinds, one place Helm failed (``where``: a
  template's ``file:line``, never a pattern, or ``stage:<stage>``), the
  nested release it failed in (none by default), optionally Helm's message
  (a regular expression whose named groups fill ``warns.field``), and, for
  a template failure (which only the cluster can decide, or the bundle
  would deny it), the warning the bundle must give instead, on the field
  that failed: rule and field path both;
- a **denied** entry names its kinds and the bundle rule that denies what
  renders; an object is excused only when every violation on it is
  (another rule's wrong denial on the same object is not hidden).

:func:`load` refuses an entry that could match more than that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .generate import render_path

_WHERE = re.compile(r"(stage:[a-z-]+|[\w.-]+/templates/[\w./-]+:\d+)")


class ExceptionsError(ValueError):
    """An entry of ``exceptions.yaml`` that is not tight enough to load."""


@dataclass(frozen=True)
class Warns:
    """The warning the bundle must give where Helm fails on cluster state."""

    rule: str
    #: The field path under ``spec`` (or under ``metadata`` when it starts
    #: with ``metadata``), as segments: ``{name}`` is filled
    #: from the message's named group ``name``, and ``*`` is any list index
    #: (a disk Helm names by its value, not its position).
    field: tuple[str, ...]

    def given(self, warnings: list[dict], groups: dict[str, str]) -> bool:
        """Whether one of ``warnings`` is this rule's on this field; when
        the message captured a ``value``, the warning must name it."""
        root, steps = ("metadata", self.field[1:]) if self.field[0] == "metadata" else ("spec", self.field)
        pattern = root + "".join(
            r"\[\d+\]" if step == "*" else re.escape(render_path((step.format(**groups),)).removeprefix("spec"))
            for step in steps
        )
        for warning in warnings:
            if warning["rule"] != self.rule or not re.fullmatch(pattern, warning["field"]):
                continue
            if "value" in groups and groups["value"] not in warning["message"]:
                continue
            return True
        return False


def _names(listed: frozenset[str], release: str) -> bool:
    """Whether ``listed`` (an entry's ``releases``) names ``release``: none
    names every release, ``v1.6`` every release of that line."""
    if not listed:
        return True
    line = ".".join(release.removeprefix("v").split(".")[:2])
    return release in listed or f"v{line}" in listed


@dataclass(frozen=True)
class Missed:
    """Helm (or cozystack-api, or kube-apiserver) refuses, the bundle allows."""

    reason: str
    kinds: frozenset[str]
    where: str
    nested: tuple[str, ...] = ()
    message: str = ""
    warns: Warns | None = None
    releases: frozenset[str] = frozenset()
    #: The platform variants (:mod:`.variants`) whose values make it fail.
    variants: frozenset[str] = frozenset()

    def excuses(self, kind: str, release: str, variant: str, outcome, warnings: list[dict]) -> bool:
        if kind not in self.kinds or not _names(self.releases, release):
            return False
        if self.variants and variant not in self.variants:
            return False
        if self.where not in (outcome.location, f"stage:{outcome.stage}") or tuple(outcome.nested) != self.nested:
            return False
        groups: dict[str, str] = {}
        if self.message:
            found = re.search(self.message, outcome.message)
            if not found:
                return False
            groups = {k: v for k, v in found.groupdict().items() if v is not None}
        if self.warns is None:
            return True
        return self.warns.given(warnings, groups)


@dataclass(frozen=True)
class Denied:
    """Helm renders, and one bundle rule denies on purpose."""

    reason: str
    kinds: frozenset[str]
    rule: str
    releases: frozenset[str] = frozenset()

    def excuses(self, kind: str, release: str, rule: str) -> bool:
        return kind in self.kinds and _names(self.releases, release) and rule == self.rule


@dataclass(frozen=True)
class Exceptions:
    missed: tuple[Missed, ...]
    denied: tuple[Denied, ...]

    def excuse_missed(self, kind: str, release: str, variant: str, outcome, warnings: list[dict]) -> list[str]:
        """The reason of the first entry that excuses this failure, or none."""
        for entry in self.missed:
            if entry.excuses(kind, release, variant, outcome, warnings):
                return [entry.reason]
        return []

    def excuse_denied(self, kind: str, release: str, violations: list[dict]) -> list[str]:
        """One reason per denying rule, when every violation is excused;
        none when any is not."""
        reasons: list[str] = []
        for rule in sorted({v["rule"] for v in violations}):
            entry = next((e for e in self.denied if e.excuses(kind, release, rule)), None)
            if entry is None:
                return []
            reasons.append(entry.reason)
        return reasons


def _kinds(path: Path, entry: dict) -> frozenset[str]:
    kinds = entry.get("kinds")
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) and k for k in kinds):
        raise ExceptionsError(f"{path}: an exception must name its kinds: {entry}")
    return frozenset(kinds)


def _reason(path: Path, entry: dict) -> str:
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ExceptionsError(f"{path}: an exception without a reason: {entry}")
    return " ".join(reason.split())


def load(path: Path) -> Exceptions:
    data = yaml.safe_load(path.read_text()) if path.is_file() else None
    data = data or {}
    unknown = set(data) - {"missed", "denied"}
    if unknown:
        raise ExceptionsError(f"{path}: unknown sections {sorted(unknown)}")
    missed = []
    for entry in data.get("missed") or []:
        extra = set(entry) - {"kinds", "where", "nested", "message", "warns", "releases", "variants", "reason"}
        if extra:
            raise ExceptionsError(f"{path}: unknown keys {sorted(extra)} in {entry}")
        where = entry.get("where")
        if not isinstance(where, str) or not _WHERE.fullmatch(where):
            raise ExceptionsError(f"{path}: `where` must be one template line (chart/templates/file:line) or stage:<stage>: {entry}")
        warns = None
        if entry.get("warns") is None and not where.startswith("stage:"):
            raise ExceptionsError(
                f"{path}: a template failure the bundle allows is excused only where the cluster decides it, "
                f"and then the bundle warns on the field: name `warns`: {entry}"
            )
        if entry.get("warns") is not None:
            spec = entry["warns"]
            if not isinstance(spec, dict) or not spec.get("rule") or not isinstance(spec.get("field"), list) or not spec["field"]:
                raise ExceptionsError(f"{path}: `warns` names the rule and the field (a list of path segments): {entry}")
            field = tuple(str(s) for s in spec["field"])
            warns = Warns(spec["rule"], field)
            message = entry.get("message", "")
            needed = {name for segment in field for name in re.findall(r"\{(\w+)\}", segment)}
            if needed - set(re.compile(message).groupindex):
                raise ExceptionsError(f"{path}: `warns.field` uses {sorted(needed)}, which `message` must capture: {entry}")
        missed.append(
            Missed(
                reason=_reason(path, entry),
                kinds=_kinds(path, entry),
                where=where,
                nested=tuple(entry.get("nested") or ()),
                message=entry.get("message", ""),
                warns=warns,
                releases=frozenset(entry.get("releases") or ()),
                variants=frozenset(entry.get("variants") or ()),
            )
        )
    denied = []
    for entry in data.get("denied") or []:
        extra = set(entry) - {"kinds", "rule", "releases", "reason"}
        if extra:
            raise ExceptionsError(f"{path}: unknown keys {sorted(extra)} in {entry}")
        if not entry.get("rule"):
            raise ExceptionsError(f"{path}: a denied exception names the rule: {entry}")
        denied.append(
            Denied(
                reason=_reason(path, entry),
                kinds=_kinds(path, entry),
                rule=entry["rule"],
                releases=frozenset(entry.get("releases") or ()),
            )
        )
    return Exceptions(tuple(missed), tuple(denied))
