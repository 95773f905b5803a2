"""The server's two middlewares, written as plain ASGI so that a route still sees its client
disconnect (Starlette's ``BaseHTTPMiddleware`` hides it from ``Request.is_disconnected``).

* :class:`HostGuard` refuses hosts and browser origins the server does not serve (see
  :mod:`szrag.server.origin`) on every route except Slack's, which Slack's signature protects;
* :class:`SecurityHeaders` adds the headers every response carries unless it set its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi.responses import JSONResponse
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from szrag.server.errors import ApiError
from szrag.server.origin import check_host, check_origin
from szrag.server.settings import ServerSettings

SLACK_PREFIX = "/slack/"
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


class HostGuard:
    """Answers 403 in the API's envelope to a request for another host or from another site."""

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not str(scope.get("path", "")).startswith(SLACK_PREFIX):
            headers = Headers(scope=scope)
            server = scope.get("server")
            bound = str(server[0]) if server else None
            host = headers.get("host")
            try:
                check_host(host, self.settings, bound)
                check_origin(headers.get("origin"), host, self.settings, bound)
            except ApiError as error:
                body = {"ok": False, "code": error.code, "error": error.message}
                await JSONResponse(body, status_code=error.status)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """Adds ``headers`` (default :data:`SECURITY_HEADERS`) to every HTTP response."""

    def __init__(self, app: ASGIApp, headers: Mapping[str, str] = SECURITY_HEADERS) -> None:
        self.app = app
        self.headers = dict(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
