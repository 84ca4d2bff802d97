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
_VALUES = re.compile(r"(?<![\w])\$?\.Values((?:\.[A-Za-z_][\w-]*)*)")
_INDEX = re.compile(r'index\s+\$?\.Values((?:\s+"[^"]*")+)')
_DIG = re.compile(r'dig((?:\s+"[^"]*")+)\s+[^"\s]+\s+\(?\$?\.Values((?:\.[A-Za-z_][\w-]*)*)')
_BIND = re.compile(r"\$([A-Za-z_]\w*)\s*:?=\s*(.*)", re.S)
_RANGE = re.compile(r"range\s+(?:\$([A-Za-z_]\w*)\s*,\s*)?\$([A-Za-z_]\w*)\s*:=\s*(.*)", re.S)
_VAR = re.compile(r"\$([A-Za-z_]\w*)((?:\.[A-Za-z_][\w-]*)*)")
_DOT = re.compile(r"(?<![\w$)\]])\.([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)")
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"|(?<![\w.])(-?\d+(?:\.\d+)?)(?![\w.])')


def _paths(text: str, variables: dict[str, tuple[str, ...]], dot: tuple[str, ...] | None) -> list[tuple[str, ...]]:
    """The ``.Values`` paths ``text`` reads: directly, through ``index``
    and ``dig``, through variables bound to a path, through ``.`` bound by
    ``range`` or ``with``."""
    found: list[tuple[str, ...]] = []
    for match in _INDEX.finditer(text):
        found.append(tuple(re.findall(r'"([^"]*)"', match.group(1))))
    for match in _DIG.finditer(text):
        found.append(tuple(p for p in match.group(2).split(".") if p) + tuple(re.findall(r'"([^"]*)"', match.group(1))))
    for match in _VALUES.finditer(text):
        found.append(tuple(p for p in match.group(1).split(".") if p))
    for match in _VAR.finditer(text):
        base = variables.get(match.group(1))
        if base is not None:
            found.append(base + tuple(p for p in match.group(2).split(".") if p))
    if dot is not None:
        for match in _DOT.finditer(text.replace(".Values", " ").replace(".Release", " ").replace(".Capabilities", " ")):
            found.append(dot + tuple(match.group(1).split(".")))
    return [p for p in found if p]


def _literals(text: str) -> list[object]:
    out: list[object] = []
    for match in _LITERAL.finditer(text):
        if match.group(1) is not None:
            if "%" not in match.group(1) and len(match.group(1)) < 64:
                out.append(match.group(1))
        else:
            number = float(match.group(2))
            out.append(int(number) if number.is_integer() else number)
    return out


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
    #: The values it reads, and those the blocks around it decide on: a
    #: path under ``.Values`` each (``*`` a list item or map entry), with
    #: the literals the actions compare them with.
    reads: tuple[tuple[str, ...], ...] = ()
    guards: tuple[tuple[str, ...], ...] = ()
    literals: tuple[object, ...] = ()
    #: Whether it or the blocks around it read the release's name or
    #: namespace (the application's name and namespace).
    release: frozenset[str] = frozenset()


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
    #: Per open block: its action (a guard of what it holds), and the
    #: ``.`` it binds (``range``/``with`` over a path).
    blocks: list[tuple[str, tuple[str, ...] | None]] = []
    variables: dict[str, tuple[str, ...]] = {}
    for at, action in actions(source):
        define = next((d for d in reversed(stack) if d), None)
        dot = next((d for _, d in reversed(blocks) if d is not None), None)
        body = action.strip("{}- \n\t")
        bound = _RANGE.match(body)
        if bound:
            over = _paths(bound.group(3), variables, dot)
            if over:
                variables[bound.group(2)] = over[0] + ("*",)
        else:
            assigned = _BIND.match(body)
            if assigned:
                over = _paths(assigned.group(2), variables, dot)
                if over and "(" not in assigned.group(2)[:1] and len(over) == 1:
                    variables[assigned.group(1)] = over[0]
        opened = _OPENS.match(action)
        if opened:
            found = _DEFINE.match(action)
            stack.append(found.group(1) if found else None)
            binds = None
            if opened.group(1) in ("range", "with") and not bound:
                over = _paths(body.split(None, 1)[1] if " " in body else "", variables, dot)
                binds = over[0] + (("*",) if opened.group(1) == "range" else ()) if over else None
            blocks.append((action, binds))
            if found:
                scan.defined.setdefault(found.group(1), f"{name}:{source.count(chr(10), 0, at) + 1}")
                define = found.group(1)
                variables = {}
        elif _END.match(action) and stack:
            stack.pop()
            blocks.pop()
        elif re.match(r"\{\{-?\s*else\b", action) and blocks:
            blocks[-1] = (blocks[-1][0] + " " + action, blocks[-1][1])
        for match in _outside_strings(action, _INCLUDE) if "include" in action or "template" in action else ():
            target = match.group(1)
            if define:
                scan.edges.setdefault(define, set()).add(target)
            elif rendered:
                scan.roots.add(target)
        for match in _outside_strings(action, _CALL):
            line = source.count("\n", 0, at + match.start()) + 1
            guards_text = " ".join(b for b, _ in blocks if not _DEFINE.match(b))
            scan.calls.append(Call(
                name, line, match.group(1), _literal(action), define if define or rendered else "<partial>",
                reads=tuple(dict.fromkeys(_paths(action, variables, dot))),
                guards=tuple(dict.fromkeys(_paths(guards_text, variables, dot))),
                literals=tuple(dict.fromkeys(_literals(guards_text + " " + action))),
                release=frozenset(re.findall(r"\.Release\.(Name|Namespace)\b", guards_text + " " + action)),
            ))


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
