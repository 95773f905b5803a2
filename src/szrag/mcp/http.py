"""The API's token rules in front of the MCP streamable HTTP transport.

A server that requires tokens (``SZRAG_API_TOKENS``) answers 401 without a valid one; the
admin token (``SZRAG_ADMIN_TOKEN``) also unlocks the admin tool. The decision reaches the
tool handlers in the request's state (``szrag_admin``), so a caller cannot claim it.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from szrag.server.auth import authenticate
from szrag.server.errors import ApiError
from szrag.server.settings import ServerSettings


def authenticated(app: ASGIApp, settings: ServerSettings) -> ASGIApp:
    """``app`` behind bearer-token authentication."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value for key, value in scope["headers"]}
        authorization = headers.get("authorization", b"").decode("latin-1") or None
        client = scope.get("client")
        try:
            caller = authenticate(authorization, client[0] if client else None, settings)
        except ApiError as error:
            await _refuse(send, error)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        state["szrag_admin"] = caller.admin
        state["szrag_caller"] = caller.user_id
        await app(scope, receive, send)

    return guarded


async def _refuse(send: Send, error: ApiError) -> None:
    body = json.dumps({"ok": False, "code": error.code, "error": str(error)}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": error.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="szrag"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
