"""Why a command did not run or did not answer: the classes of :mod:`szrag.base.errors`, by the
names the command modules use. Each class's ``code`` is its stable label."""

from __future__ import annotations

from szrag.base.errors import (
    CommandError,
    CommandFailed,
    CommandInputError,
    CommandNotAllowed,
    CommandTimeout,
    ContextClosed,
    MissingHandler,
    NoResponse,
    UnknownCommand,
    error_code,
)

__all__ = [
    "CommandError",
    "CommandFailed",
    "CommandInputError",
    "CommandNotAllowed",
    "CommandTimeout",
    "ContextClosed",
    "MissingHandler",
    "NoResponse",
    "UnknownCommand",
    "error_code",
]
