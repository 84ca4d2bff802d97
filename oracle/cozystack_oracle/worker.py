"""A render worker (:mod:`.pool`): boots each release's platform when a
task first needs it, then reads one task per line on standard input and
writes its outcome as one JSON line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .cluster import Cluster
from .release import Release
from .render import Renderer


def main(data: str, workdir: str) -> None:
    base = Path(data)
    renderers: dict[str, Renderer] = {}
    for line in sys.stdin:
        task = json.loads(line)
        version = task["apps"]
        if version not in renderers:
            renderers[version] = Renderer(Cluster.boot(Release.at(base, version), Path(workdir) / version))
        outcome = renderers[version].application(task["object"])
        sys.stdout.write(json.dumps(outcome.to_json()) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(*sys.argv[1:3])
