"""A chart made ready to render as helm-controller renders it.

Two things of a chart are replaced in a private copy, nothing else:

- every ``values.yaml`` is empty: the values the SDK gets are already
  coalesced the way Helm v4.1.1 coalesces them (:mod:`.helm`), so its own
  coalescing (Helm v4.2.3, which treats ``null`` differently) has nothing
  to add or drop;
- every ``lookup`` call reads a fixed cluster (:class:`.cluster.Cluster`)
  instead of the API server, which an offline render does not have: Helm
  answers every lookup with nothing offline, which is what no real cluster
  answers for the instance types the platform installs.

The templates are otherwise the release's, byte for byte.
"""

from __future__ import annotations

import io
import re
import shutil
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import sdk

from .helm import ChartTree, load_tree

#: The template the rewritten lookups call, and the file that defines it.
LOOKUP_TEMPLATE = "oracle.lookup"
LOOKUP_FILE = "templates/_oracle_lookup.tpl"



def _operand_end(text: str, at: int) -> int:
    """The end of the template operand that starts at ``at``: a quoted or
    raw string, a parenthesised pipeline, or a bare word (``$x.y``,
    ``.Release.Namespace``)."""
    opener = text[at]
    if opener == '"':
        i = at + 1
        while i < len(text) and text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        return i + 1
    if opener == "`":
        return text.index("`", at + 1) + 1
    if opener == "(":
        depth, i = 0, at
        while i < len(text):
            c = text[i]
            if c in "\"`":
                i = _operand_end(text, i)
                continue
            depth += c == "("
            depth -= c == ")"
            i += 1
            if depth == 0:
                # A field of the group's result: `(f x).items`.
                while i < len(text) and (text[i].isalnum() or text[i] in "._$"):
                    i += 1
                return i
        raise ValueError("unbalanced parenthesis in a lookup call")
    i = at
    while i < len(text) and not text[i].isspace() and text[i] not in "()|}":
        i += 1
    return i


def _lookups(action: str) -> Iterator[tuple[int, int, list[str]]]:
    """Each ``lookup`` call of one template action outside string literals:
    its start, its end and its four operands."""
    i = 0
    while i < len(action):
        c = action[i]
        if c in "\"`":
            i = _operand_end(action, i)
            continue
        if action.startswith("lookup", i) and (i == 0 or not (action[i - 1].isalnum() or action[i - 1] in "._$")) and action[i + 6 : i + 7].isspace():
            start, i, operands = i, i + 6, []
            for _ in range(4):
                while action[i].isspace():
                    i += 1
                end = _operand_end(action, i)
                operands.append(action[i:end])
                i = end
            yield start, i, operands
            continue
        i += 1


def _action_end(source: str, at: int) -> int:
    """The end of the template action that opens at ``at`` (``{{``): its
    ``}}`` outside string literals; a comment ends at ``*/}}``."""
    i = at + 2
    if re.match(r"-?\s*/\*", source[i : i + 8]):
        return source.index("}}", source.index("*/", i)) + 2
    while i < len(source) and not source.startswith("}}", i):
        i = _operand_end(source, i) if source[i] in "\"`" else i + 1
    return i + 2


def rewrite_lookups(source: str) -> tuple[str, int]:
    """``source`` with each ``lookup A B C D`` turned into a call of
    :data:`LOOKUP_TEMPLATE`, and how many there were. Only template actions
    are rewritten, outside their strings and comments, so text that says
    "lookup" stays."""
    out, pos, count = [], 0, 0
    while (at := source.find("{{", pos)) >= 0:
        end = _action_end(source, at)
        action = source[at:end]
        out.append(source[pos:at])
        if re.match(r"\{\{-?\s*/\*", action):
            out.append(action)
        else:
            last = 0
            for start, stop, operands in _lookups(action):
                out.append(action[last:start])
                out.append(f'(include "{LOOKUP_TEMPLATE}" (list {" ".join(operands)}) | fromJson)')
                last = stop
                count += 1
            out.append(action[last:])
        pos = end
    out.append(source[pos:])
    return "".join(out), count


def lookup_template(objects: str) -> str:
    """The template :func:`rewrite_lookups` calls, answering from
    ``objects`` (:meth:`.cluster.Cluster.index` as JSON): a get returns the
    object or an empty map, a list (empty name) a ``List`` whose items may
    be none, as an API server answers."""
    db = objects.replace("`", "\\u0060")
    return (
        f'{{{{- define "{LOOKUP_TEMPLATE}" -}}}}\n'
        f"{{{{- $db := `{db}` | fromJson -}}}}\n"
        '{{- $key := printf "%s|%s|%s|%s" (index . 0) (index . 1) (index . 2) (index . 3) -}}\n'
        '{{- if eq (index . 3) "" -}}\n'
        '{{- dict "apiVersion" "v1" "kind" "List" "items" (get $db.lists $key | default list) | toJson -}}\n'
        "{{- else -}}\n"
        "{{- get $db.gets $key | default dict | toJson -}}\n"
        "{{- end -}}\n"
        "{{- end -}}\n"
    )


@dataclass
class PreparedChart:
    """A private copy of one chart whose lookups are rewritten and whose
    ``values.yaml`` files (the chart's and its subcharts') are empty: the
    values the SDK gets are already complete (:mod:`.helm`)."""

    source: Path
    copy: Path
    #: The chart as the release has it, values and all.
    tree: ChartTree
    #: How many ``lookup`` calls the templates make.
    lookups: int

    @classmethod
    def make(cls, source: Path, copy: Path) -> "PreparedChart":
        """Copies ``source`` to ``copy``, rewrites its lookups and empties
        its values."""
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(source, copy)
        lookups = 0
        for path in sorted(copy.rglob("*")):
            if path.name == "values.yaml":
                path.write_text("{}\n")
            elif path.suffix in (".yaml", ".tpl", ".yml", ".txt") and "templates" in path.parts:
                text = path.read_text()
                rewritten, count = rewrite_lookups(text)
                if count:
                    path.write_text(rewritten)
                    lookups += count
        return cls(source=source, copy=copy, tree=load_tree(source), lookups=lookups)

    def fresh_tree(self) -> ChartTree:
        """The chart's tree to coalesce with, which Helm changes as it goes."""
        return load_tree(self.source)

    def load(self, objects: str, installed: ChartTree) -> sdk.Chart:
        """The chart with lookups answered from ``objects`` (JSON), without the
        subcharts ``installed`` (the tree after ``install_values``) lost."""
        lookups = self.copy / LOOKUP_FILE
        lookups.parent.mkdir(exist_ok=True)
        lookups.write_text(lookup_template(objects))
        dropped = {self.copy / p.relative_to(self.source) for p in self.tree.dirs() - installed.dirs()}
        if not dropped:
            return sdk.load(self.copy)
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w:gz") as tar:
            for path in sorted(self.copy.rglob("*")):
                if path.is_file() and not any(d in path.parents for d in dropped):
                    tar.add(path, arcname=f"{self.copy.name}/{path.relative_to(self.copy).as_posix()}")
        return sdk.load_archive(archive.getvalue())
