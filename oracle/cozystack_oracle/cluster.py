"""The cluster an application is rendered in: the platform's values for each
tenant namespace, and the objects a template's ``lookup`` finds.

Nothing here is hand-written platform state. Every value comes from
rendering the platform's own charts of v1.6.2, as the platform renders them
(``../shared/domain/cozystack.md`` §10):

- ``cozy-system/cozystack-values`` (``_cluster``) by ``core/platform``
  (``templates/apps.yaml``) with the default variant's values,
  ``values-isp-full.yaml``;
- ``tenant-root/cozystack-values`` by ``system/cozystack-basics``;
- a sub-tenant's ``cozystack-values`` (``_namespace``) by ``apps/tenant``,
  rendered for that Tenant in its parent's namespace;
- the instance types and preferences a lookup finds, by
  ``system/kubevirt-instancetypes``, which every platform variant installs.

The platform's own values are ``values-isp-full.yaml`` with a
:class:`.variants.Variant`'s changes over them.

A lookup of anything else finds nothing, as on a first install.
"""

from __future__ import annotations

import copy
import json
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from . import sdk

from . import manifests
from .chart import PreparedChart
from .release import Release
from .helm import CoalesceError, install_values, reproducible
from .values import merge_maps
from .variants import DEFAULT, Variant

#: The Flux source ``core/platform``'s ``repository.yaml`` looks up and
#: copies; its spec is not read by any application.
_PLATFORM_SOURCE = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "OCIRepository",
    "metadata": {"name": "cozystack-platform", "namespace": "cozy-system"},
    "spec": {"interval": "5m", "url": "oci://ghcr.io/cozystack/cozystack/cozystack-packages"},
}


#: Renders a cluster keeps (:meth:`Cluster.render`): every Kubernetes sample
#: renders the same CRD releases, megabytes each, with the same values.
RENDERS_KEPT = 32


class NotReproducible(RuntimeError):
    """The SDK would hand the templates other values than Helm v4.1.1."""


def _namespace(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "uid": f"00000000-0000-4000-8000-{zlib.crc32(name.encode()):012d}"},
    }


@dataclass
class Cluster:
    """A management cluster running one platform release, with tenants."""

    release: Release
    workdir: Path
    #: Tenant namespace -> the values of its ``cozystack-values`` Secret.
    tenant_values: dict[str, dict] = field(default_factory=dict)
    #: Every object a lookup can find.
    objects: list[dict] = field(default_factory=list)
    _charts: dict[str, PreparedChart] = field(default_factory=dict)
    #: The last renders by their inputs: what they rendered, or raised.
    _renders: OrderedDict = field(default_factory=OrderedDict)

    @classmethod
    def boot(
        cls, platform: Release, workdir: Path, tenants: tuple[str, ...] = ("foo",), variant: Variant = DEFAULT
    ) -> "Cluster":
        """The platform of ``platform`` (a release with its own charts) as
        ``variant`` configures it, with ``tenant-root`` and one sub-tenant
        per name in ``tenants``."""
        if not platform.has_platform:
            raise ValueError(f"{platform.version} carries no platform charts to boot from")
        cluster = cls(release=platform, workdir=workdir)
        cluster.objects.append(_PLATFORM_SOURCE)
        cluster.objects.extend(cluster._instance_types())
        root_cluster = cluster._cluster_values(variant.platform)
        cluster.objects.append(_namespace("tenant-root"))
        cluster.tenant_values["tenant-root"] = cluster._basics(root_cluster)
        for tenant in tenants:
            cluster.add_tenant(tenant, "tenant-root", {})
        return cluster

    def chart(self, chart: str) -> PreparedChart:
        """The prepared copy of ``chart`` (a folder under ``charts/``)."""
        if chart not in self._charts:
            self._charts[chart] = PreparedChart.make(self.release.chart_dir(chart), self.workdir / chart)
        return self._charts[chart]

    def index(self, namespace: str, existing: list[dict] = ()) -> dict:
        """The objects as the lookup template reads them: ``gets`` by
        ``apiVersion|kind|namespace|name``, ``lists`` by
        ``apiVersion|kind|namespace|`` (and ``…||`` for every namespace).
        ``namespace`` is the release's, whose Namespace always exists;
        ``existing`` what earlier installs left besides the platform."""
        gets: dict[str, dict] = {}
        lists: dict[str, list] = {}
        objects = list(self.objects) + list(existing)
        if not any(o["kind"] == "Namespace" and o["metadata"]["name"] == namespace for o in objects):
            objects.append(_namespace(namespace))
        for obj in objects:
            api, kind = obj["apiVersion"], obj["kind"]
            ns = obj["metadata"].get("namespace", "")
            name = obj["metadata"]["name"]
            gets[f"{api}|{kind}|{ns}|{name}"] = obj
            lists.setdefault(f"{api}|{kind}|{ns}|", []).append(obj)
            if ns:
                lists.setdefault(f"{api}|{kind}||", []).append(obj)
        return {"gets": gets, "lists": lists}

    def render(
        self, chart: str, values: dict, name: str, namespace: str, existing: list[dict] = (), upgrade: bool = False
    ) -> dict[str, str]:
        """``chart`` rendered with user ``values`` as release ``name`` in
        ``namespace``: coalesced as Helm v4.1.1 does, then validated and
        rendered by the SDK, as an install or as an ``upgrade`` (revision 2)
        of a release whose lookups also find ``existing``. Raises the SDK's
        errors."""
        prepared = self.chart(chart)
        # A lookup's answers are inputs too, for a chart that looks up.
        db = json.dumps(self.index(namespace, existing), sort_keys=True) if prepared.lookups else "{}"
        # Values come from JSON and Go's YAML reader: their keys are strings.
        key = (chart, name, namespace, upgrade, db, json.dumps(values, sort_keys=True))
        if key not in self._renders:
            try:
                self._renders[key] = self._render(chart, values, name, namespace, db, upgrade)
            except (sdk.HelmError, NotReproducible, CoalesceError) as error:
                self._renders[key] = error
            if len(self._renders) > RENDERS_KEPT:
                self._renders.popitem(last=False)
        self._renders.move_to_end(key)
        kept = self._renders[key]
        if isinstance(kept, Exception):
            raise kept
        return kept

    def _render(self, chart: str, values: dict, name: str, namespace: str, db: str, upgrade: bool) -> dict[str, str]:
        prepared = self.chart(chart)
        tree = prepared.fresh_tree()
        coalesced = install_values(tree, values)
        if not reproducible(tree, coalesced):
            raise NotReproducible(f"{chart}: the SDK would change these values (a global block)")
        loaded = prepared.load(db, tree)
        try:
            if upgrade:
                return sdk.render(loaded, coalesced, name=name, namespace=namespace, upgrade=True, revision=2)
            return sdk.render(loaded, coalesced, name=name, namespace=namespace)
        finally:
            loaded.close()

    def add_tenant(self, name: str, parent: str, spec: dict) -> str:
        """Renders the Tenant ``name`` in ``parent`` and records the
        namespace and values it creates; returns the namespace."""
        values = merge_maps(self.tenant_values[parent], spec)
        rendered = self.render("apps/tenant", values, f"tenant-{name}", parent)
        created = None
        for obj in manifests.objects(rendered):
            if obj.get("kind") == "Secret" and obj["metadata"].get("name") == "cozystack-values":
                created = obj["metadata"]["namespace"]
                self.tenant_values[created] = sdk.values_from_yaml(obj["stringData"]["values.yaml"])
        if created is None:
            raise RuntimeError(f"the tenant chart rendered no cozystack-values for {name}")
        self.objects.append(_namespace(created))
        return created

    def values_for(self, namespace: str) -> dict:
        """The ``cozystack-values`` of ``namespace``; an application outside
        a tenant namespace has none (only tenant namespaces carry the
        Secret, and the HelmRelease's ``valuesFrom`` then fails)."""
        if namespace not in self.tenant_values:
            raise KeyError(namespace)
        return copy.deepcopy(self.tenant_values[namespace])

    def _instance_types(self) -> list[dict]:
        rendered = self.render("system/kubevirt-instancetypes", {}, "kubevirt-instancetypes", "cozy-kubevirt")
        return [o for o in manifests.objects(rendered) if o.get("kind", "").startswith("VirtualMachineCluster")]

    def _cluster_values(self, overrides: dict) -> dict:
        platform = self.release.charts / "core" / "platform"
        bundle = sdk.values_from_yaml((platform / "values-isp-full.yaml").read_text())
        rendered = self.render("core/platform", merge_maps(bundle, overrides), "cozystack-platform", "cozy-system")
        for obj in manifests.objects(rendered):
            if obj.get("kind") == "Secret" and obj["metadata"].get("name") == "cozystack-values":
                return sdk.values_from_yaml(obj["stringData"]["values.yaml"])["_cluster"]
        raise RuntimeError("core/platform rendered no cozy-system/cozystack-values")

    def _basics(self, cluster_values: dict) -> dict:
        rendered = self.render(
            "system/cozystack-basics", {"_cluster": cluster_values}, "cozystack-basics", "cozy-system"
        )
        for obj in manifests.objects(rendered):
            if obj.get("kind") == "Secret" and obj["metadata"].get("name") == "cozystack-values":
                return sdk.values_from_yaml(obj["stringData"]["values.yaml"])
        raise RuntimeError("cozystack-basics rendered no tenant-root/cozystack-values")
