"""A render worker (:mod:`.pool`): boots the platform once, then reads one
task per line on standard input and writes its outcome as one JSON line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .cluster import Cluster
from .release import Release
from .render import Renderer


def main(data: str, platform: str, workdir: str) -> None:
    base = Path(data)
    cluster = Cluster.boot(Release.at(base, platform), Path(workdir))
    renderers: dict[str, Renderer] = {}
    for line in sys.stdin:
        task = json.loads(line)
        apps = task["apps"]
        if apps not in renderers:
            release = cluster.release if apps == platform else Release.at(base, apps)
            renderers[apps] = Renderer(cluster, release)
        outcome = renderers[apps].application(task["object"])
        sys.stdout.write(json.dumps(outcome.to_json()) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(*sys.argv[1:4])
