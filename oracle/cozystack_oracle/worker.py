"""A render worker (:mod:`.pool`): boots each release's platform, in each
variant, when a task first needs it, then reads one task per line on standard input and
writes its outcome as one JSON line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .cluster import Cluster
from .release import Release
from .render import Installed, Outcome, Renderer
from .variants import VARIANTS


def main(data: str, workdir: str) -> None:
    base = Path(data)
    renderers: dict[tuple[str, str], Renderer] = {}
    for line in sys.stdin:
        task = json.loads(line)
        variant = VARIANTS[task["variant"]]
        # A variant that only moves objects renders on the default platform.
        key = (task["apps"], variant.name if variant.platform else "default")
        if key not in renderers:
            cluster = Cluster.boot(Release.at(base, key[0]), Path(workdir) / "-".join(key), variant=VARIANTS[key[1]])
            renderers[key] = Renderer(cluster)
        renderer = renderers[key]
        installed = Installed()
        for other in task.get("installed") or []:
            first, left = renderer.install(other, installed)
            if not first.ok:
                outcome = Outcome("unresolved", message=f"an application installed first does not render: {first.message[:200]}")
                break
            installed.objects += left.objects
        else:
            if task.get("created") is not None:
                outcome = renderer.update(task["created"], task["object"], installed)
            else:
                outcome = renderer.application(task["object"], installed)
        sys.stdout.write(json.dumps(outcome.to_json()) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(*sys.argv[1:3])
