"""Application objects to judge: what a user writes, and what a user gets
wrong.

Every object starts from a *base*: an empty ``spec`` under a name and
namespace the chart accepts (the charts that fix their release name or need
a field to render at all are told apart in :data:`BASES`). On it, with a
seeded random generator, so a run is repeatable:

- ``defaults``: the base, and the chart's whole ``values.yaml`` as a spec
  (what a stored object reads like);
- ``case``: every ``apps.cozystack.io`` object of the policies' test cases;
- ``mutation``: one value changed at one schema path, directed by the
  schema: each other JSON type, each enum value and a near miss, numbers
  at and past their useful range, quantities, map entries under keys a
  user would write (``App.User``), empty and one-item lists;
- ``null``: ``null`` at every path the chart defaults;
- ``pair``: two mutations at once, for the checks that compare fields;
- ``probe``: hand-written values that reach the templates' ``fail`` and
  ``required`` branches (``probes/<Kind>.yaml``), the ones no schema
  mutation finds;
- ``site``: values generated from the templates' conditions for the sites
  nothing else reached (``probes/sites.yaml``, :mod:`.probes`);
- ``name``: at every free string (no enum, pattern or quantity) and every
  map key, a value no Kubernetes name or label value can be and two
  over-long ones (:data:`NAME_PROBES`): whichever of them a chart writes
  into a name or a label, kube-apiserver refuses.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .release import Application, Release
from .values import default_like_cozystack_api
from .variants import DEFAULT, VARIANTS

API_VERSION = "apps.cozystack.io/v1alpha1"

#: Name, namespace and spec each kind's chart needs to render at all.
BASES: dict[str, tuple[str, str, dict]] = {
    "BootBox": ("bootbox", "tenant-root", {}),
    "ComputePlane": ("computeplane", "tenant-foo", {}),
    "Etcd": ("etcd", "tenant-foo", {}),
    "ExternalDNS": ("dns", "tenant-root", {"provider": "cloudflare"}),
    "Info": ("info", "tenant-foo", {}),
    "Ingress": ("ingress", "tenant-foo", {}),
    "KubernetesNodes": ("prod-workers", "tenant-foo", {"cluster": "prod"}),
    "Monitoring": ("monitoring", "tenant-foo", {}),
    "SeaweedFS": ("seaweedfs", "tenant-foo", {}),
    "Tenant": ("bar", "tenant-foo", {}),
}
_DEFAULT_BASE = ("app", "tenant-foo", {})

#: Map keys a user writes for named entries (users, databases, node
#: groups): valid, and the ones that make invalid object names.
MAP_KEYS = ("alice", "md1", "App.User", "db_main", "a" * 70, "x.y", "")
#: The probes :mod:`.probes` generated from the templates' conditions.
SITE_PROBES = Path(__file__).resolve().parents[1] / "probes" / "sites.yaml"
#: Values tried at a string without enum or pattern.
STRINGS = ("", "x", "UPPER case", "a" * 300)
#: Tried at every free string and as a key of every map: not a name or a
#: label value, longer than a label value or a DNS label (63), longer than
#: a DNS subdomain (253).
NAME_PROBES = ("UPPER case", "a" * 64, "a" * 254)
#: Values tried at a Kubernetes quantity.
QUANTITIES = ("0", "1", "100m", "1Gi", "1.5Gi", "-1Gi", "10GB", "1e3", "abc", 0, 1, 3, -2, 1.5)
#: Numbers tried at an integer.
INTEGERS = (0, 1, 2, 3, 5, -1, 100, 1000000, 1000000000000, 1.5)
#: One value of each JSON type, for type mutations.
TYPES = {"string": "x", "integer": 7, "number": 2.5, "boolean": True, "array": [], "object": {}}


@dataclass(frozen=True)
class Sample:
    """One application object to judge."""

    #: Unique within a run: ``<release>/<Kind>/<origin>/<n>``.
    id: str
    release: str
    kind: str
    origin: str
    #: What was changed, for a reader: ``spec.size = null``.
    note: str
    obj: dict
    #: The platform variant Helm renders it on (:mod:`.variants`).
    variant: str = "default"
    #: An UPDATE: the object as it was created (what Helm installed
    #: first) and as cozystack-api returns it (the request's ``oldObject``).
    created: dict | None = None
    old: dict | None = None
    #: Other applications installed first, in the same cluster (a
    #: KubernetesNodes pool's parent Kubernetes).
    installed: tuple = ()

    @property
    def operation(self) -> str:
        return "UPDATE" if self.old is not None else "CREATE"

    def to_json(self) -> dict:
        return {"id": self.id, "release": self.release, "kind": self.kind, "origin": self.origin, "note": self.note,
                "variant": self.variant, "operation": self.operation, "object": self.obj, "oldObject": self.old}


def _object(app: Application, spec: dict, name: str | None = None, namespace: str | None = None) -> dict:
    base_name, base_ns, _ = BASES.get(app.kind, _DEFAULT_BASE)
    return {
        "apiVersion": API_VERSION,
        "kind": app.kind,
        "metadata": {"name": name or base_name, "namespace": namespace or base_ns},
        "spec": spec,
    }


def _base_spec(kind: str) -> dict:
    return copy.deepcopy(BASES.get(kind, _DEFAULT_BASE)[2])


def _set(spec: dict, path: tuple[str | int, ...], value: Any) -> dict:
    """A copy of ``spec`` with ``value`` at ``path``, creating the tables
    and lists on the way (an integer step is a list index)."""
    out = copy.deepcopy(spec)
    cursor: Any = out
    for step, after in zip(path, path[1:]):
        container = list if isinstance(after, int) else dict
        if isinstance(step, int):
            while len(cursor) <= step:
                cursor.append(container())
            if not isinstance(cursor[step], container):
                cursor[step] = container()
        elif not isinstance(cursor.get(step), container):
            cursor[step] = container()
        cursor = cursor[step]
    last = path[-1]
    if isinstance(last, int):
        while len(cursor) <= last:
            cursor.append(None)
    cursor[last] = value
    return out


def render_path(path: tuple[str | int, ...]) -> str:
    out = "spec"
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step and all(c.isalnum() or c in "_-" for c in step):
            out += f".{step}"
        else:
            out += f"[{json.dumps(step)}]"
    return out


def _types(schema: dict) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return set(declared)
    return {t for option in schema.get("anyOf", []) for t in _types(option)}


def _example(schema: dict) -> Any:
    """A value the schema accepts, for a path that must exist to go deeper."""
    if "default" in schema and schema["default"] is not None:
        return copy.deepcopy(schema["default"])
    if schema.get("enum"):
        return schema["enum"][0]
    types = _types(schema)
    if "object" in types or schema.get("properties"):
        return {}
    if "array" in types:
        return []
    if schema.get("x-kubernetes-int-or-string"):
        return "1Gi"
    for kind in ("string", "integer", "number", "boolean"):
        if kind in types:
            return TYPES[kind] if kind != "string" else "x"
    return {}


def schema_paths(schema: dict, path: tuple = (), depth: int = 0) -> Iterator[tuple[tuple, dict]]:
    """Every path the schema declares, with its schema: properties, a
    generated entry of each map (``additionalProperties``) and the first
    item of each list."""
    if depth > 6:
        return
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict):
            yield (*path, name), sub
            yield from schema_paths(sub, (*path, name), depth + 1)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict) and (extra.get("properties") or _types(extra)):
        yield (*path, "alice"), extra
        yield from schema_paths(extra, (*path, "alice"), depth + 1)
    items = schema.get("items")
    if isinstance(items, dict):
        yield (*path, 0), items
        yield from schema_paths(items, (*path, 0), depth + 1)


def _near_miss(value: Any) -> Any:
    if isinstance(value, str):
        return value.upper() if value.lower() == value and value.upper() != value else value + "x"
    return value


def mutations(path: tuple, schema: dict) -> Iterator[tuple[str, Any]]:
    """``(note, value)`` for the values tried at ``path``."""
    types = _types(schema)
    for kind, value in TYPES.items():
        if kind not in types and not (kind == "integer" and "number" in types):
            yield f"{kind} instead of {'/'.join(sorted(types)) or 'any'}", value
    if schema.get("enum"):
        for value in schema["enum"]:
            yield f"= {json.dumps(value)}", value
        yield "near miss of the enum", _near_miss(schema["enum"][-1])
    elif schema.get("x-kubernetes-int-or-string") or "pattern" in schema:
        for value in QUANTITIES:
            yield f"= {json.dumps(value)}", value
    elif "integer" in types or "number" in types:
        for value in INTEGERS:
            yield f"= {json.dumps(value)}", value
    elif "boolean" in types:
        yield "= true", True
        yield "= false", False
    elif "string" in types:
        for value in STRINGS:
            yield f"= {json.dumps(value)[:40]}", value
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key in MAP_KEYS:
            yield f"entry {json.dumps(key)[:30]}", {key: _example(extra)}
    if "array" in types and isinstance(schema.get("items"), dict):
        yield "one item", [_example(schema["items"])]
        yield "empty list", []


def _null_paths(defaults: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(defaults, dict):
        for key, value in defaults.items():
            if key.startswith("_"):
                continue
            yield (*path, key)
            yield from _null_paths(value, (*path, key))


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


#: Cases nested deeper are the policies' hostile inputs, not objects a
#: chart is meant to render (``check`` reads manifests up to 64 levels).
MAX_DEPTH = 32


def _case_objects(policies: Path) -> Iterator[tuple[str, dict]]:
    """Every application object of the policies' cases, by case."""
    for path in sorted(policies.glob("*/tests/cases/*.yaml")):
        case = yaml.safe_load(path.read_text())
        request = (case or {}).get("request") or {}
        request = request.get("request", request)
        for key in ("object", "oldObject"):
            obj = request.get(key)
            if (
                isinstance(obj, dict)
                and obj.get("apiVersion") == API_VERSION
                and isinstance(obj.get("metadata"), dict)
                and _depth(obj) <= MAX_DEPTH
            ):
                yield f"{path.parent.parent.parent.name}/{path.stem}:{key}", obj


def name_probes(path: tuple, schema: dict) -> Iterator[tuple[str, Any]]:
    """``(note, value)`` of :data:`NAME_PROBES` at ``path``: as the value of
    a free string, as a key of a map."""
    types = _types(schema)
    free = "string" in types and not schema.get("enum") and "pattern" not in schema \
        and not schema.get("x-kubernetes-int-or-string") and not schema.get("format")
    for value in NAME_PROBES if free else ():
        yield f"= {json.dumps(value)[:20]} (len {len(value)}) as a name", value
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key in NAME_PROBES:
            yield f"entry {json.dumps(key)[:20]} (len {len(key)}) as a name", {key: _example(extra)}


def _line(version: str) -> str:
    """``1.6`` of ``v1.6.2``."""
    return ".".join(version.removeprefix("v").split(".")[:2])


def _on_line(version: str, named: str) -> bool:
    """Whether ``version`` is the release ``named`` or of the line it names
    (``v1.5``)."""
    return version == named or (named.count(".") == 1 and _line(version) == named.removeprefix("v"))


def samples(
    release: Release, policies: Path, seed: int, per_kind: int, chart_defaults: dict[str, dict], names: bool = True,
    light: bool = False,
) -> list[Sample]:
    """The samples of every kind of ``release``: all defaults, cases, nulls,
    probes and (with ``names``) name probes, then mutations and pairs drawn
    with ``seed`` until each kind has ``per_kind`` (or runs out of distinct
    ones). ``light`` leaves out the cases and nulls (a patch release in the
    test command's smoke run: the newest release of its line renders them)."""
    rng = random.Random(f"{seed}/{release.version}")
    out: list[Sample] = []
    cases = list(_case_objects(policies))
    site_probes = (yaml.safe_load(SITE_PROBES.read_text()) if SITE_PROBES.is_file() else None) or []
    probes_dir = Path(__file__).resolve().parents[1] / "probes"
    for kind in sorted(release.applications):
        app = release.applications[kind]
        base = _base_spec(kind)
        found: list[tuple[str, str, dict]] = [("defaults", "base", _object(app, base))]
        defaults = chart_defaults.get(app.chart, {})
        full = {k: v for k, v in defaults.items() if not k.startswith("_")}
        found.append(("defaults", "values.yaml as spec", _object(app, {**full, **base})))
        for label, obj in [] if light else cases:
            if obj.get("kind") == kind:
                found.append(("case", label, copy.deepcopy(obj)))
        for path in [] if light else _null_paths(full):
            found.append(("null", f"{render_path(path)} = null", _object(app, _set(base, path, None))))
        probe_file = probes_dir / f"{kind}.yaml"
        if probe_file.is_file():
            for probe in yaml.safe_load(probe_file.read_text()) or []:
                if any(_on_line(release.version, skipped) for skipped in probe.get("skip", [])):
                    continue
                meta = probe.get("metadata") or {}
                spec = {**base, **(probe.get("spec") or {})}
                obj = _object(app, spec, meta.get("name"), meta.get("namespace"))
                if probe.get("installed"):
                    # Carried with the object to the worker, which installs them first.
                    obj = {**obj, "installed": probe["installed"]}
                found.append(("probe", probe["note"], obj))
        for entry in site_probes:
            # A site's probe serves every release of its line: a patch
            # release that kept the site fails there too.
            if _line(entry["release"]) == _line(release.version) and entry["kind"] == kind:
                meta = entry.get("metadata") or {}
                found.append(("site", f"{entry['where']}: {entry['note']}",
                              _object(app, entry["spec"], meta.get("name"), meta.get("namespace"))))
        if names:
            for path, sub in schema_paths(app.schema):
                for note, value in name_probes(path, sub):
                    found.append(("name", f"{render_path(path)} {note}", _object(app, _set(base, path, value))))
        singles = [
            (f"{render_path(path)} {note}", path, value)
            for path, sub in schema_paths(app.schema)
            for note, value in mutations(path, sub)
        ]
        rng.shuffle(singles)
        budget = max(0, per_kind - len(found))
        for note, path, value in singles[: budget * 2 // 3]:
            found.append(("mutation", note, _object(app, _set(base, path, value))))
        for _ in range(max(0, per_kind - len(found))):
            if len(singles) < 2:
                break
            (n1, p1, v1), (n2, p2, v2) = rng.sample(singles, 2)
            found.append(("pair", f"{n1}; {n2}", _object(app, _set(_set(base, p1, v1), p2, v2))))
        seen: set[str] = set()
        for n, (origin, note, obj) in enumerate(found):
            key = json.dumps(obj, sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            installed = tuple(obj.pop("installed", ()))
            out.append(Sample(f"{release.version}/{kind}/{origin}/{n}", release.version, kind, origin, note, obj,
                              installed=installed))
    return out


def on_variants(found: list[Sample], every: int) -> list[Sample]:
    """Every ``every``-th sample of each kind again on each platform
    variant that applies to its kind (the Ingress ones moved where the
    variant puts them)."""
    out: list[Sample] = []
    for variant in VARIANTS.values():
        if variant is DEFAULT:
            continue
        seen: dict[str, int] = {}
        for sample in found:
            if not variant.applies_to(sample.kind):
                continue
            n = seen.get(sample.kind, 0)
            seen[sample.kind] = n + 1
            step = 1 if variant.moves else every
            if n % step:
                continue
            out.append(Sample(f"{sample.id}@{variant.name}", sample.release, sample.kind, sample.origin,
                              f"{sample.note} (on {variant.name}: {variant.about})", variant.place(sample.obj),
                              variant.name, installed=sample.installed))
    return out


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch, as kube-apiserver applies ``kubectl
    patch --type merge``: maps merge, ``null`` deletes, anything else
    replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def updates(found: list[Sample], release: Release, per_kind: int, seed: int) -> list[Sample]:
    """UPDATEs of every kind: its base object created, read back as
    cozystack-api returns it (defaulted), then changed to each of up to
    ``per_kind`` single changes drawn from ``found`` (mutations, nulls and
    probes under the base's name), once as a PUT of the changed body and
    once as a merge PATCH of the stored object with the change's spec."""
    rng = random.Random(f"{seed}/{release.version}/updates")
    out: list[Sample] = []
    by_kind: dict[str, list[Sample]] = {}
    for sample in found:
        if sample.variant == DEFAULT.name and sample.old is None:
            by_kind.setdefault(sample.kind, []).append(sample)
    for kind, group in sorted(by_kind.items()):
        base = next((s for s in group if s.origin == "defaults" and s.note == "base"), None)
        if base is None:
            continue
        meta = base.obj["metadata"]
        changes = [s for s in group if s.origin in ("mutation", "null", "probe", "pair")
                   and s.obj.get("metadata") == meta and isinstance(s.obj.get("spec"), dict)]
        rng.shuffle(changes)
        old = stored(base, release).obj
        for change in changes[:per_kind]:
            out.append(Sample(f"{change.id}/put", release.version, kind, change.origin,
                              f"UPDATE by PUT: {change.note}", change.obj, created=base.obj, old=old))
            patched = merge_patch(old, {"spec": change.obj["spec"]})
            out.append(Sample(f"{change.id}/patch", release.version, kind, change.origin,
                              f"UPDATE by merge PATCH: {change.note}", patched, created=base.obj, old=old))
    return out


def stored(sample: Sample, release: Release) -> Sample:
    """The same object as cozystack-api returns it once stored: every
    schema default filled in (a ``kubectl get`` applied back)."""
    app = release.applications[sample.kind]
    obj = copy.deepcopy(sample.obj)
    obj["spec"] = default_like_cozystack_api(obj.get("spec"), app.schema)
    return Sample(sample.id + "/stored", sample.release, sample.kind, sample.origin, sample.note + " (stored, defaulted)", obj,
                  sample.variant, installed=sample.installed)
