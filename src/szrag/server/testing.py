"""Helpers for testing a szrag server (or an application embedding one) over real HTTP.

* :func:`serve_asgi` runs any ASGI app with uvicorn on a free 127.0.0.1 port in a thread;
* :class:`CaptureServer` records every request, standing in for Slack's ``response_url``;
* :class:`SlackApiServer` stands in for Slack's Web API (``chat.postMessage``, ``chat.update``,
  ``chat.postEphemeral``, ``views.open``), refusing what Slack refuses, and writes the calls it
  received as a readable :func:`transcript`;
* :class:`SlowStreamProvider` streams a model reply slowly and notices when its client hangs up;
* :func:`slack_headers` signs a request as Slack does; :func:`sse_events` parses an event stream.

Nothing here is used by the server itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl

import uvicorn

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@contextlib.contextmanager
def serve_asgi(app: ASGIApp, *, lifespan: Literal["on", "off"] = "on") -> Iterator[str]:
    """Run ``app`` with uvicorn on a free port in a background thread; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan=lifespan,
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"asgi-{port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


async def _read_body(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += bytes(message.get("body", b""))
        if not message.get("more_body"):
            return body


@dataclass(frozen=True)
class Captured:
    """One request the capture server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


class CaptureServer:
    """An ASGI app that answers 200 ``ok`` and keeps every request (a stand-in for Slack)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._received: list[Captured] = []
        self._arrived = threading.Condition(self._lock)

    @property
    def received(self) -> list[Captured]:
        """A copy of what arrived so far."""
        with self._lock:
            return list(self._received)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Captured]:
        """Block until ``count`` requests have arrived; returns them."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._received) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"{len(self._received)} of {count} requests arrived")
                self._arrived.wait(remaining)
            return list(self._received)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = await _read_body(receive)
        headers = {key.decode().lower(): value.decode() for key, value in scope["headers"]}
        with self._arrived:
            self._received.append(Captured(scope["method"], scope["path"], headers, body))
            self._arrived.notify_all()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/plain")],
            }
        )
        await send({"type": "http.response.body", "body": b"ok"})


SLACK_SECTION_LIMIT = 3000
SLACK_MAX_BLOCKS = 50
SLACK_MESSAGE_CHARS = 12_000  # where Slack starts answering msg_blocks_too_long


@dataclass(frozen=True)
class WebCall:
    """One Web API call the stand-in received: the method, the bearer token, the arguments
    and what it answered."""

    method: str
    token: str | None
    arguments: dict[str, Any]
    reply: dict[str, Any]

    @property
    def ok(self) -> bool:
        return bool(self.reply.get("ok"))

    @property
    def blocks(self) -> list[dict[str, Any]]:
        blocks = self.arguments.get("blocks") or []
        return list(json.loads(blocks) if isinstance(blocks, str) else blocks)

    def texts(self) -> list[str]:
        """Every text of the call's blocks in order (section and context texts, button
        labels), else its plain text."""
        found: list[str] = []
        for block in self.blocks:
            found.extend(_texts(block))
        return found or [str(self.arguments.get("text") or "")]


def _texts(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = node.get("text")
        if isinstance(own, str):
            return [own]
        return [text for key, value in node.items() if key != "type" for text in _texts(value)]
    if isinstance(node, list):
        return [text for item in node for text in _texts(item)]
    return []


def _block_chars(node: Any) -> int:
    if isinstance(node, dict):
        return sum(
            len(value) if key == "text" and isinstance(value, str) else _block_chars(value)
            for key, value in node.items()
        )
    if isinstance(node, list):
        return sum(_block_chars(item) for item in node)
    return 0


class SlackApiServer:
    """An ASGI app standing in for Slack's Web API at ``/api/<method>``: it keeps every call,
    answers as Slack does (a fresh ``ts`` for each posted message), refuses a wrong token
    (``invalid_auth``), blocks beyond Slack's limits (``invalid_blocks``,
    ``msg_blocks_too_long``) and posts to the channels in ``absent`` (``not_in_channel``)."""

    def __init__(self, *, token: str, bot_user: str = "UBOT", absent: tuple[str, ...] = ()):
        self.token = token
        self.bot_user = bot_user
        self.absent = set(absent)
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._calls: list[WebCall] = []
        self._clock = 1_700_000_000

    @property
    def calls(self) -> list[WebCall]:
        """A copy of the calls received so far."""
        with self._lock:
            return list(self._calls)

    def wait_until(
        self, done: Callable[[list[WebCall]], bool], timeout: float = 15.0
    ) -> list[WebCall]:
        """Block until ``done(calls)`` holds; the calls."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while not done(list(self._calls)):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    methods = [call.method for call in self._calls]
                    raise TimeoutError(f"the Web API calls so far did not get there: {methods}")
                self._arrived.wait(remaining)
            return list(self._calls)

    def next_ts(self) -> str:
        with self._lock:
            self._clock += 1
            return f"{self._clock}.000100"

    def _reply(self, method: str, token: str | None, arguments: dict[str, Any]) -> dict[str, Any]:
        if token != self.token:
            return {"ok": False, "error": "invalid_auth"}
        if method == "auth.test":
            return {"ok": True, "user_id": self.bot_user, "bot_id": "B" + self.bot_user}
        if method == "views.open":
            return {"ok": True, "view": {"id": "V1", **dict(arguments.get("view") or {})}}
        if method not in ("chat.postMessage", "chat.update", "chat.postEphemeral"):
            return {"ok": False, "error": "unknown_method"}
        channel = str(arguments.get("channel") or "")
        if channel in self.absent:
            return {"ok": False, "error": "not_in_channel"}
        blocks = arguments.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        if not blocks and not arguments.get("text"):
            return {"ok": False, "error": "no_text"}
        if blocks:
            sections = [block.get("text", {}).get("text", "") for block in blocks]
            if len(blocks) > SLACK_MAX_BLOCKS or any(
                len(text) > SLACK_SECTION_LIMIT for text in sections if isinstance(text, str)
            ):
                return {"ok": False, "error": "invalid_blocks"}
            if _block_chars(blocks) > SLACK_MESSAGE_CHARS:
                return {"ok": False, "error": "msg_blocks_too_long"}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": self.next_ts()}
        ts = str(arguments.get("ts") or "") if method == "chat.update" else self.next_ts()
        return {"ok": True, "channel": channel, "ts": ts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = await _read_body(receive)
        headers = {key.decode().lower(): value.decode() for key, value in scope["headers"]}
        method = str(scope["path"]).rsplit("/", 1)[-1]
        if headers.get("content-type", "").startswith("application/json"):
            arguments = dict(json.loads(body or b"{}"))
        else:
            arguments = dict(parse_qsl(body.decode()))
        auth = headers.get("authorization", "")
        token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
        token = token or arguments.pop("token", None)
        reply = self._reply(method, token, arguments)
        with self._arrived:
            self._calls.append(WebCall(method, token, arguments, reply))
            self._arrived.notify_all()
        payload = json.dumps(reply).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json; charset=utf-8")],
            }
        )
        await send({"type": "http.response.body", "body": payload})


def transcript(calls: list[WebCall], *, title: str = "") -> str:
    """The Web API calls as a readable transcript: each call's method, where it went, what
    Slack answered and the text it carried."""
    lines = [title, "=" * len(title), ""] if title else []
    for number, call in enumerate(calls, 1):
        where = [f"channel={call.arguments.get('channel', '')}"]
        for key in ("thread_ts", "ts", "user"):
            if call.arguments.get(key):
                where.append(f"{key}={call.arguments[key]}")
        answer = "ok" if call.ok else f"error={call.reply.get('error')}"
        if call.reply.get("ts") and call.method == "chat.postMessage":
            answer += f" ts={call.reply['ts']}"
        lines.append(f"{number}. {call.method} {' '.join(where)} -> {answer}")
        for text in call.texts():
            for line in text.splitlines() or [""]:
                lines.append(f"     | {line}")
        lines.append("")
    return "\n".join(lines)


class SlowStreamProvider:
    """A provider that streams one token every ``interval`` seconds for a long time, and
    records whether the client hung up before the end."""

    def __init__(self, *, interval: float = 0.1, tokens: int = 300) -> None:
        self.interval = interval
        self.tokens = tokens
        self.started = threading.Event()
        self.disconnected = threading.Event()
        self.finished = threading.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await _read_body(receive)
        self.started.set()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            self.disconnected.set()

        watcher = asyncio.create_task(watch())
        try:
            for number in range(self.tokens):
                if self.disconnected.is_set():
                    return
                delta = {"choices": [{"index": 0, "delta": {"content": f"word{number} "}}]}
                body = f"data: {json.dumps(delta)}\n\n".encode()
                await send({"type": "http.response.body", "body": body, "more_body": True})
                await asyncio.sleep(self.interval)
            await send(
                {"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False}
            )
            self.finished.set()
        finally:
            if not self.disconnected.is_set():
                await asyncio.sleep(0)
            watcher.cancel()


def slack_signature(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Slack-Signature`` of a request, as Slack computes it."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def slack_headers(
    secret: str,
    body: bytes,
    *,
    timestamp: float | None = None,
    content_type: str = "application/x-www-form-urlencoded",
) -> dict[str, str]:
    """Headers of a correctly signed Slack request (``timestamp`` defaults to now; Events API
    callbacks are ``application/json``)."""
    stamp = str(int(time.time() if timestamp is None else timestamp))
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": slack_signature(secret, stamp, body),
    }


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """``(event, parsed data)`` pairs of a server-sent event stream given line by line."""
    name, data = "message", list[str]()
    for line in lines:
        if not line:
            if data:
                yield name, json.loads("\n".join(data))
            name, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)


def close_index_when_warmed(app: Any, timeout: float = 30.0) -> None:
    """Close a running server's index under it (to test what a closed index answers), once
    its start-up warming has finished: SQLite must not lose a connection mid-call."""
    state = app.state.szrag
    deadline = time.monotonic() + timeout
    while state.warming is not None and not state.warming.done():
        if time.monotonic() > deadline:
            raise TimeoutError("the server's start-up warming did not finish")
        time.sleep(0.02)
    state.service.index.close()
