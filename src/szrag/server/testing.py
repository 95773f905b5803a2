"""Helpers for testing a szrag server (or an application embedding one) over real HTTP.

* :func:`serve_asgi` runs any ASGI app with uvicorn on a free 127.0.0.1 port in a thread;
* :class:`CaptureServer` records every request, standing in for Slack's ``response_url``;
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
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
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


def slack_headers(secret: str, body: bytes, *, timestamp: float | None = None) -> dict[str, str]:
    """Headers of a correctly signed Slack request (``timestamp`` defaults to now)."""
    stamp = str(int(time.time() if timestamp is None else timestamp))
    return {
        "Content-Type": "application/x-www-form-urlencoded",
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
