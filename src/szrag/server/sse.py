"""Server-sent events for ``POST /api/ask``: the framing and the bridge from callbacks to a stream.

The stream is ``activity`` events as the answer's steps happen, ``token`` events
(``{text, round}``: ``round`` numbers the model request, so text of a round that ended in tool
calls can be told from the final answer) as the model writes, then exactly one ``result``
(the full result object) or ``error`` (``{code, error}``).
Every ``data`` field is one line of JSON. The answer runs as its own task; when the client goes
away the response stops iterating and the task is cancelled, which closes the model request.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from sse_starlette import ServerSentEvent

from szrag.base.activity import Activity
from szrag.base.public import json_bytes, to_public

ACTIVITY = "activity"
TOKEN = "token"
RESULT = "result"
ERROR = "error"

OnToken = Callable[[str, int], None]
OnActivity = Callable[[Activity], Awaitable[None]]
Runner = Callable[[OnActivity, OnToken], Coroutine[Any, Any, Any]]
ErrorPayload = Callable[[BaseException], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class _Done:
    """Marks the end of the callback queue."""


_DONE = _Done()


def to_json(payload: Any) -> str:
    """Compact one-line public JSON (non-ASCII kept as is)."""
    return json_bytes(to_public(payload)).decode()


def make_event(name: str, payload: Any) -> ServerSentEvent:
    """One event whose ``data`` is ``payload`` as JSON."""
    return ServerSentEvent(data=to_json(payload), event=name, sep="\n")


def encode_event(name: str, payload: Any) -> str:
    """The wire form of one event: ``event:`` and ``data:`` lines and a blank line."""
    return f"event: {name}\ndata: {to_json(payload)}\n\n"


async def answer_events(
    run: Runner, error_payload: ErrorPayload
) -> AsyncGenerator[ServerSentEvent, None]:
    """Run ``run(on_activity, on_token)`` as a task and yield its progress, then its outcome."""
    queue: asyncio.Queue[tuple[str, Any] | _Done] = asyncio.Queue()

    async def on_activity(activity: Activity) -> None:
        queue.put_nowait((ACTIVITY, activity.to_dict()))
        # Let the response send it now, not when the answer's next real wait comes.
        await asyncio.sleep(0)

    def on_token(text: str, round_number: int = 1) -> None:
        if text:
            queue.put_nowait((TOKEN, {"text": text, "round": round_number}))

    task = asyncio.create_task(run(on_activity, on_token), name="szrag-answer")
    task.add_done_callback(lambda _: queue.put_nowait(_DONE))
    try:
        while True:
            item = await queue.get()
            if isinstance(item, _Done):
                break
            yield make_event(*item)
            # A queue holding events returns without waiting: without this, a burst of
            # them would all be written before the loop learns the client is gone.
            await asyncio.sleep(0)
        error = None if task.cancelled() else task.exception()
        if task.cancelled():
            yield make_event(ERROR, {"code": "cancelled", "error": "the answer was cancelled"})
        elif error is not None:
            yield make_event(ERROR, error_payload(error))
        else:
            yield make_event(RESULT, task.result())
    finally:
        # Reached on normal completion and when the client disconnects (the response
        # cancels this generator): the answer, and the model request in it, stop here.
        if not task.done():
            task.cancel()
