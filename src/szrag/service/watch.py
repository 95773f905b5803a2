"""Keep the index fresh while the server runs, so a question never waits for a freshness scan.

A background task watches the repository with watchfiles (inotify and friends). Changes are
gathered for a short debounce window, then ``refresh_index`` runs in one dedicated thread: it
re-reads only what changed and commits in one transaction, so readers keep answering from the
previous index meanwhile. The same thread then builds the views every question shares (ranking
arrays, code records), so the first question after a change does not build them on the event
loop. The index's own directory is ignored (its writes would loop). Where the platform cannot
watch (no inotify slots left, say), it falls back to a periodic refresh.

Whatever watchfiles raises (an ``ExceptionGroup`` from its task group, for a file name it
cannot decode, say) is logged and kept in the state; the watcher refreshes once, since the
changes it was reporting are lost, and watches again. Failing ``RESTART_LIMIT`` times within
``RESTART_WINDOW_SECONDS``, it falls back to the periodic refresh for good.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio
from watchfiles import DefaultFilter, awatch

from szrag import rank
from szrag.base.collector import collections_paused
from szrag.base.public import public
from szrag.context import build_codebase_context
from szrag.index import Index, RefreshReport, refresh_index
from szrag.index.build import is_damage
from szrag.index.protocol import IndexStore
from szrag.index.shared import SharedIndex
from szrag.index.store import INDEX_DIRECTORY
from szrag.service.repositories import HOME as SERVICE_HOME

log = logging.getLogger("szrag.service.watch")

FALLBACK_INTERVAL_SECONDS = 30.0
RESTART_LIMIT = 3
RESTART_WINDOW_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 5.0

Refresher = Callable[[Index], RefreshReport]
Warmer = Callable[[Index], None]
# the root, the debounce in ms and the stop event; yields each batch of changes
Watcher = Callable[[Path, int, anyio.Event], AsyncIterator[object]]

WARM_QUESTION = "index"  # any non-empty question: warming builds the views, not an answer


def watch_changes(root: Path, debounce_ms: int, stop: anyio.Event) -> AsyncIterator[object]:
    """watchfiles over ``root``, the index directory left out."""
    return awatch(
        root,
        watch_filter=RepositoryFilter(),
        debounce=debounce_ms,
        step=min(50, debounce_ms),
        stop_event=stop,
        ignore_permission_denied=True,
    )


def warm_views(index: IndexStore) -> None:
    """Build the views every question shares for the index's current generation (in-memory
    ranking arrays, file records, the code-file and symbol views), so the first question
    after a change does not build them on the event loop; then keep them out of the garbage
    collector's full passes (``keep_out_of_collections``). Code records are decoded as
    questions read them."""
    with collections_paused():
        rank.warm(index)
        build_codebase_context(WARM_QUESTION, index)  # the file and symbol views
    keep_out_of_collections()


def start_warming(
    index: IndexStore, *, prepare: Callable[[], object] | None = None
) -> asyncio.Task[None]:
    """``warm_views`` in a worker thread, for a long-running face that has just opened its
    index, which then keeps its views in memory (``keep_in_memory``). Until they are built,
    a question reads the rows it reaches from the store (``IndexStore.warming``) rather than
    wait for views of the whole index. ``prepare`` runs first in the same thread: what every
    answer loads once, such as the plan's token counter, which a first question then finds
    loaded. The task ends once the postings of the index's common words, read in the
    background meanwhile, are in memory (a few seconds on 25,000 files). A failure is
    logged (the first question then builds the views and reports why). The task must be
    awaited before the index is closed: a thread cannot be stopped."""

    def warm() -> None:
        if prepare is not None:
            try:
                prepare()
            except Exception as error:  # the question that needs it meets it again
                log.warning("could not prepare for answers: %s", error)
        try:
            with index.warming():
                warm_views(index)
                rank.warm(index)  # with the words the questions answered meanwhile searched
        except Exception as error:
            log.warning("could not prepare the index views: %s", error)
        finally:
            index.keep_in_memory()
        if index.in_memory:
            from szrag.index.postings import settle_reads

            settle_reads()  # the common words' postings, read while questions are answered

    return asyncio.create_task(anyio.to_thread.run_sync(warm), name="szrag-warm-views")


def stop_warming(index: IndexStore) -> None:
    """Let a warm-up end soon: the common words' postings still being read are left unread
    (a server stopped in its first seconds would otherwise wait for all of them)."""
    from szrag.index.postings import stop_reads

    stop_reads(index)


# frozen objects that became cyclic garbage wait this long at most for the full pass that
# collects them; every freeze between collects only what is not frozen yet
FULL_COLLECTION_SECONDS = 60.0


class _Collections:
    """When this process last ran a full pass (``time.monotonic``)."""

    last_full_pass = -FULL_COLLECTION_SECONDS


def keep_out_of_collections(*, full: bool | None = None) -> None:
    """Collect, then freeze what survives (``gc.freeze``) so later collections pass it by.

    The views of a large index are a few hundred thousand objects; every full pass of the
    cyclic collector walks them all (about 0.3 s on the mixed corpus of the benchmarks), and a
    process answering questions triggers one every few questions. Frozen objects are still
    freed by reference counting when their generation is dropped (the views hold no cycles).
    A collection passes frozen objects by, so between full passes (``full``; by default when
    the last was ``FULL_COLLECTION_SECONDS`` ago) only what came since the last freeze is
    collected: after a refresh, the views it rebuilt, not the many it kept. A full pass
    unfreezes first, so whatever cycle an old generation left is collected then.
    """
    now = time.monotonic()
    if full is None:
        full = now - _Collections.last_full_pass >= FULL_COLLECTION_SECONDS
    if full:
        gc.unfreeze()
        _Collections.last_full_pass = now
    gc.collect()
    gc.freeze()


def _milliseconds(seconds: float) -> float:
    return round(seconds * 1000, 1)


@dataclass(frozen=True, slots=True)
class WatchState:
    """What the watcher has done: refresh count, the last one's time and outcome."""

    running: bool = False
    mode: str = "off"
    refreshes: int = 0
    last_refresh: float | None = None
    last_changed: int = 0
    last_elapsed: float = field(  # seconds; shown in milliseconds
        default=0.0, metadata=public(name="lastElapsedMs", convert=_milliseconds)
    )
    last_error: str | None = None
    watch_failures: int = 0
    last_watch_error: str | None = None


class RepositoryFilter(DefaultFilter):
    """watchfiles' usual ignores plus the index directory and a service's data folder (a
    service file inside a repository it serves: its conversations and audit log are written
    at every ask, and would refresh the index each time)."""

    ignore_dirs = (*DefaultFilter.ignore_dirs, INDEX_DIRECTORY, SERVICE_HOME)


def describe_failure(error: BaseException) -> str:
    """One line for an error, an exception group's leaves included."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe_failure(inner) for inner in error.exceptions)
    return f"{type(error).__name__}: {error}"


def changed_count(report: RefreshReport) -> int:
    """How many files a refresh wrote (added, changed, removed or touched)."""
    return len(report.added) + len(report.changed) + len(report.removed) + len(report.touched)


class IndexWatcher:
    """A background task that refreshes ``index`` shortly after files change (the refresh runs
    in its own thread, hence a :class:`SharedIndex`)."""

    def __init__(
        self,
        index: SharedIndex,
        *,
        debounce_ms: int = 400,
        refresher: Refresher = refresh_index,
        fallback_interval: float = FALLBACK_INTERVAL_SECONDS,
        stop_timeout: float = STOP_TIMEOUT_SECONDS,
        warmer: Warmer | None = warm_views,
        watcher: Watcher = watch_changes,
        restart_limit: int = RESTART_LIMIT,
        restart_window: float = RESTART_WINDOW_SECONDS,
    ) -> None:
        self.index = index
        self.debounce_ms = max(1, debounce_ms)
        self.state = WatchState()
        self._refresher = refresher
        self._fallback_interval = fallback_interval
        self._stop_timeout = stop_timeout
        self._warmer = warmer
        self._watcher = watcher
        self._restart_limit = max(1, restart_limit)
        self._restart_window = restart_window
        self._running: concurrent.futures.Future[RefreshReport] | None = None
        # One thread for every refresh: writes never overlap and reuse one connection.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="szrag-refresh")
        self._stop = anyio.Event()
        self._task: asyncio.Task[None] | None = None
        self._refreshed = asyncio.Condition()

    @property
    def root(self) -> Path:
        """The watched directory."""
        return self.index.root

    def start(self) -> None:
        """Start watching in the running event loop."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="szrag-index-watcher")

    async def stop(self) -> None:
        """Stop watching and wait (``stop_timeout`` seconds at most, without blocking the event
        loop) for a refresh in progress to finish."""
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        running = self._running
        if running is not None and not running.done():
            waiting = asyncio.wrap_future(running)
            _, pending = await asyncio.wait({waiting}, timeout=self._stop_timeout)
            if pending:
                waiting.cancel()  # stop listening; the thread itself cannot be interrupted
                log.warning(
                    "an index refresh is still running after %.0f s; not waiting for it",
                    self._stop_timeout,
                )
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.state = replace(self.state, running=False)

    async def refresh(self) -> RefreshReport | None:
        """Refresh now in the refresh thread; a failure is logged and kept in ``state``."""
        started = time.perf_counter()
        # Kept so that stop() can wait for the thread even when this coroutine is cancelled.
        self._running = self._executor.submit(self._refresh_and_warm)
        try:
            report = await asyncio.wrap_future(self._running)
        except Exception as error:
            log.warning("index refresh failed: %s", error)
            self.state = replace(self.state, last_error=str(error))
            return None
        for warning in report.warnings:  # a full disk, say: the index stays as it was
            log.warning("index refresh: %s", warning)
        changed = changed_count(report)
        self.state = replace(
            self.state,
            refreshes=self.state.refreshes + 1,
            last_refresh=time.time(),
            last_changed=changed,
            last_elapsed=time.perf_counter() - started,
            last_error=None,
        )
        if changed:
            log.info(
                "index refreshed: %d file(s) in %.0f ms", changed, self.state.last_elapsed * 1000
            )
        async with self._refreshed:
            self._refreshed.notify_all()
        return report

    def _refresh_and_warm(self) -> RefreshReport:
        """The refresh, then (in the same thread, off the event loop) the shared views.

        A database found damaged is set aside and rebuilt (questions keep reading the old
        file meanwhile), then refreshed as usual."""
        try:
            report = self._refresher(self.index)
        except Exception as error:
            heal = getattr(self.index, "heal", None)
            if not (callable(heal) and is_damage(error)):
                raise
            heal(str(error))  # which reports it, once
            report = self._refresher(self.index)
        if self._warmer is not None:
            try:
                self._warmer(self.index)
            except Exception as error:  # a question will build them instead
                log.warning("warming the index views failed: %s", error)
        return report

    async def wait_for_refresh(self, timeout: float) -> bool:
        """Wait until the next refresh completes; False on timeout."""
        try:
            async with self._refreshed:
                await asyncio.wait_for(self._refreshed.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def _run(self) -> None:
        self.state = replace(self.state, running=True, mode="watch")
        failures: list[float] = []
        while not self._stop.is_set():
            try:
                await self._watch()
                return  # stopped
            except Exception as error:
                message = describe_failure(error)
                now = time.monotonic()
                failures = [at for at in failures if now - at < self._restart_window]
                failures.append(now)
                self.state = replace(
                    self.state,
                    watch_failures=self.state.watch_failures + 1,
                    last_watch_error=message,
                    last_error=message,
                )
                # OSError: no inotify slots and the like, which a restart would not fix
                if isinstance(error, OSError) or len(failures) >= self._restart_limit:
                    log.warning(
                        "cannot watch %s (%s); refreshing every %.0f s",
                        self.root,
                        message,
                        self._fallback_interval,
                        exc_info=error,
                    )
                    self.state = replace(self.state, mode="poll")
                    await self._poll()
                    return
                log.warning(
                    "watching %s failed (%s); refreshing and watching again",
                    self.root,
                    message,
                    exc_info=error,
                )
                await self.refresh()  # the changes being reported when it failed

    async def _watch(self) -> None:
        async for _changes in self._watcher(self.root, self.debounce_ms, self._stop):
            await self.refresh()

    async def _poll(self) -> None:
        while not self._stop.is_set():
            with anyio.move_on_after(self._fallback_interval):
                await self._stop.wait()
            if not self._stop.is_set():
                await self.refresh()
