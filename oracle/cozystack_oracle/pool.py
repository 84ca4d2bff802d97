"""Renders in worker processes that may die.

Some values make Helm itself run out of memory (``replicas:
1000000000000`` ranges over a trillion items): the Go runtime then aborts
the whole process. Each render therefore runs in a worker process with a
bounded address space and a time limit; a worker that dies or overruns is
replaced, and its object's outcome is ``resources``: what helm-controller
would meet too, as an OOM-killed pod or a timed-out release.
"""

from __future__ import annotations

import json
import os
import resource
import selectors
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .render import Outcome

#: The address space a worker may use: a few hundred megabytes render any
#: chart; Helm's runaway loops exhaust any bound.
MEMORY_BYTES = 3 << 30
#: Seconds one render may take (the largest chart takes about two).
TIMEOUT = 60.0


@dataclass(frozen=True)
class Task:
    """One object to render with the charts of ``apps`` (a release), on
    that release's platform as ``variant`` (:mod:`.variants`) sets it."""

    apps: str
    obj: dict
    variant: str = "default"
    #: An UPDATE: the object installed first (as it was created).
    created: dict | None = None
    #: Other applications installed before it.
    installed: tuple = ()


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


class _Worker:
    def __init__(self, data: Path, workdir: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cozystack_oracle.worker", str(data), str(workdir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            preexec_fn=_limit,
            cwd=Path(__file__).resolve().parents[1],
        )

    def send(self, task: Task) -> None:
        assert self.process.stdin is not None
        line = {"apps": task.apps, "variant": task.variant, "object": task.obj, "created": task.created,
                "installed": list(task.installed)}
        self.process.stdin.write(json.dumps(line) + "\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


class Pool:
    """``workers`` render processes over the release data in ``data``, each
    rendering a release's applications on that release's platform."""

    def __init__(self, data: Path, workdir: Path, workers: int = 0, keep: bool = False) -> None:
        # Absolute: the workers run in oracle/, not where the paths were given.
        self.data, self.workdir = data.resolve(), workdir.resolve()
        self.size = workers or max(1, min(4, os.cpu_count() or 1))
        #: Keep the workers (and the platforms they booted) between calls
        #: of :meth:`outcomes` until :meth:`close`.
        self.keep = keep
        self._workers: list[_Worker] = []

    def _spawn(self, slot: int) -> _Worker:
        return _Worker(self.data, self.workdir / f"worker-{slot}")

    def close(self) -> None:
        for worker in self._workers:
            worker.stop()
        self._workers = []

    def outcomes(self, tasks: Iterable[Task]) -> Iterator[tuple[int, Outcome]]:
        """``(index, outcome)`` for each task, in the order they finish."""
        pending = list(enumerate(tasks))
        pending.reverse()
        if not self._workers:
            self._workers = [self._spawn(slot) for slot in range(self.size)]
        workers = self._workers
        busy: dict[int, tuple[int, float]] = {}
        selector = selectors.DefaultSelector()
        try:
            for slot, worker in enumerate(workers):
                assert worker.process.stdout is not None
                selector.register(worker.process.stdout, selectors.EVENT_READ, slot)
            while pending or busy:
                for slot, worker in enumerate(workers):
                    if slot not in busy and pending:
                        index, task = pending.pop()
                        worker.send(task)
                        busy[slot] = (index, time.monotonic())
                now = time.monotonic()
                timeout = min(TIMEOUT - (now - started) for _, started in busy.values())
                events = selector.select(max(0.0, timeout))
                done: list[tuple[int, Outcome | None]] = []
                for key, _ in events:
                    slot = key.data
                    line = key.fileobj.readline()  # type: ignore[union-attr]
                    done.append((slot, Outcome.from_json(json.loads(line)) if line else None))
                now = time.monotonic()
                for slot, (index, started) in list(busy.items()):
                    if now - started >= TIMEOUT and all(s != slot for s, _ in done):
                        done.append((slot, None))
                for slot, outcome in done:
                    index, _ = busy.pop(slot)
                    if outcome is None:
                        selector.unregister(workers[slot].process.stdout)
                        workers[slot].stop()
                        workers[slot] = self._spawn(slot)
                        selector.register(workers[slot].process.stdout, selectors.EVENT_READ, slot)
                        outcome = Outcome(
                            "resources",
                            message="Helm exhausted its memory or time rendering these values "
                            f"(more than {MEMORY_BYTES >> 30} GiB or {TIMEOUT:.0f} s)",
                        )
                    yield index, outcome
        finally:
            selector.close()
            if not self.keep or busy:
                self.close()
