"""The tool loop: ask the model, run the tools it calls, ask again, at most three tool rounds.

Each request that offers tools may come back with tool calls. The assistant's text and calls go
into the history, every call runs through the executor (calls of one round concurrently, results
kept in call order) and each result is appended as a ``tool`` message that starts with
``LIVE API DATA (current runtime evidence)``. A call identical to one made earlier in the same
run (same tool, same arguments) is not run again: it is answered with the first call's result,
marked as a repeat (small models call ``getStatus`` three times although told not to). A round
of nothing but repeats ends the tool rounds early: the model has been given all the tools can
give it, or cannot see tool results at all (some chat templates drop ``tool`` messages), and the
limit prompt asks it for the final answer at once. After :data:`MAX_TOOL_ROUNDS` rounds of tool calls,
the TOOL-CALL-LIMIT prompt is appended as a system message and one last request is sent without
tools. If no request produced answer text, :func:`build_ai_fallback` writes an answer from the
intermediate text and the tool results.

Streaming: ``on_token(text, round)`` receives answer text as it arrives, with the 1-based number
of the request it belongs to; a callback that takes one argument, as in the spec
(``on_token(text)``), is given the text alone. Text of a round that ends in tool calls is *intermediate*: right
after such a round, before any tool runs, a ``reasoning`` activity with metadata
``{"round": n, "kind": "intermediate", "text": ...}`` is recorded, so a face can set that text
apart. The final answer is the text of the last round (or the fallback), returned complete.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from szrag.base.activity import COMPLETED, FAILED, STARTED, ActivityRecorder, new_id
from szrag.base.errors import ProviderError
from szrag.llm.client import ChatClient, Message
from szrag.llm.stream import ModelReply, ToolCall
from szrag.llm.usage import Usage
from szrag.tools.sanitise import sanitise_text

log = logging.getLogger("szrag.llm")

MAX_TOOL_ROUNDS = 3
LIVE_DATA_LABEL = "LIVE API DATA (current runtime evidence)"
CHARS_PER_TOKEN = 4
MAX_REASONING_CHARS = 4000
MAX_FALLBACK_RESULT_CHARS = 1500
MAX_ARGUMENT_CHARS = 500  # of a tool call's arguments shown in an activity

ToolExecutor = Callable[[str, str], Awaitable[str]]
"""Runs one tool: ``await executor(name, arguments_json)`` gives the result text."""

TokenCallback = Callable[[str, int], Awaitable[None] | None]
OnToken = TokenCallback | Callable[[str], Awaitable[None] | None]
"""Told each piece of answer text, with the number of the request it belongs to when it takes
two positional arguments."""


def takes_round(callback: Callable[..., Any]) -> bool:
    """True when ``callback`` accepts a second positional argument (the request number)."""
    try:
        parameters = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):  # no signature to read: use the documented form
        return True
    positional = 0
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            return True
        if parameter.kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            positional += 1
    return positional >= 2


def token_callback(on_token: OnToken) -> TokenCallback:
    """``on_token`` as a two-argument callback, whichever form it was written in."""
    if takes_round(on_token):
        return on_token  # type: ignore[return-value]  # checked: it takes the round
    single: Callable[[str], Awaitable[None] | None] = on_token  # type: ignore[assignment]
    return lambda text, _round: single(text)


def estimate_tokens(text: str) -> int:
    """A rough token count: one token per four characters, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def messages_text(messages: Sequence[Message]) -> str:
    """The text a request sends: every message's content and tool-call arguments."""
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        for call in message.get("tool_calls") or ():
            function = call.get("function", {}) if isinstance(call, Mapping) else {}
            parts.append(f"{function.get('name', '')}{function.get('arguments', '')}")
    return "\n".join(parts)


def reply_text(reply: ModelReply) -> str:
    """The text a reply produced: answer, reasoning and tool calls."""
    calls = "".join(f"{call.name}{call.arguments}" for call in reply.tool_calls)
    return reply.text + reply.reasoning + calls


def request_usage(messages: Sequence[Message], reply: ModelReply) -> Usage:
    """The provider's counts for one request, estimating any it did not report."""
    reported = reply.usage
    input_tokens = reported.input_tokens if reported else None
    output_tokens = reported.output_tokens if reported else None
    return Usage(
        input_tokens if input_tokens is not None else estimate_tokens(messages_text(messages)),
        output_tokens if output_tokens is not None else estimate_tokens(reply_text(reply)),
        estimated=input_tokens is None or output_tokens is None,
    )


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool call of some round and the text it produced; ``repeat_of``: the round of the
    identical call whose result it was given instead of running."""

    round: int
    call: ToolCall
    text: str
    repeat_of: int | None = None


CallKey = tuple[str, str]


def call_key(call: ToolCall) -> CallKey | None:
    """What makes two calls identical: the tool and its arguments, key order aside (None for
    a call whose arguments could not be read: it is reported, not run)."""
    if call.error is not None or call.parsed is None:
        return None
    return call.name, json.dumps(call.parsed, sort_keys=True, separators=(",", ":"))


def repeat_text(first: ToolOutcome) -> str:
    """The result given to a repeated call: the first call's, marked as such."""
    return (
        f"[repeat: {first.call.name} was already called with these arguments in request"
        f" {first.round}; this is that call's result, the tool was not run again]\n{first.text}"
    )


@dataclass(frozen=True, slots=True)
class LoopResult:
    """What the loop produced: the answer and how it came about."""

    answer: str
    response_rounds: int
    tool_rounds: int
    usage: Usage
    fallback: bool = False
    limit_reached: bool = False
    intermediate: tuple[str, ...] = ()
    outcomes: tuple[ToolOutcome, ...] = field(default=())
    finish_reason: str | None = None  # of the final reply ("length": cut at the output limit)


def tool_message(call: ToolCall, text: str, label: str = LIVE_DATA_LABEL) -> dict[str, Any]:
    """The history entry carrying one tool result, labelled as live runtime evidence (or as
    ``label`` says: a code tool's result is the repository's code)."""
    return {"role": "tool", "tool_call_id": call.id, "content": f"{label}\n{text}"}


def assistant_message(reply: ModelReply) -> dict[str, Any]:
    """The history entry for an assistant turn that called tools."""
    return {
        "role": "assistant",
        # "" rather than OpenAI's null: llama.cpp's server rejects null content, and every
        # server accepts the empty string
        "content": reply.text or "",
        "tool_calls": [call.to_message() for call in reply.tool_calls],
    }


def tool_failure(name: str, message: str) -> str:
    """The result text given to the model when a tool call could not run."""
    return json.dumps({"ok": False, "tool": name, "error": message}, ensure_ascii=False)


def build_ai_fallback(intermediate: Sequence[str], outcomes: Sequence[ToolOutcome]) -> str:
    """A local answer for when the model gave none: its intermediate text and the live data."""
    lines = ["The model did not produce a final answer."]
    texts = [text.strip() for text in intermediate if text.strip()]
    if texts:
        lines += ["", "What the model wrote while gathering evidence:", *texts]
    if outcomes:
        lines += ["", f"{LIVE_DATA_LABEL} gathered before it stopped:"]
        for outcome in outcomes:
            if outcome.repeat_of is None:  # a repeat's result is listed once, as the first
                lines.append(f"- {outcome.call.name}: {_preview(outcome.text)}")
    if not texts and not outcomes:
        lines.append("Ask again, or rephrase the question with exact file or function names.")
    return "\n".join(lines)


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= MAX_FALLBACK_RESULT_CHARS:
        return flat
    return flat[: MAX_FALLBACK_RESULT_CHARS - 1] + "…"


class ToolLoop:
    """Runs one conversation with the model through up to ``max_rounds`` rounds of tool calls."""

    def __init__(
        self,
        client: ChatClient,
        *,
        limit_prompt: str,
        tools: Sequence[Mapping[str, Any]] | None = None,
        executor: ToolExecutor | None = None,
        recorder: ActivityRecorder | None = None,
        on_token: OnToken | None = None,
        max_rounds: int = MAX_TOOL_ROUNDS,
        label_of: Callable[[str], str | None] | None = None,
    ) -> None:
        self.client = client
        # how a tool's result is labelled (None: as live runtime evidence)
        self.label_of = label_of or (lambda name: None)
        self.limit_prompt = limit_prompt
        self.tools = list(tools or ()) if executor is not None else []
        self.executor = executor
        self.recorder = recorder or ActivityRecorder()
        # Read the callback's signature once, not per token.
        self.on_token = token_callback(on_token) if on_token is not None else None
        self.max_rounds = max_rounds
        self.requests = 0  # requests sent by the current or last run
        self.usage = Usage()  # their usage so far, kept when a request fails

    async def run(self, messages: Sequence[Message]) -> LoopResult:
        """Ask until the model answers without tools; ProviderError propagates."""
        history: list[Message] = [dict(message) for message in messages]
        self.requests, self.usage = 0, Usage()
        intermediate: list[str] = []
        outcomes: list[ToolOutcome] = []
        tool_rounds = 0
        limit_reached = False
        answer = ""
        finish_reason: str | None = None
        repeating = False  # the last round held nothing but repeats
        while True:
            self.requests += 1
            number = self.requests
            offer = bool(self.tools) and tool_rounds < self.max_rounds and not repeating
            if self.tools and not offer:
                limit_reached = True
                history.append({"role": "system", "content": self.limit_prompt})
                reason = (
                    "The model only repeated calls already answered"
                    if repeating
                    else f"Tool-call limit of {self.max_rounds} rounds reached"
                )
                await self.recorder.record(
                    "ai",
                    COMPLETED,
                    f"{reason}; asking for a final answer",
                    metadata={
                        "round": number,
                        "max_tool_rounds": self.max_rounds,
                        "repeating": repeating,
                    },
                )
            try:
                reply = await self._request(history, number, offer)
            except ProviderError as error:
                # the failed request still cost its prompt, and whatever streamed before
                self.usage += Usage(
                    estimate_tokens(messages_text(history)),
                    estimate_tokens(error.partial_text),
                    estimated=True,
                )
                raise
            self.usage += request_usage(history, reply)
            if not (offer and reply.tool_calls):
                answer, finish_reason = reply.text, reply.finish_reason
                break
            tool_rounds += 1
            if reply.text:
                intermediate.append(reply.text)
                await self.recorder.record(
                    "reasoning",
                    COMPLETED,
                    f"Intermediate text from round {number} (tool calls follow)",
                    metadata={"round": number, "kind": "intermediate", "text": reply.text},
                )
            history.append(assistant_message(reply))
            answered = await self._run_tools(reply.tool_calls, number, outcomes)
            for outcome in answered:
                label = self.label_of(outcome.call.name) or LIVE_DATA_LABEL
                history.append(tool_message(outcome.call, outcome.text, label))
                outcomes.append(outcome)
            repeating = all(outcome.repeat_of is not None for outcome in answered)
        fallback = not answer
        if fallback:
            answer = build_ai_fallback(intermediate, outcomes)
            await self.recorder.record(
                "ai",
                FAILED,
                "The model gave no final answer; answering from what was gathered",
                metadata={"round": self.requests, "fallback": True},
            )
        return LoopResult(
            answer=answer,
            response_rounds=self.requests,
            tool_rounds=tool_rounds,
            usage=self.usage,
            fallback=fallback,
            limit_reached=limit_reached,
            intermediate=tuple(intermediate),
            outcomes=tuple(outcomes),
            finish_reason=finish_reason,
        )

    async def _request(self, history: Sequence[Message], number: int, offer: bool) -> ModelReply:
        pair = new_id()
        model = self.client.settings.ai_model
        await self.recorder.record(
            "ai",
            STARTED,
            f"Asking {model} (request {number})",
            activity_id=pair,
            metadata={"round": number, "model": model, "tools": len(self.tools) if offer else 0},
        )

        async def on_text(text: str) -> None:
            if self.on_token is not None:
                result = self.on_token(text, number)
                if result is not None:
                    await result

        reply = await self.client.complete(
            history, tools=self.tools if offer else None, on_text=on_text
        )
        if reply.reasoning:
            await self.recorder.record(
                "reasoning",
                COMPLETED,
                f"Model reasoning in request {number}",
                metadata={
                    "round": number,
                    "kind": "model",
                    "text": reply.reasoning[:MAX_REASONING_CHARS],
                },
            )
        calls = [call.name for call in reply.tool_calls] if offer else []
        message = f"Model asked for tools: {', '.join(calls)}" if calls else "Model answered"
        await self.recorder.record(
            "ai",
            COMPLETED,
            message,
            activity_id=pair,
            metadata={
                "round": number,
                "tool_calls": calls,
                "finish_reason": reply.finish_reason,
                "characters": len(reply.text),
            },
        )
        return reply

    async def _run_tools(
        self, calls: Sequence[ToolCall], number: int, earlier: Sequence[ToolOutcome]
    ) -> list[ToolOutcome]:
        """Every call of one round, run together, each identical call only once (in this
        round or an ``earlier`` one); outcomes in call order."""
        first: dict[CallKey, ToolOutcome] = {}
        for outcome in earlier:
            key = call_key(outcome.call)
            if key is not None and outcome.repeat_of is None:
                first.setdefault(key, outcome)
        planned: set[CallKey] = set()
        run: list[ToolCall] = []
        for call in calls:
            key = call_key(call)
            if key is None or (key not in first and key not in planned):
                run.append(call)
                if key is not None:
                    planned.add(key)
        texts = await asyncio.gather(*(self._run_tool(call, number) for call in run))
        ran = {
            id(call): ToolOutcome(number, call, text) for call, text in zip(run, texts, strict=True)
        }
        for outcome in ran.values():
            key = call_key(outcome.call)
            if key is not None:
                first[key] = outcome
        results: list[ToolOutcome] = []
        for call in calls:
            key = call_key(call)
            if id(call) in ran or key is None:  # a call without a key always runs
                results.append(ran[id(call)])
                continue
            original = first[key]
            await self._record_repeat(call, original, number)
            results.append(ToolOutcome(number, call, repeat_text(original), original.round))
        return results

    async def _record_repeat(self, call: ToolCall, original: ToolOutcome, number: int) -> None:
        await self.recorder.record(
            "tool",
            COMPLETED,
            f"{call.name} asked again with the same arguments: answered from request"
            f" {original.round}'s result, not run again",
            metadata={
                "round": number,
                "tool": call.name,
                "repeat_of": original.round,
                "arguments": sanitise_text(call.arguments, MAX_ARGUMENT_CHARS),
            },
        )

    async def _run_tool(self, call: ToolCall, number: int) -> str:
        if call.error is not None or self.executor is None:
            reason = call.error or "no tool executor is configured"
            await self.recorder.record(
                "tool",
                FAILED,
                f"{call.name} was not run: {reason}",
                # Unparsed or unrun, the arguments still may hold a secret or be huge.
                metadata={
                    "round": number,
                    "tool": call.name,
                    "arguments": sanitise_text(call.arguments, MAX_ARGUMENT_CHARS),
                },
            )
            return tool_failure(call.name, reason)
        try:
            return await self.executor(call.name, call.arguments)
        except Exception as error:  # a failing tool is evidence for the model, not a crash
            log.warning("tool %s failed: %s", call.name, error, exc_info=True)
            return tool_failure(call.name, str(error) or type(error).__name__)
