#!/usr/bin/env python3
"""Writes a tree of OBJECTS manifests into OUT_DIR for timing `check` (bench/check-cold.sh).

The objects are the ones examples/after holds and the `request.object` of every policy
case, repeated under numbered names until there are OBJECTS of them, 100 per file, so
every policy's rules match a share of the tree as they would in a GitOps repository.
"""
import copy
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
PER_FILE = 100


def depth(value):
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def is_object(doc):
    """A manifest a repository would hold: the cases that test limits (deep
    nesting, huge lists) are left out, as a YAML reader rightly refuses them."""
    return (isinstance(doc, dict) and depth(doc) <= 20 and len(repr(doc)) <= 20_000 and isinstance(doc.get("metadata"), dict)
            and doc.get("kind") and doc.get("apiVersion") and doc["metadata"].get("name"))


def templates():
    found = []
    for path in sorted((ROOT / "examples/after").glob("*.yaml")):
        found += [d for d in yaml.safe_load_all(path.read_text()) if is_object(d)]
    for path in sorted(ROOT.glob("policies/*/tests/cases/*.yaml")):
        case = yaml.safe_load(path.read_text())
        request = case.get("request") if isinstance(case, dict) else None
        obj = request.get("object") if isinstance(request, dict) else None
        if is_object(obj) and not obj["kind"].endswith("List"):
            found.append(obj)
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench/check-tree.py OBJECTS OUT_DIR")
    count, out = int(sys.argv[1]), pathlib.Path(sys.argv[2])
    base = templates()
    out.mkdir(parents=True, exist_ok=True)
    objects = []
    for i in range(count):
        obj = copy.deepcopy(base[i % len(base)])
        meta = obj["metadata"]
        for volatile in ("uid", "resourceVersion", "creationTimestamp", "generation"):
            meta.pop(volatile, None)
        meta["name"] = f'{meta["name"]}-{i}'
        objects.append(obj)
    for start in range(0, count, PER_FILE):
        chunk = objects[start:start + PER_FILE]
        (out / f"objects-{start // PER_FILE:04}.yaml").write_text(yaml.safe_dump_all(chunk))
    print(f"{count} objects from {len(base)} templates in {out}")


main()
