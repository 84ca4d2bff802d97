"""One Cozystack release as the platform knows it: its charts, the
ApplicationDefinitions that map a kind to a chart, and the PackageSources
that name every chart an ExternalArtifact can point to.

Which releases there are, and where each one's charts are, is the
repository's ``releases/<version>.json`` (``cargo xtask import-release``,
docs/releases.md): a folder of the release data in ``../shared/data/``
(copied verbatim from cozystack/cozystack at the release tag), the folder
whose ``charts/system/`` renders its nested releases when it has none, or
the release whose charts it shares (``sameChartsAs``).
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


#: The repository's release files.
RELEASES = Path(__file__).resolve().parents[2] / "releases"


def entries() -> dict[str, dict]:
    """Version -> its release file."""
    return {json.loads(p.read_text())["version"]: json.loads(p.read_text()) for p in sorted(RELEASES.glob("*.json"))}


def charts_of(version: str, known: dict[str, dict] | None = None) -> dict:
    """The ``charts`` of ``version``'s release file, through ``sameChartsAs``."""
    known = entries() if known is None else known
    for _ in range(len(known) + 1):
        entry = known.get(version)
        if entry is None:
            raise KeyError(f"no release {version} in {RELEASES}")
        if "charts" in entry:
            return entry["charts"]
        version = entry["sameChartsAs"]
    raise ValueError(f"sameChartsAs of {version} goes round in a circle")


def _key(version: str) -> tuple:
    numbers, _, suffix = version.removeprefix("v").partition("-")
    return (tuple(int(n) if n.isdigit() else 0 for n in numbers.split(".")), suffix == "", suffix)


def versions(candidates: bool = False) -> list[str]:
    """The releases of ``releases/``, newest first; candidates after the
    released ones, and only when asked."""
    known = entries()
    released = sorted((v for v, e in known.items() if not e.get("candidate")), key=_key, reverse=True)
    rest = sorted((v for v, e in known.items() if e.get("candidate")), key=_key, reverse=True)
    return released + (rest if candidates else [])


def by_charts(wanted: list[str]) -> dict[str, list[str]]:
    """The releases of ``wanted`` grouped by the charts they share, each
    group under its first (newest) release: the oracle renders a group's
    charts once and judges them with every release of the group."""
    known = entries()
    groups: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for version in wanted:
        data = charts_of(version, known)["data"] if version in known else version
        lead = first.setdefault(data, version)
        groups.setdefault(lead, []).append(version)
    return groups


@dataclass
class Release:
    """The data of one Cozystack release, e.g. ``v1.6.2``."""

    version: str
    root: Path
    #: The release data whose ``charts/system/`` stands in for this one's.
    system_root: Path | None = None
    _sources: dict[str, str] = field(default_factory=dict, init=False)

    @classmethod
    def at(cls, data: Path, version: str) -> "Release":
        try:
            charts = charts_of(version)
            root, system = data / charts["data"], data / charts["systemCharts"]
        except KeyError:
            # A folder of the release data that no release file names.
            root = system = data / f"cozystack-{version}"
        if not root.is_dir():
            raise FileNotFoundError(f"no release data at {root}")
        return cls(version=version, root=root, system_root=system)

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
        own = self.charts / chart
        if not own.is_dir() and chart.startswith("system/") and self.system_root is not None:
            return self.system_root / "charts" / chart
        return own
