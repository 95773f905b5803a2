"""What the live tools read about the running application.

``Runtime`` is the one interface: status, metrics, logs, errors and release information, each
read a coroutine returning a typed record (``Status``, ``MetricsSnapshot``, ``LogsRead``,
``ErrorsRead``, ``ReleaseInfo``, or a ``Sourced`` read of the running application; a host's own
runtime may answer with its own JSON object), shown by ``szrag.base.public.to_public``.

Its two implementations: a runtime whose reads are coroutines already, and a
``ThreadedRuntime`` over a ``BlockingRuntime`` (each read in a worker thread). ``as_runtime``
makes either one a ``Runtime`` once, where the tools, the command runner and the server are
built, so no caller asks whether a read must be awaited.

``ProcessRuntime`` is the default blocking runtime, backed by this process: uptime, versions,
the indexed repository's Git head and index statistics, deployment fields from the environment
(DEPLOY_ENV, GIT_SHA, RELEASE), command and tool counters, a ring buffer of the ``szrag``
logger's records (plus the tail of ``log_file`` or ``SZRAG_LOG_FILE`` when set), caught
exceptions, and the release history file.

A host replaces any part by subclassing ``ProcessRuntime`` and overriding a method (blocking or
a coroutine), or by passing its own object with the same methods to the tool adapter.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from szrag.base.errors import ToolError
from szrag.base.public import public, public_timestamp, utc_timestamp
from szrag.runtime.errorlog import ErrorLog, ErrorRecord, ErrorsRead
from szrag.runtime.logs import (
    LogBuffer,
    LogEntry,
    LogFileTail,
    LogsRead,
    iso_time,
    parse_log_line,
    tail_lines,
)
from szrag.runtime.metrics import FinishedCommand, Metrics, MetricsSnapshot
from szrag.runtime.releases import ReleaseInfo, read_release_info, release_info
from szrag.runtime.status import Status, deployment_fields, process_status

if TYPE_CHECKING:
    from szrag.index.protocol import IndexStore

LOG_FILE_VARIABLE = "SZRAG_LOG_FILE"
MAX_READ = 100  # entries any one read returns, whatever the caller asks


@dataclass(frozen=True, slots=True)
class Sourced:
    """A read and where it came from (``szrag process``, ``http URL``, ``log files``...),
    shown as ``source`` followed by the read's own fields."""

    source: str
    # a record, or the running application's own JSON object
    read: Any = field(metadata=public(spread=True))


Reading: TypeAlias = (
    Status | MetricsSnapshot | LogsRead | ErrorsRead | ReleaseInfo | Sourced | Mapping[str, Any]
)
"""What a runtime read returns: a record, or (from a host's own runtime) a JSON object."""


class Runtime(Protocol):
    """The runtime data the live tools read, each read a coroutine."""

    async def status(self) -> Reading:
        """Current status and deployment data."""
        ...

    async def metrics(self, name: str | None = None, label: str | None = None) -> Reading:
        """Current counters (``name`` and ``label`` filter a source that has many)."""
        ...

    async def logs(
        self, limit: int = 10, level: str | None = None, since: str | None = None
    ) -> Reading:
        """The latest log entries, oldest first (``since``: an ISO time or ``15m``, ``2h``)."""
        ...

    async def errors(self, limit: int = 10, include_stack: bool = False) -> Reading:
        """The latest caught errors, newest first."""
        ...

    async def release_info(self, version: str | None = None) -> Reading:
        """Version and release notes, optionally of one version."""
        ...


class BlockingRuntime(Protocol):
    """A runtime whose reads block (this process's, the running application's sources):
    ``ThreadedRuntime`` makes it a :class:`Runtime`."""

    def status(self) -> Reading: ...

    def metrics(self, name: str | None = None, label: str | None = None) -> Reading: ...

    def logs(
        self, limit: int = 10, level: str | None = None, since: str | None = None
    ) -> Reading: ...

    def errors(self, limit: int = 10, include_stack: bool = False) -> Reading: ...

    def release_info(self, version: str | None = None) -> Reading: ...


READS = ("status", "metrics", "logs", "errors", "release_info")


class ThreadedRuntime:
    """A :class:`Runtime` over ``inner``: each blocking read runs in a worker thread, a read
    that is a coroutine already (a subclass may override one so) is awaited. Which is which
    is decided once, here."""

    def __init__(self, inner: Runtime | BlockingRuntime) -> None:
        self.inner = inner
        self._reads = {name: _coroutine(getattr(inner, name)) for name in READS}

    async def status(self) -> Reading:
        return await self._reads["status"]()

    # Filters left out are not passed: a host's own runtime may take fewer of them.
    async def metrics(self, name: str | None = None, label: str | None = None) -> Reading:
        filters = (name, label) if name is not None or label is not None else ()
        return await self._reads["metrics"](*filters)

    async def logs(
        self, limit: int = 10, level: str | None = None, since: str | None = None
    ) -> Reading:
        return await self._reads["logs"](limit, level, *([since] if since else []))

    async def errors(self, limit: int = 10, include_stack: bool = False) -> Reading:
        return await self._reads["errors"](limit, include_stack)

    async def release_info(self, version: str | None = None) -> Reading:
        return await self._reads["release_info"](version)


def _coroutine(read: Callable[..., Any]) -> Callable[..., Awaitable[Reading]]:
    if inspect.iscoroutinefunction(read):
        return read

    @functools.wraps(read)
    async def threaded(*args: Any) -> Reading:
        result: Reading = await asyncio.to_thread(read, *args)
        return result

    return threaded


def as_runtime(runtime: Runtime | BlockingRuntime) -> Runtime:
    """``runtime`` as a :class:`Runtime`: itself when it is one already (a
    ``ThreadedRuntime``, or every read a coroutine), else a ``ThreadedRuntime`` over it."""
    if isinstance(runtime, ThreadedRuntime):
        return runtime
    if all(inspect.iscoroutinefunction(getattr(runtime, name)) for name in READS):
        return runtime  # type: ignore[return-value]  # checked: every read is a coroutine
    return ThreadedRuntime(runtime)


def since_time(since: str) -> str:
    """``since`` (an ISO 8601 time, or ``30s``, ``15m``, ``2h``, ``1d`` back from now) as a
    public timestamp, comparable as text with the entries' times; ToolError when neither."""
    span = re.fullmatch(r"\s*(\d+)\s*([smhd])\s*", since)
    if span:
        seconds = int(span.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[span.group(2)]
        return utc_timestamp(time.time() - seconds)
    moment = public_timestamp(since)
    if moment is None:
        raise ToolError(f"since must be an ISO 8601 time or a span such as 15m, not {since!r}")
    return moment


def log_file_of(environ: Mapping[str, str]) -> Path | None:
    """The log file ``SZRAG_LOG_FILE`` names in ``environ`` (None when unset)."""
    configured = environ.get(LOG_FILE_VARIABLE) or None
    return Path(configured) if configured else None


class ProcessRuntime:
    """The default runtime: this process, the repository at ``root`` and its index.

    ``log_file`` and ``deployment`` (the fields of ``deployment_fields``) are read from
    ``environ`` when not given; a host gives them from its ``Config``."""

    def __init__(
        self,
        root: Path | str = ".",
        *,
        log_file: Path | str | None = None,
        environ: Mapping[str, str] | None = None,
        deployment: Mapping[str, str] | None = None,
        log_capacity: int = 500,
        error_capacity: int = 100,
        logger: str = "szrag",
    ) -> None:
        self.root = Path(root)
        environ = {} if environ is None else environ
        self.log_file = Path(log_file) if log_file else log_file_of(environ)
        self.deployment: Mapping[str, str] = dict(
            deployment_fields(environ) if deployment is None else deployment
        )
        self.started = time.time()
        self._started_monotonic = time.monotonic()
        self.log_buffer = LogBuffer(log_capacity)
        self.error_log = ErrorLog(error_capacity)
        self.counters = Metrics()
        self._logger = logging.getLogger(logger)
        self.index: IndexStore | None = None  # the store a server answers from (``serves``)

    def serves(self, index: IndexStore) -> None:
        """Report the facts of ``index`` in the status (a replica has no SQLite file to read)."""
        self.index = index

    def attach(self) -> ProcessRuntime:
        """Start collecting the logger's records and logged exceptions; returns self."""
        for handler in (self.log_buffer, self.error_log):
            if handler not in self._logger.handlers:
                self._logger.addHandler(handler)
        return self

    def detach(self) -> None:
        """Stop collecting log records."""
        self._logger.removeHandler(self.log_buffer)
        self._logger.removeHandler(self.error_log)

    def __enter__(self) -> ProcessRuntime:
        return self.attach()

    def __exit__(self, *exc: object) -> None:
        self.detach()

    # Reads ---------------------------------------------------------------------------

    def status(self) -> Status:
        """Process, repository, index and deployment facts."""
        return process_status(
            self.root,
            started=self.started,
            started_monotonic=self._started_monotonic,
            deployment=self.deployment,
            index=self.index,
        )

    def metrics(self, name: str | None = None, label: str | None = None) -> MetricsSnapshot:
        """Command and tool counters since start (few enough to need no filter)."""
        return self.counters.figures()

    def logs(self, limit: int = 10, level: str | None = None, since: str | None = None) -> LogsRead:
        """The latest buffered entries and, when configured, the log file's last lines."""
        limit = max(0, min(limit, MAX_READ))
        entries: list[LogEntry] = self.log_buffer.entries(MAX_READ if since else limit, level)
        if since:
            start = since_time(since)
            entries = [entry for entry in entries if iso_time(entry.time) >= start][-limit:]
        tail = None
        if self.log_file is not None:
            location = str(self.log_file)
            try:
                lines = tail_lines(self.log_file, limit)
                tail = LogFileTail(location, entries=[parse_log_line(line) for line in lines])
            except OSError as error:
                tail = LogFileTail(location, error=error.strerror or str(error))
        return LogsRead(tuple(entries), tail)

    def errors(self, limit: int = 10, include_stack: bool = False) -> ErrorsRead:
        """The latest caught errors, newest first."""
        limit = max(0, min(limit, MAX_READ))
        records: list[ErrorRecord] = self.error_log.entries(limit)
        return ErrorsRead(tuple(record.shown(include_stack=include_stack) for record in records))

    def release_info(self, version: str | None = None) -> ReleaseInfo:
        """Versions and release notes from the repository's history file."""
        return release_info(self.root, version, deployment=dict(self.deployment))

    # Writes (observers) ----------------------------------------------------------------

    def record_command(self, outcome: FinishedCommand) -> None:
        """Count a command execution (pass as an observer of the command runner)."""
        self.counters.record_command(outcome)

    def record_tool(self, name: str, status: str, duration_ms: float) -> None:
        """Count a live tool call."""
        self.counters.record_tool(name, status, duration_ms)

    def record_error(self, error: BaseException, where: str = "") -> ErrorRecord:
        """Keep a caught exception for getErrors."""
        return self.error_log.record(error, where)


__all__ = [
    "BlockingRuntime",
    "ErrorLog",
    "ErrorRecord",
    "ErrorsRead",
    "LogBuffer",
    "LogEntry",
    "LogsRead",
    "Metrics",
    "MetricsSnapshot",
    "ProcessRuntime",
    "Reading",
    "ReleaseInfo",
    "Runtime",
    "Sourced",
    "Status",
    "ThreadedRuntime",
    "as_runtime",
    "read_release_info",
]
