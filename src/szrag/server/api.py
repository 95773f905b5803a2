"""The HTTP API: ``POST /api/ask`` (JSON or server-sent events, in a conversation),
``POST /api/feedback``, the runtime reads, and ``/healthz``.

Every ``/api`` route authenticates its caller (hosts and cross-origin browsers were already
refused by the application's guard, see :mod:`szrag.server.origin`) and spends from the
caller's rate-limit bucket (asks and reads have separate budgets). Answers are
``{ok: true, data}``; failures ``{ok: false, code, error}``. An answer whose client hangs up
is cancelled, in JSON mode as with events, so the model request does not run on for nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Awaitable, Coroutine
from typing import Annotated, Any, TypeVar

import anyio
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from sse_starlette import EventSourceResponse

from szrag.answer.question import Admitted, Question
from szrag.answer.results import Answer, ScopedAnswer
from szrag.base.errors import ClientGone, StoreUnavailable
from szrag.base.public import json_bytes, public_dict, to_public
from szrag.index.build import is_damage
from szrag.runtime import Reading
from szrag.runtime.indexinfo import routes_of
from szrag.server.auth import Caller, authenticate, require_admin
from szrag.server.errors import ApiError
from szrag.server.ratelimit import RateLimiter
from szrag.server.repositories import only_repository, scoped, single_state
from szrag.server.requests import (
    parse_ask,
    parse_feedback,
    parse_json_body,
    parse_repository,
    read_body,
)
from szrag.server.service import AskService, error_status
from szrag.server.sse import OnActivity, OnToken, answer_events
from szrag.server.state import ServerState, server_state
from szrag.tools import sanitise

MAX_READ_LIMIT = 10
DISCONNECT_POLL_SECONDS = 0.2

T = TypeVar("T")

router = APIRouter()


class PublicJSONResponse(JSONResponse):
    """A JSON response whose content is public data (``to_public``), written by orjson."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content)


def ok(data: Any, status: int = 200) -> JSONResponse:
    """The success envelope, its data in the public form."""
    return PublicJSONResponse({"ok": True, "data": to_public(data)}, status_code=status)


def failure(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The failure envelope."""
    return PublicJSONResponse(
        {"ok": False, "code": code, "error": message}, status_code=status, headers=headers
    )


def _spend(limiter: RateLimiter, caller: Caller) -> None:
    decision = limiter.take(caller.key)
    if not decision.allowed:
        wait = decision.retry_after_header
        raise ApiError(
            429,
            "rate_limited",
            f"too many requests: try again in {wait} s",
            headers={"Retry-After": wait},
        )


def _caller(request: Request) -> Caller:
    # Host and Origin were checked by the application's guard before any route ran.
    state = server_state(request)
    client = request.client.host if request.client else None
    return authenticate(request.headers.get("authorization"), client, state.settings)


def reader(request: Request) -> Caller:
    """An authenticated caller of a read route, charged to the read budget."""
    caller = _caller(request)
    _spend(server_state(request).read_limiter, caller)
    return caller


def asker(request: Request) -> Caller:
    """An authenticated caller of ``/api/ask``, charged to the ask budget."""
    caller = _caller(request)
    _spend(server_state(request).ask_limiter, caller)
    return caller


ReadCaller = Annotated[Caller, Depends(reader)]
AskCaller = Annotated[Caller, Depends(asker)]
State = Annotated[ServerState, Depends(server_state)]


def wants_events(request: Request) -> bool:
    """Whether the client asked for server-sent events."""
    return "text/event-stream" in request.headers.get("accept", "").lower()


async def until_disconnected(request: Request, work: Coroutine[Any, Any, T]) -> T:
    """``work``'s result, or ClientGone once the client has disconnected (``work`` is then
    cancelled, which also closes its model request)."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=DISCONNECT_POLL_SECONDS)
            if done:
                return task.result()
            if await request.is_disconnected():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                raise ClientGone("the client closed the connection")
    finally:
        task.cancel()  # a no-op when finished; otherwise this handler itself was cancelled


def error_payload(error: BaseException) -> dict[str, Any]:
    """``{code, error}`` of a failure, for the ``error`` event."""
    _, code, message = error_status(error)
    return {"code": code, "error": message}


@router.post("/api/ask", response_model=None)
async def ask(request: Request, caller: AskCaller, state: State) -> Response:
    """Answer a question: streamed as events with ``Accept: text/event-stream``, else JSON."""
    body = await read_body(request, state.settings.max_body_bytes)
    payload = parse_json_body(body)
    question = parse_ask(payload, caller)
    # the repository found, then the question admitted, before the stream starts: an unknown
    # repository is a real 404, a refused command a real 403, an unknown conversation a 404
    service, repository, question = await _answering(state, question, parse_repository(payload))
    admitted = await service.admit(question)
    if wants_events(request):
        return _stream(admitted, service, repository, state)
    try:
        answer = await until_disconnected(request, service.ask(admitted))
        result: Answer | ScopedAnswer = (
            scoped(answer, repository) if repository is not None else answer
        )
    except ClientGone:
        # Nobody reads this; the answer was cancelled (and audited as such).
        return failure(499, "client_closed", "the client closed the connection")
    except Exception as error:
        status, code, message = error_status(error)
        return failure(status, code, message)
    return ok(result)


@router.post("/api/feedback")
async def feedback(request: Request, caller: AskCaller, state: State) -> JSONResponse:
    """Keep feedback on an answer: ``{answerId, rating, rightFiles?, comment?,
    repository?}`` (the repository the answer is from; without it, the one whose store
    keeps the answer)."""
    body = await read_body(request, state.settings.max_body_bytes)
    payload = parse_json_body(body)
    given = parse_feedback(payload, caller)
    repository = parse_repository(payload)
    faces = state.repositories
    if faces is None:
        only_repository(state.service.root.name, repository)
        service = state.service
    elif repository is not None:
        service = (await faces.face(repository)).service
    else:  # the repository whose store keeps the answer
        service = (await faces.of_answer(given.answer_id)).service
    return ok(await service.feedback(given))


async def _answering(
    state: ServerState, question: Question, repository: str | None
) -> tuple[AskService, str | None, Question]:
    """The service that answers ``question``, in a service over several repositories the
    repository's name (the one named, else the one its conversation began in, else the one
    it is routed to), and the question as it is asked there: a routed one with the other
    repositories' best sources beside. A single repository answers everything; naming
    another is a 404."""
    faces = state.repositories
    if faces is None:
        only_repository(state.service.root.name, repository)
        return state.service, None, question
    if repository is not None:
        face = await faces.face(repository)
    elif question.conversation_id is not None:
        face = await faces.of_conversation(question.conversation_id)
    else:
        face, elsewhere = await faces.route(question.text)
        question = dataclasses.replace(question, elsewhere=elsewhere)
    return face.service, face.name, question


@router.get("/api/repositories")
async def repositories(caller: ReadCaller, state: State) -> JSONResponse:
    """The repositories this server answers about, with the state of each (one read, spent
    by ``ReadCaller``)."""
    if state.repositories is not None:
        return ok(state.repositories.states())
    root = state.service.root
    return ok([single_state(root.name, state.service.index)])


def _stream(
    admitted: Admitted, service: AskService, repository: str | None, state: ServerState
) -> EventSourceResponse:
    async def run(on_activity: OnActivity, on_token: OnToken) -> Answer | ScopedAnswer:
        answer = await service.ask(admitted.heard_by(on_activity, on_token))
        return scoped(answer, repository) if repository is not None else answer

    return EventSourceResponse(
        answer_events(run, error_payload),
        ping=state.settings.sse_ping_seconds,
        sep="\n",
        headers={"Cache-Control": "no-store"},
    )


async def _runtime_read(read: Awaitable[Reading]) -> Any:
    """A runtime read's result, sanitised."""
    return sanitise(await read)


@router.get("/api/status")
async def status(caller: ReadCaller, state: State) -> JSONResponse:
    """Process, repository, index and deployment status, plus the index watcher."""
    data = await _runtime_read(state.service.reads.status())
    if isinstance(data, dict):
        data["watcher"] = to_public(state.watcher.state) if state.watcher else {"running": False}
        # until its first views are built, a server answers from the store (slower per question)
        warming = state.warming is not None and not state.warming.done()
        data["views"] = "warming" if warming else "ready"
    return ok(data)


@router.get("/api/commands")
async def commands(caller: ReadCaller, state: State) -> JSONResponse:
    """Every registered command with whether this server lets it run."""
    service = state.service
    listed = [
        {**public_dict(spec), "runnable": service.allows(spec), "private": spec.private}
        for spec in service.registry.specs()
    ]
    return ok({"commands": listed, "count": len(listed)})


@router.get("/api/release")
async def release(
    caller: ReadCaller, state: State, version: Annotated[str | None, Query(max_length=100)] = None
) -> JSONResponse:
    """Version and release notes (of one ``version`` when given)."""
    return ok(await _runtime_read(state.service.reads.release_info(version)))


@router.get("/api/logs")
async def logs(
    caller: ReadCaller,
    state: State,
    limit: Annotated[int, Query(ge=0)] = MAX_READ_LIMIT,
    level: Annotated[str | None, Query(max_length=20)] = None,
) -> JSONResponse:
    """The latest log entries (10 at most)."""
    try:
        data = await _runtime_read(state.service.reads.logs(min(limit, MAX_READ_LIMIT), level))
    except ValueError as error:
        raise ApiError(400, "invalid_request", str(error)) from None
    return ok(data)


@router.get("/api/metrics")
async def metrics(caller: ReadCaller, state: State) -> JSONResponse:
    """Command and tool counters."""
    return ok(await _runtime_read(state.service.reads.metrics()))


@router.get("/api/routes")
async def routes(caller: ReadCaller, state: State) -> JSONResponse:
    """The HTTP routes the index detected in the repository."""
    found = await anyio.to_thread.run_sync(routes_of, state.service.index)
    return ok({"routes": sanitise(found), "count": len(found)})


@router.get("/api/admin/errors")
async def admin_errors(
    caller: ReadCaller,
    state: State,
    limit: Annotated[int, Query(ge=0)] = MAX_READ_LIMIT,
    stack: bool = False,
) -> JSONResponse:
    """The latest caught errors (admin token only)."""
    require_admin(caller, state.settings)
    return ok(await _runtime_read(state.service.reads.errors(min(limit, MAX_READ_LIMIT), stack)))


@router.get("/healthz")
async def healthz(state: State) -> JSONResponse:
    """Liveness: the server answers and its index opens; a damaged index (being rebuilt or
    not) is a 503 that says so."""
    index = state.service.index
    health = str(getattr(index, "health", "ok"))
    if health == "rebuilding":
        return failure(503, "index_rebuilding", "the index was damaged and is being rebuilt")
    if health == "damaged":
        return failure(503, "index_damaged", "the index is damaged; a rebuild is needed")
    try:
        await anyio.to_thread.run_sync(index.generation)
    except Exception as error:
        if is_damage(error):
            state.service.heal_in_background(str(error))
            return failure(503, "index_damaged", "the index is damaged and is being rebuilt")
        if isinstance(error, StoreUnavailable):  # a replica's database: it says why
            return failure(503, error.code, error.message)
        return failure(503, "index_unavailable", "the index cannot be read")
    return ok({"status": "ok", "heals": int(getattr(index, "heals", 0))})
