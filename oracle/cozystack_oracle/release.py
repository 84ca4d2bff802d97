"""One Cozystack release as the platform knows it: its charts, the
ApplicationDefinitions that map a kind to a chart, and the PackageSources
that name every chart an ExternalArtifact can point to.

Read from the release data in ``../shared/data/cozystack-<version>/``
(copied verbatim from cozystack/cozystack at the release tag).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Application:
    """One ApplicationDefinition: how cozystack-api serves a kind."""

    kind: str
    plural: str
    #: ``spec.release.prefix``: the HelmRelease is ``<prefix><name>``.
    prefix: str
    #: ``spec.release.chartRef.name``, an ExternalArtifact.
    chart_ref: str
    #: ``spec.application.openAPISchema``, parsed.
    schema: dict
    #: The chart's folder, relative to ``charts/``.
    chart: str


@dataclass
class Release:
    """The data of one Cozystack release, e.g. ``v1.6.2``."""

    version: str
    root: Path
    _sources: dict[str, str] = field(default_factory=dict, init=False)

    @classmethod
    def at(cls, data: Path, version: str) -> "Release":
        root = data / f"cozystack-{version}"
        if not root.is_dir():
            raise FileNotFoundError(f"no release data at {root}")
        return cls(version=version, root=root)

    @property
    def charts(self) -> Path:
        return self.root / "charts"

    @property
    def has_platform(self) -> bool:
        """Whether the release data carries the platform's own charts
        (``core/platform`` and ``system/``): v1.6.2 does, v1.5.4 does not."""
        return (self.charts / "core" / "platform").is_dir()

    @cached_property
    def artifacts(self) -> dict[str, str]:
        """ExternalArtifact name -> chart folder under ``charts/``.

        The platform names the artifact of each component of each variant
        of a PackageSource ``cozystack-<source>-<variant>-<component>``,
        where ``<source>`` is the PackageSource's name without its
        ``cozystack.`` prefix and with dots as dashes
        (``packages/core/platform/sources/*.yaml``).
        """
        artifacts: dict[str, str] = {}
        sources = self.charts / "core" / "platform" / "sources"
        for path in sorted(sources.glob("*.yaml")) if sources.is_dir() else []:
            for doc in yaml.safe_load_all(path.read_text()):
                if not doc or doc.get("kind") != "PackageSource":
                    continue
                source = doc["metadata"]["name"].removeprefix("cozystack.").replace(".", "-")
                for variant in doc["spec"].get("variants", []):
                    for component in variant.get("components", []):
                        name = f"cozystack-{source}-{variant['name']}-{component['name']}"
                        artifacts[name] = component["path"]
        return artifacts

    @cached_property
    def applications(self) -> dict[str, Application]:
        """Kind -> its ApplicationDefinition."""
        apps: dict[str, Application] = {}
        for path in sorted((self.root / "application-definitions").glob("*.yaml")):
            doc = yaml.safe_load(path.read_text())
            spec = doc["spec"]
            kind = spec["application"]["kind"]
            ref = spec["release"]["chartRef"]["name"]
            apps[kind] = Application(
                kind=kind,
                plural=spec["application"]["plural"],
                prefix=spec["release"].get("prefix", ""),
                chart_ref=ref,
                schema=json.loads(spec["application"]["openAPISchema"]),
                chart=self.artifacts.get(ref) or self._chart_by_schema(spec),
            )
        return apps

    def _chart_by_schema(self, spec: dict) -> str:
        """The chart whose ``values.schema.json`` is the definition's
        openAPISchema: how a release without PackageSources (v1.5.4) maps a
        kind to its chart."""
        wanted = json.loads(spec["application"]["openAPISchema"])
        for group in ("apps", "extra"):
            for chart in sorted((self.charts / group).iterdir()):
                schema = chart / "values.schema.json"
                if schema.is_file() and json.loads(schema.read_text()) == wanted:
                    return f"{group}/{chart.name}"
        raise LookupError(f"no chart has the schema of {spec['application']['kind']}")

    def chart_dir(self, chart: str) -> Path:
        return self.charts / chart
