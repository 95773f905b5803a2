"""Event framing and the bridge from answer callbacks to a stream."""

from __future__ import annotations

import asyncio
from typing import Any

from sse_starlette import ServerSentEvent

from szrag.base.activity import Activity
from szrag.base.errors import IndexStoreError
from szrag.server.service import error_status
from szrag.server.sse import OnActivity, OnToken, answer_events, encode_event, make_event


def payload(error: BaseException) -> dict[str, Any]:
    _, code, message = error_status(error)
    return {"code": code, "error": message}


async def collect(events: Any) -> list[tuple[str | None, str]]:
    return [(event.event, str(event.data)) async for event in events]


def test_an_event_is_one_event_line_one_json_data_line_and_a_blank_line() -> None:
    assert encode_event("token", {"text": "a\nb", "round": 1}) == (
        'event: token\ndata: {"text":"a\\nb","round":1}\n\n'
    )
    event = make_event("result", {"answer": "é"})
    assert isinstance(event, ServerSentEvent)
    assert event.encode() == 'event: result\ndata: {"answer":"é"}\n\n'.encode()


async def test_activities_and_tokens_stream_before_the_result() -> None:
    async def run(on_activity: OnActivity, on_token: OnToken) -> dict[str, Any]:
        await on_activity(Activity(stage="retrieval", status="started", message="looking"))
        on_token("Hel", 1)
        on_token("", 1)  # empty pieces are not sent
        on_token("lo", 1)
        return {"answer": "Hello"}

    events = await collect(answer_events(run, payload))

    assert [name for name, _ in events] == ["activity", "token", "token", "result"]
    assert events[1][1] == '{"text":"Hel","round":1}'
    assert events[-1][1] == '{"answer":"Hello"}'


async def test_a_failure_ends_the_stream_with_an_error_event() -> None:
    async def run(on_activity: OnActivity, on_token: OnToken) -> dict[str, Any]:
        on_token("partial", 1)
        raise IndexStoreError("no index")

    events = await collect(answer_events(run, payload))

    assert events == [
        ("token", '{"text":"partial","round":1}'),
        ("error", '{"code":"index_unavailable","error":"no index"}'),
    ]


async def test_an_unexpected_failure_does_not_leak_its_message() -> None:
    async def run(on_activity: OnActivity, on_token: OnToken) -> dict[str, Any]:
        raise RuntimeError("secret internals")

    events = await collect(answer_events(run, payload))

    assert events[-1][0] == "error" and "secret" not in events[-1][1]


async def test_closing_the_stream_cancels_the_answer() -> None:
    cancelled = asyncio.Event()

    async def run(on_activity: OnActivity, on_token: OnToken) -> dict[str, Any]:
        on_token("first", 1)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    stream = answer_events(run, payload)
    first = await anext(stream)
    await stream.aclose()  # what the response does when the client goes away

    assert first.event == "token"
    await asyncio.wait_for(cancelled.wait(), 2.0)
