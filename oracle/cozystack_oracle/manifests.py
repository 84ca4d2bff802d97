"""What Helm and the API server do with rendered templates after the render.

Helm splits each template's output into documents and parses each one
(``releaseutil.SplitManifests``, ``SortManifests``); a document that is not
YAML fails the install. Flux then applies the objects, and kube-apiserver
refuses an object whose name or labels are invalid
(``k8s.io/apimachinery/pkg/api/validation`` ``ValidateObjectMeta``), which
fails the HelmRelease although the render succeeded.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from . import sdk

#: Go's ``\s`` (RE2: ASCII only), which Helm's separator below uses.
_GO_SPACE = " \t\n\f\r"

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
#: Kinds whose names are path segments rather than DNS names
#: (``k8s.io/kubernetes/pkg/apis/rbac/validation``).
_RBAC_KINDS = frozenset({"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"})
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


@dataclass(frozen=True)
class Manifest:
    """One document of one template."""

    template: str
    text: str


@dataclass(frozen=True)
class Refusal:
    """Why the install or the apply of a rendered object fails."""

    template: str
    message: str


def split(text: str) -> list[str]:
    """``text`` split as Helm's ``sep`` splits it
    (``regexp.MustCompile("(?:^|\\s*\n)---\\s*")``,
    pkg/release/v1/util/manifest.go): at each ``---`` that starts the text
    or follows a newline, the whitespace before that newline and after
    the dashes going with the separator. Scanning for the dashes first
    gives the regular expression's leftmost matches without trying it at
    every character: a chart's CRDs are megabytes of indented text."""
    parts, start, pos = [], 0, 0
    while (dashes := text.find("---", pos)) >= 0:
        if dashes == 0:
            begin = 0
        elif dashes - 1 >= start and text[dashes - 1] == "\n":
            begin = dashes - 1
            while begin > start and text[begin - 1] in _GO_SPACE:
                begin -= 1
        else:
            pos = dashes + 1
            continue
        end = dashes + 3
        while end < len(text) and text[end] in _GO_SPACE:
            end += 1
        parts.append(text[start:begin])
        start = pos = end
    parts.append(text[start:])
    return parts


def documents(rendered: dict[str, str]) -> Iterator[Manifest]:
    """Every non-empty document Helm installs, in template order
    (``NOTES.txt`` is shown, not installed)."""
    for template in sorted(rendered):
        if template.endswith("NOTES.txt"):
            continue
        for text in split(rendered[template]):
            if text.strip():
                yield Manifest(template, text)


def parse(manifest: Manifest) -> dict | None:
    """The object of a document, read as Helm reads it (Go's YAML); ``None``
    for a document of comments only. The same text gives the same object,
    which its readers share and never change (:func:`applied` copies)."""
    return _parse(manifest.text)


@lru_cache(maxsize=2048)
def _parse(text: str) -> dict | None:
    return sdk.values_from_yaml(text) or None


def objects(rendered: dict[str, str]) -> Iterator[dict]:
    """Every object of a render whose documents all parse."""
    for manifest in documents(rendered):
        obj = parse(manifest)
        if obj is not None:
            yield obj


def _name_problem(kind: str, name: object) -> str | None:
    if not isinstance(name, str) or not name:
        return "metadata.name: Required value: name or generateName is required"
    if kind in _RBAC_KINDS:
        # ValidateRBACName: any path segment (apimachinery path.IsValidPathSegmentName).
        if name in (".", "..") or "/" in name or "%" in name:
            return f"metadata.name: Invalid value: {name!r}: may not be '.', '..' or contain '/' or '%'"
        return None
    if kind == "Service":
        pattern, limit, what = _DNS1035_LABEL, 63, "a DNS-1035 label"
    elif kind == "Namespace":
        pattern, limit, what = _DNS1123_LABEL, 63, "a DNS-1123 label"
    else:
        pattern, limit, what = _DNS1123_SUBDOMAIN, 253, "a lowercase RFC 1123 subdomain"
    if len(name) > limit:
        return f"metadata.name: Invalid value: {name!r}: must be no more than {limit} characters"
    if not pattern.fullmatch(name):
        return f"metadata.name: Invalid value: {name!r}: must be {what}"
    return None


def _label_problem(key: object, value: object) -> str | None:
    if not isinstance(key, str):
        return f"metadata.labels: Invalid value: {key!r}: a label key must be a string"
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix)):
        return f"metadata.labels: Invalid value: {key!r}: prefix part must be a DNS-1123 subdomain"
    if len(name) > 63 or not _QUALIFIED_NAME.fullmatch(name):
        return f"metadata.labels: Invalid value: {key!r}: name part must be a qualified name of at most 63 characters"
    text = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    if len(text) > 63:
        return f"metadata.labels: Invalid value: {text!r}: must be no more than 63 characters"
    if not _LABEL_VALUE.fullmatch(text):
        return f"metadata.labels: Invalid value: {text!r}: a valid label value must be an empty string or consist of alphanumerics, '-', '_' or '.'"
    return None


#: etcd's default ``--max-request-bytes``: kube-apiserver cannot store a
#: larger object ("etcdserver: request is too large").
ETCD_REQUEST_BYTES = 1536 * 1024


def apply_problems(manifest: Manifest, obj: dict) -> Iterator[Refusal]:
    """What kube-apiserver refuses in ``obj`` when Flux applies it."""
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    if not isinstance(kind, str) or not kind or not obj.get("apiVersion"):
        yield Refusal(manifest.template, "object has no apiVersion or kind")
        return
    if not isinstance(metadata, dict):
        yield Refusal(manifest.template, f"{kind}: metadata: Required value")
        return
    size = len(json.dumps(obj, separators=(",", ":"), default=str))
    if size > ETCD_REQUEST_BYTES:
        yield Refusal(
            manifest.template,
            f"{kind} {metadata.get('name')!r}: etcdserver: request is too large ({size} bytes, etcd stores at most {ETCD_REQUEST_BYTES})",
        )
    problem = _name_problem(kind, metadata.get("name"))
    if problem:
        yield Refusal(manifest.template, f"{kind} {metadata.get('name')!r}: {problem}")
    labels = metadata.get("labels") or {}
    if isinstance(labels, dict):
        for key, value in labels.items():
            problem = _label_problem(key, value)
            if problem:
                yield Refusal(manifest.template, f"{kind} {metadata.get('name')!r}: {problem}")


#: Kinds the API server keeps outside namespaces, among those the charts
#: render (a lookup of one names no namespace).
CLUSTER_SCOPED = frozenset({
    "APIService", "ClusterIssuer", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
    "IngressClass", "MutatingWebhookConfiguration", "Namespace", "PersistentVolume", "PriorityClass",
    "StorageClass", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration", "VirtualMachineClusterInstancetype", "VirtualMachineClusterPreference",
    "VolumeSnapshotClass", "ClusterSecret", "ClusterPolicy", "Tenant", "BucketClass", "BucketAccessClass",
})

#: Helm's hook annotation: a hook is created anew on each install or
#: upgrade (its default delete policy removes the old one first), never
#: updated in place.
HOOK = "helm.sh/hook"


def applied(obj: dict, release: str, namespace: str) -> dict:
    """``obj`` as the cluster holds it once Helm applied it for
    ``release`` in ``namespace``: in that namespace unless it names one or
    is cluster-scoped, with Helm's ownership annotations, and a Secret's
    ``stringData`` stored as ``data`` (what a ``lookup`` reads back)."""
    out = json.loads(json.dumps(obj, default=str))
    if out.get("kind") == "Secret" and isinstance(out.get("stringData"), dict):
        data = out.get("data") if isinstance(out.get("data"), dict) else {}
        for key, value in out.pop("stringData").items():
            text = value if isinstance(value, str) else json.dumps(value)
            data[key] = base64.b64encode(text.encode()).decode()
        out["data"] = data
    meta = out.setdefault("metadata", {})
    if out.get("kind") not in CLUSTER_SCOPED:
        meta.setdefault("namespace", namespace)
        if not meta.get("namespace"):
            meta["namespace"] = namespace
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    meta["annotations"] = {**annotations, "meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace}
    return out


def _identity(obj: dict) -> tuple[str, str, str, str]:
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    meta = obj.get("metadata") or {}
    return group, str(obj.get("kind")), str(meta.get("namespace", "")), str(meta.get("name"))


def _without(spec: dict, keys: tuple[str, ...]) -> dict:
    return {k: v for k, v in (spec or {}).items() if k not in keys}


#: What kube-apiserver lets an update change (``k8s.io/kubernetes/pkg/apis/
#: <group>/validation``, ``ValidateXUpdate``); any other change of these
#: fields is refused, and the Helm upgrade with it.
_STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy",
                        "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


def _update_problem(kind: str, old: dict, new: dict) -> str | None:
    before, after = old.get("spec") or {}, new.get("spec") or {}
    if kind == "StatefulSet" and _without(before, _STATEFULSET_MUTABLE) != _without(after, _STATEFULSET_MUTABLE):
        changed = sorted(k for k in set(before) | set(after)
                         if k not in _STATEFULSET_MUTABLE and before.get(k) != after.get(k))
        return ("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                f"forbidden (changed: {', '.join(changed)})")
    if kind in ("Deployment", "DaemonSet", "ReplicaSet", "Job") and before.get("selector") != after.get("selector") \
            and before.get("selector") is not None:
        return "spec.selector: Invalid value: field is immutable"
    if kind == "PersistentVolumeClaim":
        for key in ("storageClassName", "accessModes", "volumeMode", "volumeName", "selector", "dataSource"):
            if key in before and before.get(key) != after.get(key):
                return f"spec: Forbidden: spec is immutable after creation except resources.requests (changed: {key})"
    if kind == "Service" and before.get("clusterIP") and before.get("clusterIP") != after.get("clusterIP"):
        return "spec.clusterIP: Invalid value: field is immutable"
    if kind in ("Secret", "ConfigMap") and old.get("immutable") is True and (
            old.get("data") != new.get("data") or old.get("stringData") != new.get("stringData")):
        return "data: Forbidden: field is immutable when `immutable` is set"
    return None


def update_problems(old: list[tuple[str, dict]], new: list[tuple[str, dict]]) -> Iterator[Refusal]:
    """What kube-apiserver refuses when an upgrade applies ``new`` over
    ``old`` (each ``(template, object)``): an object both render whose
    change touches a field the API keeps immutable. Hooks are recreated,
    not updated."""
    before = {_identity(obj): obj for _, obj in old if HOOK not in (obj.get("metadata") or {}).get("annotations", {})}
    for template, obj in new:
        if HOOK in (obj.get("metadata") or {}).get("annotations", {}):
            continue
        previous = before.get(_identity(obj))
        if previous is None:
            continue
        problem = _update_problem(str(obj.get("kind")), previous, obj)
        if problem:
            meta = obj.get("metadata") or {}
            yield Refusal(template, f"{obj.get('kind')} {meta.get('namespace')}/{meta.get('name')}: {problem}")
