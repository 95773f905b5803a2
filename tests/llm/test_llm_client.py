"""The chat client against a scripted provider on 127.0.0.1: replies, usage and every failure."""

from __future__ import annotations

import dataclasses
import json
import socket
import time

import pytest

from szrag.base.settings import Settings
from szrag.llm.client import ChatClient, backoff_delay, request_body, retry_after_seconds
from szrag.llm.errors import (
    MalformedResponseError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderNotFoundError,
    ProviderRateLimitError,
    ProviderRequestError,
    ProviderServerError,
    ProviderTimeoutError,
    StreamCutError,
)
from szrag.llm.testing import (
    Reply,
    ScriptedProvider,
    chunk,
    completion,
    json_reply,
    sse_reply,
    text_reply,
    tool_reply,
)

MESSAGES = [{"role": "user", "content": "What does the app do?"}]
TOOLS = [
    {"type": "function", "function": {"name": "getStatus", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "getLogs", "parameters": {"type": "object"}}},
]


class SleepRecorder:
    """Stands in for asyncio.sleep so backoff waits are observed, not waited."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


# Replies


async def test_streamed_text_reaches_on_text_in_order(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(text_reply("The app answers questions.", pieces=5))
    seen: list[str] = []

    reply = await client.complete(MESSAGES, on_text=seen.append)

    assert reply.text == "The app answers questions."
    assert len(seen) == 5
    assert "".join(seen) == "The app answers questions."
    assert reply.finish_reason == "stop"
    assert reply.tool_calls == ()


async def test_request_carries_model_stream_usage_and_bearer_key(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(text_reply("ok"))

    await client.complete(MESSAGES, tools=TOOLS)

    (request,) = provider.requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.headers["content-type"] == "application/json"
    assert request.json["model"] == "test-model"
    assert request.json["messages"] == MESSAGES
    assert request.json["stream"] is True
    assert request.json["stream_options"] == {"include_usage": True}
    assert [tool["function"]["name"] for tool in request.json["tools"]] == ["getStatus", "getLogs"]
    assert request.json["tool_choice"] == "auto"


async def test_request_without_tools_sends_no_tool_fields(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(text_reply("ok"))

    await client.complete(MESSAGES)

    assert "tools" not in provider.requests[0].json
    assert "tool_choice" not in provider.requests[0].json


async def test_full_endpoint_in_ai_url_is_used_as_is(
    provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("ok"))
    full = dataclasses.replace(settings, ai_url=settings.ai_url + "/chat/completions/")

    await ChatClient(full).complete(MESSAGES)

    assert provider.requests[0].path == "/v1/chat/completions"


async def test_tool_call_fragments_across_many_events_are_joined_and_parsed_once(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    arguments = json.dumps({"commandId": "hash", "text": "sha256 hello world"})
    provider.script(tool_reply(("runCommand", arguments), pieces=9))

    reply = await client.complete(MESSAGES, tools=TOOLS)

    (call,) = reply.tool_calls
    assert call.id == "call_runCommand_0"
    assert call.name == "runCommand"
    assert call.arguments == arguments
    assert call.parsed == {"commandId": "hash", "text": "sha256 hello world"}
    assert call.error is None
    assert reply.finish_reason == "tool_calls"


async def test_two_tool_calls_in_one_reply_keep_their_order(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(tool_reply(("getStatus", "{}"), ("getLogs", '{"limit": 5}'), text="Checking."))

    reply = await client.complete(MESSAGES, tools=TOOLS)

    assert [call.name for call in reply.tool_calls] == ["getStatus", "getLogs"]
    assert reply.tool_calls[1].parsed == {"limit": 5}
    assert reply.text == "Checking."


async def test_interleaved_fragments_of_two_calls_are_gathered_by_index(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    def fragment(index: int, **function: str) -> dict[str, object]:
        call: dict[str, object] = {"index": index, "function": function}
        if "name" in function:
            call["id"] = f"id{index}"
        return chunk(tool_calls=[call])

    provider.script(
        sse_reply(
            fragment(0, name="getLogs", arguments=""),
            fragment(1, name="getErrors", arguments='{"stack'),
            fragment(0, arguments='{"limit"'),
            fragment(1, arguments='": true}'),
            fragment(0, arguments=": 2}"),
            chunk(finish="tool_calls"),
        )
    )

    reply = await client.complete(MESSAGES, tools=TOOLS)

    assert [(call.id, call.name, call.parsed) for call in reply.tool_calls] == [
        ("id0", "getLogs", {"limit": 2}),
        ("id1", "getErrors", {"stack": True}),
    ]


@pytest.mark.parametrize(
    "names",
    [
        ["get", "Status"],  # pieces, joined as OpenAI's own SDK joins them
        ["getStatus", "getStatus", "getStatus"],  # the whole name in every fragment
        ["get", "getStatus"],  # the name so far in every fragment
        ["getStatus"],
    ],
)
async def test_a_tool_name_streamed_in_fragments_is_joined(
    provider: ScriptedProvider, client: ChatClient, names: list[str]
) -> None:
    arguments = ["{", '"verbose"', ": true}"]
    fragments = [
        chunk(
            tool_calls=[
                {
                    "index": 0,
                    **({"id": "call_1"} if number == 0 else {}),
                    "function": {"name": name, "arguments": arguments[number % 3]},
                }
            ]
        )
        for number, name in enumerate(names)
    ]
    rest = [
        chunk(tool_calls=[{"index": 0, "function": {"arguments": piece}}])
        for piece in arguments[len(names) :]
    ]
    provider.script(sse_reply(*fragments, *rest, chunk(finish="tool_calls")))

    reply = await client.complete(MESSAGES, tools=TOOLS)

    [call] = reply.tool_calls
    assert (call.id, call.name, call.parsed) == ("call_1", "getStatus", {"verbose": True})


async def test_textual_marker_becomes_a_zero_argument_call_and_leaves_the_text(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(text_reply("Let me look. <tool_call>getStatus</tool_call>", pieces=7))
    seen: list[str] = []

    reply = await client.complete(MESSAGES, tools=TOOLS, on_text=seen.append)

    assert reply.text == "Let me look."
    assert [(call.name, call.arguments, call.parsed) for call in reply.tool_calls] == [
        ("getStatus", "{}", {})
    ]
    assert "tool_call" not in "".join(seen)


async def test_marker_for_a_tool_already_called_adds_nothing(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        tool_reply(("getStatus", '{"verbose": true}'), text="<tool_call>getStatus</tool_call>")
    )

    reply = await client.complete(MESSAGES, tools=TOOLS)

    assert [(call.name, call.parsed) for call in reply.tool_calls] == [
        ("getStatus", {"verbose": True})
    ]
    assert reply.text == ""


async def test_marker_is_not_a_call_when_no_tools_were_offered(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(text_reply("Answer. <tool_call>getStatus</tool_call>"))

    reply = await client.complete(MESSAGES)

    assert reply.tool_calls == ()
    assert reply.text == "Answer."


async def test_plain_json_reply_is_read_by_content_type(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        json_reply(completion("From JSON.", usage={"prompt_tokens": 12, "completion_tokens": 3}))
    )
    seen: list[str] = []

    reply = await client.complete(MESSAGES, on_text=seen.append)

    assert reply.text == "From JSON."
    assert seen == ["From JSON."]
    assert reply.usage is not None
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (12, 3)


async def test_plain_json_reply_with_tool_calls(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "getLogs", "arguments": "{}"}}
    provider.script(json_reply(completion(None, tool_calls=[call])))

    reply = await client.complete(MESSAGES, tools=TOOLS)

    assert [(item.id, item.name, item.parsed) for item in reply.tool_calls] == [
        ("c1", "getLogs", {})
    ]


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47}, (40, 7)),
        ({"input_tokens": 41, "output_tokens": 8}, (41, 8)),
        ({"prompt_tokens": 42}, (42, None)),
    ],
)
async def test_usage_under_either_naming(
    provider: ScriptedProvider,
    client: ChatClient,
    usage: dict[str, int],
    expected: tuple[int, int | None],
) -> None:
    provider.script(text_reply("ok", usage=usage))

    reply = await client.complete(MESSAGES)

    assert reply.usage is not None
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == expected


async def test_no_usage_reported_gives_none(provider: ScriptedProvider, client: ChatClient) -> None:
    provider.script(text_reply("ok"))

    reply = await client.complete(MESSAGES)

    assert reply.usage is None


async def test_sse_comments_keep_alives_and_multi_line_data(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    first = json.dumps(chunk("Hello"))
    split = json.dumps(chunk(" world"), indent=1).split("\n")
    multi_line = "".join(f"data: {line}\n" for line in split) + "\n"
    provider.script(
        sse_reply(
            ": keep-alive\n\n",
            f"event: message\nid: 1\ndata: {first}\n\n",
            ":\n\n",
            multi_line,
            chunk(finish="stop"),
        )
    )

    reply = await client.complete(MESSAGES)

    assert reply.text == "Hello world"


async def test_reasoning_content_is_kept_apart_from_the_answer(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        sse_reply(chunk(reasoning="Think first."), chunk("Answer."), chunk(finish="stop"))
    )

    reply = await client.complete(MESSAGES)

    assert (reply.text, reply.reasoning) == ("Answer.", "Think first.")


# Failures


@pytest.mark.parametrize(
    ("status", "kind", "code"),
    [
        (401, ProviderAuthError, "auth"),
        (403, ProviderAuthError, "auth"),
        (404, ProviderNotFoundError, "not_found"),
        (400, ProviderRequestError, "bad_request"),
    ],
)
async def test_client_errors_are_not_retried(
    provider: ScriptedProvider,
    client: ChatClient,
    status: int,
    kind: type[ProviderError],
    code: str,
) -> None:
    provider.script(json_reply({"error": {"message": f"refused {status}"}}, status=status))

    with pytest.raises(kind) as caught:
        await client.complete(MESSAGES)

    assert caught.value.code == code
    assert caught.value.status == status
    assert f"refused {status}" in caught.value.message
    assert len(provider.requests) == 1


async def test_404_message_points_at_the_configuration(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(Reply(status=404, content_type="text/html", chunks=(b"<h1>nope</h1>",)))

    with pytest.raises(ProviderNotFoundError) as caught:
        await client.complete(MESSAGES)

    assert "AI_URL" in caught.value.message
    assert "<h1>" not in caught.value.message


async def test_429_is_retried_then_succeeds(provider: ScriptedProvider, settings: Settings) -> None:
    sleep = SleepRecorder()
    provider.script(
        json_reply({"error": "slow down"}, status=429),
        json_reply({"error": "slow down"}, status=429),
        text_reply("finally"),
    )

    reply = await ChatClient(settings, sleep=sleep).complete(MESSAGES)

    assert reply.text == "finally"
    assert len(provider.requests) == 3
    assert len(sleep.delays) == 2


async def test_429_exhausts_the_retries(provider: ScriptedProvider, settings: Settings) -> None:
    sleep = SleepRecorder()
    provider.script(*[json_reply({"error": {"message": "quota"}}, status=429)] * 3)

    with pytest.raises(ProviderRateLimitError) as caught:
        await ChatClient(settings, sleep=sleep).complete(MESSAGES)

    assert "quota" in caught.value.message
    assert caught.value.code == "rate_limited"
    assert len(provider.requests) == settings.retries + 1
    assert provider.remaining == 0


async def test_retry_after_is_honoured_up_to_the_cap(
    provider: ScriptedProvider, settings: Settings
) -> None:
    sleep = SleepRecorder()
    provider.script(
        json_reply({}, status=429, headers={"Retry-After": "0.02"}),
        json_reply({}, status=503, headers={"Retry-After": "30"}),
        text_reply("ok"),
    )

    await ChatClient(settings, sleep=sleep).complete(MESSAGES)

    assert sleep.delays == [0.02, settings.retry_max_delay]


async def test_backoff_really_waits_between_attempts(
    provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(json_reply({}, status=502), text_reply("ok"))
    patient = dataclasses.replace(settings, retry_delay=0.05)

    started = time.monotonic()
    await ChatClient(patient).complete(MESSAGES)

    assert time.monotonic() - started >= 0.05


async def test_500_carries_the_providers_own_message(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    body = {"error": {"message": "upstream model overloaded", "type": "server_error"}}
    provider.script(*[json_reply(body, status=500)] * 3)

    with pytest.raises(ProviderServerError) as caught:
        await client.complete(MESSAGES)

    assert "upstream model overloaded" in caught.value.message
    assert caught.value.status == 500
    assert len(provider.requests) == 3


async def test_connection_refused(settings: Settings) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    closed = dataclasses.replace(settings, ai_url=f"http://127.0.0.1:{port}/v1")

    with pytest.raises(ProviderConnectionError) as caught:
        await ChatClient(closed).complete(MESSAGES)

    assert f"127.0.0.1:{port}" in caught.value.message
    assert caught.value.code == "connection"


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:abc/v1", "ftp://127.0.0.1/v1", "127.0.0.1:9/v1", "http://x\x00y/"]
)
async def test_an_invalid_url_is_a_connection_error(settings: Settings, url: str) -> None:
    broken = dataclasses.replace(settings, ai_url=url)

    with pytest.raises(ProviderConnectionError) as caught:
        await ChatClient(broken).complete(MESSAGES)

    assert "check AI_URL" in caught.value.message
    assert caught.value.code == "connection"


async def test_read_timeout_with_a_slow_server(
    provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(Reply(delay=1.0, chunks=(b"data: [DONE]\n\n",)))
    hurried = dataclasses.replace(settings, read_timeout=0.2)

    started = time.monotonic()
    with pytest.raises(ProviderTimeoutError) as caught:
        await ChatClient(hurried).complete(MESSAGES)

    assert time.monotonic() - started < 0.9
    assert "0.2 seconds" in caught.value.message


async def test_read_timeout_in_the_middle_of_a_stream(
    provider: ScriptedProvider, settings: Settings
) -> None:
    reply = text_reply("one two three", pieces=3)
    provider.script(dataclasses.replace(reply, chunk_delay=0.5))
    hurried = dataclasses.replace(settings, read_timeout=0.2)

    with pytest.raises(ProviderTimeoutError):
        await ChatClient(hurried).complete(MESSAGES)


async def test_stream_cut_mid_way(provider: ScriptedProvider, client: ChatClient) -> None:
    provider.script(sse_reply(chunk("Half an ans"), done=False, cut=True))
    seen: list[str] = []

    with pytest.raises(StreamCutError) as caught:
        await client.complete(MESSAGES, on_text=seen.append)

    assert caught.value.code == "stream_cut"
    assert seen == ["Half an ans"]


async def test_stream_ending_without_finish_or_done_is_cut(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(sse_reply(chunk("Half"), done=False))

    with pytest.raises(StreamCutError):
        await client.complete(MESSAGES)


async def test_stream_with_finish_but_no_done_is_complete(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(sse_reply(chunk("Whole."), chunk(finish="stop"), done=False))

    reply = await client.complete(MESSAGES)

    assert reply.text == "Whole."


async def test_malformed_event_json(provider: ScriptedProvider, client: ChatClient) -> None:
    provider.script(sse_reply(chunk("ok"), 'data: {"choices": [\n\n'))

    with pytest.raises(MalformedResponseError) as caught:
        await client.complete(MESSAGES)

    assert "not valid JSON" in caught.value.message
    assert caught.value.code == "malformed"


async def test_malformed_json_body(provider: ScriptedProvider, client: ChatClient) -> None:
    provider.script(Reply(content_type="application/json", chunks=(b"{oops",)))

    with pytest.raises(MalformedResponseError):
        await client.complete(MESSAGES)


async def test_unexpected_content_type_is_not_guessed(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(Reply(content_type="text/plain", chunks=(b"data: {}\n\n",)))

    with pytest.raises(MalformedResponseError) as caught:
        await client.complete(MESSAGES)

    assert "text/plain" in caught.value.message


async def test_error_event_inside_the_stream(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(sse_reply(chunk("Par"), {"error": {"message": "model crashed", "code": 502}}))

    with pytest.raises(ProviderServerError) as caught:
        await client.complete(MESSAGES)

    assert "model crashed" in caught.value.message


# Pure helpers


def test_request_body_shape() -> None:
    body = request_body("m", MESSAGES, TOOLS)

    assert body == {
        "model": "m",
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": TOOLS,
        "tool_choice": "auto",
    }


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("", None),
        ("3", 3.0),
        ("0.5", 0.5),
        ("-2", 0.0),
        ("soon", None),
        ("Thu, 01 Jan 1970 00:00:10 GMT", 5.0),
    ],
)
def test_retry_after_seconds(header: str | None, expected: float | None) -> None:
    assert retry_after_seconds(header, now=5.0) == expected


def test_backoff_doubles_and_is_capped() -> None:
    settings = Settings(retry_delay=1.0, retry_max_delay=5.0)

    assert [backoff_delay(attempt, settings) for attempt in range(4)] == [1.0, 2.0, 4.0, 5.0]
    assert backoff_delay(0, settings, retry_after=2.5) == 2.5
    assert backoff_delay(0, settings, retry_after=60) == 5.0
