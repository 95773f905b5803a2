"""Slack: ``/sz-ask``, the other ``/sz-*`` commands, threads and feedback through one
slack-bolt app.

Requests arrive at ``POST /slack/events`` (signature and timestamp verified by Bolt; a request
older than five minutes is refused) or, when ``SLACK_APP_TOKEN`` is set, over Socket Mode.
Bolt's listener threads acknowledge at once (well inside Slack's three seconds) and then wait
for the server's event loop to produce the answer:

* ``/sz-ask`` with no text or ``help``: usage and examples, to the asker only;
* ``/sz-ask <question>``: with a bot token (``SLACK_BOT_TOKEN``) the question goes into the
  channel with ``chat.postMessage`` as a "thinking" message that ``chat.update`` turns into the
  answer, and that message starts a thread (see below). Where the bot cannot post
  (``not_in_channel``, ``channel_not_found``: it was never invited, or a direct message) and
  without a bot token, the thinking reply and the answer go through ``response_url`` instead;
* ``/sz-ask run /sz-<cmd> args`` or ``execute <cmd> args``: the command is passed explicitly;
* ``/sz-<name>``: the registered command ``name`` runs for the Slack user;
* Events API (``app_mention``, and ``message`` for replies in threads): ``@szrag question``
  starts a thread under the message, and a reply in a thread the bot started is answered in
  it (``SZRAG_SLACK_THREAD_REPLIES=mentions``: only replies that mention the bot), with the
  thread's earlier questions and answers as the conversation (the thread's key in the
  conversation store: see :mod:`szrag.server.slack_threads`, which also says what is never
  answered and how redelivered events are answered once);
* every answer carries thumbs up and down buttons (``szrag_feedback_up`` and ``_down``, the
  answer id as value): a click keeps the feedback in the conversation store and thanks the
  clicker privately; thumbs down offers a form asking which files were right.

Answers and command output go to the channel, except where a command declares its input
(``sensitive``) or its output (``secret_output``: ``hash``, ``token``) a secret: then only the
asker sees the reply (``response_url`` or ``chat.postEphemeral``), and the question (which may
hold the secret) is not echoed. Which command a question runs is known before it is answered
(the same inference the answer uses), so such a question is never posted to the channel.

The Slack user, channel and team become the identity the command runner and the audit log see.

On a server of several repositories a question is about the repository of its thread, of
its ``in:NAME`` word, of its channel (``slack_channels``), or the one it is routed to
(:mod:`szrag.server.slack_scope`), and each answer names the repository it is from.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import hashlib
import hmac
import logging
import re
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import Response
from slack_bolt import App, BoltContext, BoltRequest, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_sdk import WebClient

from szrag.answer.question import SLACK_OWNER, NamedCommand, Question
from szrag.answer.results import Answer
from szrag.base.errors import (
    ConversationError,
    ServerClosing,
    SlackApiFailed,
    UnknownConversation,
)
from szrag.base.public import public_dict
from szrag.commands import CommandError, CommandRegistry, Identity, infer_command_invocation
from szrag.commands.policy import CommandPolicy
from szrag.conversations import Feedback
from szrag.rank.retrieve import MAX_QUESTION_CHARS
from szrag.server.errors import ApiError
from szrag.server.ratelimit import RateLimiter
from szrag.server.requests import read_body
from szrag.server.service import AskService, error_status
from szrag.server.settings import ServerSettings
from szrag.server.slack_blocks import (
    FEEDBACK_DOWN,
    FEEDBACK_UP,
    THINKING,
    Block,
    answer_blocks,
    answer_messages,
    command_blocks,
    failure_blocks,
    fallback_text,
    help_blocks,
    private_notice,
    question_block,
    section,
    thinking_blocks,
    thinking_text,
)
from szrag.server.slack_feedback import (
    RIGHT_FILES_VIEW,
    feedback_thanks,
    keep_feedback,
    right_files_from,
    right_files_view,
)
from szrag.server.slack_scope import Scope, Scoping, SlackScopes, unknown_repository_text
from szrag.server.slack_threads import KeyedLocks, SeenEvents, ThreadAsk, screen, thread_key
from szrag.server.slack_web import NOT_THERE, SlackWeb
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


SLACK_FACE = "slack"


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


def runs_privately(question: str, command_id: str | None, service: AskService) -> bool:
    """Whether the answer to ``question`` will run a command whose input or output is a
    secret: the one named, else the one the question asks for (the answer's own inference),
    so the question and its answer must stay with the asker from the start."""
    if command_id is None:
        invocation = infer_command_invocation(question, service.registry)
        command_id = invocation.id if invocation is not None else None
    return service.policy.is_private(command_id)


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
        scopes: SlackScopes | None = None,
    ) -> None:
        self.service = service  # the first repository's: help, commands, policy
        self.scopes = scopes if scopes is not None else SlackScopes(service, None)
        self.settings = settings
        self.limiter = limiter
        self.loop = loop
        self.answer_timeout = answer_timeout
        token = settings.slack_bot_token
        self.web = SlackWeb(token, settings.slack_api_url) if token else None
        self._seen = SeenEvents()
        self._threads = KeyedLocks()
        # Daemon threads: a listener still waiting when the process exits does not hold it open.
        self._executor = DaemonThreadPool(LISTENER_THREADS, thread_name_prefix="szrag-slack")
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.app = App(
            signing_secret=settings.slack_signing_secret,
            authorize=_authorizer(token),
            client=WebClient(base_url=settings.slack_api_url),
            request_verification_enabled=bool(settings.slack_signing_secret),
            listener_executor=self._executor,
            logger=log,
        )
        self.app.command(SLASH_COMMAND)(self._on_command)
        self.app.event("app_mention", middleware=[self._screen])(self._on_thread_ask)
        self.app.event("message", middleware=[self._screen])(self._on_thread_ask)
        self.app.action(FEEDBACK_UP)(self._on_feedback)
        self.app.action(FEEDBACK_DOWN)(self._on_feedback)
        self.app.view(RIGHT_FILES_VIEW)(self._on_right_files)
        self._socket_mode: Any = None

    # HTTP and Socket Mode -------------------------------------------------------------

    async def handle(self, request: Request) -> Response:
        """Dispatch one HTTP request from Slack (Bolt verifies its signature and age again).

        The body is capped like an ask's before it is read; its signature and timestamp are
        verified before anything parses it (401), and a signed body that does not parse as
        Slack's JSON or form is refused (400), never a 500."""
        raw = await read_body(request, min(self.settings.max_body_bytes, MAX_SLACK_BODY_BYTES))
        verify_slack_signature(
            self.settings.slack_signing_secret or "",
            request.headers.get("x-slack-request-timestamp", ""),
            request.headers.get("x-slack-signature", ""),
            raw,
        )
        body = raw.decode("utf-8", errors="replace")
        try:
            bolt_request = BoltRequest(
                body=body,
                query=request.url.query,
                headers={key: value for key, value in request.headers.items()},
            )
        except (ValueError, TypeError, AttributeError, KeyError) as error:
            raise ApiError(400, "invalid_body", "the Slack request body does not parse") from error
        if not isinstance(bolt_request.body, dict):
            raise ApiError(400, "invalid_body", "the Slack request body is not an object")
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

    # Slash commands -------------------------------------------------------------------

    def _on_command(self, ack: Say, command: dict[str, Any], respond: Say) -> None:
        name = str(command.get("command", "")).lower()
        text = str(command.get("text") or "")
        identity = slack_identity(command)
        decision = self.limiter.take(f"slack:{identity.team_id}:{identity.user_id}")
        if not decision.allowed:
            ack(text=_too_fast(decision.retry_after_header), response_type="ephemeral")
            return
        if name == ASK_COMMAND:
            self._ask(ack, respond, text, identity)
        else:
            self._command(ack, respond, name, text, identity)

    def _help_blocks(self) -> list[Block]:
        commands = [
            (spec.name, spec.description)
            for spec in self.service.registry.specs()
            if self.service.allows(spec, "slack")
        ]
        blocks = help_blocks(commands)
        if self.scopes.several:  # which repositories a question may name
            names = ", ".join(f"`in:{name}`" for name in self.scopes.names())
            blocks.append(section(f"*Repositories*: name one in the question with {names}"))
        return blocks

    def _request(self, question: str, identity: Identity) -> Question:
        """The ask of ``question``, with the command it names explicitly (the service keeps
        every answer, in its thread's conversation or a new one, so its buttons name it)."""
        explicit = explicit_command(question, self.service.registry)
        return Question(
            question,
            command=NamedCommand(explicit[0], explicit[1] or "") if explicit else None,
            identity=identity,
            face=SLACK_FACE,
            privileged=False,  # the admin-only live tools are never offered in Slack
            remember=True,
        )

    def _ask(self, ack: Say, respond: Say, text: str, identity: Identity) -> None:
        if is_help(text):
            ack(text="How to use /sz-ask", blocks=self._help_blocks(), response_type="ephemeral")
            return
        scoping = self.scopes.read(text.strip()[:MAX_QUESTION_CHARS])
        if scoping.named is not None and not scoping.known:
            known = self.scopes.names()
            ack(text=unknown_repository_text(scoping.named, known), response_type="ephemeral")
            return
        question = scoping.question
        if is_help(question):
            ack(text="How to use /sz-ask", blocks=self._help_blocks(), response_type="ephemeral")
            return
        request = self._request(question, identity)
        if self.web is None or runs_privately(question, request.command_id, self.service):
            ack(text=thinking_text(question), response_type="ephemeral")
        else:
            ack()
            try:
                parent = self.web.post(
                    identity.channel_id,
                    text=thinking_text(question),
                    blocks=thinking_blocks(question),
                )
            except SlackApiFailed as error:
                if error.error not in NOT_THERE:
                    log.warning("%s; answering through response_url", error.message)
                self._post(respond, text=thinking_text(question), response_type="ephemeral")
            else:
                key = thread_key(identity.team_id, identity.channel_id, parent)
                with self._threads.hold(key):
                    self._answer_in_channel(request, key, parent, scoping, shown=question)
                return
        self._answer_by_response_url(respond, request, scoping)

    def _scope(self, scoping: Scoping, channel: str, key: str | None) -> Scope:
        """Where the question is answered (from a listener thread)."""
        return self._on_loop(self.scopes.scope(scoping, channel, key))

    def _named(self, scope: Scope) -> str | None:
        """The repository an answer names: on a server of several only."""
        return scope.repository if self.scopes.several else None

    def _answer_by_response_url(self, respond: Say, request: Question, scoping: Scoping) -> None:
        try:
            scope = self._scope(scoping, request.identity.channel_id, None)
            result = self._on_loop(scope.service.ask(scope.asked(request)))
        except Exception as error:
            self._fail(respond, error)
            return
        private = answered_privately(result, scope.service.policy)
        shown = None if private else request.text
        self._post(
            respond,
            text=fallback_text(result.answer),
            blocks=answer_blocks(
                result.to_dict(),
                question=shown,
                repo_url=self.settings.repo_url,
                repository=self._named(scope),
            ),
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
        responses = [public_dict(response) for response in result.responses]
        blocks = command_blocks(responses)
        self._post(
            respond,
            text=fallback_text(result.text) or result.command,
            blocks=blocks or [section(result.command)],
            response_type="ephemeral"
            if self.service.policy.is_private(result.id)
            else "in_channel",
        )

    # Threads ------------------------------------------------------------------------

    def _screen(
        self, body: dict[str, Any], context: BoltContext, next_: Callable[[], None]
    ) -> BoltResponse | None:
        """Before the acknowledgement: what an event asks, or an acknowledgement alone."""
        if self.web is None:
            log.warning("a Slack event arrived, but without SLACK_BOT_TOKEN nothing can answer it")
            return BoltResponse(status=200, body="")
        ask = screen(
            body,
            replies=self.settings.slack_thread_replies,
            is_known=self._thread_known,
            seen=self._seen,
        )
        if ask is None:
            return BoltResponse(status=200, body="")
        context["szrag_ask"] = ask
        next_()
        return None

    def _thread_known(self, key: str) -> bool:
        if self.scopes.faces is not None:  # any repository's store may keep the thread
            try:
                return self._on_loop(self.scopes.of_thread(key)) is not None
            except Exception as error:
                log.warning("a Slack thread was not answered: %s", error)
                return False
        try:
            self.service.host.conversations.get(key)
        except UnknownConversation:
            return False
        except ConversationError as error:
            log.warning("a Slack thread was not answered: %s", error.message)
            return False
        return True

    def _on_thread_ask(self, context: BoltContext) -> None:
        ask: ThreadAsk = context["szrag_ask"]
        identity = ask.identity
        decision = self.limiter.take(f"slack:{identity.team_id}:{identity.user_id}")
        if not decision.allowed:
            self._whisper(ask, text=_too_fast(decision.retry_after_header))
            return
        scoping = self.scopes.read(ask.question)
        if scoping.named is not None and not scoping.known:
            self._whisper(ask, text=unknown_repository_text(scoping.named, self.scopes.names()))
            return
        if is_help(scoping.question):
            self._whisper(ask, text="How to ask szrag", blocks=self._help_blocks())
            return
        request = self._request(scoping.question, identity)
        with self._threads.hold(ask.key):
            if runs_privately(scoping.question, request.command_id, self.service):
                self._whisper(ask, text=thinking_text(scoping.question))
                self._answer_privately(request, ask.key, ask.thread_ts, scoping)
                return
            assert self.web is not None
            try:
                thinking = self.web.post(
                    ask.channel,
                    text=THINKING,
                    blocks=thinking_blocks(None),
                    thread_ts=ask.thread_ts,
                )
            except SlackApiFailed as error:
                log.warning("a Slack question was not answered: %s", error.message)
                return
            self._answer_in_channel(request, ask.key, thinking, scoping, thread_ts=ask.thread_ts)

    def _start(self, service: AskService, key: str) -> str | None:
        """The thread's conversation, started on first use in the store of the repository
        that answers; None when the store cannot keep it (the question is then answered
        without the thread's earlier turns)."""
        try:
            return service.host.conversations.start(key, face="slack", owner=SLACK_OWNER).id
        except ConversationError as error:
            log.warning("the Slack thread %s is answered without its history: %s", key, error)
            return None

    def _answer_in_channel(
        self,
        request: Question,
        key: str,
        thinking: str,
        scoping: Scoping,
        *,
        thread_ts: str | None = None,
        shown: str | None = None,
    ) -> None:
        """Answer ``request`` in the thread ``key``: the message ``thinking`` becomes the
        answer (the rest of a long one follows in the thread), or, when the answer turns out
        to show a secret, a notice while the answer goes to the asker alone."""
        assert self.web is not None
        channel, user = request.identity.channel_id, request.identity.user_id
        try:
            scope = self._scope(scoping, channel, key)
            request = dataclasses.replace(request, conversation_id=self._start(scope.service, key))
            result = self._on_loop(scope.service.ask(scope.asked(request)))
        except Exception as error:
            message = self._failure_message(error)
            blocks = [*([question_block(shown)] if shown else []), *failure_blocks(message)]
            self._safely(self.web.update, channel, thinking, text=_sorry(message), blocks=blocks)
            return
        if answered_privately(result, scope.service.policy):
            notice = private_notice(user)
            self._safely(self.web.update, channel, thinking, text=notice, blocks=[section(notice)])
            self._whisper_answer(result, channel, user, thread_ts or thinking)
            return
        messages = answer_messages(
            result.to_dict(),
            question=shown,
            repo_url=self.settings.repo_url,
            repository=self._named(scope),
        )
        self._safely(
            self.web.deliver,
            channel,
            messages,
            thread_ts=thread_ts,
            replace_ts=thinking,
            text=fallback_text(result.answer),
        )

    def _answer_privately(
        self, request: Question, key: str, thread_ts: str, scoping: Scoping
    ) -> None:
        """Answer ``request`` in the thread ``key`` where only the asker sees it."""
        channel, user = request.identity.channel_id, request.identity.user_id
        try:
            scope = self._scope(scoping, channel, key)
            request = dataclasses.replace(request, conversation_id=self._start(scope.service, key))
            result = self._on_loop(scope.service.ask(scope.asked(request)))
        except Exception as error:
            message = self._failure_message(error)
            self._whisper_to(
                channel, user, thread_ts, text=_sorry(message), blocks=failure_blocks(message)
            )
            return
        self._whisper_answer(result, channel, user, thread_ts)

    def _whisper_answer(self, result: Answer, channel: str, user: str, thread_ts: str) -> None:
        for blocks in answer_messages(
            result.to_dict(), question=None, repo_url=self.settings.repo_url
        ):
            self._whisper_to(
                channel, user, thread_ts, text=fallback_text(result.answer), blocks=blocks
            )

    def _whisper(self, ask: ThreadAsk, *, text: str, blocks: list[Block] | None = None) -> None:
        self._whisper_to(ask.channel, ask.identity.user_id, ask.thread_ts, text=text, blocks=blocks)

    def _whisper_to(
        self,
        channel: str,
        user: str,
        thread_ts: str | None,
        *,
        text: str,
        blocks: list[Block] | None = None,
    ) -> None:
        if self.web is not None:
            self._safely(
                self.web.ephemeral, channel, user, text=text, blocks=blocks, thread_ts=thread_ts
            )

    # Feedback -----------------------------------------------------------------------

    def _on_feedback(
        self, ack: Say, body: dict[str, Any], action: dict[str, Any], respond: Say
    ) -> None:
        ack()
        identity = _actor(body)
        answer_id = str(action.get("value") or "")
        rating = "up" if action.get("action_id") == FEEDBACK_UP else "down"
        channel = identity.channel_id
        thread_ts = _thread_of(body)
        try:
            self._keep_feedback(answer_id, rating, identity=identity)
        except ConversationError as error:
            self._tell(respond, channel, identity.user_id, thread_ts, f":warning: {error.message}")
            return
        self._tell(respond, channel, identity.user_id, thread_ts, feedback_thanks(rating))
        trigger = body.get("trigger_id")
        if rating == "down" and self.web is not None and isinstance(trigger, str) and trigger:
            view = right_files_view(answer_id, channel=channel, thread_ts=thread_ts)
            self._safely(self.web.open_view, trigger, view)

    def _on_right_files(self, ack: Say, body: dict[str, Any], view: dict[str, Any]) -> None:
        identity = _actor(body)
        given = right_files_from(view)
        try:
            kept = self._keep_feedback(
                given.answer_id,
                "down",
                right_files=given.right_files,
                comment=given.comment,
                identity=identity,
            )
        except ConversationError as error:
            ack(response_action="errors", errors={given.error_block: error.message[:300]})
            return
        ack()
        if given.channel:
            self._whisper_to(
                given.channel,
                identity.user_id,
                given.thread_ts,
                text=feedback_thanks("down", kept.right_files),
            )

    def _keep_feedback(
        self,
        answer_id: str,
        rating: str,
        *,
        identity: Identity,
        right_files: Sequence[str] = (),
        comment: str | None = None,
    ) -> Feedback:
        """Feedback kept where its answer is: the store of the repository that gave it
        (found without building the other repositories' indexes); UnknownAnswer when no
        repository keeps it."""
        service = (
            self.service
            if self.scopes.faces is None
            else self._on_loop(self.scopes.of_answer(answer_id))
        )
        return keep_feedback(
            service.host,
            answer_id,
            rating,
            right_files=right_files,
            comment=comment,
            identity=identity,
        )

    def _tell(
        self, respond: Say, channel: str, user: str, thread_ts: str | None, text: str
    ) -> None:
        """A short private reply to a click: in the channel when the bot may post there,
        else through the click's response_url."""
        if self.web is not None and channel != "unknown":
            try:
                self.web.ephemeral(channel, user, text=text, thread_ts=thread_ts)
                return
            except SlackApiFailed as error:
                if error.error not in NOT_THERE:
                    log.warning("%s", error.message)
        self._post(respond, text=text, response_type="ephemeral", replace_original=False)

    # The event loop -------------------------------------------------------------------

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

    @staticmethod
    def _failure_message(error: BaseException) -> str:
        if isinstance(error, CommandError | ApiError | ServerClosing):
            return error.message
        if isinstance(error, TimeoutError):
            return "It took too long; please try again."
        log.error("a Slack request failed", exc_info=error)
        _, _, message = error_status(error)
        return message

    def _fail(self, respond: Say, error: BaseException) -> None:
        message = self._failure_message(error)
        self._post(
            respond,
            text=_sorry(message),
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

    @staticmethod
    def _safely(call: Callable[..., Any], *arguments: Any, **keywords: Any) -> None:
        """A Web API call whose failure is logged: the answer is lost, the listener is not."""
        try:
            call(*arguments, **keywords)
        except SlackApiFailed as error:
            log.warning("%s", error.message)


SLACK_REQUEST_MAX_AGE_SECONDS = 300  # Slack's own rule against replays
MAX_TIMESTAMP_DIGITS = 12


def verify_slack_signature(secret: str, stamp: str, signature: str, body: bytes) -> None:
    """Raise a 401 ApiError unless ``signature`` is Slack's ``v0`` HMAC of the raw ``body``
    under ``secret``, with a timestamp of ASCII digits within five minutes of now."""
    stamp = stamp.strip()
    # isdigit() alone takes superscripts, which int() refuses; 309 digits overflow a float
    if not (stamp.isascii() and stamp.isdigit() and len(stamp) <= MAX_TIMESTAMP_DIGITS):
        raise ApiError(401, "invalid_signature", "the Slack request timestamp is missing or bad")
    if abs(time.time() - int(stamp)) > SLACK_REQUEST_MAX_AGE_SECONDS:
        raise ApiError(401, "invalid_signature", "the Slack request is too old")
    expected = (
        "v0="
        + hmac.new(
            secret.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256
        ).hexdigest()
    )
    if not secret or not hmac.compare_digest(expected.encode(), signature.strip().encode()):
        raise ApiError(401, "invalid_signature", "the Slack request signature is wrong")


def _too_fast(retry_after: str) -> str:
    return f":hourglass: You are asking faster than this bot allows; try again in {retry_after} s."


def _sorry(message: str) -> str:
    return f"Sorry, I could not answer that. {message}"


def _actor(body: dict[str, Any]) -> Identity:
    """Who clicked or submitted, where."""
    user = body.get("user") or {}
    channel = body.get("channel") or {}
    team = body.get("team") or {}
    user_id = str(user.get("id") or "unknown")
    return Identity(
        user_id=user_id,
        user_name=str(user.get("username") or user.get("name") or user_id),
        channel_id=str(
            channel.get("id") or (body.get("container") or {}).get("channel_id") or "unknown"
        ),
        team_id=str(team.get("id") or user.get("team_id") or "unknown"),
    )


def _thread_of(body: dict[str, Any]) -> str | None:
    """The thread a clicked message is in (or starts), for a reply beside it."""
    container = body.get("container") or {}
    message = body.get("message") or {}
    found = container.get("thread_ts") or message.get("thread_ts")
    return str(found) if found else None


router = APIRouter()


@router.post("/slack/events", include_in_schema=False)
async def slack_events(request: Request) -> Response:
    """Slack's request URL for slash commands (and interactivity)."""
    slack = server_state(request).slack
    if slack is None or not server_state(request).settings.slack_signing_secret:
        raise ApiError(404, "slack_disabled", "Slack is not configured (SLACK_SIGNING_SECRET)")
    return await slack.handle(request)
