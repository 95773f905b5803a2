"""The one exception hierarchy of szrag.

Every error a user can cause or meet derives from SzragError, which carries a message fit
to show as is and the exit code the CLI uses. Faces (CLI, server, Slack) catch the base once.

    SzragError
    ├── ConfigError            bad configuration (per-repository file, environment)
    ├── QuestionError          an empty or unusable question
    ├── IndexStoreError        the index cannot be opened, written or rebuilt
    ├── PathError              a path outside the root or not in the index
    ├── CommandError           (szrag.commands) unknown command, handler failure, timeout
    ├── ToolError              (szrag.tools) unknown tool, bad arguments
    └── ProviderError          (szrag.llm) the model provider failed
"""

from __future__ import annotations


class SzragError(Exception):
    """Base of every szrag error: a user-facing message and a CLI exit code."""

    exit_code: int = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class ConfigError(SzragError):
    """Configuration that cannot be used."""

    exit_code = 2


class QuestionError(SzragError):
    """A question that is empty or otherwise unusable."""

    exit_code = 2


class IndexStoreError(SzragError):
    """The index cannot be opened, written or rebuilt."""


class PathError(SzragError):
    """A path that is outside the indexed root or unknown to the index."""

    exit_code = 2


class CommandError(SzragError):
    """A command could not be found or run."""


class ToolError(SzragError):
    """A live tool call that cannot be carried out."""


class ProviderError(SzragError):
    """The model provider failed or answered with something unusable.

    ``partial_text`` holds what the model had answered before the failure (kept, and shown
    as cut)."""

    partial_text: str = ""
