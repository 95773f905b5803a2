"""What the live tools read about the running application.

``Runtime`` is the interface: status, metrics, logs, errors and release information, each a
JSON-ready dict (or an awaitable of one). ``ProcessRuntime`` is the default, backed by this
process: uptime, versions, the indexed repository's Git head and index statistics,
deployment fields from the environment (DEPLOY_ENV, GIT_SHA, RELEASE), command and tool
counters, a ring buffer of the ``szrag`` logger's records (plus the tail of ``log_file`` or
``SZRAG_LOG_FILE`` when set), caught exceptions, and the release history file.

A host replaces any part by subclassing ``ProcessRuntime`` and overriding a method, or by
passing its own object with the same methods to the tool adapter.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any, Protocol

from szrag.commands.model import CommandOutcome
from szrag.errors import ToolError
from szrag.public import public_dict, public_timestamp, utc_timestamp
from szrag.releases import read_release_info
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
from szrag.runtime.metrics import Metrics
from szrag.runtime.status import deployment_fields, process_status

LOG_FILE_VARIABLE = "SZRAG_LOG_FILE"
MAX_READ = 100  # entries any one read returns, whatever the caller asks

JSONResult = dict[str, Any] | Awaitable[dict[str, Any]]


class Runtime(Protocol):
    """The runtime data the live tools read; methods may be sync or async."""

    def status(self) -> JSONResult:
        """Current status and deployment data."""
        ...

    def metrics(self, name: str | None = None, label: str | None = None) -> JSONResult:
        """Current counters (``name`` and ``label`` filter a source that has many)."""
        ...

    def logs(
        self, limit: int = 10, level: str | None = None, since: str | None = None
    ) -> JSONResult:
        """The latest log entries, oldest first (``since``: an ISO time or ``15m``, ``2h``)."""
        ...

    def errors(self, limit: int = 10, include_stack: bool = False) -> JSONResult:
        """The latest caught errors, newest first."""
        ...

    def release_info(self, version: str | None = None) -> JSONResult:
        """Version and release notes, optionally of one version."""
        ...


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


class ProcessRuntime:
    """The default runtime: this process, the repository at ``root`` and its index."""

    def __init__(
        self,
        root: Path | str = ".",
        *,
        log_file: Path | str | None = None,
        environ: Mapping[str, str] | None = None,
        log_capacity: int = 500,
        error_capacity: int = 100,
        logger: str = "szrag",
    ) -> None:
        self.root = Path(root)
        self.environ: Mapping[str, str] = {} if environ is None else environ
        configured = log_file or self.environ.get(LOG_FILE_VARIABLE) or None
        self.log_file = Path(configured) if configured else None
        self.started = time.time()
        self._started_monotonic = time.monotonic()
        self.log_buffer = LogBuffer(log_capacity)
        self.error_log = ErrorLog(error_capacity)
        self.counters = Metrics()
        self._logger = logging.getLogger(logger)

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

    def status(self) -> dict[str, Any]:
        """Process, repository, index and deployment facts."""
        return public_dict(
            process_status(
                self.root,
                started=self.started,
                started_monotonic=self._started_monotonic,
                environ=self.environ,
            )
        )

    def metrics(self, name: str | None = None, label: str | None = None) -> dict[str, Any]:
        """Command and tool counters since start (few enough to need no filter)."""
        return self.counters.snapshot()

    def logs(
        self, limit: int = 10, level: str | None = None, since: str | None = None
    ) -> dict[str, Any]:
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
        return public_dict(LogsRead(tuple(entries), tail))

    def errors(self, limit: int = 10, include_stack: bool = False) -> dict[str, Any]:
        """The latest caught errors, newest first."""
        limit = max(0, min(limit, MAX_READ))
        records: list[ErrorRecord] = self.error_log.entries(limit)
        shown = tuple(record.shown(include_stack=include_stack) for record in records)
        return public_dict(ErrorsRead(shown))

    def release_info(self, version: str | None = None) -> dict[str, Any]:
        """Versions and release notes from the repository's history file."""
        return read_release_info(self.root, version, deployment=deployment_fields(self.environ))

    # Writes (observers) ----------------------------------------------------------------

    def record_command(self, outcome: CommandOutcome) -> None:
        """Count a command execution (pass as an observer of the command runner)."""
        self.counters.record_command(outcome)

    def record_tool(self, name: str, status: str, duration_ms: float) -> None:
        """Count a live tool call."""
        self.counters.record_tool(name, status, duration_ms)

    def record_error(self, error: BaseException, where: str = "") -> ErrorRecord:
        """Keep a caught exception for getErrors."""
        return self.error_log.record(error, where)


__all__ = [
    "ErrorLog",
    "ErrorRecord",
    "LogBuffer",
    "LogEntry",
    "Metrics",
    "ProcessRuntime",
    "Runtime",
    "read_release_info",
]
