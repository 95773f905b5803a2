"""Why a command did not run or did not answer.

Each failure has its own class and a short ``kind`` that tools, activities and the audit log
use as a stable label::

    CommandError (szrag.errors)
    ├── UnknownCommand       kind "unknown_command"   no command with that id or name
    ├── CommandNotAllowed    kind "not_allowed"       not on the allowlist, or blocked for tools
    ├── MissingHandler       kind "missing_handler"   registered metadata without a handler
    ├── CommandFailed        kind "failed"            the handler raised
    │   └── CommandInputError  kind "bad_input"       the handler refused its input
    ├── NoResponse           kind "no_response"       the handler finished without responding
    └── CommandTimeout       kind "timeout"           the handler ran past its time and was cancelled
"""

from __future__ import annotations

from szrag.errors import CommandError


class UnknownCommand(CommandError):
    """No registered command has this id or slash name."""

    kind = "unknown_command"
    exit_code = 2


class CommandNotAllowed(CommandError):
    """The command exists but may not be run from here."""

    kind = "not_allowed"
    exit_code = 2


class MissingHandler(CommandError):
    """The command's metadata is registered but nothing handles it."""

    kind = "missing_handler"


class CommandFailed(CommandError):
    """The command's handler raised an error."""

    kind = "failed"


class CommandInputError(CommandFailed):
    """The handler refused its input; the message says what it expects."""

    kind = "bad_input"
    exit_code = 2


class NoResponse(CommandError):
    """The handler finished without a single response."""

    kind = "no_response"


class CommandTimeout(CommandError):
    """The handler did not finish in time and was cancelled."""

    kind = "timeout"


def error_kind(error: BaseException) -> str:
    """The stable label of a command failure ("failed" for anything unexpected)."""
    kind = getattr(error, "kind", None)
    return kind if isinstance(kind, str) else "failed"
