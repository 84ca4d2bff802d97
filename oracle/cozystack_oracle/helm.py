"""The values Helm v4.1.1 validates and renders, subcharts included.

helm-controller v1.5.0 embeds Helm v4.1.1; the SDK here is v4.2.3, whose
coalescing differs in two changes (helm/helm #31644, released in v4.1.3,
and #31979, in v4.2.0; docs/oracle.md has the cases):

- v4.1.1 deletes every user ``null`` of a table that meets a chart table
  (``tls: {enabled: null}`` over ``tls: {}`` is dropped), v4.2.3 only where
  the chart had a non-null value;
- v4.1.1 copies the chart's own ``null`` defaults into the values (a
  parent's ``sub.k: null`` then deletes the subchart's default), v4.2.3
  drops them.

:func:`install_values` reproduces ``action.Install`` of v4.1.1:
``chartutil.ProcessDependencies`` (a declared subchart switched off by its
``condition`` or ``tags`` is removed; the import step makes a chart's
values its ``MergeValues``), then ``CoalesceValues`` (``coalesceValues``,
``coalesceTablesFullKey``, ``coalesceDeps``, ``coalesceGlobals``) of
``pkg/chart/common/util/coalesce.go`` and ``pkg/chart/v2/util/
dependencies.go``. With ``v423=True`` the same code follows v4.2.3, which
predicts what the SDK will do to values it is given (:func:`reproducible`).
``import-values``, aliases and packed subcharts are not modelled (no
Cozystack chart a user's spec reaches uses them): :func:`load_tree`
refuses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import sdk


class CoalesceError(ValueError):
    """Helm refuses the values: ``type mismatch on <subchart>``."""


@dataclass
class Dependency:
    """One entry of ``Chart.yaml``'s ``dependencies``."""

    name: str
    condition: str = ""
    tags: list[str] = field(default_factory=list)


@dataclass
class ChartTree:
    """A chart, its ``values.yaml`` and its unpacked subcharts."""

    name: str
    path: Path
    values: dict
    subcharts: list["ChartTree"] = field(default_factory=list)
    #: ``Chart.yaml``'s ``dependencies``; ``None`` when it has none, which
    #: ``ProcessDependencies`` leaves alone.
    declared: list[Dependency] | None = None

    def emptied(self) -> "ChartTree":
        """The same tree with every ``values.yaml`` empty."""
        return ChartTree(
            self.name, self.path, {}, [s.emptied() for s in self.subcharts],
            None if self.declared is None else list(self.declared),
        )

    def dirs(self) -> set[Path]:
        return {self.path}.union(*(s.dirs() for s in self.subcharts))


def _yaml(path: Path) -> Any:
    return sdk.values_from_yaml(path.read_text()) if path.is_file() else None


def load_tree(root: Path) -> ChartTree:
    """The chart at ``root``, read with Helm's own YAML reader."""
    meta = _yaml(root / "Chart.yaml") or {}
    declared = None
    if meta.get("dependencies") is not None:
        declared = []
        for dep in meta["dependencies"]:
            if dep.get("alias") or dep.get("import-values"):
                raise NotImplementedError(f"{root}: a dependency's alias or import-values is not modelled")
            declared.append(Dependency(dep["name"], dep.get("condition") or "", list(dep.get("tags") or [])))
    subcharts = []
    if (root / "charts").is_dir():
        for path in sorted((root / "charts").iterdir()):
            if path.suffix == ".tgz":
                raise NotImplementedError(f"{path}: a packed subchart is not modelled")
            if (path / "Chart.yaml").is_file():
                subcharts.append(load_tree(path))
    if declared is not None:
        names = {s.name for s in subcharts}
        declared = [d for d in declared if d.name in names]
    values = _yaml(root / "values.yaml")
    return ChartTree(meta.get("name", root.name), root, values if isinstance(values, dict) else {}, subcharts, declared)


def _copy(value: Any) -> Any:
    """A deep copy that shares nothing (Go's copystructure)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _drop_nulls(table: dict) -> None:
    for key in list(table):
        if table[key] is None:
            del table[key]
        elif isinstance(table[key], dict):
            _drop_nulls(table[key])


def _tables(user: dict, chart: dict, merge: bool, v423: bool) -> None:
    """``coalesceTablesFullKey(dst=user, src=chart)``: the user's values
    win, tables meet. Every user null of the table is visited: v4.1.1
    deletes each (and no default comes back), v4.2.3 only those over a
    non-null chart value."""
    had = {k for k, v in chart.items() if v is not None}
    for key, value in list(user.items()):
        if value is None:
            chart[key] = None
    for key, default in list(chart.items()):
        if key not in user:
            user[key] = default
        elif user[key] is None:
            if not merge and (not v423 or key in had):
                del user[key]
        elif isinstance(default, dict) and isinstance(user[key], dict):
            _tables(user[key], default, merge, v423)


def _level(chart: ChartTree, values: dict, merge: bool, v423: bool) -> None:
    """``coalesceValues``: this chart's ``values.yaml`` under ``values``. A
    top-level null deletes the key, whatever the default; a subchart's
    block is merged (nulls kept for the subchart's own pass)."""
    subcharts = {s.name for s in chart.subcharts}
    for key, default in _copy(chart.values).items():
        if key in values:
            mine = values[key]
            if mine is None:
                if not merge:
                    del values[key]
            elif isinstance(mine, dict) and isinstance(default, dict):
                table_merge = merge or key in subcharts
                if v423 and not table_merge:
                    _drop_nulls(default)
                _tables(mine, default, table_merge, v423)
        else:
            if v423 and not merge:
                if default is None:
                    continue
                if isinstance(default, dict):
                    _drop_nulls(default)
            values[key] = default


def _globals(block: dict, parent: dict) -> None:
    """``coalesceGlobals``: the parent's ``global`` over the subchart's
    (a shallow copy, as Helm's ``copyMap``)."""
    mine = block.get("global", {})
    theirs = parent.get("global", {})
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        return
    for key, value in theirs.items():
        if isinstance(value, dict):
            copied = dict(value)
            if key not in mine:
                mine[key] = copied
            elif isinstance(mine[key], dict):
                _tables(copied, mine[key], True, False)
                mine[key] = copied
        elif not (key in mine and isinstance(mine[key], dict)):
            mine[key] = value
    block["global"] = mine


def _coalesce(chart: ChartTree, values: dict, merge: bool, v423: bool) -> dict:
    _level(chart, values, merge, v423)
    for sub in chart.subcharts:
        block = values.setdefault(sub.name, {})
        if not isinstance(block, dict):
            raise CoalesceError(f"type mismatch on {sub.name}: {block!r}")
        _globals(block, values)
        values[sub.name] = _coalesce(sub, block, merge, v423)
    return values


def coalesce_values(chart: ChartTree, user: dict | None, v423: bool = False) -> dict:
    """``CoalesceValues(chart, user)``."""
    return _coalesce(chart, _copy(user or {}), False, v423)


_MISSING = object()


def _at(values: dict, dotted: str) -> Any:
    cursor: Any = values
    for part in dotted.split("."):
        if not isinstance(cursor, dict) or part not in cursor:
            return _MISSING
        cursor = cursor[part]
    return cursor


def _enable(chart: ChartTree, values: dict | None, prefix: str, v423: bool) -> None:
    """``processDependencyEnabled``: removes the declared subcharts their
    ``condition`` (the first path that holds a boolean) or ``tags`` switch
    off; each subchart then looks its own up under its prefix."""
    if chart.declared is None:
        return
    coalesced = coalesce_values(chart, values, v423)
    tags = coalesced.get("tags") if isinstance(coalesced.get("tags"), dict) else None
    off = set()
    for dep in chart.declared:
        on = True
        if tags is not None:
            seen = [tags[t] for t in dep.tags if isinstance(tags.get(t), bool)]
            on = True in seen or not seen
        for condition in (c for c in dep.condition.strip().split(",") if c):
            value = _at(coalesced, prefix + condition)
            if isinstance(value, bool):
                on = value
                break
        if not on:
            off.add(dep.name)
    chart.subcharts = [s for s in chart.subcharts if s.name not in off]
    chart.declared = [d for d in chart.declared if d.name not in off]
    for sub in chart.subcharts:
        _enable(sub, coalesced, prefix + sub.name + ".", v423)


def _import(chart: ChartTree, v423: bool) -> None:
    """``processImportValues`` (merge), without import-values: a chart
    with declared dependencies gets ``MergeValues(chart, nil)`` as its
    values, subcharts first."""
    for sub in chart.subcharts:
        _import(sub, v423)
    if chart.declared is not None:
        chart.values = _copy(_coalesce(chart, {}, True, v423))


def install_values(chart: ChartTree, user: dict | None, v423: bool = False) -> dict:
    """What ``action.Install`` validates and renders for ``user``.
    Changes ``chart`` as Helm changes its chart (disabled subcharts go)."""
    _enable(chart, user, "", v423)
    _import(chart, v423)
    return coalesce_values(chart, user, v423)


def reproducible(chart: ChartTree, values: dict) -> bool:
    """Whether the SDK, given ``values`` and ``chart`` with empty
    ``values.yaml`` files, hands the templates exactly ``values``. Only a
    ``global`` block can make it not (``coalesceGlobals`` runs again)."""
    return install_values(chart.emptied(), values, v423=True) == values
