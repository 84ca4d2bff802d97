"""The shapes of the clusters people run: what a Cozystack management
cluster serves, for each bundle variant and optional package the platform
chart offers, in v1.6.2 and v1.5.4.

Nothing here is a list of kinds typed by hand. A shape is the platform
chart (``core/platform``) rendered with Helm with one of its own values
files (``values-isp-full.yaml``, ``values-isp-hosted.yaml``,
``values-isp-full-generic.yaml``) and the packages an admin switches on or
off (``bundles.enabledPackages``, ``bundles.disabledPackages``); what the
cluster serves then follows from the Packages it renders, each read in its
PackageSource (``sources/*.yaml``, the variant the Package names):

- a component ``system/<name>-rd`` installs the ApplicationDefinition
  ``application-definitions/<name>.yaml``, which cozystack-api serves as a
  namespaced kind of ``apps.cozystack.io/v1alpha1``;
- a component's chart that holds an ``APIService`` registers its group
  with the aggregated API server (cozystack-api: ``apps``, ``core`` and,
  from v1.6, ``sdn.cozystack.io``); of those groups' own kinds the bundle's
  rules name SecurityGroup (``../shared/domain/cozystack.md`` §2.2);
- a component's chart that holds a ``CustomResourceDefinition`` (in
  ``crds/``, ``templates/``, or compressed among a CAPI provider's
  ``files/``) serves its versions marked ``served``;
- the kinds the platform chart itself renders (Package, PackageSource) are
  served, or the chart could not have been applied; and Kubernetes' own
  kinds, which every cluster serves.

A 1.6 cluster upgraded from 1.5 also keeps the CRDs 1.5's charts shipped in
``crds/`` (Helm installs those and never deletes them): the legacy
``etcd.aenix.io`` kinds.
"""

from __future__ import annotations

import functools
import gzip
import re
import tempfile
from pathlib import Path

import yaml

from . import manifests, sdk
from .cluster import _PLATFORM_SOURCE, Cluster
from .release import Release
from .values import merge_maps

#: Kubernetes' own kinds the bundle's rules name: every cluster serves
#: them (group, version, resource, kind, namespaced).
KUBERNETES = [
    ("", "v1", "namespaces", "Namespace", False),
    ("", "v1", "configmaps", "ConfigMap", True),
    ("", "v1", "nodes", "Node", False),
    ("", "v1", "secrets", "Secret", True),
    ("storage.k8s.io", "v1", "storageclasses", "StorageClass", False),
]

#: The kinds cozystack-api serves in its own groups besides the
#: ApplicationDefinitions' (``../shared/domain/cozystack.md`` §2.2).
AGGREGATED = {
    "sdn.cozystack.io": [("securitygroups", "SecurityGroup", True)],
    "core.cozystack.io": [
        ("tenantnamespaces", "TenantNamespace", False),
        ("tenantmodules", "TenantModule", True),
        ("tenantsecrets", "TenantSecret", True),
    ],
}

#: The packages the bundles let an admin switch on
#: (``cozystack.platform.package.optional`` and the bootbox gate).
_OPTIONAL = re.compile(r'optional[a-z.]*" \(list "([a-z0-9.-]+)"')
_GATED = re.compile(r'has "([a-z0-9.-]+)" \(default \(list\) \.Values\.bundles\.enabledPackages\)')


def optional_packages(release: Release) -> list[str]:
    bundles = release.charts / "core" / "platform" / "templates" / "bundles"
    names: set[str] = set()
    for path in sorted(bundles.glob("*.yaml")):
        text = path.read_text()
        names.update(_OPTIONAL.findall(text))
        names.update(_GATED.findall(text))
    return sorted(names)


def _documents(text: str):
    """The YAML documents of a chart file that parse without its template
    lines (a CRD or an APIService is static YAML in every chart here)."""
    for chunk in re.split(r"^---\s*$", text, flags=re.M):
        if "CustomResourceDefinition" not in chunk and "APIService" not in chunk:
            continue
        kept = "\n".join(line for line in chunk.splitlines() if "{{" not in line)
        try:
            for document in yaml.load_all(kept, Loader=_LOADER):
                if isinstance(document, dict):
                    yield document
        except yaml.YAMLError:
            continue


#: libyaml's loader where PyYAML has it: the CRDs run to megabytes.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=None)
def _chart_documents(chart: Path) -> tuple[dict, ...]:
    """The CRDs and APIServices of a chart's files, each with whether it
    sits in a ``crds/`` folder."""
    found = []
    for path in sorted(chart.rglob("*")):
        if path.suffix in (".yaml", ".yml"):
            text = path.read_text(errors="replace")
        elif path.suffix == ".gz" and path.parent.name == "files":
            text = gzip.decompress(path.read_bytes()).decode(errors="replace")
        else:
            continue
        for document in _documents(text):
            found.append({"document": document, "kept": path.parent.name == "crds"})
    return tuple(found)


class _Served:
    """The resources a cluster serves, by group, version and resource, each
    with its kind, scope and what serves it."""

    def __init__(self):
        self.resources: dict[tuple[str, str, str], dict] = {}

    def add(self, group, version, resource, kind, namespaced, source):
        self.resources.setdefault(
            (group, version, resource),
            {"group": group, "version": version, "resource": resource, "kind": kind,
             "namespaced": namespaced, "source": source},
        )


def _components(release: Release, package: str, variant: str) -> list[str]:
    path = release.charts / "core" / "platform" / "sources" / f"{package.removeprefix('cozystack.')}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{release.version}: no PackageSource for the Package {package}")
    for doc in yaml.safe_load_all(path.read_text()):
        if not doc or doc.get("kind") != "PackageSource":
            continue
        for each in doc["spec"].get("variants", []):
            if each["name"] == variant:
                return [c["path"] for c in each.get("components", [])]
    raise KeyError(f"{release.version}: the PackageSource {package} has no variant {variant}")


def _platform(release: Release, values: dict) -> list[dict]:
    """The objects the platform chart renders with ``values``."""
    with tempfile.TemporaryDirectory() as scratch:
        cluster = Cluster(release=release, workdir=Path(scratch))
        cluster.objects.append(_PLATFORM_SOURCE)
        rendered = cluster.render("core/platform", values, "cozystack-platform", "cozy-system")
        return list(manifests.objects(rendered))


def served(release: Release, packages: list[tuple[str, str]], rendered: list[dict]) -> _Served:
    """What a cluster with these Packages (name, variant) serves."""
    out = _Served()
    for group, version, resource, kind, namespaced in KUBERNETES:
        out.add(group, version, resource, kind, namespaced, "kubernetes")
    for obj in rendered:
        group, _, version = obj["apiVersion"].rpartition("/")
        if obj["kind"] in ("Package", "PackageSource"):
            out.add(group, version, obj["kind"].lower() + "s", obj["kind"], False, "core/platform")
    aggregated: set[tuple[str, str]] = set()
    applications: list[tuple[str, str, str]] = []
    for package, variant in packages:
        for component in _components(release, package, variant):
            name = component.removeprefix("system/")
            if component.startswith("system/") and name.endswith("-rd"):
                definition = release.root / "application-definitions" / f"{name.removesuffix('-rd')}.yaml"
                spec = yaml.safe_load(definition.read_text())["spec"]["application"]
                applications.append((spec["plural"], spec["kind"], package))
                continue
            chart = release.charts / component
            if not chart.is_dir():
                continue
            for entry in _chart_documents(chart):
                document = entry["document"]
                if document.get("kind") == "APIService":
                    spec = document.get("spec") or {}
                    aggregated.add((spec.get("group", ""), spec.get("version", "")))
                elif document.get("kind") == "CustomResourceDefinition":
                    spec = document.get("spec") or {}
                    names = spec.get("names") or {}
                    for version in spec.get("versions") or []:
                        if not version.get("served"):
                            continue
                        out.add(spec["group"], version["name"], names["plural"], names["kind"],
                                spec.get("scope") == "Namespaced", package)
    for group, version in sorted(aggregated):
        if group == "apps.cozystack.io":
            for plural, kind, package in applications:
                out.add(group, version, plural, kind, True, package)
        for plural, kind, namespaced in AGGREGATED.get(group, []):
            out.add(group, version, plural, kind, namespaced, "cozystack-api")
    return out


def kept_crds(release: Release, packages: list[tuple[str, str]]) -> list[dict]:
    """The CRDs these Packages' charts ship in a ``crds/`` folder: Helm
    installs them and never deletes them, so they outlive an upgrade that
    drops the chart."""
    kept = []
    for package, variant in packages:
        for component in _components(release, package, variant):
            chart = release.charts / component
            for entry in _chart_documents(chart) if chart.is_dir() else ():
                document = entry["document"]
                if entry["kept"] and document.get("kind") == "CustomResourceDefinition":
                    spec = document["spec"]
                    for version in spec.get("versions") or []:
                        if version.get("served"):
                            kept.append({
                                "group": spec["group"], "version": version["name"],
                                "resource": spec["names"]["plural"], "kind": spec["names"]["kind"],
                                "namespaced": spec.get("scope") == "Namespaced",
                                "source": f"{release.version} {package} (crds/, kept by Helm)",
                            })
    return kept


def shape(release: Release, variant: str, enabled=(), disabled=(), applied=()) -> dict:
    """One shape: the platform of ``release`` with ``values-<variant>.yaml``,
    the optional packages ``enabled``, the packages ``disabled``, and the
    Packages an admin ``applied`` by hand (name, variant)."""
    platform = release.charts / "core" / "platform"
    values = sdk.values_from_yaml((platform / f"values-{variant}.yaml").read_text())
    bundles = values.setdefault("bundles", {})
    values = merge_maps(values, {"bundles": {
        "enabledPackages": list(bundles.get("enabledPackages") or []) + list(enabled),
        "disabledPackages": list(disabled),
    }})
    rendered = _platform(release, values)
    packages = [(o["metadata"]["name"], o["spec"].get("variant", "default"))
                for o in rendered if o.get("kind") == "Package"]
    packages += list(applied)
    found = served(release, packages, rendered)
    return {
        "release": release.version,
        "variant": variant,
        "packages": sorted(name for name, _ in packages),
        "resources": sorted(found.resources.values(),
                            key=lambda r: (r["group"], r["version"], r["resource"])),
        "_packages": packages,
    }


def shapes(data: Path) -> list[dict]:
    """Every shape of the matrix, each named
    ``<release>/<variant>[+<what changed>]``."""
    out = []
    for version in ("v1.6.2", "v1.5.4"):
        release = Release.at(data, version)
        optional = optional_packages(release)
        cases = [
            ("isp-full", {}),
            ("isp-full-generic", {}),
            ("isp-hosted", {}),
            ("isp-full", {"enabled": ["cozystack.bootbox"]}),
            ("isp-full", {"enabled": ["cozystack.external-dns", "cozystack.external-dns-application"]}),
            ("isp-full", {"enabled": optional}),
            ("isp-full", {"disabled": ["cozystack.postgres-application", "cozystack.harbor-application"]}),
        ]
        if (release.charts / "core" / "platform" / "sources" / "kubernetes-nodes-application.yaml").is_file():
            cases.append(("isp-full", {"applied": [("cozystack.kubernetes-nodes-application", "kubevirt")]}))
        for variant, change in cases:
            one = shape(release, variant, **change)
            suffix = ""
            if change.get("enabled") == optional:
                suffix = "+every-optional-package"
            elif change.get("enabled"):
                suffix = "+" + "+".join(n.removeprefix("cozystack.") for n in change["enabled"])
            elif change.get("disabled"):
                suffix = "-" + "-".join(n.removeprefix("cozystack.") for n in change["disabled"])
            elif change.get("applied"):
                suffix = "+" + "+".join(n.removeprefix("cozystack.") for n, _ in change["applied"]) + "-by-hand"
            one["name"] = f"{version}/{variant}{suffix}"
            out.append(one)
    # A 1.6 cluster upgraded from 1.5: what 1.5's charts left behind.
    old = next(s for s in out if s["name"] == "v1.5.4/isp-full")
    new = next(s for s in out if s["name"] == "v1.6.2/isp-full")
    upgraded = dict(new)
    have = {(r["group"], r["version"], r["resource"]) for r in new["resources"]}
    extra = [r for r in kept_crds(Release.at(data, "v1.5.4"), old["_packages"])
             if (r["group"], r["version"], r["resource"]) not in have]
    upgraded["resources"] = sorted(new["resources"] + extra,
                                   key=lambda r: (r["group"], r["version"], r["resource"]))
    upgraded["name"] = "v1.6.2/isp-full-upgraded-from-v1.5.4"
    out.append(upgraded)
    for one in out:
        one.pop("_packages", None)
    return out
