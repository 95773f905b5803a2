"""The latest log records of the ``szrag`` logger, kept in memory, and the tail of a log file.

The buffer holds what the logger lets through: its level is whatever the host configured
(WARNING in the CLI unless ``--debug``), so attaching the buffer never makes the terminal
louder.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from szrag.base.public import public, utc_timestamp

DEFAULT_CAPACITY = 500
MAX_MESSAGE_CHARS = 2000
TAIL_BYTES = 256 * 1024
LEVELS = ("debug", "info", "warning", "error", "critical")


def level_number(name: str | None) -> int:
    """The logging level called ``name`` (case-insensitive); 0 (everything) for None."""
    if not name:
        return 0
    value = logging.getLevelName(name.upper())
    if not isinstance(value, int):
        raise ValueError(f"unknown log level {name!r}; use one of {', '.join(LEVELS)}")
    return value


def iso_time(timestamp: float) -> str:
    """A UNIX time in the one public form (ISO 8601 UTC, milliseconds, ``Z``)."""
    return utc_timestamp(timestamp)


@dataclass(frozen=True)
class LogEntry:
    """One log record reduced to what a reader needs."""

    time: float = field(metadata=public(convert=iso_time))  # epoch seconds
    level: str = field(metadata=public(convert=str.lower))
    levelno: int = field(metadata=public(hidden=True))
    logger: str
    message: str
    exception: str | None = field(default=None, metadata=public(omit_empty=True))


@dataclass(frozen=True, slots=True)
class LogFileTail:
    """The last lines of the configured log file, or why it could not be read."""

    location: str
    entries: Sequence[Mapping[str, Any]] | None = field(
        default=None, metadata=public(omit_none=True)
    )  # each line's own JSON object, or ``{"line": ...}``
    error: str | None = field(default=None, metadata=public(omit_none=True))


@dataclass(frozen=True, slots=True)
class LogsRead:
    """What ``getLogs`` reads of this process: the buffered entries, oldest first, and the
    log file's tail when one is configured."""

    entries: tuple[LogEntry, ...]
    log_file: LogFileTail | None = field(default=None, metadata=public(omit_none=True))


class LogBuffer(logging.Handler):
    """A bounded ring buffer of log records; the oldest fall out first."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self._entries: deque[LogEntry] = deque(maxlen=capacity)
        self._entries_lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()[:MAX_MESSAGE_CHARS]
            exception = None
            if record.exc_info and record.exc_info[1] is not None:
                error = record.exc_info[1]
                exception = f"{type(error).__name__}: {error}"[:MAX_MESSAGE_CHARS]
            entry = LogEntry(
                record.created, record.levelname, record.levelno, record.name, message, exception
            )
        except Exception:
            self.handleError(record)
            return
        with self._entries_lock:
            self._entries.append(entry)

    def entries(self, limit: int, level: str | None = None) -> list[LogEntry]:
        """The latest ``limit`` entries at or above ``level``, oldest first."""
        threshold = level_number(level)
        with self._entries_lock:
            matching = [entry for entry in self._entries if entry.levelno >= threshold]
        return matching[-limit:] if limit > 0 else []

    def clear(self) -> None:
        """Forget every entry."""
        with self._entries_lock:
            self._entries.clear()


def tail_lines(path: Path, limit: int, max_bytes: int = TAIL_BYTES) -> list[str]:
    """The last ``limit`` non-empty lines of a text file, reading at most ``max_bytes``."""
    if limit <= 0:
        return []
    with path.open("rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        start = max(0, size - max_bytes)
        handle.seek(start)
        data = handle.read()
    lines = data.decode("utf-8", "replace").splitlines()
    if start > 0 and lines:
        lines = lines[1:]  # the first line was cut by the seek
    return [line for line in lines if line.strip()][-limit:]


def parse_log_line(line: str) -> dict[str, Any]:
    """A JSON log line as its object; any other line as ``{"line": ...}``."""
    stripped = line.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except ValueError:
            pass
        else:
            if isinstance(value, dict):
                return value
    return {"line": stripped[:MAX_MESSAGE_CHARS]}
