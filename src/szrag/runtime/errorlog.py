"""Structured records of caught exceptions: what, where, when and (on request) the stack.

Fed two ways: ``record(error, where)`` from code that catches an exception, and, as a
logging handler, every ``szrag`` log record at ERROR or above that carries ``exc_info``
(``log.exception(...)``).
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
import uuid
from collections import deque
from dataclasses import dataclass, field, replace

from szrag.base.public import public
from szrag.runtime.logs import MAX_MESSAGE_CHARS, iso_time

DEFAULT_CAPACITY = 100
MAX_STACK_CHARS = 8000


@dataclass(frozen=True)
class ErrorRecord:
    """One caught exception."""

    id: str
    time: float = field(metadata=public(convert=iso_time))  # epoch seconds
    type: str
    message: str
    where: str
    stack: str | None = field(metadata=public(omit_empty=True))

    def shown(self, *, include_stack: bool = False) -> ErrorRecord:
        """The record as a reader sees it: the stack only when asked for."""
        return self if include_stack else replace(self, stack=None)


@dataclass(frozen=True, slots=True)
class ErrorsRead:
    """What ``getErrors`` reads of this process: the latest caught errors, newest first."""

    errors: tuple[ErrorRecord, ...]


def _stack_of(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))[-MAX_STACK_CHARS:]


class ErrorLog(logging.Handler):
    """A bounded list of error records, newest kept."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        super().__init__(logging.ERROR)
        self._records: deque[ErrorRecord] = deque(maxlen=capacity)
        self._records_lock = threading.Lock()

    def record(
        self, error: BaseException, where: str = "", *, when: float | None = None
    ) -> ErrorRecord:
        """Keep a caught exception."""
        entry = ErrorRecord(
            id=uuid.uuid4().hex,
            time=time.time() if when is None else when,
            type=type(error).__name__,
            message=str(error)[:MAX_MESSAGE_CHARS],
            where=where,
            stack=_stack_of(error),
        )
        with self._records_lock:
            self._records.append(entry)
        return entry

    def emit(self, record: logging.LogRecord) -> None:
        if not record.exc_info or record.exc_info[1] is None:
            return
        try:
            where = f"{record.name}: {record.getMessage()}"[:MAX_MESSAGE_CHARS]
            self.record(record.exc_info[1], where, when=record.created)
        except Exception:
            self.handleError(record)

    def entries(self, limit: int) -> list[ErrorRecord]:
        """The latest ``limit`` records, newest first."""
        with self._records_lock:
            records = list(self._records)
        return list(reversed(records))[: max(limit, 0)]

    def clear(self) -> None:
        """Forget every record."""
        with self._records_lock:
            self._records.clear()
