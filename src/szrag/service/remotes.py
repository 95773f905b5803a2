"""Keeping a service's cloned repositories current while a long-running face runs.

One :class:`RemoteKeeper` per repository with a ``url``. Started with the server, it syncs
at once in a worker thread (``clones.sync``: the clone made, or an existing clone fetched),
then again every ``fetch_interval`` seconds (0: never on its own) and whenever ``trigger`` is
called (a verified push webhook). Its repository's state in ``GET /api/repositories`` goes
``pending`` (or ``cloning`` when there is no clone yet), ``indexing`` (the index built from
the clone), ``ready``; a clone that fails is ``failed`` with git's reason, credentials
removed, and the next sync tries again. A fetch that fails once the repository is served
leaves it ``ready`` on its last commit, with the reason in ``error``.

A fetch that moved the commit refreshes the index incrementally through the repository's
:class:`~szrag.service.watch.IndexWatcher`, in its one refresh thread (what changed re-read,
committed in one transaction, the shared views warmed), and the state's ``files``,
``indexedAt`` and ``commit`` follow. A clone is not watched for file changes: nothing but a
sync changes it. Syncs never overlap; triggers that arrive during one are gathered into one
more sync after it, so a burst of pushes costs two fetches, not one each.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace

import anyio

from szrag.base.errors import SzragError
from szrag.service.clones import GIT_TIMEOUT_SECONDS, Checkout, is_clone, sync
from szrag.service.repositories import RepositorySpec, RepositoryState
from szrag.service.service import Service
from szrag.service.watch import IndexWatcher

log = logging.getLogger("szrag.service.remotes")

Syncer = Callable[..., Checkout]


class RemoteKeeper:
    """Keeps one cloned repository of ``service`` current (see the module)."""

    def __init__(
        self,
        service: Service,
        name: str,
        *,
        interval: float,
        debounce_ms: int = 400,
        timeout: float = GIT_TIMEOUT_SECONDS,
        syncer: Syncer = sync,
    ) -> None:
        self.service = service
        self.spec: RepositorySpec = service.spec(name)
        self.interval = max(0.0, interval)
        self.branch = self.spec.branch  # the clone's, once known, when the file names none
        self.syncs = 0  # syncs finished, whatever their outcome
        self._debounce_ms = debounce_ms
        self._timeout = timeout
        self._syncer = syncer
        self._wake = asyncio.Event()
        self._settled = asyncio.Event()  # the first sync has ended
        self._synced = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self._watcher: IndexWatcher | None = None

    @property
    def name(self) -> str:
        """The repository's name."""
        return self.spec.name

    @property
    def state(self) -> RepositoryState:
        """The repository's state, as the service reports it."""
        return self.service.states[self.name]

    def start(self) -> None:
        """Start syncing in the running event loop."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"szrag-remote-{self.name}")

    def trigger(self) -> None:
        """Ask for a sync soon (at once when none runs, else right after the running one)."""
        self._wake.set()

    async def settled(self) -> RepositoryState:
        """The state once the first sync has ended (``ready`` or ``failed``)."""
        await self._settled.wait()
        return self.state

    async def wait_for_sync(self, timeout: float) -> bool:
        """Wait until the next sync ends; False on timeout."""
        try:
            async with self._synced:
                await asyncio.wait_for(self._synced.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def watcher(self) -> IndexWatcher | None:
        """The repository's refresher (an unstarted IndexWatcher over its shared index), once
        the repository is open; None before."""
        if self._watcher is None and self.name in self.service.opened():
            index = self.service.shared_index(self.name)
            self._watcher = IndexWatcher(index, debounce_ms=self._debounce_ms)
            # refreshed after each fetch that moves it (``/api/status``: ``mode`` ``fetch``)
            self._watcher.state = replace(self._watcher.state, mode="fetch")
        return self._watcher

    async def stop(self) -> None:
        """Stop syncing (a git command running is left to end in its thread) and stop the
        refresher."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._watcher is not None:
            await self._watcher.stop()

    async def _run(self) -> None:
        while True:
            try:
                await self.sync()
            except Exception as error:  # a fault of ours: kept in the state, synced again later
                log.error("keeping %s current failed", self.name, exc_info=error)
                if self.state.state != "ready":
                    self.state.state = "failed"
                self.state.error = f"keeping it current failed: {type(error).__name__}"
                await self._synced_once()
            self._settled.set()
            if self.interval > 0:
                with anyio.move_on_after(self.interval):
                    await self._wake.wait()
            else:
                await self._wake.wait()
            self._wake.clear()

    async def sync(self) -> None:
        """One sync: clone or fetch, open or refresh, the state kept (see the module)."""
        state = self.state
        served = is_clone(self.spec.path) and self.name in self.service.opened()
        if not is_clone(self.spec.path):
            state.state, state.error = "cloning", None
        try:
            checkout = await anyio.to_thread.run_sync(
                functools.partial(self._syncer, self.spec, self._environ(), timeout=self._timeout),
                abandon_on_cancel=True,
            )
        except (SzragError, OSError) as error:
            message = error.message if isinstance(error, SzragError) else str(error)
            log.warning("%s", message)
            if is_clone(self.spec.path):  # answered from the clone it has, its last commit
                if served or await self._open():
                    state.error = message
            else:
                state.state, state.error = "failed", message
            await self._synced_once()
            return
        self.branch = checkout.branch
        self.service.note_fetched(self.name, time.time())
        if served or await self._open():
            state.error = None
            if checkout.moved and not checkout.cloned:  # an index opened meanwhile, too
                await self._refresh()
        await self._synced_once()

    async def _open(self) -> bool:
        """Open the repository (indexing, then ready; or failed, with the reason)."""
        try:
            await anyio.to_thread.run_sync(self.service.host, self.name)
        except SzragError as error:
            log.warning("repository %s could not be opened: %s", self.name, error.message)
            return False
        return True

    async def _refresh(self) -> None:
        watcher = self.watcher()
        if watcher is None:
            return
        report = await watcher.refresh()
        if report is None:  # the watcher logged why; the state says it too
            self.state.error = f"refreshing the index failed: {watcher.state.last_error}"
            return
        await anyio.to_thread.run_sync(self.service.note_refreshed, self.name)

    def _environ(self) -> Mapping[str, str]:
        return self.service.environ

    async def _synced_once(self) -> None:
        self.syncs += 1
        async with self._synced:
            self._synced.notify_all()
