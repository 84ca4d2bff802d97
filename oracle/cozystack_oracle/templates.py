"""What a chart's templates hold, read as Go's ``text/template`` reads them:
their actions outside comments, the ``define`` blocks, the ``include`` and
``template`` calls between them, and the ``fail``/``required`` calls.

A call inside a ``define`` that nothing a chart renders ever includes is
dead code: no value reaches it. :func:`reachable` tells those apart, for
the coverage table of template sites (:mod:`.coverage`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .chart import _action_end, _operand_end

_COMMENT = re.compile(r"\{\{-?\s*/\*")
_OPENS = re.compile(r"\{\{-?\s*(if|range|with|define|block)\b")
_END = re.compile(r"\{\{-?\s*end\b")
_DEFINE = re.compile(r'\{\{-?\s*(?:define|block)\s+"([^"]+)"')
_INCLUDE = re.compile(r'(?<![\w.$])(?:include|template)\s+"([^"]+)"')
_CALL = re.compile(r"(?<![\w.$])(fail|required)(?=[\s(])")


def actions(source: str) -> Iterator[tuple[int, str]]:
    """Each template action of ``source`` with its offset, comments left out."""
    pos = 0
    while (at := source.find("{{", pos)) >= 0:
        end = _action_end(source, at)
        action = source[at:end]
        if not _COMMENT.match(action):
            yield at, action
        pos = end


def _outside_strings(action: str, pattern: re.Pattern) -> Iterator[re.Match]:
    i = 0
    while i < len(action):
        if action[i] in "\"`":
            i = _operand_end(action, i)
            continue
        match = pattern.match(action, i)
        if match:
            yield match
            i = match.end()
            continue
        i += 1


@dataclass(frozen=True)
class Call:
    """One ``fail`` or ``required`` call."""

    file: str
    line: int
    call: str
    #: The first string literal of its action (the message, or its format).
    message: str
    #: The ``define`` it sits in, if any.
    define: str | None


@dataclass
class Scan:
    """What one chart's templates (and its subcharts') hold."""

    calls: list[Call] = field(default_factory=list)
    #: define -> the defines it includes.
    edges: dict[str, set[str]] = field(default_factory=dict)
    #: The defines what renders (a template outside any define) includes.
    roots: set[str] = field(default_factory=set)
    #: define -> ``file:line`` where it is defined.
    defined: dict[str, str] = field(default_factory=dict)


def _literal(action: str) -> str:
    match = re.search(r'"((?:[^"\\]|\\.)*)"|`([^`]*)`', action)
    if not match:
        return ""
    if match.group(2) is not None:
        return match.group(2)
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), match.group(1))


def scan_file(scan: Scan, path: Path, name: str) -> None:
    """Adds ``path`` (known as ``name`` in the chart) to ``scan``. Helm
    executes only the templates whose name does not start with ``_``; a
    partial's actions outside its defines never run."""
    source = path.read_text(errors="replace")
    rendered = not path.name.startswith("_")
    stack: list[str | None] = []
    for at, action in actions(source):
        define = next((d for d in reversed(stack) if d), None)
        opened = _OPENS.match(action)
        if opened:
            found = _DEFINE.match(action)
            stack.append(found.group(1) if found else None)
            if found:
                scan.defined.setdefault(found.group(1), f"{name}:{source.count(chr(10), 0, at) + 1}")
                define = found.group(1)
        elif _END.match(action) and stack:
            stack.pop()
        for match in _outside_strings(action, _INCLUDE) if "include" in action or "template" in action else ():
            target = match.group(1)
            if define:
                scan.edges.setdefault(define, set()).add(target)
            elif rendered:
                scan.roots.add(target)
        for match in _outside_strings(action, _CALL):
            line = source.count("\n", 0, at + match.start()) + 1
            scan.calls.append(Call(name, line, match.group(1), _literal(action), define if define or rendered else "<partial>"))


def scan_chart(root: Path) -> Scan:
    """Every template of the chart at ``root`` and of its subcharts; the
    calls are those of the chart's own templates."""
    scan = Scan()
    for path in sorted((root / "templates").rglob("*")):
        if path.is_file():
            scan_file(scan, path, path.relative_to(root).as_posix())
    for sub in sorted((root / "charts").glob("*")) if (root / "charts").is_dir() else []:
        inner = scan_chart(sub)
        for define, targets in inner.edges.items():
            scan.edges.setdefault(define, set()).update(targets)
        scan.roots |= inner.roots
        for define, where in inner.defined.items():
            scan.defined.setdefault(define, f"{sub.name}/{where}")
    return scan


def reachable(scan: Scan) -> set[str]:
    """The defines something the chart renders includes, directly or not."""
    seen: set[str] = set()
    todo = list(scan.roots)
    while todo:
        define = todo.pop()
        if define in seen:
            continue
        seen.add(define)
        todo.extend(scan.edges.get(define, ()))
    return seen
