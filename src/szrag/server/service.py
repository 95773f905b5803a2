"""What the faces share: answering a question (in a conversation) and running a command for
an identity, with the allowlist checked first and every ask audited; feedback on answers.

One :class:`AskService` lives per server, over the server's :class:`~szrag.service.host.Host` (the
shared index, the process runtime that both the live tools and the HTTP routes read, the
command policy and runner, the audit log) and one HTTP client for the model provider.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from szrag.answer.question import Admitted, Question
from szrag.answer.results import Answer
from szrag.base.errors import DamagedIndexError, SzragError
from szrag.commands import (
    CommandError,
    CommandNotAllowed,
    CommandRegistry,
    CommandResult,
    CommandSpec,
    Identity,
    UnknownCommand,
)
from szrag.commands.policy import CommandPolicy
from szrag.conversations import Feedback
from szrag.index.build import is_damage
from szrag.index.protocol import IndexStore
from szrag.runtime import ProcessRuntime, Runtime, as_runtime
from szrag.server.errors import ApiError
from szrag.server.requests import FeedbackRequest
from szrag.service.feedback import give_feedback
from szrag.service.host import Host

log = logging.getLogger("szrag.server")

OnToken = Callable[[str, int], Awaitable[None] | None]


def error_status(error: BaseException) -> tuple[int, str, str]:
    """The HTTP status, code and message that describe a failure to answer: each szrag
    error's own ``http_status`` and ``code``, a damaged index's 503 ``index_damaged``
    whatever raised it; anything else is an internal error."""
    if isinstance(error, ApiError):
        return error.status, error.code, error.message
    if not isinstance(error, DamagedIndexError) and is_damage(error):
        # found damaged by a read that did not say so: the index is rebuilt, not the server
        return 503, DamagedIndexError.code, "the index is damaged and is being rebuilt"
    if isinstance(error, SzragError):
        return error.http_status, error.code, error.message
    return 500, "internal_error", "the server failed to answer; the error is in its log"


class AskService:
    """Answers questions and runs commands for the HTTP API and Slack, with the server's host
    (whose index is the shared one)."""

    def __init__(self, host: Host, *, http_client: httpx.AsyncClient | None = None) -> None:
        if host.index is None:
            raise ValueError("a server's host needs its shared index")
        # model requests go through the server's one client, kept open between answers
        self.host = host.replace(http_client=http_client) if http_client is not None else host
        self.http_client = http_client
        self._background: set[asyncio.Task[None]] = set()
        self._healing: asyncio.Task[None] | None = None
        self._reads = as_runtime(self.host.runtime)

    @property
    def root(self) -> Path:
        """The served repository."""
        return self.host.root

    @property
    def index(self) -> IndexStore:
        """The shared index."""
        assert self.host.index is not None
        return self.host.index

    @property
    def runtime(self) -> ProcessRuntime:
        """Status, metrics, logs and errors of this server."""
        return self.host.runtime

    @property
    def reads(self) -> Runtime:
        """The server's runtime as the API reads it (blocking reads in a worker thread)."""
        return self._reads

    @property
    def registry(self) -> CommandRegistry:
        """The commands this server knows."""
        return self.host.registry

    @property
    def policy(self) -> CommandPolicy:
        """Which commands callers of this server may run."""
        return self.host.policy

    def allows(self, spec: CommandSpec, source: str = "api") -> bool:
        """Whether callers of this server may run ``spec`` (listings; nothing is recorded)."""
        return self.host.policy.runnable(spec, source)

    def check_command(
        self, command_id: str, identity: Identity, *, source: str = "api"
    ) -> CommandSpec:
        """The command a caller asked for, if it exists and may run here; else ApiError.

        The refusal is reported to the runner's observers like any other command outcome, so
        the audit log and the metrics see who tried what.
        """
        try:
            return self.host.runner.check(command_id, identity, source=source)
        except UnknownCommand as error:
            raise ApiError(404, "unknown_command", error.message) from None
        except CommandNotAllowed as error:
            raise ApiError(403, "command_not_allowed", error.message) from None
        except CommandError as error:  # registered without a handler
            raise ApiError(*error_status(error)) from None

    async def feedback(self, request: FeedbackRequest) -> Feedback:
        """Keep a caller's feedback on one of their answers (right files checked against the
        shared index)."""
        return await asyncio.to_thread(
            give_feedback,
            self.host,
            request.answer_id,
            request.rating,
            right_files=request.right_files,
            comment=request.comment,
            identity=request.identity,
            owner=request.identity.user_id,
        )

    async def admit(self, question: Question) -> Admitted:
        """``question`` let in by the host, or refused as the API says it (before a stream
        starts): 404 ``unknown_command``, 403 ``command_not_allowed``, 404
        ``unknown_conversation`` for one that is not kept or not the caller's (a Slack
        thread's belongs to the Slack face, ``SLACK_OWNER``)."""
        try:
            return await self.host.admit(question)
        except UnknownCommand as error:
            raise ApiError(404, "unknown_command", error.message) from None
        except CommandNotAllowed as error:
            raise ApiError(403, "command_not_allowed", error.message) from None
        except CommandError as error:  # registered without a handler
            raise ApiError(*error_status(error)) from None

    async def ask(self, question: Question | Admitted) -> Answer:
        """Answer ``question`` (admitted first unless it already is) in its conversation, or
        in a new one; the host audits the ask whatever happens."""
        admitted = question if isinstance(question, Admitted) else await self.admit(question)
        try:
            result = await self.host.ask(admitted)
        except asyncio.CancelledError:
            raise
        except SzragError as error:
            if is_damage(error):
                self.heal_in_background(error.message)
            raise
        except Exception as error:
            self.runtime.record_error(error, "ask")
            if is_damage(error):  # the rebuild reports it, once; no traceback as well
                self.heal_in_background(str(error))
                raise DamagedIndexError(
                    f"the index is damaged and is being rebuilt ({error}); ask again shortly"
                ) from error
            log.error("answering failed", exc_info=error)
            raise
        if result.error is not None:
            log.warning("the model failed: %s", result.error.message)
        return result

    def heal_in_background(self, reason: str) -> None:
        """Rebuild a damaged shared index off the event loop (once at a time); answers keep
        coming from the old file meanwhile, and ``/healthz`` says what is happening."""
        index = self.index
        mark = getattr(index, "mark_damaged", None)
        heal = getattr(index, "heal", None)
        if not callable(heal) or not callable(mark):
            return
        if self._healing is not None and not self._healing.done():
            return  # the request that found it and its error handler both ask
        if getattr(index, "health", "ok") == "rebuilding":  # every question sees it meanwhile
            return
        mark(reason)

        async def run() -> None:
            try:  # the rebuild's own warning says what was damaged and where it went
                await asyncio.to_thread(heal, reason)
            except Exception as error:
                log.error("the index is damaged (%s) and rebuilding it failed: %s", reason, error)

        task = asyncio.get_running_loop().create_task(run())
        self._healing = task
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def run_command(
        self, command_id: str, text: str, identity: Identity, *, source: str
    ) -> CommandResult:
        """Run an allowlisted command for ``identity`` (audited and counted by the runner)."""
        spec = self.check_command(command_id, identity, source=source)
        return await self.host.runner.run(spec.id, text, identity, source=source)
