"""The client against providers that behave as real servers do, each scripted on 127.0.0.1.

llama.cpp's server (llama-cpp-python 0.3, ``chatml-function-calling``) answers a streamed
request with tools by 200 and an empty body, rejects ``content: null`` with a 500 carrying a
validation error, and reports an over-long prompt only to an unstreamed request. OpenAI sends
usage in a chunk with empty ``choices``; others send keep-alive comments or omit ``[DONE]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from szrag.base.settings import Settings
from szrag.llm.client import ChatClient, forget_learned_behaviour
from szrag.llm.errors import (
    ProviderConnectionError,
    ProviderRequestError,
    ProviderServerError,
    ProviderTimeoutError,
    ReplyTooLargeError,
)
from szrag.llm.loop import assistant_message
from szrag.llm.stream import ModelReply, ToolCall
from szrag.llm.testing import (
    Reply,
    ScriptedProvider,
    chunk,
    completion,
    json_reply,
    serve,
    sse_reply,
    text_reply,
    tool_reply,
)

MESSAGES = [{"role": "user", "content": "Is the app up?"}]
TOOLS = [{"type": "function", "function": {"name": "getStatus", "parameters": {"type": "object"}}}]
EMPTY_STREAM = Reply(chunks=())  # 200, text/event-stream, no event at all
STATUS_CALL = [
    {"id": "call_1", "type": "function", "function": {"name": "getStatus", "arguments": "{}"}}
]


@pytest.fixture(autouse=True)
def fresh_provider_memory() -> Iterator[None]:
    forget_learned_behaviour()
    yield
    forget_learned_behaviour()


async def test_llama_cpp_tool_rounds_are_repeated_unstreamed_and_remembered(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        EMPTY_STREAM,
        json_reply(completion(tool_calls=STATUS_CALL)),
        json_reply(completion("Up since noon.")),
    )

    first = await client.complete(MESSAGES, tools=TOOLS)
    second = await client.complete(MESSAGES, tools=TOOLS)

    assert [call.name for call in first.tool_calls] == ["getStatus"]
    assert second.text == "Up since noon."
    streamed = [request.json["stream"] for request in provider.requests]
    assert streamed == [True, False, False]  # learned once, for this provider and model
    assert "stream_options" not in provider.requests[1].json


async def test_a_provider_that_names_streaming_tools_in_an_error_is_asked_unstreamed(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    refusal = {"error": {"message": "Automatic streaming tool choice is not supported"}}
    provider.script(json_reply(refusal, status=400), json_reply(completion(tool_calls=STATUS_CALL)))

    reply = await client.complete(MESSAGES, tools=TOOLS)

    assert [call.name for call in reply.tool_calls] == ["getStatus"]
    assert [request.json["stream"] for request in provider.requests] == [True, False]


async def test_an_empty_stream_is_asked_once_unstreamed_so_the_reason_arrives(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    reason = {
        "error": {
            "message": "Requested tokens (9001) exceed context window of 8192",
            "code": "context_length_exceeded",
        }
    }
    provider.script(EMPTY_STREAM, json_reply(reason, status=400))

    with pytest.raises(ProviderRequestError, match="exceed context window of 8192"):
        await client.complete(MESSAGES)

    assert len(provider.requests) == 2


async def test_a_server_that_dies_after_the_headers_is_said_to_have_closed_the_connection(
    settings: Settings,
) -> None:
    # a model server killed while loading the prompt (out of memory): the headers went out,
    # no event did, and the unstreamed retry finds nothing listening
    dying = ScriptedProvider()
    with serve(dying) as base_url:
        dying.script(Reply(chunks=(), crash=True))
        client = ChatClient(dataclasses.replace(settings, ai_url=base_url))

        with pytest.raises(ProviderConnectionError) as caught:
            await client.complete(MESSAGES, tools=TOOLS)

    message = caught.value.message
    assert "closed the connection" in message
    assert "crashed or run out of memory" in message
    assert "AI_URL" not in message  # the URL was right: it answered the first request
    assert caught.value.dropped
    assert len(dying.requests) == 1


async def test_a_server_that_hangs_up_twice_after_the_headers_is_not_blamed_on_the_url(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(Reply(chunks=(), cut=True), Reply(chunks=(), cut=True))

    with pytest.raises(ProviderConnectionError) as caught:
        await client.complete(MESSAGES)

    assert "closed the connection" in caught.value.message
    assert "AI_URL" not in caught.value.message
    assert [request.json["stream"] for request in provider.requests] == [True, False]


async def test_tool_turns_carry_empty_content_not_null() -> None:
    reply = ModelReply(text="", tool_calls=(ToolCall("call_1", "getStatus", "{}", parsed={}),))
    assert assistant_message(reply)["content"] == ""


async def test_a_server_error_saying_the_request_is_invalid_is_not_retried(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    body = {"detail": "1 validation error: messages.1.content: Input should be a valid string"}
    provider.script(*[json_reply(body, status=500)] * 3)

    with pytest.raises(ProviderServerError, match="Input should be a valid string"):
        await client.complete(MESSAGES)

    assert len(provider.requests) == 1  # the same request would fail the same way


async def test_a_reply_that_never_ends_meets_the_total_deadline_and_keeps_its_text(
    provider: ScriptedProvider, settings: Settings
) -> None:
    pings = [": keep-alive\n\n"] * 200
    provider.script(sse_reply(chunk("The app is"), *pings, done=False, chunk_delay=0.02))
    client = ChatClient(dataclasses.replace(settings, total_timeout=0.3, read_timeout=5.0))

    with pytest.raises(ProviderTimeoutError, match="SZRAG_AI_TOTAL_TIMEOUT") as caught:
        await client.complete(MESSAGES)

    assert caught.value.partial_text == "The app is"


async def test_an_answer_past_the_size_cap_is_cut_with_its_beginning_kept(
    provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("x" * 500, pieces=50))
    client = ChatClient(dataclasses.replace(settings, max_reply_chars=100))

    with pytest.raises(ReplyTooLargeError, match="SZRAG_AI_MAX_REPLY_CHARS") as caught:
        await client.complete(MESSAGES)

    assert caught.value.partial_text == "x" * 100


async def test_a_huge_unstreamed_body_is_refused_while_reading(
    provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(json_reply(completion("y" * 20_000)))
    client = ChatClient(dataclasses.replace(settings, max_reply_chars=1000))

    with pytest.raises(ReplyTooLargeError):
        await client.complete(MESSAGES)


async def test_max_tokens_is_sent_when_configured(
    provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("ok"), text_reply("ok"))
    await ChatClient(dataclasses.replace(settings, max_tokens=512)).complete(MESSAGES)
    await ChatClient(settings).complete(MESSAGES)

    assert provider.requests[0].json["max_tokens"] == 512
    assert "max_tokens" not in provider.requests[1].json


@pytest.mark.parametrize(
    "reply",
    [
        # OpenAI: usage in a last chunk with empty choices
        text_reply("All good.", usage={"prompt_tokens": 12, "completion_tokens": 3}),
        # vLLM and Ollama: no [DONE], the finish reason ends the stream
        sse_reply(chunk("All "), chunk("good."), chunk(finish="stop"), done=False),
        # keep-alive comments between events
        sse_reply(": ping\n\n", chunk("All good."), ": ping\n\n", chunk(finish="stop")),
        # a server that answers JSON to a streamed request
        json_reply(completion("All good.")),
    ],
    ids=["openai", "no-done", "keep-alive", "json"],
)
async def test_every_server_shape_gives_the_whole_answer(
    provider: ScriptedProvider, client: ChatClient, reply: Reply
) -> None:
    provider.script(reply)
    assert (await client.complete(MESSAGES)).text == "All good."


@pytest.mark.parametrize(
    "reply",
    [
        tool_reply(("getStatus", "{}")),  # OpenAI and vLLM: fragments streamed
        json_reply(completion(tool_calls=STATUS_CALL)),  # a server that answers JSON
    ],
    ids=["streamed", "json"],
)
async def test_every_server_shape_gives_a_whole_tool_round(
    provider: ScriptedProvider, client: ChatClient, reply: Reply
) -> None:
    provider.script(reply)
    result = await client.complete(MESSAGES, tools=TOOLS)
    assert [(call.name, call.parsed) for call in result.tool_calls] == [("getStatus", {})]
