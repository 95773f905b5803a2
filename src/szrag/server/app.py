"""The FastAPI application: one per served repository.

``create_app(root)`` (or ``create_app(config=...)``, read once by ``szrag serve``) checks the
configuration at once (bad settings fail before the server listens); start-up then opens
(building or refreshing) the index, starts the file watcher, the runtime's log capture, one
HTTP client for the model provider and the Slack app, and shutdown stops them in reverse
order.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import anyio
import httpx
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from szrag.base.errors import DamagedIndexError, SzragError
from szrag.base.settings import Settings
from szrag.commands import Allowlist
from szrag.index.protocol import IndexStore
from szrag.index.shared import SharedIndex, open_shared_index
from szrag.runtime import ProcessRuntime
from szrag.server import api, page, slack, webhooks
from szrag.server.errors import ApiError
from szrag.server.images import ImageCatalogue
from szrag.server.middleware import HostGuard, SecurityHeaders
from szrag.server.ratelimit import RateLimiter
from szrag.server.repositories import RepositoryFaces
from szrag.server.service import AskService, error_status
from szrag.server.settings import ServerSettings
from szrag.server.slack_scope import SlackScopes
from szrag.server.state import ServerState
from szrag.service.audit import AuditLog
from szrag.service.configuration import Config, load_config
from szrag.service.host import Host, with_parts
from szrag.service.repositories import ServicePlan
from szrag.service.service import Service, webhook_secrets
from szrag.service.watch import IndexWatcher, start_warming, stop_warming

log = logging.getLogger("szrag.server")

_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    429: "rate_limited",
}


def create_app(
    root: Path | str = ".",
    *,
    config: Config | None = None,
    environ: Mapping[str, str] | None = None,
    settings: ServerSettings | None = None,
    answer_settings: Settings | None = None,
    allowlist: Allowlist | None = None,
    runtime: ProcessRuntime | None = None,
    audit: AuditLog | None = None,
    live_tools: bool | None = None,
    plan: ServicePlan | None = None,
) -> FastAPI:
    """The szrag server for the repository at ``root``, or for the repositories of ``plan``
    (``--repo NAME=PATH``, a service file: each opened when first asked about, the first at
    start; the runtime reads use the first; the page and Slack scope each question).

    ``config`` is the configuration the face read once (its root is the server's); without
    one it is read here from the repository at ``root`` and ``environ`` (default: this
    process's environment). Parts given win over it: ``settings`` (exposure, limits, Slack),
    ``answer_settings`` (the model provider), ``allowlist``, ``runtime`` (this process),
    ``audit`` and ``live_tools`` (else a given ``settings``' ``SZRAG_TOOLS``, else the
    configured). Bad settings fail here, before the server listens.
    """
    environ = os.environ if environ is None else environ
    if plan is not None:
        root = plan.configured_root()
    if config is None:
        config = load_config(Path(root).resolve(), environ)
    if live_tools is None and settings is not None:
        live_tools = settings.live_tools
    config = with_parts(
        config, settings=answer_settings, allowlist=allowlist, live_tools=live_tools
    )
    if settings is not None:
        config = config.replace(server=settings)
    root = config.root
    server_settings = config.server
    if plan is not None and server_settings.memory_mb is not None:
        plan = dataclasses.replace(plan, memory_mb=server_settings.memory_mb)
    if plan is not None:
        webhook_secrets(plan, environ)  # a secret named but not set fails before listening
    host = Host.of(config, runtime=runtime, audit=audit)
    process_runtime = host.runtime

    def configure(found: Config) -> Config:  # each repository's, with the parts given
        return with_parts(
            found, settings=answer_settings, allowlist=allowlist, live_tools=live_tools
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        process_runtime.attach()
        http_client = httpx.AsyncClient(limits=httpx.Limits(max_connections=100))
        ask_limiter = RateLimiter(server_settings.ask_rate)
        faces: RepositoryFaces | None = None
        index: IndexStore
        if plan is None:
            index = await anyio.to_thread.run_sync(open_shared_index, root)
            # a server answers many questions from views kept in memory, once ``start_warming``
            # below has built them; its first questions read from the store meanwhile
            service = AskService(host.replace(index=index), http_client=http_client)
            images = ImageCatalogue(index)
        else:
            faces = RepositoryFaces(
                Service(plan, environ, configure=configure, audit=audit),
                server_settings,
                http_client=http_client,
            )
            faces.start()  # clones made and fetched in the background
            try:
                first = await faces.face(await faces.choose_default())
            except BaseException:
                await faces.close()
                await http_client.aclose()
                process_runtime.detach()
                raise
            index = faces.service.index(first.name)
            service, images = first.service, first.images
        process_runtime.serves(index)  # the status reads the store answered from
        state = ServerState(
            settings=server_settings,
            service=service,
            images=images,
            ask_limiter=ask_limiter,
            read_limiter=RateLimiter(server_settings.read_rate),
            # the shared views and the token counter, before the first question
            warming=start_warming(index, prepare=service.host.plan().counter),
            repositories=faces,
        )
        if faces is not None:
            state.watcher = faces.watcher_of(faces.default)
        elif server_settings.watch and isinstance(index, SharedIndex):
            state.watcher = IndexWatcher(index, debounce_ms=server_settings.watch_debounce_ms)
            state.watcher.start()
        if server_settings.slack_signing_secret or server_settings.slack_app_token:
            state.slack = slack.SlackFace(
                service,
                server_settings,
                ask_limiter,
                asyncio.get_running_loop(),
                scopes=SlackScopes(service, faces),
            )
            if server_settings.slack_app_token:
                await _start_socket_mode(state.slack)
        app.state.szrag = state
        try:
            yield
        finally:
            if state.slack is not None:
                state.slack.close()
            if state.warming is not None:  # a thread cannot be stopped: it ends first
                stop_warming(index)
                await asyncio.shield(state.warming)
            if faces is not None:
                await faces.close()  # their watchers, indexes and stores
            elif state.watcher is not None:
                await state.watcher.stop()
            await http_client.aclose()
            process_runtime.detach()
            if faces is None:
                host.conversations.close()  # its WAL checkpointed into the file
                index.close()

    app = FastAPI(
        title="szrag",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.answer_settings = host.settings  # `szrag serve` says at start which model answers
    _install_error_handlers(app, process_runtime)
    app.add_middleware(HostGuard, settings=server_settings)
    app.add_middleware(SecurityHeaders)  # added after the guard: it wraps its refusals too
    if server_settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(server_settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Accept"],
            max_age=600,
        )
    app.include_router(api.router)
    app.include_router(webhooks.router)
    app.include_router(slack.router)
    app.include_router(page.router)  # last: its image route matches any image-like path
    return app


async def _start_socket_mode(face: slack.SlackFace) -> None:
    try:
        await anyio.to_thread.run_sync(face.start_socket_mode)
    except Exception as error:  # the HTTP API still works without Slack
        log.error("Slack Socket Mode did not connect: %s", error)


def _envelope(status: int, code: str, message: str, headers: dict[str, str] | None) -> JSONResponse:
    return JSONResponse(
        {"ok": False, "code": code, "error": message}, status_code=status, headers=headers
    )


def _heal(request: Request, error: Exception) -> None:
    """Rebuild the server's damaged index in the background (once at a time)."""
    state = getattr(request.app.state, "szrag", None)
    if state is not None:
        state.service.heal_in_background(str(error))


def _install_error_handlers(app: FastAPI, runtime: ProcessRuntime) -> None:
    async def api_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, ApiError)
        return _envelope(error.status, error.code, error.message, error.headers or None)

    async def http_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, StarletteHTTPException)
        code = _STATUS_CODES.get(error.status_code, "error")
        message = error.detail if isinstance(error.detail, str) else code.replace("_", " ")
        return _envelope(error.status_code, code, message, dict(error.headers or {}) or None)

    async def validation_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, RequestValidationError)
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item.get('loc', ()))}: {item.get('msg')}"
            for item in error.errors()
        )
        return _envelope(400, "invalid_request", problems or "invalid request", None)

    async def szrag_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, SzragError)
        status, code, message = error_status(error)
        if code == DamagedIndexError.code:
            _heal(request, error)
        return _envelope(status, code, message, None)

    async def unexpected(request: Request, error: Exception) -> Response:
        status, code, message = error_status(error)
        if code == DamagedIndexError.code:  # the request that finds the damage: a 503
            _heal(request, error)
            return _envelope(status, code, message, None)
        log.error("%s %s failed", request.method, request.url.path, exc_info=error)
        runtime.record_error(error, f"{request.method} {request.url.path}")
        return _envelope(500, "internal_error", "the server failed; the error is in its log", None)

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(SzragError, szrag_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, unexpected)
