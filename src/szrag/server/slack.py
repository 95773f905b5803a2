"""Slack: ``/sz-ask`` and the other ``/sz-*`` commands through one slack-bolt app.

Requests arrive at ``POST /slack/events`` (signature and timestamp verified by Bolt; a request
older than five minutes is refused) or, when ``SLACK_APP_TOKEN`` is set, over Socket Mode.
Bolt's listener threads acknowledge at once (well inside Slack's three seconds) and then wait
for the server's event loop to produce the answer, which goes back through ``response_url``:

* ``/sz-ask`` with no text or ``help``: usage and examples;
* ``/sz-ask <question>``: a "thinking" reply, then the answer as Block Kit (mrkdwn answer,
  sources linked to ``SZRAG_REPO_URL`` when set), or a friendly failure;
* ``/sz-ask run /sz-<cmd> args`` or ``execute <cmd> args``: the command is passed explicitly;
* ``/sz-<name>``: the registered command ``name`` runs for the Slack user.

Answers and command output go to the channel, except where a command declares its input
(``sensitive``) or its output (``secret_output``: ``hash``, ``token``) a secret: then only the
asker sees the reply, and the question (which may hold the secret) is not echoed.

The Slack user, channel and team become the identity the command runner and the audit log see.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import re
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import Response
from slack_bolt import App, BoltRequest
from slack_bolt.authorization import AuthorizeResult

from szrag.commands import CommandError, CommandRegistry, Identity
from szrag.commands.policy import CommandPolicy
from szrag.errors import ServerClosing
from szrag.results import Answer
from szrag.retrieve import MAX_QUESTION_CHARS
from szrag.server.errors import ApiError
from szrag.server.ratelimit import RateLimiter
from szrag.server.requests import AskRequest, read_body
from szrag.server.service import AskService, error_status
from szrag.server.settings import ServerSettings
from szrag.server.slack_blocks import (
    answer_blocks,
    command_blocks,
    failure_blocks,
    fallback_text,
    help_blocks,
    section,
    thinking_text,
)
from szrag.server.state import server_state
from szrag.server.threads import DaemonThreadPool

log = logging.getLogger("szrag.server.slack")

ASK_COMMAND = "/sz-ask"
SLASH_COMMAND = re.compile(r"^/sz-[a-z0-9][a-z0-9_-]*$")
ANSWER_TIMEOUT_SECONDS = 600.0
MAX_SLACK_BODY_BYTES = 64 * 1024  # a slash command is a few hundred bytes
LISTENER_THREADS = 16
_EXPLICIT = re.compile(
    r"^(?:run|execute)\s+(?:the\s+)?(?:command\s+)?(?P<command>/?[a-z0-9][a-z0-9_-]*)(?:\s+(?P<args>.*))?$",
    re.IGNORECASE | re.DOTALL,
)

T = TypeVar("T")
Say = Callable[..., Any]


def slack_identity(command: dict[str, Any]) -> Identity:
    """The Slack user, channel and team of a slash command payload."""
    return Identity(
        user_id=str(command.get("user_id") or "unknown"),
        user_name=str(command.get("user_name") or command.get("user_id") or "unknown"),
        channel_id=str(command.get("channel_id") or "unknown"),
        team_id=str(command.get("team_id") or "unknown"),
    )


def explicit_command(text: str, registry: CommandRegistry) -> tuple[str, str] | None:
    """``(command id, arguments)`` of ``run /sz-x args`` or ``execute x args``, if ``x`` exists."""
    match = _EXPLICIT.match(text.strip())
    if match is None:
        return None
    spec = registry.get(match.group("command"))
    if spec is None:
        return None
    return spec.id, (match.group("args") or "").strip()


def answered_privately(result: Answer, policy: CommandPolicy) -> bool:
    """Whether an answer ran a command whose input or output is a secret (as the command
    declares), so only the asker may see it."""
    return result.command is not None and policy.is_private(result.command.id)


def is_help(text: str) -> bool:
    """Whether ``/sz-ask`` was given nothing to answer."""
    return text.strip().lower() in ("", "help", "-h", "--help", "?")


def _authorizer(bot_token: str | None) -> Callable[..., AuthorizeResult]:
    """Bolt's authorize function: slash commands answer through response_url and need no
    token, so nothing is looked up (and nothing goes over the network); a bot token is
    handed on when configured."""

    # Bolt passes arguments by their names, so this must be a plain function.
    def authorize(enterprise_id: str | None, team_id: str | None) -> AuthorizeResult:
        return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, bot_token=bot_token)

    return authorize


class SlackFace:
    """The Bolt app of one server and the bridge from its threads to the event loop."""

    def __init__(
        self,
        service: AskService,
        settings: ServerSettings,
        limiter: RateLimiter,
        loop: asyncio.AbstractEventLoop,
        *,
        answer_timeout: float = ANSWER_TIMEOUT_SECONDS,
    ) -> None:
        self.service = service
        self.settings = settings
        self.limiter = limiter
        self.loop = loop
        self.answer_timeout = answer_timeout
        # Daemon threads: a listener still waiting when the process exits does not hold it open.
        self._executor = DaemonThreadPool(LISTENER_THREADS, thread_name_prefix="szrag-slack")
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.app = App(
            signing_secret=settings.slack_signing_secret,
            authorize=_authorizer(settings.slack_bot_token),
            request_verification_enabled=bool(settings.slack_signing_secret),
            listener_executor=self._executor,
            logger=log,
        )
        self.app.command(SLASH_COMMAND)(self._on_command)
        self._socket_mode: Any = None

    # HTTP and Socket Mode -------------------------------------------------------------

    async def handle(self, request: Request) -> Response:
        """Dispatch one HTTP request from Slack (Bolt verifies its signature and age).

        The body is capped like an ask's before it is read, and a request whose timestamp is
        no number is refused before Bolt sees it."""
        stamp = request.headers.get("x-slack-request-timestamp", "")
        if not stamp.strip().isdigit():
            raise ApiError(401, "invalid_signature", "the Slack request timestamp is missing")
        raw = await read_body(request, min(self.settings.max_body_bytes, MAX_SLACK_BODY_BYTES))
        body = raw.decode("utf-8", errors="replace")
        bolt_request = BoltRequest(
            body=body,
            query=request.url.query,
            headers={key: value for key, value in request.headers.items()},
        )
        # dispatch blocks until the listener has acknowledged: keep it off the event loop.
        bolt_response = await anyio.to_thread.run_sync(self.app.dispatch, bolt_request)
        return Response(
            content=bolt_response.body,
            status_code=bolt_response.status,
            headers=bolt_response.first_headers_without_set_cookie(),
        )

    def start_socket_mode(self) -> None:
        """Connect over Socket Mode (blocking; call from a worker thread)."""
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        handler = SocketModeHandler(self.app, self.settings.slack_app_token)
        handler.connect()  # type: ignore[no-untyped-call]
        self._socket_mode = handler

    def close(self) -> None:
        """Disconnect Socket Mode, cancel the answers listeners are waiting for (each listener
        then tells its user the server is stopping) and stop the listener threads."""
        with self._lock:
            self._closed = True
            pending = list(self._pending)
        for future in pending:
            future.cancel()  # also cancels the answer's task on the event loop
        if self._socket_mode is not None:
            try:
                self._socket_mode.close()
            except Exception:
                log.exception("closing Socket Mode failed")
        self._executor.shutdown(wait=False, cancel_futures=True)

    # Listeners ----------------------------------------------------------------------

    def _on_command(self, ack: Say, command: dict[str, Any], respond: Say) -> None:
        name = str(command.get("command", "")).lower()
        text = str(command.get("text") or "")
        identity = slack_identity(command)
        decision = self.limiter.take(f"slack:{identity.team_id}:{identity.user_id}")
        if not decision.allowed:
            ack(
                text=f":hourglass: You are asking faster than this bot allows; try again in "
                f"{decision.retry_after_header} s.",
                response_type="ephemeral",
            )
            return
        if name == ASK_COMMAND:
            self._ask(ack, respond, text, identity)
        else:
            self._command(ack, respond, name, text, identity)

    def _ask(self, ack: Say, respond: Say, text: str, identity: Identity) -> None:
        if is_help(text):
            commands = [
                (spec.name, spec.description)
                for spec in self.service.registry.specs()
                if self.service.allows(spec, "slack")
            ]
            blocks = help_blocks(commands)
            ack(text="How to use /sz-ask", blocks=blocks, response_type="ephemeral")
            return
        question = text.strip()[:MAX_QUESTION_CHARS]
        command_id, command_text = None, None
        explicit = explicit_command(question, self.service.registry)
        if explicit is not None:
            command_id, command_text = explicit
        ack(text=thinking_text(question), response_type="ephemeral")
        request = AskRequest(
            question=question, command_id=command_id, command_text=command_text, identity=identity
        )
        try:
            result = self._on_loop(self.service.ask(request, source="slack"))
        except Exception as error:
            self._fail(respond, error)
            return
        private = answered_privately(result, self.service.policy)
        shown = None if private else question
        self._post(
            respond,
            text=fallback_text(result.answer),
            blocks=answer_blocks(result.to_dict(), question=shown, repo_url=self.settings.repo_url),
            response_type="ephemeral" if private else "in_channel",
        )

    def _command(self, ack: Say, respond: Say, name: str, text: str, identity: Identity) -> None:
        command_id = name.removeprefix("/sz-")
        try:
            self.service.check_command(command_id, identity, source="slack")
        except ApiError as error:
            ack(text=f":no_entry: {error.message}", response_type="ephemeral")
            return
        ack()
        try:
            result = self._on_loop(
                self.service.run_command(command_id, text, identity, source="slack")
            )
        except Exception as error:
            self._fail(respond, error)
            return
        responses = [response.to_dict() for response in result.responses]
        blocks = command_blocks(responses)
        self._post(
            respond,
            text=fallback_text(result.text) or result.command,
            blocks=blocks or [section(result.command)],
            response_type="ephemeral"
            if self.service.policy.is_private(result.id)
            else "in_channel",
        )

    def _on_loop(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the server's event loop and wait for it from this thread (until
        the answer timeout, or until the server closes)."""
        with self._lock:
            if self._closed:
                coroutine.close()
                raise ServerClosing("the server is shutting down; please try again shortly")
            future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
            self._pending.add(future)
        try:
            return future.result(self.answer_timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {self.answer_timeout:g} s") from None
        except concurrent.futures.CancelledError:
            raise ServerClosing("the server is shutting down; please try again shortly") from None
        finally:
            with self._lock:
                self._pending.discard(future)

    def _fail(self, respond: Say, error: BaseException) -> None:
        if isinstance(error, CommandError | ApiError | ServerClosing):
            message = error.message
        elif isinstance(error, TimeoutError):
            message = "It took too long; please try again."
        else:
            log.error("a Slack request failed", exc_info=error)
            _, _, message = error_status(error)
        self._post(
            respond,
            text=f"Sorry, I could not answer that. {message}",
            blocks=failure_blocks(message),
            response_type="ephemeral",
        )

    @staticmethod
    def _post(respond: Say, **message: Any) -> None:
        """Post through response_url; a failure is logged (Slack may have expired the URL)."""
        try:
            respond(**message)
        except Exception:
            log.exception("posting to Slack's response_url failed")


router = APIRouter()


@router.post("/slack/events", include_in_schema=False)
async def slack_events(request: Request) -> Response:
    """Slack's request URL for slash commands (and interactivity)."""
    slack = server_state(request).slack
    if slack is None or not server_state(request).settings.slack_signing_secret:
        raise ApiError(404, "slack_disabled", "Slack is not configured (SLACK_SIGNING_SECRET)")
    return await slack.handle(request)
