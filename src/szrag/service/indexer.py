"""The one indexer of a deployment: it watches each repository's checkout, refreshes its local
SQLite index on change, and publishes every refresh to the PostgreSQL store as a new generation
(``szrag index --store URL --repo NAME=PATH --watch``).

Replicas (``szrag serve --store URL``) only read; they run no watcher, so a change is parsed
once, here, however many replicas serve it. Each repository's refreshes run in its
:class:`~szrag.service.watch.IndexWatcher` (the server's own machinery: watchfiles, debounced,
one refresh thread, the periodic fallback), whose refresher here also publishes. A publish
that fails (the database is away, say) is kept pending and tried again every
``RETRY_SECONDS`` until it goes through, so the store catches up once the database is back.

One indexer per repository: :class:`~szrag.index.pg.IndexerLease` holds a session lock for
as long as the indexer runs, and a second indexer of the same repository stops at once with
a message naming the repository.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from szrag.index.build import refresh_index
from szrag.index.handle import Index, RefreshReport
from szrag.index.pg import IndexerLease, Published, publish
from szrag.index.shared import SharedIndex, open_shared_index
from szrag.service.watch import IndexWatcher, changed_count

log = logging.getLogger("szrag.service.indexer")

RETRY_SECONDS = 5.0  # how often a publish that failed is tried again
LOCK_WAIT_SECONDS = 60.0  # how long a publish waits for the repository's transaction lock


@dataclass
class PublishedRepository:
    """One repository the indexer keeps published: its checkout, its index and what it did."""

    name: str
    path: Path
    lease: IndexerLease
    index: SharedIndex | None = None
    watcher: IndexWatcher | None = None
    pending: bool = True  # a refresh not yet published (the first one, or one that failed)
    publishes: int = 0
    last: Published | None = None
    on_publish: Callable[[Published], None] | None = None

    def refresh_and_publish(self, index: Index) -> RefreshReport:
        """The watcher's refresher: refresh the local index, then publish it when anything
        changed (or an earlier publish is still pending). Runs in the refresh thread."""
        report = refresh_index(index)
        if changed_count(report):
            self.pending = True
        if self.pending:
            self.lease.hold()  # still the one indexer (taken again after a restart)
            done = publish(index, self.lease.url, self.name, lock_wait=LOCK_WAIT_SECONDS)
            self.pending = False
            self.publishes, self.last = self.publishes + 1, done
            log.info("published %s as generation %d", self.name, done.generation)
            if self.on_publish is not None:
                self.on_publish(done)
        return report


class Indexer:
    """Keeps the repositories ``targets`` ((name, checkout) pairs) published to ``url``."""

    def __init__(
        self,
        targets: Sequence[tuple[str, Path]],
        url: str,
        *,
        debounce_ms: int = 400,
        on_publish: Callable[[Published], None] | None = None,
    ) -> None:
        self.url = url
        self.debounce_ms = debounce_ms
        self.repositories = [
            PublishedRepository(name, path, IndexerLease(url, name), on_publish=on_publish)
            for name, path in targets
        ]

    async def run(self, stop: anyio.Event) -> None:
        """Take each repository's lease, publish each once, then watch and publish every
        refresh until ``stop`` is set; IndexStoreError at once when another indexer holds a
        repository's lease."""
        try:
            for repository in self.repositories:
                await anyio.to_thread.run_sync(repository.lease.hold)
            for repository in self.repositories:
                repository.index = await anyio.to_thread.run_sync(
                    open_shared_index, repository.path
                )
                repository.watcher = IndexWatcher(
                    repository.index,
                    debounce_ms=self.debounce_ms,
                    refresher=repository.refresh_and_publish,
                    warmer=None,  # no question is answered here
                )
                # watching first: a change made while the first publish runs is seen
                repository.watcher.start()
                await anyio.sleep(0)  # the watcher's task starts watching
                await self._refresh(repository)  # the first publish
            while not stop.is_set():
                with anyio.move_on_after(RETRY_SECONDS):
                    await stop.wait()
                for repository in self.repositories:
                    if repository.pending and not stop.is_set():
                        await self._refresh(repository)
        finally:
            await self.close()

    async def _refresh(self, repository: PublishedRepository) -> None:
        assert repository.watcher is not None
        await repository.watcher.refresh()  # a failure is logged and left pending

    async def close(self) -> None:
        """Stop the watchers, close the indexes and let go of the leases."""
        for repository in self.repositories:
            if repository.watcher is not None:
                await repository.watcher.stop()
            if repository.index is not None:
                with contextlib.suppress(Exception):
                    repository.index.close()
            repository.lease.release()
