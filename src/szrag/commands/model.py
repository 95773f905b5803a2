"""The records of the command system: who runs a command, what it is, what it said."""

from __future__ import annotations

import getpass
import re
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from szrag.base.errors import ContextClosed
from szrag.base.public import public, public_dict

if TYPE_CHECKING:
    from szrag.commands.registry import CommandRegistry
    from szrag.runtime import Runtime

COMMAND_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
SLASH_PREFIX = "/sz-"

Handler = Callable[["CommandContext"], Awaitable[None] | None]
"""A command's code: async (preferred) or sync (run in a worker thread); it calls respond()."""


@dataclass(frozen=True)
class Identity:
    """Who runs a command: a Slack user in a channel, or the local user of the CLI."""

    user_id: str = "local"
    user_name: str = "local"
    channel_id: str = "cli"
    team_id: str = "local"

    @classmethod
    def local(cls) -> Identity:
        """The person at this terminal."""
        try:
            name = getpass.getuser()
        except Exception:  # no login name (containers, odd environments)
            name = "local"
        return cls(user_id=f"local:{name}", user_name=name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form with the spec's camelCase names."""
        return public_dict(self)


@dataclass(frozen=True)
class CommandSpec:
    """A registered command: its metadata and its handler (None when only metadata is known).

    Shown as ``{id, name, description, category, usageHint}``."""

    public_order: ClassVar[tuple[str, ...]] = ("id", "name")

    id: str
    description: str
    handler: Handler | None = field(default=None, compare=False, repr=False)
    category: str = "general"
    usage: str = field(default="", metadata=public(name="usageHint"))
    name: str = ""  # the slash name; defaults to /sz-<id>
    # Input that may hold a secret (hash passwords): kept out of audit logs and activities.
    sensitive: bool = field(default=False, metadata=public(hidden=True))
    # Output that is a secret (a digest of a password, a fresh token): shown to the asker
    # only, never sent to the model, never posted in a channel.
    secret_output: bool = field(default=False, metadata=public(hidden=True))
    # a longer or shorter limit than the runner's default
    timeout: float | None = field(default=None, metadata=public(hidden=True))

    @property
    def private(self) -> bool:
        """Whether the command's replies stay with the asker (secret input or output)."""
        return self.sensitive or self.secret_output

    def __post_init__(self) -> None:
        if not COMMAND_ID.fullmatch(self.id):
            raise ValueError(
                f"invalid command id {self.id!r}: lowercase letters, digits, '-' and '_' only"
            )
        if not self.name:
            object.__setattr__(self, "name", SLASH_PREFIX + self.id)


@dataclass(frozen=True)
class Response:
    """One reply of a command: text, Slack blocks, or both."""

    text: str | None = None
    blocks: tuple[Mapping[str, Any], ...] | None = None

    def plain_text(self) -> str:
        """The reply as text; blocks are reduced to the text they carry."""
        if self.text:
            return self.text
        return "\n".join(blocks_text(self.blocks or ()))

    def public_view(self) -> ShownResponse:
        """``text`` always, ``blocks`` when there are any."""
        return ShownResponse(self.plain_text(), self.blocks)


@dataclass(frozen=True, slots=True)
class ShownResponse:
    """A command's reply as it is shown: its text, and its Slack blocks when it has any."""

    text: str
    blocks: tuple[Mapping[str, Any], ...] | None = field(
        default=None, metadata=public(omit_empty=True)
    )


def blocks_text(blocks: Sequence[Any]) -> list[str]:
    """Every ``text`` string found in Slack blocks, in order."""
    found: list[str] = []

    def walk(value: Any, depth: int) -> None:
        if depth > 8:
            return
        if isinstance(value, Mapping):
            text = value.get("text")
            if isinstance(text, str) and text:
                found.append(text)
            for key, item in value.items():
                if key != "text" or not isinstance(item, str):
                    walk(item, depth + 1)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item, depth + 1)

    walk(list(blocks), 0)
    return found


@dataclass(frozen=True)
class CommandResult:
    """What a command said: the spec's ``{id, command, responses}``."""

    id: str
    command: str
    responses: tuple[Response, ...]

    @property
    def text(self) -> str:
        """All responses as one text, one per paragraph."""
        return "\n\n".join(response.plain_text() for response in self.responses)

    def to_dict(self) -> dict[str, Any]:
        """JSON form ``{id, command, responses}``."""
        return public_dict(self)


@dataclass(frozen=True, slots=True)
class WithheldOutput:
    """A command result whose output is a secret, as the model sees it: that the command ran,
    not what it said (``output_withheld`` says why and what to tell the asker)."""

    id: str
    command: str
    responses: tuple[Response, ...]  # always empty
    output_withheld: str


@dataclass(frozen=True)
class CommandOutcome:
    """One finished execution, as observers (audit log, metrics) see it."""

    command_id: str
    text: str
    identity: Identity
    source: str  # "cli", "tool", "inference", "host"
    status: str  # "ok" or an error kind ("timeout", "not_allowed", ...)
    duration_ms: float
    responses: int = 0
    message: str = ""
    sensitive: bool = False
    error: BaseException | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        """True when the command ran and responded."""
        return self.status == "ok"


Asker = Callable[[str, "Identity"], Awaitable[str]]
"""Answers a question for an identity (the host's own pipeline, bound to its runner): what
``/sz-ask`` calls, so a command never builds a pipeline of its own."""


@dataclass(frozen=True, slots=True)
class Permit:
    """A command the runner's policy let ``source`` run, checked once (``CommandRunner.admit``)
    and run without a second look (``CommandRunner.run``)."""

    spec: CommandSpec
    source: str


class CommandContext:
    """What a handler receives: its input, who asked, and ``respond()``."""

    def __init__(
        self,
        command: CommandSpec,
        text: str,
        identity: Identity,
        registry: CommandRegistry,
        *,
        root: Path,
        runtime: Runtime | None = None,
        ask: Asker | None = None,
    ) -> None:
        self.command = command
        self.text = text
        self.identity = identity
        self.registry = registry
        self.root = root
        self.runtime = runtime
        self.ask = ask  # None where no question pipeline is bound (a runner on its own)
        self._responses: list[Response] = []
        self._lock = threading.Lock()  # sync handlers respond from a worker thread
        self._closed = False

    @property
    def args(self) -> list[str]:
        """The input split on whitespace."""
        return self.text.split()

    def respond(
        self, text: str | None = None, *, blocks: Sequence[Mapping[str, Any]] | None = None
    ) -> None:
        """Reply with text, Slack blocks or both; may be called any number of times."""
        if text is None and not blocks:
            raise ValueError("respond() needs text or blocks")
        if text is not None and not isinstance(text, str):
            raise TypeError(f"respond() text must be a string, not {type(text).__name__}")
        response = Response(text=text, blocks=tuple(dict(block) for block in blocks or ()) or None)
        with self._lock:
            if self._closed:
                raise ContextClosed(f"{self.command.name} responded after its run ended")
            self._responses.append(response)

    def close(self) -> tuple[Response, ...]:
        """End the run: later responses are refused; returns what was said."""
        with self._lock:
            self._closed = True
            return tuple(self._responses)
