"""An application object, taken through every step between ``kubectl
apply`` and a running release (``../shared/domain/cozystack.md`` §10), to
the first step that refuses it.

1. cozystack-api's own checks (``pkg/registry/apps/application/rest.go``,
   ``pkg/apis/apps/validation/validation.go``);
2. the HelmRelease's values: the namespace's ``cozystack-values`` with the
   ``spec`` merged on top (:func:`.values.merge_maps`);
3. Helm v4.1.1's coalescing, the chart's schema and its templates;
4. every rendered document parsed, every object's name and labels as
   kube-apiserver validates them when Flux applies them;
5. every HelmRelease the chart renders, through 3–5 in turn;
6. on UPDATE, the stored object installed first, the new one rendered as
   an upgrade whose lookups read what the install left, and every object
   both render compared as kube-apiserver compares an update.

The answer is an :class:`Outcome`: the first refusal, or that it renders.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

from . import sdk

from . import controllers, manifests
from .cluster import Cluster, NotReproducible
from .helm import CoalesceError
from .release import Release
from .values import merge_maps

_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_TENANT_NAME = re.compile(r"[a-z][a-z0-9]*")
_LOCATION = re.compile(r"([\w.-]+(?:/[\w.-]+)*\.(?:yaml|yml|tpl|txt)):(\d+)")
#: How deep nested HelmReleases are followed.
_NESTING = 3


@dataclass(frozen=True)
class Outcome:
    """What the platform does with one object."""

    #: ``rendered``, or the step that refused it: ``cozystack-api``,
    #: ``values-from``, ``schema``, ``template``, ``manifest``, ``apply``,
    #: ``update`` (kube-apiserver refuses to change an object the release
    #: had), ``resources``; or the oracle's own error (:data:`ORACLE_ERRORS`).
    stage: str
    #: Where: ``chart/templates/file.yaml:line`` for a template, the
    #: template of a refused manifest, empty otherwise.
    location: str = ""
    message: str = ""
    #: The chain of nested HelmReleases the refusal happened in
    #: (``openbao-x-system``), empty for the application's own chart.
    nested: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.stage == "rendered"

    @property
    def oracle_error(self) -> bool:
        """The oracle could not follow the platform here (a nested release
        it cannot resolve, values the SDK would not render as given): no
        verdict, and a failure of the run."""
        return self.stage in ORACLE_ERRORS

    def within(self, release: str) -> "Outcome":
        return Outcome(self.stage, self.location, self.message, (release, *self.nested))

    @classmethod
    def from_json(cls, value: dict) -> "Outcome":
        return cls(value["stage"], value["location"], value["message"], tuple(value["nested"]))

    def to_json(self) -> dict:
        return {"stage": self.stage, "location": self.location, "message": self.message, "nested": list(self.nested)}


RENDERED = Outcome("rendered")
#: Stages that are the oracle's failures, not the platform's.
ORACLE_ERRORS = frozenset({"unresolved", "not-reproducible"})


def _string_map(value: Any) -> bool:
    return value is None or (isinstance(value, dict) and all(isinstance(v, str) for v in value.values()))


def api_checks(kind: str, meta: dict, prefix: str, spec: Any) -> Outcome | None:
    """What cozystack-api refuses before any webhook runs: the request body
    must decode into an Application (``metav1.ObjectMeta``: labels and
    annotations are maps of strings), then ``Create``'s own checks."""
    for member in ("labels", "annotations"):
        if not _string_map(meta.get(member)):
            return Outcome("cozystack-api", message=f"metadata.{member}: must be a map of strings")
    name, namespace = meta.get("name", ""), meta.get("namespace", "")
    if not isinstance(name, str) or not isinstance(namespace, str):
        return Outcome("cozystack-api", message="metadata.name and metadata.namespace must be strings")
    if kind == "Tenant" and not _TENANT_NAME.fullmatch(name):
        return Outcome("cozystack-api", message="metadata.name: tenant names must start with a lowercase letter and contain only lowercase letters and digits; dashes are not allowed")
    if len(name) > 63 or not _DNS1035.fullmatch(name):
        return Outcome("cozystack-api", message=f"metadata.name: {name!r} is not a DNS-1035 label")
    if len(name) > 53 - len(prefix):
        return Outcome("cozystack-api", message=f"metadata.name: must be no more than {53 - len(prefix)} characters (release prefix {prefix!r})")
    if kind == "Tenant":
        computed = "tenant-root" if namespace == "tenant-root" and name == "root" else (
            f"tenant-{name}" if namespace == "tenant-root" else f"{namespace}-{name}")
        if len(computed) > 63:
            return Outcome("cozystack-api", message=f"metadata.name: computed tenant namespace {computed!r} exceeds 63 characters")
    if spec is not None and not isinstance(spec, dict):
        return Outcome("cozystack-api", message="spec: must be an object")
    for key in spec or {}:
        if key.startswith("_"):
            return Outcome("cozystack-api", message=f"spec.{key}: keys starting with '_' are reserved")
    return None


def _helm_failure(error: sdk.HelmError) -> Outcome:
    text = str(error)
    if isinstance(error, sdk.ValuesError):
        return Outcome("schema", message=text)
    found = _LOCATION.search(text)
    location = f"{found.group(1)}:{found.group(2)}" if found else ""
    if "out of memory" in text:
        return Outcome("resources", location, text)
    return Outcome("template", location, text)


@dataclass
class Installed:
    """What an install left in the cluster: every object the application's
    release and its nested releases applied (each with its template, its
    namespace and Helm's ownership annotations), and what controllers
    wrote for them."""

    objects: list[tuple[str, dict]] = field(default_factory=list)

    def cluster_objects(self) -> list[dict]:
        found = [obj for _, obj in self.objects]
        return found + list(controllers.after_apply(found))


@dataclass
class _Run:
    """One install or upgrade of an application, through its nested
    releases: the objects a ``lookup`` finds besides the platform's, and
    what this run renders into this cluster (not what a release with a
    ``kubeConfig`` installs into a tenant's own Kubernetes)."""

    upgrade: bool = False
    existing: list[dict] = field(default_factory=list)
    rendered: Installed = field(default_factory=Installed)
    remote: bool = False


@dataclass
class Renderer:
    """Renders application objects on ``cluster``: a platform of one
    release, with its tenants, whose own charts render them."""

    cluster: Cluster

    @property
    def apps(self) -> Release:
        return self.cluster.release

    def application(self, obj: dict, installed: Installed | None = None) -> Outcome:
        """The outcome of a CREATE of ``obj`` as sent, in a cluster that
        also holds what ``installed`` left (other applications)."""
        return self.install(obj, installed)[0]

    def install(self, obj: dict, installed: Installed | None = None) -> tuple[Outcome, Installed]:
        """A CREATE of ``obj``, and what it left in the cluster."""
        run = _Run(existing=installed.cluster_objects() if installed else [])
        return self._application(obj, run), run.rendered

    def update(self, old: dict, new: dict, installed: Installed | None = None) -> Outcome:
        """An UPDATE from the stored ``old`` to ``new``: ``old`` installed,
        then ``new`` rendered as a Helm upgrade whose lookups read what the
        install left, then every object both render compared as
        kube-apiserver compares an update (:func:`.manifests.update_problems`).
        ``old`` that does not install is no base: ``Outcome('unresolved')``."""
        before, state = self.install(old, installed)
        if not before.ok:
            return Outcome("unresolved", message=f"the stored object does not install ({before.stage}: {before.message[:200]})")
        existing = state.cluster_objects() + (installed.cluster_objects() if installed else [])
        run = _Run(upgrade=True, existing=existing)
        outcome = self._application(new, run)
        if not outcome.ok:
            return outcome
        for refusal in manifests.update_problems(state.objects, run.rendered.objects):
            return Outcome("update", refusal.template, refusal.message)
        return RENDERED

    def _application(self, obj: dict, run: _Run) -> Outcome:
        kind = obj.get("kind", "")
        meta = obj.get("metadata") or {}
        name, namespace = meta.get("name", ""), meta.get("namespace", "")
        app = self.apps.applications.get(kind)
        if app is None:
            return Outcome("cozystack-api", message=f"{kind} is not an application kind of {self.apps.version}")
        spec = obj.get("spec")
        refused = api_checks(kind, meta, app.prefix, spec)
        if refused:
            return refused
        try:
            base = self.cluster.values_for(namespace)
        except KeyError:
            return Outcome("values-from", message=f"Secret {namespace}/cozystack-values not found: {namespace} is not a tenant namespace")
        values = merge_maps(base, spec)
        return self._release(app.chart, values, app.prefix + name, namespace, 0, run)

    def _release(self, chart: str, values: dict, release: str, namespace: str, depth: int, run: _Run) -> Outcome:
        try:
            rendered = self.cluster.render(chart, values, release, namespace, run.existing, run.upgrade)
        except sdk.HelmError as error:
            return _helm_failure(error)
        except CoalesceError as error:
            return Outcome("schema", message=f"chart dependencies processing failed: {error}")
        except NotReproducible as error:
            return Outcome("not-reproducible", message=str(error))
        nested, parsed = [], []
        for manifest in manifests.documents(rendered):
            try:
                obj = manifests.parse(manifest)
            except sdk.HelmError as error:
                return Outcome("manifest", manifest.template, f"YAML parse error: {error}")
            if obj is None:
                continue
            parsed.append(obj)
            for refusal in manifests.apply_problems(manifest, obj):
                return Outcome("apply", refusal.template, refusal.message)
            if not run.remote and obj.get("kind") != "CustomResourceDefinition":
                # CRDs are the platform's to install and no lookup reads them.
                run.rendered.objects.append((manifest.template, manifests.applied(obj, release, namespace)))
            if obj.get("kind") == "HelmRelease" and str(obj.get("apiVersion", "")).startswith("helm.toolkit.fluxcd.io/"):
                nested.append(obj)
        if depth >= _NESTING:
            return RENDERED
        for hr in nested:
            outcome = self._nested(hr, parsed, namespace, depth, run)
            if not outcome.ok:
                return outcome
        return RENDERED

    def _nested(self, hr: dict, parent: list[dict], namespace: str, depth: int, run: _Run) -> Outcome:
        """A HelmRelease a chart rendered, as helm-controller installs it.
        Its chart must be an ExternalArtifact the platform serves; its
        ``valuesFrom`` come from the tenant's ``cozystack-values``, from
        what the parent rendered, or from what a controller writes
        (:mod:`.controllers`). A chart or source found nowhere is the
        oracle's error (``unresolved``), never a render."""
        spec = hr.get("spec") or {}
        name = hr["metadata"]["name"]
        ns = hr["metadata"].get("namespace") or namespace
        ref = spec.get("chartRef") or {}
        chart = self.cluster.release.artifacts.get(ref.get("name", "")) if ref.get("kind") == "ExternalArtifact" else None
        if chart is None:
            return Outcome("unresolved", message=f"HelmRelease {ns}/{name}: chartRef {ref.get('kind')} {ref.get('name')!r} is no chart the platform serves").within(name)
        values: dict = {}
        # What the parent rendered, what the releases above it applied (a
        # Tenant's own cozystack-values, read by the releases of the
        # releases it renders), what controllers wrote, what was there.
        applied = [obj for _, obj in run.rendered.objects]
        rendered_objects = parent + applied
        rendered_objects += controllers.written(rendered_objects, namespace)
        rendered_objects += run.existing
        for source in spec.get("valuesFrom") or []:
            found = self._values_source(source, ns, rendered_objects)
            if found is None:
                if source.get("optional"):
                    continue
                return Outcome("unresolved", message=f"HelmRelease {ns}/{name}: valuesFrom {source.get('kind')} {source.get('name')!r} is neither rendered nor modelled").within(name)
            values = merge_maps(values, found)
        values = merge_maps(values, spec.get("values") or {})
        target = spec.get("targetNamespace") or ns
        release = spec.get("releaseName") or (f"{spec['targetNamespace']}-{name}" if spec.get("targetNamespace") else name)
        remote = run.remote or bool(spec.get("kubeConfig"))
        inner = _Run(run.upgrade, run.existing, run.rendered, remote)
        outcome = self._release(chart, values, release, target, depth + 1, inner)
        return outcome if outcome.ok else outcome.within(name)

    def _values_source(self, source: dict, namespace: str, rendered: list[dict]) -> dict | None:
        """One ``valuesFrom`` entry's values, as helm-controller reads it
        (``valuesKey``, default ``values.yaml``; with ``targetPath`` the raw
        text goes to that path); ``None`` when no such object exists."""
        kind, name = source.get("kind"), source.get("name")
        key = source.get("valuesKey") or "values.yaml"
        text = None
        if kind == "Secret" and name == "cozystack-values" and namespace in self.cluster.tenant_values:
            text = json.dumps(self.cluster.values_for(namespace))
        for obj in rendered if text is None else ():
            if obj.get("kind") == kind and obj["metadata"].get("name") == name \
                    and obj["metadata"].get("namespace", namespace) in (namespace, ""):
                text = (obj.get("stringData") or {}).get(key)
                raw = (obj.get("data") or {}).get(key)
                if text is None and raw is not None:
                    text = raw if kind == "ConfigMap" else base64.b64decode(raw).decode()
                break
        if text is None:
            return None
        path = source.get("targetPath")
        if not path:
            return sdk.values_from_yaml(text)
        out: dict = {}
        cursor = out
        *parents, last = path.split(".")
        for part in parents:
            cursor = cursor.setdefault(part, {})
        cursor[last] = text
        return out
