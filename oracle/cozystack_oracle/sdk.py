"""Helm's SDK (helm-python-sdk 0.2.2, Helm v4.2.3), as every tool of the
repository drives it: the oracle, which renders Cozystack's charts as the
platform does, and ``tools/helm-chart``, which lints, renders, packages and
pulls the bundle's own chart. Nothing else imports ``helm_python``
(``tests/test_sdk.py`` holds it so), so a new SDK release is read in one
place.

What is the oracle's alone stays in the oracle: Helm v4.1.1's coalescing
(:mod:`.helm`) and its ``lookup`` rewriting (:mod:`.chart`). What a lookup
of the bundle's chart reads is served by :class:`Loopback`, an API server
on loopback, since that chart's templates run unchanged."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import helm_python

Chart = helm_python.Chart
#: Every failure the SDK reports; :data:`ValuesError` is the values
#: schema's refusal.
HelmError = helm_python.HelmError
ValuesError = helm_python.HelmValuesError
#: YAML as Helm reads values (sigs.k8s.io/yaml).
values_from_yaml = helm_python.values_from_yaml


def quiet() -> None:
    """No SDK log lines on stderr: the tools print what they found."""
    helm_python.disable_logging()


def load(path: Path) -> Chart:
    return helm_python.Chart.load(path)


def load_archive(data: bytes) -> Chart:
    return helm_python.Chart.load_archive(data)


def defaults(path: Path) -> dict:
    """The chart's own ``values.yaml``, as Helm reads it."""
    with load(path) as chart:
        return chart.values or {}


def render(
    chart: Chart,
    values: dict,
    *,
    name: str,
    namespace: str,
    upgrade: bool = False,
    revision: int | None = None,
    cluster: "Loopback | None" = None,
    api_versions: list[str] | None = None,
) -> dict[str, str]:
    """Every template of ``chart`` rendered with ``values`` as release
    ``name`` in ``namespace``, by path: an install, or an ``upgrade``
    (``revision`` as ``.Release.Revision``); its lookups read ``cluster``
    where one is given, and find nothing otherwise. ``api_versions`` are
    what ``.Capabilities.APIVersions`` lists besides Helm's defaults, as
    ``helm template --api-versions`` takes them and as ``helm install``
    reads them from a cluster's discovery (``<group>/<version>`` and
    ``<group>/<version>/<Kind>``). Raises :data:`HelmError`."""
    flags: dict[str, Any] = {"is_upgrade": True} if upgrade else {"is_install": True}
    if revision is not None:
        flags["revision"] = revision
    if api_versions is not None:
        return _render_with_api_versions(chart, values, name, namespace, flags, cluster, api_versions)
    if cluster is None:
        return chart.render(values, name=name, namespace=namespace, **flags)
    with helm_python.Config(kubeconfig_content=cluster.kubeconfig(), namespace=namespace) as config:
        return config.render(chart, values, name=name, namespace=namespace, **flags)


def _render_with_api_versions(chart, values, name, namespace, flags, cluster, api_versions):
    """:func:`render` with ``api_versions``: helm-python-sdk 0.2.2's native
    render options take them (Helm's ``APIVersions``), though its Python
    signatures do not name them, so the options go to the native calls as
    the SDK's own methods send them."""
    from helm_python import _native

    options = json.dumps({"name": name, "namespace": namespace, "api_versions": api_versions, **flags})
    payload = None if values is None else json.dumps(values)
    if cluster is None:
        return json.loads(_native.call_string("helm_render", chart._raw(), payload, options))
    with helm_python.Config(kubeconfig_content=cluster.kubeconfig(), namespace=namespace) as config:
        return json.loads(
            _native.call_string("helm_render_with_config", config._raw(), chart._raw(), payload, options)
        )


def manifests(templates: dict[str, str]) -> dict[str, str]:
    """The templates that render to something, by path, without NOTES.txt:
    what ``helm template`` prints."""
    return {
        path: text
        for path, text in sorted(templates.items())
        if not path.endswith("NOTES.txt") and text.strip()
    }


def go_template(template: str, obj: Any) -> str:
    """``template`` executed on ``obj`` by Go's text/template through Helm,
    as ``kubectl get -o go-template`` executes it (the dot is the object)."""
    with tempfile.TemporaryDirectory() as scratch:
        chart = Path(scratch) / "go-template"
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: go-template\nversion: 0.1.0\n")
        # The template is a file of its own, executed by its name with the
        # object as its dot: its `define`s stay at the top level, where Go
        # allows them, and its text is kept as kubectl keeps it.
        (chart / "templates" / "_object.tpl").write_text(template)
        (chart / "templates" / "object.txt").write_text(
            '{{- template "go-template/templates/_object.tpl" .Values.object -}}'
        )
        with load(chart) as loaded:
            rendered = render(loaded, {"object": obj}, name="t", namespace="t")
    return rendered["go-template/templates/object.txt"]


def lint(chart: Path, namespace: str) -> dict:
    """``helm lint --strict``'s report."""
    return helm_python.lint(chart, strict=True, namespace=namespace)


def package(chart: Path, destination: str) -> str:
    """``helm package``; the archive's path."""
    os.makedirs(destination, exist_ok=True)
    return helm_python.package(chart, destination=destination)


def pull(reference: str, destination: str) -> str:
    """``helm pull oci://REF:VERSION`` (plain HTTP for a loopback
    registry); the archive's path."""
    os.makedirs(destination, exist_ok=True)
    host = reference.split("/", 1)[0]
    loopback = host.startswith(("127.", "localhost", "[::1]"))
    reference, _, version = reference.rpartition(":")
    helm_python.pull("oci://" + reference, destination=destination, version=version, plain_http=loopback)
    name = reference.rsplit("/", 1)[1]
    return os.path.join(destination, f"{name}-{version}.tgz")


class Loopback:
    """A loopback API server for Helm's ``lookup``: the discovery of the
    group versions of ``resources`` (``/api/v1``, ``/apis/<group>/<version>``),
    and get and list of their objects; anything else is a 404 Status, as a
    cluster without the object answers. Each resource: its apiVersion,
    kind, plural (``resource``), whether it is namespaced, and its objects.
    Use it as a context manager."""

    def __init__(self, resources: list[dict]):
        self.resources = resources
        handler = type("Handler", (_Handler,), {"cluster": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Loopback":
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def kubeconfig(self) -> str:
        host, port = self.server.server_address[:2]
        return json.dumps({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "loopback", "cluster": {"server": f"http://{host}:{port}"}}],
            "users": [{"name": "test", "user": {"token": "test"}}],
            "contexts": [{"name": "loopback", "context": {"cluster": "loopback", "user": "test"}}],
            "current-context": "loopback",
        })

    def answer(self, path: str) -> tuple[int, dict]:
        """(status, body) for a GET of ``path``."""
        parts = [p for p in path.split("?", 1)[0].split("/") if p]
        if parts[:1] == ["api"]:
            group_version, rest = parts[1:2], parts[2:]
        elif parts[:1] == ["apis"]:
            group_version, rest = parts[1:3], parts[3:]
        else:
            return 404, _not_found(path)
        group_version = "/".join(group_version)
        here = [r for r in self.resources if r["apiVersion"] == group_version]
        if not here:
            return 404, _not_found(path)
        if not rest:
            return 200, {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": group_version,
                "resources": [
                    {
                        "name": r["resource"],
                        "singularName": "",
                        "namespaced": r["namespaced"],
                        "kind": r["kind"],
                        "verbs": ["get", "list"],
                    }
                    for r in here
                ],
            }
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        resource = next((r for r in here if r["resource"] == rest[0]), None)
        if resource is None or len(rest) > 2:
            return 404, _not_found(path)
        objects = [
            o
            for o in resource["objects"]
            if namespace is None or o.get("metadata", {}).get("namespace") == namespace
        ]
        if len(rest) == 1:
            return 200, {
                "kind": resource["kind"] + "List",
                "apiVersion": group_version,
                "metadata": {},
                "items": objects,
            }
        found = [o for o in objects if o.get("metadata", {}).get("name") == rest[1]]
        return (200, found[0]) if found else (404, _not_found(path))


def _not_found(path: str) -> dict:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"{path} not found",
        "reason": "NotFound",
        "code": 404,
    }


class _Handler(BaseHTTPRequestHandler):
    cluster: Loopback

    def do_GET(self) -> None:  # noqa: N802 (the server's name for it)
        status, body = self.cluster.answer(self.path)
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_: object) -> None:
        pass
