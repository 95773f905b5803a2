"""A thread pool whose threads never hold the process open.

``concurrent.futures.ThreadPoolExecutor`` joins its threads when the interpreter exits, so a
thread blocked on something that will never come (a Slack listener waiting for an answer from
an event loop that has stopped) hangs the exit. The threads of :class:`DaemonThreadPool` are
daemons: work still running at exit is abandoned instead.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

_WorkItem = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class DaemonThreadPool(Executor):
    """At most ``max_workers`` daemon threads, started as work arrives and reused when idle."""

    def __init__(self, max_workers: int, *, thread_name_prefix: str = "daemon-pool") -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._max_workers = max_workers
        self._prefix = thread_name_prefix
        self._queue: queue.SimpleQueue[_WorkItem | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._shutdown = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Schedule ``fn(*args, **kwargs)``; RuntimeError after shutdown."""
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new work after shutdown")
            future: Future[T] = Future()
            self._queue.put((future, fn, args, kwargs))
            if not self._idle.acquire(blocking=False) and len(self._threads) < self._max_workers:
                thread = threading.Thread(
                    target=self._work, name=f"{self._prefix}_{len(self._threads)}", daemon=True
                )
                thread.start()
                self._threads.append(thread)
            return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Refuse new work, optionally cancel queued work, and (``wait``) join the threads."""
        with self._lock:
            self._shutdown = True
            if cancel_futures:
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None:
                        item[0].cancel()
            for _ in self._threads:
                self._queue.put(None)  # one stop signal per thread
            threads = list(self._threads)
        if wait:
            for thread in threads:
                thread.join()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, fn, args, kwargs = item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:
                    future.set_exception(error)
                else:
                    future.set_result(result)
            del item, future  # drop references before waiting for the next item
            self._idle.release()
