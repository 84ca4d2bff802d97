"""How values travel from an application's ``spec`` to the templates.

- :func:`merge_maps`: helm-controller composes a HelmRelease's values from
  its ``valuesFrom`` sources, then ``spec.values`` on top
  (fluxcd/helm-controller ``internal/chartutil`` ``ChartValuesFromReferences``
  with fluxcd/pkg ``chartutil.MergeMaps``).
- Helm then coalesces them with the chart's defaults: :mod:`.helm`.
- :func:`default_like_cozystack_api`: what cozystack-api fills into an
  object it returns (``pkg/registry/apps/application/rest_defaulting.go``),
  so a stored object read back and applied again carries the defaults.
"""

from __future__ import annotations

import copy
from typing import Any


def merge_maps(base: dict, over: dict | None) -> dict:
    """``over`` merged into a copy of ``base``: maps meet key by key,
    recursively; any other value of ``over`` (``null`` included) replaces
    the one of ``base``."""
    out = copy.deepcopy(base)
    for key, value in (over or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_maps(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _effective_type(schema: dict) -> str:
    declared = schema.get("type")
    if isinstance(declared, str) and declared:
        return declared
    if schema.get("properties") or isinstance(schema.get("additionalProperties"), dict):
        return "object"
    if isinstance(schema.get("items"), dict):
        return "array"
    return ""


def _apply_defaults(value: Any, schema: dict | None, top: bool) -> Any:
    if not isinstance(schema, dict):
        return value
    kind = _effective_type(schema)
    if kind == "object":
        if not isinstance(value, dict):
            default = schema.get("default")
            value = copy.deepcopy(default) if isinstance(default, dict) and not top else {}
        properties = schema.get("properties") or {}
        for name, sub in properties.items():
            if name not in value and isinstance(sub, dict) and "default" in sub and sub["default"] is not None:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                value[name] = _apply_defaults(value[name], sub, False)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for name in list(value):
                if name not in properties:
                    value[name] = _apply_defaults(value[name], extra, False)
        return value
    if kind == "array":
        if not isinstance(value, list):
            default = schema.get("default")
            value = copy.deepcopy(default) if isinstance(default, list) else []
        items = schema.get("items")
        return [_apply_defaults(item, items, False) for item in value]
    if value is None and schema.get("default") is not None:
        return copy.deepcopy(schema["default"])
    return value


def default_like_cozystack_api(spec: Any, schema: dict) -> dict:
    """``spec`` as cozystack-api returns it: every schema default filled in
    (``applySpecDefaults``), map entries included, a ``null`` of a typed
    field replaced by its default."""
    value = copy.deepcopy(spec) if isinstance(spec, dict) else {}
    return _apply_defaults(value, schema, True)
