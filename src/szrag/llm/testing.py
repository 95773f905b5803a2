"""A scripted OpenAI-compatible provider on 127.0.0.1, for tests of anything that calls a model.

``ScriptedProvider`` is a plain ASGI app: each request it receives is recorded and answered
with the next :class:`Reply` of its script. :func:`serve` runs it with uvicorn in a background
thread on a free port::

    provider = ScriptedProvider()
    with serve(provider) as base_url:            # http://127.0.0.1:PORT/v1
        provider.script(text_reply("Hello"))
        ...                                      # point AI_URL at base_url
        assert provider.requests[0].json["stream"] is True

Replies can stream server-sent events, answer plain JSON, fail with any status, wait before
answering, cut the connection mid-body, or crash the server (``crash``: the connection dropped
and nothing listening any more, as a model server that died of an out-of-memory kill).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import uvicorn

Scope = MutableMapping[str, Any]
ASGIMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[ASGIMessage]]
Send = Callable[[ASGIMessage], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer: status, headers, body pieces, timing, and whether to cut it short."""

    status: int = 200
    content_type: str | None = "text/event-stream"
    chunks: tuple[bytes, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunk_delay: float = 0.0
    cut: bool = False
    crash: bool = False  # after what is sent: stop listening and drop the connection


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """A request the provider received: method, path, headers and JSON body."""

    method: str
    path: str
    headers: Mapping[str, str]
    json: Any


def chunk(
    content: str | None = None,
    *,
    tool_calls: Sequence[Mapping[str, Any]] | None = None,
    finish: str | None = None,
    reasoning: str | None = None,
) -> dict[str, Any]:
    """One streamed chat-completion chunk."""
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if reasoning is not None:
        delta["reasoning_content"] = reasoning
    if tool_calls is not None:
        delta["tool_calls"] = list(tool_calls)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def sse_reply(*events: Mapping[str, Any] | str, done: bool = True, **options: Any) -> Reply:
    """Server-sent events: dicts are sent as ``data: <json>``, strings exactly as given."""
    chunks = [
        event.encode() if isinstance(event, str) else f"data: {json.dumps(event)}\n\n".encode()
        for event in events
    ]
    if done:
        chunks.append(b"data: [DONE]\n\n")
    return Reply(chunks=tuple(chunks), **options)


def text_reply(text: str, *, pieces: int = 3, usage: Mapping[str, Any] | None = None) -> Reply:
    """``text`` streamed in ``pieces`` deltas, then a stop, optional usage, and ``[DONE]``."""
    size = max(1, -(-len(text) // pieces))
    events: list[Mapping[str, Any] | str] = [
        chunk(text[start : start + size]) for start in range(0, len(text), size)
    ]
    events.append(chunk(finish="stop"))
    if usage is not None:
        events.append({"choices": [], "usage": dict(usage)})
    return sse_reply(*events)


def tool_reply(
    *calls: tuple[str, str], text: str = "", pieces: int = 3, usage: Mapping[str, Any] | None = None
) -> Reply:
    """Tool calls ``(name, arguments_json)`` streamed as fragments: id and name first, then the
    arguments in ``pieces`` parts; optional text before them."""
    events: list[Mapping[str, Any] | str] = [chunk(text)] if text else []
    for index, (name, arguments) in enumerate(calls):
        events.append(
            chunk(
                tool_calls=[
                    {
                        "index": index,
                        "id": f"call_{name}_{index}",
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }
                ]
            )
        )
        size = max(1, -(-len(arguments) // pieces))
        for start in range(0, len(arguments), size):
            piece = arguments[start : start + size]
            events.append(chunk(tool_calls=[{"index": index, "function": {"arguments": piece}}]))
    events.append(chunk(finish="tool_calls"))
    if usage is not None:
        events.append({"choices": [], "usage": dict(usage)})
    return sse_reply(*events)


def json_reply(body: Any, *, status: int = 200, **options: Any) -> Reply:
    """A plain JSON body."""
    return Reply(
        status=status,
        content_type="application/json",
        chunks=(json.dumps(body).encode(),),
        **options,
    )


def completion(
    text: str | None = None,
    *,
    tool_calls: Sequence[Mapping[str, Any]] | None = None,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A complete (non-streamed) chat completion object."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls is not None:
        message["tool_calls"] = list(tool_calls)
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
    }
    if usage is not None:
        body["usage"] = dict(usage)
    return body


class ScriptedProvider:
    """An ASGI app answering each request with the next scripted reply, recording them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._script: deque[Reply] = deque()
        self._requests: list[ReceivedRequest] = []
        # set by :func:`serve`: closes the listening sockets (called on the server's loop)
        self.stop_listening: Callable[[], None] | None = None

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        """Forget the script and the recorded requests."""
        with self._lock:
            self._script.clear()
            self._requests.clear()

    @property
    def requests(self) -> list[ReceivedRequest]:
        """A copy of the requests received so far."""
        with self._lock:
            return list(self._requests)

    @property
    def remaining(self) -> int:
        """How many scripted replies have not been used."""
        with self._lock:
            return len(self._script)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            payload = None
        headers = {key.decode().lower(): value.decode() for key, value in scope["headers"]}
        with self._lock:
            self._requests.append(ReceivedRequest(scope["method"], scope["path"], headers, payload))
            reply = self._script.popleft() if self._script else None
        if reply is None:
            reply = json_reply({"error": {"message": "no scripted reply left"}}, status=500)
        await _answer(reply, send, self.stop_listening)


async def _answer(reply: Reply, send: Send, stop_listening: Callable[[], None] | None) -> None:
    if reply.delay:
        await asyncio.sleep(reply.delay)
    headers = [(key.lower().encode(), value.encode()) for key, value in reply.headers.items()]
    if reply.content_type:
        headers.append((b"content-type", reply.content_type.encode()))
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    for piece in reply.chunks:
        await send({"type": "http.response.body", "body": piece, "more_body": True})
        # even without a delay, let the loop see a client that hung up (an answer cancelled
        # mid-reply) before the next piece is written to its socket
        await asyncio.sleep(reply.chunk_delay)
    if reply.crash and stop_listening is not None:
        stop_listening()
    if reply.cut or reply.crash:
        # Returning without the final body message makes the server drop the connection.
        return
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (the socket is closed again)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def serve(app: ScriptedProvider, *, path: str = "/v1") -> Iterator[str]:
    """Run ``app`` with uvicorn on a free 127.0.0.1 port; yields the base URL (``.../v1``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="critical", lifespan="off", timeout_graceful_shutdown=1, access_log=False
    )
    server = uvicorn.Server(config)

    def stop_listening() -> None:
        for listener in server.servers:
            listener.close()

    app.stop_listening = stop_listening
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"scripted-provider-{port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the scripted provider did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()
