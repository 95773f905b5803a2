"""What the faces share: answering a question and running a command for an identity, with
the allowlist checked first and every ask audited.

One :class:`AskService` lives per server. It holds the shared index, the process runtime
(status, metrics, logs, errors) that both the live tools and the HTTP routes read, one HTTP
client for the model provider, the command runner and the audit log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from szrag.activity import OnActivity
from szrag.answer import answer_question_async
from szrag.audit import AuditLog
from szrag.commands import (
    Allowlist,
    CommandError,
    CommandNotAllowed,
    CommandOutcome,
    CommandRegistry,
    CommandResult,
    CommandRunner,
    CommandSpec,
    Identity,
    default_registry,
)
from szrag.commands.errors import error_code
from szrag.errors import SzragError
from szrag.index import Index
from szrag.runtime import ProcessRuntime
from szrag.server.errors import ApiError
from szrag.server.requests import AskRequest
from szrag.settings import Settings
from szrag.tools import BLOCKED_TOOL_COMMANDS, ToolAdapter

log = logging.getLogger("szrag.server")

OnToken = Callable[[str, int], Awaitable[None] | None]


def error_status(error: BaseException) -> tuple[int, str, str]:
    """The HTTP status, code and message that describe a failure to answer: each szrag
    error's own ``http_status`` and ``code``; anything else is an internal error."""
    if isinstance(error, ApiError):
        return error.status, error.code, error.message
    if isinstance(error, SzragError):
        return error.http_status, error.code, error.message
    return 500, "internal_error", "the server failed to answer; the error is in its log"


class AskService:
    """Answers questions and runs commands for the HTTP API and Slack."""

    def __init__(
        self,
        root: Path,
        index: Index,
        *,
        answer_settings: Settings,
        runtime: ProcessRuntime,
        allowlist: Allowlist,
        audit: AuditLog,
        http_client: httpx.AsyncClient | None = None,
        live_tools: bool = True,
        registry: CommandRegistry | None = None,
    ) -> None:
        self.root = root
        self.index = index
        self.answer_settings = answer_settings
        self.runtime = runtime
        self.allowlist = allowlist
        self.audit = audit
        self.http_client = http_client
        self.registry = registry or default_registry()
        # Admin-only tools (getErrors) are offered only to holders of the admin token.
        self.tools = (
            ToolAdapter(self.registry, runtime, root, allowlist, audit, privileged=False)
            if live_tools
            else None
        )
        self.admin_tools = self.tools.with_privilege(True) if self.tools else None
        self.runner = CommandRunner(
            registry=self.registry,
            allowlist=allowlist,
            observers=[audit.record_command, runtime.record_command],
            root=root,
            runtime=runtime,
        )

    def allows(self, spec: CommandSpec) -> bool:
        """Whether callers of this server may run ``spec`` (listings; nothing is recorded)."""
        return spec.id not in BLOCKED_TOOL_COMMANDS and self.allowlist.allows(spec.id)

    def check_command(
        self, command_id: str, identity: Identity | None = None, *, source: str = "api"
    ) -> CommandSpec:
        """The command a caller asked for, if it exists and may run here; else ApiError.

        A refusal of ``identity`` is reported to the runner's observers like any other command
        outcome, so the audit log and the metrics see who tried what.
        """
        spec = self.registry.get(command_id)
        if spec is None:
            hint = self.registry.suggestions(command_id)
            suffix = f"; did you mean {', '.join(hint)}?" if hint else ""
            raise ApiError(404, "unknown_command", f"unknown command {command_id!r}{suffix}")
        if spec.id in BLOCKED_TOOL_COMMANDS:
            message = f"{spec.name} cannot be run as a command"
            self._refused(spec, identity, source, "blocked", message)
            raise ApiError(403, "command_not_allowed", message)
        try:
            return self.runner.resolve(spec.id)
        except CommandNotAllowed as error:
            self._refused(spec, identity, source, error_code(error), error.message)
            raise ApiError(403, "command_not_allowed", error.message) from None
        except CommandError as error:  # registered without a handler
            raise ApiError(*error_status(error)) from None

    def _refused(
        self, spec: CommandSpec, identity: Identity | None, source: str, status: str, message: str
    ) -> None:
        if identity is None:
            return
        outcome = CommandOutcome(
            command_id=spec.id,
            text="",
            identity=identity,
            source=source,
            status=status,
            duration_ms=0.0,
            message=message,
            sensitive=spec.sensitive,
        )
        for observer in self.runner.observers:
            try:
                observer(outcome)
            except Exception:
                log.exception("command observer %r failed", observer)

    async def ask(
        self,
        request: AskRequest,
        *,
        source: str,
        on_activity: OnActivity | None = None,
        on_token: OnToken | None = None,
    ) -> dict[str, Any]:
        """Answer ``request``; the ask is audited whatever happens."""
        started = time.perf_counter()
        outcome, message = "ok", ""
        command_id = request.command_id
        if command_id is not None:
            command_id = self.check_command(command_id, request.identity, source=source).id
        try:
            result = await answer_question_async(
                request.question,
                root=self.root,
                with_ai=request.with_ai,
                command_id=command_id,
                command_text=request.command_text,
                identity=request.identity,
                tools=self.admin_tools if request.admin else self.tools,
                on_activity=on_activity,
                on_token=on_token,
                index=self.index,
                budget=request.budget,
                settings=self.answer_settings,
                http_client=self.http_client,
                commands=self.runner,
            )
        except asyncio.CancelledError:
            outcome, message = "cancelled", "the caller went away"
            raise
        except SzragError as error:
            outcome, message = "failed", error.message
            raise
        except Exception as error:
            outcome, message = "error", f"{type(error).__name__}: {error}"
            log.error("answering failed", exc_info=error)
            self.runtime.record_error(error, "ask")
            raise
        finally:
            self.audit.record_ask(
                request.identity,
                request.question,
                outcome=outcome,
                duration_ms=(time.perf_counter() - started) * 1000,
                source=source,
                message=message,
            )
        problem = result.get("error")
        if isinstance(problem, dict):
            log.warning("the model failed: %s", problem.get("message"))
        return result

    async def run_command(
        self, command_id: str, text: str, identity: Identity, *, source: str
    ) -> CommandResult:
        """Run an allowlisted command for ``identity`` (audited and counted by the runner)."""
        spec = self.check_command(command_id, identity, source=source)
        return await self.runner.run(spec.id, text, identity, source=source)
