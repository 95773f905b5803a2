"""A small in-process scheduler: each job runs every ``interval`` seconds on one thread.

Good enough for a single instance. Jobs must be idempotent: after a crash or a deploy a job
may run twice in a row, and with two instances both would run it.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass
class Job:
    name: str
    interval: float
    func: Callable[[], object]
    next_run: float = 0.0
    runs: int = 0
    failures: int = 0
    last_error: str | None = field(default=None, repr=False)


class Scheduler:
    def __init__(
        self,
        jobs: list[Job],
        *,
        clock: Callable[[], float] = time.monotonic,
        jitter: float = 0.1,
    ) -> None:
        self.jobs = jobs
        self.clock = clock
        self.jitter = jitter
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _schedule(self, job: Job, now: float) -> None:
        # Jitter spreads jobs out so they do not all hit the database in the same second.
        spread = job.interval * self.jitter
        job.next_run = now + job.interval + random.uniform(-spread, spread)

    def run_pending(self) -> int:
        """Run every job that is due. Returns how many ran."""
        ran = 0
        for job in self.jobs:
            now = self.clock()
            if now < job.next_run:
                continue
            started = time.perf_counter()
            try:
                job.func()
                job.last_error = None
            except Exception as exc:  # one failing job must not stop the others
                job.failures += 1
                job.last_error = repr(exc)
                log.exception("job %s failed", job.name)
            else:
                log.debug("job %s took %.3fs", job.name, time.perf_counter() - started)
            job.runs += 1
            ran += 1
            self._schedule(job, self.clock())
        return ran

    def run_forever(self, tick: float = 1.0) -> None:
        log.info("scheduler started with %d jobs", len(self.jobs))
        while not self._stop.is_set():
            self.run_pending()
            self._stop.wait(tick)
        log.info("scheduler stopped")

    def start(self) -> None:
        if self._thread and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self.run_forever, name="stockroom-jobs", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout)

    def status(self) -> list[dict[str, object]]:
        return [
            {
                "name": job.name,
                "runs": job.runs,
                "failures": job.failures,
                "last_error": job.last_error,
            }
            for job in self.jobs
        ]
