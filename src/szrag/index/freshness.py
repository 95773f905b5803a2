"""Whether an open index is current, worked out beside the caller's reading of it.

A one-shot question spends about a quarter of its time proving that nothing changed: a stat
of every indexed file against the walk the index was last brought in line with
(``collect.unchanged``). That proof needs nothing the question needs, so it can run while the
question is answered from the index as it is, and the answer is kept when the proof holds.
A thread would not do: the proof is a loop of short system calls, and each return waits for
the interpreter lock that the question's own Python holds. A forked child has no such lock;
on a machine with two cores the proof costs the question nothing but the fork.

The child only reads the file system and writes one byte; it never touches the parent's
SQLite connection and leaves with ``os._exit``, running no cleanup of the parent's. Where
forking is not safe (not Linux, or a thread already running) the proof runs in the caller,
before it returns, as a refresh would have run it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from types import TracebackType

from szrag.index import store
from szrag.index.collect import WalkSnapshot, unchanged
from szrag.index.handle import Index

_UNCHANGED = b"1"
_UNKNOWN = b"0"
# the signals that stop a command: never handled by Python code in the child
_STOPPING = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class FreshnessCheck:
    """The answer to "is the index as current as a refresh would make it?", asked at start.

    ``confirmed()`` waits for it: True when every file and directory is as the index's last
    walk saw them, or when the index cannot be refreshed anyway (opened read-only); False
    when a refresh has work to do or might have (False never claims that something
    changed). Use it as a context manager so that the child is always reaped."""

    def __init__(self, settled: bool | None = None, child: int = 0, reading: int = -1) -> None:
        self._settled = settled
        self._child = child
        self._reading = reading

    def confirmed(self) -> bool:
        """Whether the index was current when the check ran (waits for the child)."""
        if self._settled is None:
            self._settled = False  # settled before reading: an interrupted read closes once
            verdict = _UNKNOWN
            try:
                verdict = os.read(self._reading, 1)  # nothing: the child died first
            except OSError:
                pass
            finally:
                os.close(self._reading)
                _reap(self._child)
            self._settled = verdict == _UNCHANGED
        return self._settled

    def __enter__(self) -> FreshnessCheck:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is not None and self._settled is None:  # the answer is not wanted: stop it
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._child, signal.SIGKILL)
        self.confirmed()


def check_aside(index: Index) -> FreshnessCheck:
    """Start checking that ``index`` is current (as ``refresh_index`` would find it with
    nothing to do), in a forked child where that is safe; ``confirmed()`` gives the answer."""
    if index.read_only:
        return FreshnessCheck(settled=True)  # a refresh would leave it as it is
    kept = store.read_walk(index.conn)
    if kept is None:
        return FreshnessCheck(settled=False)  # never walked: a refresh walks it
    if not _may_fork():
        return FreshnessCheck(settled=_proven(index, kept))
    reading, writing = os.pipe()
    # No signal handler may run in the child: a KeyboardInterrupt raised there would unwind
    # through the parent's code and close its SQLite connection. Blocked across the fork, a
    # signal meant for the child kills it once it unblocks them (default action), and the
    # parent reads no verdict.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    try:
        child = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        os.close(reading)
        os.close(writing)
        return FreshnessCheck(settled=_proven(index, kept))
    if child == 0:  # pragma: no cover - the child's lines run in another process
        verdict = _UNKNOWN
        try:  # whatever goes wrong here, the parent hears "unknown"
            for stopping in _STOPPING:
                signal.signal(stopping, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            os.close(reading)
            if _proven(index, kept):
                verdict = _UNCHANGED
        except BaseException:
            pass
        finally:
            try:
                os.write(writing, verdict)
            finally:
                os._exit(0)
    os.close(writing)
    check = FreshnessCheck(child=child, reading=reading)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return check


def _proven(index: Index, kept: str) -> bool:
    snapshot = WalkSnapshot.from_json(kept)
    if snapshot is None:
        return False  # a kept walk unreadable: a refresh lists again
    try:
        return unchanged(index.root, index.config, snapshot)
    except OSError:
        return False  # the root gone: the refresh meets it


def _may_fork() -> bool:
    # macOS and others: system libraries may hold locks a forked child would find taken
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _reap(child: int) -> None:
    with contextlib.suppress(ChildProcessError):  # reaped already
        os.waitpid(child, 0)
