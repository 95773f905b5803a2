"""The tool loop against a scripted provider: rounds, the limit, the fallback, usage."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from szrag.base.activity import ActivityRecorder
from szrag.llm.client import ChatClient
from szrag.llm.errors import ProviderAuthError
from szrag.llm.loop import (
    LIVE_DATA_LABEL,
    MAX_TOOL_ROUNDS,
    ToolLoop,
    ToolOutcome,
    build_ai_fallback,
    estimate_tokens,
    messages_text,
    request_usage,
    takes_round,
)
from szrag.llm.stream import ModelReply, ToolCall, UsageReport
from szrag.llm.testing import ScriptedProvider, json_reply, text_reply, tool_reply
from szrag.llm.usage import Usage

LIMIT_PROMPT = "LIMIT REACHED: answer now."
MESSAGES = [
    {"role": "system", "content": "system rules"},
    {"role": "user", "content": "Is the bot healthy?"},
]
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("getStatus", "getLogs", "getErrors")
]


class Executor:
    """Runs tools by name with scripted results, recording each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, name: str, arguments: str) -> str:
        self.calls.append((name, arguments))
        if name == "getErrors":
            raise RuntimeError("errors endpoint exploded")
        return json.dumps({"tool": name, "ok": True})


def make_loop(
    client: ChatClient,
    executor: Executor | None = None,
    recorder: ActivityRecorder | None = None,
    tokens: list[tuple[str, int]] | None = None,
) -> ToolLoop:
    def on_token(text: str, number: int) -> None:
        if tokens is not None:
            tokens.append((text, number))

    return ToolLoop(
        client,
        limit_prompt=LIMIT_PROMPT,
        tools=TOOLS,
        executor=executor or Executor(),
        recorder=recorder,
        on_token=on_token,
    )


async def test_a_direct_answer_takes_one_request(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(text_reply("Healthy.", usage={"prompt_tokens": 10, "completion_tokens": 2}))

    result = await make_loop(client).run(MESSAGES)

    assert result.answer == "Healthy."
    assert (result.response_rounds, result.tool_rounds) == (1, 0)
    assert result.usage == Usage(10, 2, estimated=False)
    assert not result.fallback
    assert provider.requests[0].json["tools"] == TOOLS


async def test_one_tool_round_puts_call_and_live_data_in_the_history(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        tool_reply(("getStatus", '{"verbose": true}'), text="Checking status."),
        text_reply("It is up."),
    )
    executor = Executor()

    result = await make_loop(client, executor).run(MESSAGES)

    assert result.answer == "It is up."
    assert executor.calls == [("getStatus", '{"verbose": true}')]
    second = provider.requests[1].json["messages"]
    assert second[:2] == MESSAGES
    assert second[2] == {
        "role": "assistant",
        "content": "Checking status.",
        "tool_calls": [
            {
                "id": "call_getStatus_0",
                "type": "function",
                "function": {"name": "getStatus", "arguments": '{"verbose": true}'},
            }
        ],
    }
    assert second[3]["role"] == "tool"
    assert second[3]["tool_call_id"] == "call_getStatus_0"
    assert second[3]["content"].startswith(LIVE_DATA_LABEL)
    assert '"tool": "getStatus"' in second[3]["content"]
    assert result.intermediate == ("Checking status.",)


async def test_two_tools_in_one_round_run_together_and_keep_call_order(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(tool_reply(("getStatus", "{}"), ("getLogs", "{}")), text_reply("Done."))
    logs_ran = asyncio.Event()
    finished: list[str] = []

    async def executor(name: str, arguments: str) -> str:
        if name == "getStatus":  # finishes only if getLogs runs while it waits
            await asyncio.wait_for(logs_ran.wait(), timeout=2)
        else:
            logs_ran.set()
        finished.append(name)
        return name

    loop = ToolLoop(client, limit_prompt=LIMIT_PROMPT, tools=TOOLS, executor=executor)
    result = await loop.run(MESSAGES)

    assert finished == ["getLogs", "getStatus"]
    tool_messages = [m for m in provider.requests[1].json["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_getStatus_0", "call_getLogs_1"]
    assert [m["content"].splitlines()[-1] for m in tool_messages] == ["getStatus", "getLogs"]
    assert [outcome.call.name for outcome in result.outcomes] == ["getStatus", "getLogs"]
    assert result.answer == "Done."


async def test_a_failing_tool_becomes_a_structured_failure_for_the_model(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(tool_reply(("getErrors", "{}")), text_reply("Could not read errors."))

    result = await make_loop(client).run(MESSAGES)

    content = provider.requests[1].json["messages"][-1]["content"]
    payload = json.loads(content.removeprefix(LIVE_DATA_LABEL))
    assert payload == {"ok": False, "tool": "getErrors", "error": "errors endpoint exploded"}
    assert result.answer == "Could not read errors."


async def test_unparseable_arguments_are_reported_without_running_the_tool(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(tool_reply(("getLogs", '{"limit": ')), text_reply("ok"))
    executor = Executor()
    recorder = ActivityRecorder()

    await make_loop(client, executor, recorder).run(MESSAGES)

    assert executor.calls == []
    assert "not valid JSON" in provider.requests[1].json["messages"][-1]["content"]
    failed = [a for a in recorder.activities if a.stage == "tool"]
    assert [(a.status, a.metadata and a.metadata["tool"]) for a in failed] == [
        ("failed", "getLogs")
    ]


async def test_unparsed_arguments_reach_the_activity_sanitised_and_bounded(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    arguments = '{"text": "password=hunter2 ' + secret + " " + "x" * 5000
    provider.script(tool_reply(("runCommand", arguments)), text_reply("ok"))
    recorder = ActivityRecorder()

    await make_loop(client, Executor(), recorder).run(MESSAGES)

    (failed,) = [a for a in recorder.activities if a.stage == "tool"]
    assert failed.metadata is not None
    shown = failed.metadata["arguments"]
    assert "hunter2" not in shown and secret not in shown
    assert shown.startswith('{"text": "password=[REDACTED]')
    assert len(shown) < 600


async def test_three_tool_rounds_then_the_limit_prompt_and_a_final_request_without_tools(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        tool_reply(("getStatus", "{}"), text="Round one."),
        tool_reply(("getLogs", "{}")),
        tool_reply(("getStatus", '{"verbose": true}')),
        text_reply("Final answer from gathered data."),
    )
    executor = Executor()
    recorder = ActivityRecorder()

    result = await make_loop(client, executor, recorder).run(MESSAGES)

    requests = [request.json for request in provider.requests]
    assert len(requests) == MAX_TOOL_ROUNDS + 1
    assert all("tools" in body and body["tool_choice"] == "auto" for body in requests[:3])
    assert "tools" not in requests[3] and "tool_choice" not in requests[3]
    assert requests[3]["messages"][-1] == {"role": "system", "content": LIMIT_PROMPT}
    assert sum(1 for m in requests[3]["messages"] if m["role"] == "tool") == 3
    assistant_turns = [m for m in requests[3]["messages"] if m["role"] == "assistant"]
    assert [turn["content"] for turn in assistant_turns] == ["Round one.", "", ""]  # never null
    assert [name for name, _ in executor.calls] == ["getStatus", "getLogs", "getStatus"]
    assert result.answer == "Final answer from gathered data."
    assert (result.response_rounds, result.tool_rounds) == (4, 3)
    assert result.limit_reached and not result.fallback
    assert any("limit" in a.message for a in recorder.activities if a.stage == "ai")


async def test_tool_calls_in_the_final_request_are_ignored(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        *[tool_reply(("getStatus", f'{{"page": {page}}}')) for page in range(3)],
        tool_reply(("getLogs", "{}"), text="Still want logs."),
    )
    executor = Executor()

    result = await make_loop(client, executor).run(MESSAGES)

    assert len(executor.calls) == 3
    assert result.answer == "Still want logs."
    assert provider.remaining == 0


async def test_an_identical_call_is_answered_from_the_first_result_without_running_again(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    # a small model asked for getStatus three times with the same arguments
    provider.script(
        tool_reply(("getStatus", '{"verbose": true, "section": "db"}')),
        tool_reply(("getStatus", '{"section": "db", "verbose": true}'), ("getLogs", "{}")),
        tool_reply(("getStatus", '{"verbose": true, "section": "db"}')),  # same, keys reordered
        text_reply("Up."),
    )
    executor = Executor()
    recorder = ActivityRecorder()

    result = await make_loop(client, executor, recorder).run(MESSAGES)

    assert executor.calls == [
        ("getStatus", '{"verbose": true, "section": "db"}'),
        ("getLogs", "{}"),
    ]
    final = provider.requests[3].json["messages"]
    results = [m["content"] for m in final if m["role"] == "tool"]
    assert len(results) == 4  # every call has its answer, in call order
    first, second, logs, third = results
    assert first == f'{LIVE_DATA_LABEL}\n{{"tool": "getStatus", "ok": true}}'
    for repeat in (second, third):
        assert repeat.startswith(f"{LIVE_DATA_LABEL}\n[repeat: getStatus was already called")
        assert "not run again" in repeat and "in request 1" in repeat
        assert repeat.endswith('{"tool": "getStatus", "ok": true}')
    assert logs.endswith('{"tool": "getLogs", "ok": true}')
    assert [outcome.repeat_of for outcome in result.outcomes] == [None, 1, None, 1]
    repeats = [a for a in recorder.activities if a.metadata and "repeat_of" in a.metadata]
    assert [(a.stage, a.metadata and a.metadata["round"]) for a in repeats] == [
        ("tool", 2),
        ("tool", 3),
    ]
    assert result.answer == "Up."


async def test_a_round_of_nothing_but_repeats_asks_for_the_final_answer_at_once(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    # a model behind a chat template that drops `tool` messages never sees the result, and
    # asks for it again: one more round could only repeat it once more
    provider.script(
        tool_reply(("getStatus", "{}")),
        tool_reply(("getStatus", "{}")),
        text_reply("From the repository alone: it should be up."),
    )
    executor = Executor()
    recorder = ActivityRecorder()

    result = await make_loop(client, executor, recorder).run(MESSAGES)

    assert executor.calls == [("getStatus", "{}")]
    assert len(provider.requests) == 3  # not four: no third tool round
    final = provider.requests[2].json
    assert "tools" not in final
    assert final["messages"][-1] == {"role": "system", "content": LIMIT_PROMPT}
    assert result.answer == "From the repository alone: it should be up."
    assert (result.tool_rounds, result.limit_reached) == (2, True)
    assert any("only repeated" in a.message for a in recorder.activities if a.stage == "ai")


async def test_identical_calls_in_one_round_run_once(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(tool_reply(("getLogs", '{"limit": 5}'), ("getLogs", '{"limit": 5}')))
    provider.script(text_reply("Logs read."))
    executor = Executor()

    result = await make_loop(client, executor).run(MESSAGES)

    assert executor.calls == [("getLogs", '{"limit": 5}')]
    tool_messages = [m for m in provider.requests[1].json["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_getLogs_0", "call_getLogs_1"]
    assert "[repeat: getLogs" in tool_messages[1]["content"]
    assert [outcome.repeat_of for outcome in result.outcomes] == [None, 1]


async def test_no_final_answer_gives_the_fallback(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        tool_reply(("getStatus", "{}"), text="Looking at status first."),
        tool_reply(("getLogs", "{}")),
        tool_reply(("getStatus", "{}")),
        text_reply("<tool_call>getLogs</tool_call>"),
    )
    recorder = ActivityRecorder()

    result = await make_loop(client, recorder=recorder).run(MESSAGES)

    assert result.fallback
    assert result.answer.startswith("The model did not produce a final answer.")
    assert "Looking at status first." in result.answer
    assert "- getLogs:" in result.answer
    assert recorder.activities[-1].status == "failed"


async def test_an_empty_first_reply_without_tools_falls_back(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(text_reply(""))

    result = await make_loop(client).run(MESSAGES)

    assert result.fallback
    assert "rephrase" in result.answer


async def test_on_token_receives_text_with_its_round(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        tool_reply(("getStatus", "{}"), text="Let me check."), text_reply("All good.", pieces=2)
    )
    tokens: list[tuple[str, int]] = []
    recorder = ActivityRecorder()

    await make_loop(client, recorder=recorder, tokens=tokens).run(MESSAGES)

    assert "".join(text for text, number in tokens if number == 1) == "Let me check."
    assert "".join(text for text, number in tokens if number == 2) == "All good."
    (marked,) = [a for a in recorder.activities if a.stage == "reasoning"]
    assert marked.metadata == {"round": 1, "kind": "intermediate", "text": "Let me check."}


async def test_a_one_argument_on_token_gets_the_text_alone(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        tool_reply(("getStatus", "{}"), text="Let me check."), text_reply("All good.", pieces=2)
    )
    pieces: list[str] = []

    async def on_token(text: str) -> None:  # the spec's onToken(text)
        pieces.append(text)

    loop = ToolLoop(
        client, limit_prompt=LIMIT_PROMPT, tools=TOOLS, executor=Executor(), on_token=on_token
    )
    result = await loop.run(MESSAGES)

    assert "".join(pieces) == "Let me check.All good."
    assert result.answer == "All good."


def test_takes_round_reads_the_signature() -> None:
    def two(text: str, number: int) -> None: ...
    def defaulted(text: str, number: int = 1) -> None: ...
    def varargs(*args: Any) -> None: ...
    def one(text: str) -> None: ...
    def keyword_only(text: str, *, number: int = 1) -> None: ...

    assert takes_round(two) and takes_round(defaulted) and takes_round(varargs)
    assert not takes_round(one) and not takes_round(keyword_only)
    assert not takes_round([].append)  # a builtin bound method with one argument


async def test_usage_is_summed_across_rounds_and_estimated_where_missing(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(
        tool_reply(("getStatus", "{}"), usage={"input_tokens": 100, "output_tokens": 10}),
        text_reply("abcdefgh"),
    )

    result = await make_loop(client).run(MESSAGES)

    second_request = provider.requests[1].json["messages"]
    expected_input = 100 + estimate_tokens(messages_text(second_request))
    assert result.usage.input_tokens == expected_input
    assert result.usage.output_tokens == 10 + 2
    assert result.usage.estimated
    assert result.usage.to_dict()["total"] == result.usage.total_tokens


async def test_without_an_executor_no_tools_are_offered(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(text_reply("ok"))

    await ToolLoop(client, limit_prompt=LIMIT_PROMPT, tools=TOOLS).run(MESSAGES)

    assert "tools" not in provider.requests[0].json


async def test_provider_errors_propagate(provider: ScriptedProvider, client: ChatClient) -> None:
    provider.script(json_reply({"error": "bad key"}, status=401))

    with pytest.raises(ProviderAuthError):
        await make_loop(client).run(MESSAGES)


async def test_ai_activities_pair_start_and_end_of_each_request(
    provider: ScriptedProvider, client: ChatClient
) -> None:
    provider.script(tool_reply(("getStatus", "{}")), text_reply("ok"))
    recorder = ActivityRecorder()

    await make_loop(client, recorder=recorder).run(MESSAGES)

    ai = [a for a in recorder.activities if a.stage == "ai"]
    assert [a.status for a in ai] == ["started", "completed", "started", "completed"]
    assert ai[0].activity_id == ai[1].activity_id != ai[2].activity_id == ai[3].activity_id
    assert ai[1].message == "Model asked for tools: getStatus"
    assert ai[3].message == "Model answered"


# Pure parts


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2)])
def test_estimate_tokens_rounds_up(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


def test_request_usage_prefers_reported_counts() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "x" * 40}]
    reported = ModelReply(text="y" * 8, usage=UsageReport(3, 4))
    silent = ModelReply(text="y" * 8)

    assert request_usage(messages, reported) == Usage(3, 4, estimated=False)
    assert request_usage(messages, silent) == Usage(10, 2, estimated=True)


def test_messages_text_includes_tool_call_arguments() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [ToolCall("c", "f", "{}").to_message()]},
    ]

    assert messages_text(messages) == "q\n\nf{}"


def test_usage_adds_up() -> None:
    total = Usage(1, 2) + Usage(3, 4, estimated=True)

    assert total.to_dict() == {"input": 4, "output": 6, "total": 10, "estimated": True}


def test_fallback_truncates_long_tool_results() -> None:
    outcome = ToolOutcome(1, ToolCall(id="c", name="getLogs"), "word " * 1000)

    text = build_ai_fallback(["  ", "Partial idea."], [outcome])

    assert "Partial idea." in text
    line = next(line for line in text.splitlines() if line.startswith("- getLogs:"))
    assert len(line) < 1600 and line.endswith("…")
