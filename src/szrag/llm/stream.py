"""Reading a chat-completions reply: server-sent events or plain JSON, into typed events.

The reply's content type decides how it is read: ``text/event-stream`` as server-sent events
(events end at a blank line, ``data:`` lines of one event are joined, comments and keep-alives
are skipped, ``[DONE]`` ends the stream), ``application/json`` as one completion object. Either
way the result is a sequence of :data:`StreamEvent` values, which a :class:`ReplyBuilder` turns
into one :class:`ModelReply`: text, tool calls gathered by index and parsed once, and usage.

Some models write ``<tool_call>name</tool_call>`` in their text instead of a structured call.
The builder turns each such marker into a zero-argument call unless that tool is already called,
and removes the markers from the answer; :class:`MarkerFilter` hides them from streamed text.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import AsyncGenerator, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from szrag.llm.errors import (
    MalformedResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    ReplyTooLargeError,
    StreamCutError,
    message_of,
)

log = logging.getLogger("szrag.llm")

DONE = "[DONE]"
MARKER_OPEN = "<tool_call>"
MARKER = re.compile(r"<tool_call>\s*([A-Za-z_][\w.-]*)\s*</tool_call>")
MAX_MARKER_HOLD = 200  # a held "<tool_call>" this long without its closing tag is plain text


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's separately reported reasoning text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallFragment:
    """A piece of the tool call at ``index``: any of its id, name and argument text."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Token counts as the provider reported them (``None`` where it said nothing)."""

    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class FinishReason:
    """Why a choice stopped (``stop``, ``tool_calls``, ``length``...)."""

    reason: str


StreamEvent = TextDelta | ReasoningDelta | ToolCallFragment | UsageReport | FinishReason


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete tool call: its id, tool name, raw argument JSON and the parsed arguments."""

    id: str
    name: str
    arguments: str = "{}"
    parsed: Mapping[str, Any] | None = field(default=None, compare=False)
    error: str | None = None

    def to_message(self) -> dict[str, Any]:
        """The call as it appears in an assistant message of the chat history."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class ModelReply:
    """One complete reply: answer text, reasoning, tool calls, usage and finish reason."""

    text: str
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: UsageReport | None = None
    finish_reason: str | None = None


def parse_arguments(raw: str) -> tuple[Mapping[str, Any] | None, str | None]:
    """The argument object of a tool call, or ``None`` and why it cannot be used."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        return None, f"arguments are not valid JSON ({error.msg})"
    if not isinstance(value, dict):
        return None, "arguments must be a JSON object"
    return value, None


def joined_name(gathered: str, fragment: str) -> str:
    """A tool call's name after one more streamed fragment of it.

    Most providers send the name once; some split it into pieces (``get`` + ``Status``),
    which OpenAI's own SDK joins by concatenation; some repeat the whole name, or the name
    so far, in every fragment: a fragment that already holds what was gathered replaces it."""
    if fragment.startswith(gathered):
        return fragment
    return gathered + fragment


def marker_names(text: str) -> list[str]:
    """Tool names written as ``<tool_call>name</tool_call>`` markers, in order, once each."""
    return list(dict.fromkeys(match.group(1) for match in MARKER.finditer(text)))


def strip_markers(text: str) -> str:
    """``text`` without tool-call markers."""
    return MARKER.sub("", text)


class ReplyBuilder:
    """Gathers stream events into one :class:`ModelReply`."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._input: int | None = None
        self._output: int | None = None
        self._finish: str | None = None

    @property
    def raw_text(self) -> str:
        """The text gathered so far, markers included."""
        return "".join(self._text)

    def add(self, event: StreamEvent) -> None:
        """Take one event into account; later usage values replace earlier ones."""
        if isinstance(event, TextDelta):
            self._text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            self._reasoning.append(event.text)
        elif isinstance(event, ToolCallFragment):
            call = self._calls.setdefault(event.index, {"id": None, "name": "", "arguments": []})
            if event.id:
                call["id"] = event.id
            if event.name:
                call["name"] = joined_name(call["name"], event.name)
            call["arguments"].append(event.arguments)
        elif isinstance(event, UsageReport):
            self._input = event.input_tokens if event.input_tokens is not None else self._input
            self._output = event.output_tokens if event.output_tokens is not None else self._output
        else:
            self._finish = event.reason

    def build(self, *, tool_names: Collection[str] | None = None) -> ModelReply:
        """The reply; markers become calls only when ``tool_names`` (tools offered) allows."""
        raw = self.raw_text
        calls = self._structured_calls()
        if tool_names:
            called = {call.name for call in calls}
            for name in marker_names(raw):
                if name not in called and name in tool_names:
                    calls.append(ToolCall(id=f"call_marker_{len(calls)}", name=name, parsed={}))
                    called.add(name)
        usage = None
        if self._input is not None or self._output is not None:
            usage = UsageReport(self._input, self._output)
        return ModelReply(
            text=strip_markers(raw).strip(),
            reasoning="".join(self._reasoning).strip(),
            tool_calls=tuple(calls),
            usage=usage,
            finish_reason=self._finish,
        )

    def _structured_calls(self) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for index in sorted(self._calls):
            gathered = self._calls[index]
            if not gathered["name"]:
                log.warning("ignoring a tool call without a name at index %d", index)
                continue
            raw = "".join(gathered["arguments"]).strip() or "{}"
            parsed, error = parse_arguments(raw)
            calls.append(
                ToolCall(
                    id=gathered["id"] or f"call_{index}",
                    name=gathered["name"],
                    arguments=raw,
                    parsed=parsed,
                    error=error,
                )
            )
        return calls


class MarkerFilter:
    """Hides tool-call markers from streamed text, holding back what may be a marker's start."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        """The part of ``text`` (after anything held) that is safe to show now."""
        buffer = strip_markers(self._held + text)
        cut = buffer.find(MARKER_OPEN)
        if cut < 0:
            cut = _partial_marker_start(buffer)
        if cut < 0 or len(buffer) - cut > MAX_MARKER_HOLD:
            self._held = ""
            return buffer
        self._held = buffer[cut:]
        return buffer[:cut]

    def flush(self) -> str:
        """Whatever is still held, once the text is complete."""
        held, self._held = strip_markers(self._held), ""
        return held


def _partial_marker_start(text: str) -> int:
    """Where a suffix of ``text`` that begins ``<tool_call>`` starts, or -1."""
    for size in range(min(len(text), len(MARKER_OPEN) - 1), 0, -1):
        if text.endswith(MARKER_OPEN[:size]):
            return len(text) - size
    return -1


def usage_from(value: Any) -> UsageReport | None:
    """Token counts from a usage object, under OpenAI or Responses-style names."""
    if not isinstance(value, Mapping):
        return None
    input_tokens = _count(value, "prompt_tokens", "input_tokens")
    output_tokens = _count(value, "completion_tokens", "output_tokens")
    if input_tokens is None and output_tokens is None:
        return None
    return UsageReport(input_tokens, output_tokens)


def _count(value: Mapping[str, Any], *names: str) -> int | None:
    for name in names:
        number = value.get(name)
        if isinstance(number, int) and not isinstance(number, bool) and number >= 0:
            return number
        if isinstance(number, float) and number.is_integer() and number >= 0:
            return int(number)
    return None


def events_from_payload(payload: Any) -> list[StreamEvent]:
    """The events in one streamed chunk or one complete (non-streamed) completion."""
    if not isinstance(payload, dict):
        raise MalformedResponseError("the model provider sent JSON that is not an object")
    if payload.get("error"):
        detail = message_of(payload) or "no detail given"
        raise ProviderServerError(f"the model provider reported an error: {detail}")
    events: list[StreamEvent] = []
    choices = payload.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        for part in ("delta", "message"):
            if isinstance(choice.get(part), dict):
                events.extend(_message_events(choice[part]))
        if isinstance(choice.get("finish_reason"), str):
            events.append(FinishReason(choice["finish_reason"]))
        choice_usage = usage_from(choice.get("usage"))
        if choice_usage:
            events.append(choice_usage)
    usage = usage_from(payload.get("usage"))
    if usage:
        events.append(usage)
    return events


def _message_events(message: Mapping[str, Any]) -> Iterable[StreamEvent]:
    content = message.get("content")
    if isinstance(content, str) and content:
        yield TextDelta(content)
    for key in ("reasoning_content", "reasoning"):
        reasoning = message.get(key)
        if isinstance(reasoning, str) and reasoning:
            yield ReasoningDelta(reasoning)
            break
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return
    for position, call in enumerate(calls):
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        if not isinstance(function, dict):
            function = {}
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few providers send an object, not a string
            arguments = json.dumps(arguments)
        index = call.get("index")
        yield ToolCallFragment(
            index=index if isinstance(index, int) else position,
            id=call.get("id") if isinstance(call.get("id"), str) else None,
            name=function.get("name") if isinstance(function.get("name"), str) else None,
            arguments=arguments if isinstance(arguments, str) else "",
        )


class SSEDecoder:
    """Server-sent events, line by line: yields each event's data once the event is complete."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> str | None:
        """Take one line (without its line break); the event's data when ``line`` ends it."""
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment, often a keep-alive
        name, _, value = line.partition(":")
        if name == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None  # event:, id:, retry: and unknown fields do not matter here

    def end(self) -> str | None:
        """Data of a last event the stream did not close with a blank line."""
        return self._dispatch()

    def _dispatch(self) -> str | None:
        if not self._data:
            return None
        data, self._data = "\n".join(self._data), []
        return data


def decode_json(data: str, what: str) -> Any:
    """``data`` parsed as JSON, or a MalformedResponseError naming ``what`` it was."""
    try:
        return json.loads(data)
    except ValueError:
        preview = " ".join(data.split())[:80]
        raise MalformedResponseError(
            f"the model provider sent {what} that is not valid JSON: {preview!r}"
        ) from None


def content_kind(response: httpx.Response) -> str:
    """``sse`` or ``json`` from the reply's content type; anything else is malformed."""
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == "text/event-stream":
        return "sse"
    if media == "application/json" or media.endswith("+json"):
        return "json"
    shown = media or "no content type"
    raise MalformedResponseError(
        f"the model provider answered with {shown}, not server-sent events or JSON"
    )


async def sse_data(
    response: httpx.Response, *, deadline: Deadline | None = None
) -> AsyncGenerator[str, None]:
    """The data of each server-sent event in ``response``, in order; past ``deadline`` (even
    while only keep-alive comments arrive) a ProviderTimeoutError."""
    decoder = SSEDecoder()
    async for line in response.aiter_lines():
        if deadline is not None:
            deadline.check()
        data = decoder.feed(line)
        if data is not None:
            yield data
    last = decoder.end()
    if last is not None:
        yield last


class Deadline:
    """The moment a whole reply must be complete by."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def check(self) -> None:
        """A ProviderTimeoutError once the moment has passed."""
        if time.monotonic() > self.at:
            raise ProviderTimeoutError(
                f"the model's reply took longer than {self.seconds:g} seconds"
                " (SZRAG_AI_TOTAL_TIMEOUT)"
            )


async def _read_capped(response: httpx.Response, limit: int, deadline: Deadline | None) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for part in response.aiter_bytes():
        if deadline is not None:
            deadline.check()
        size += len(part)
        if size > limit:
            raise ReplyTooLargeError(f"the model's reply is larger than {limit} bytes")
        parts.append(part)
    return b"".join(parts)


async def read_events(
    response: httpx.Response,
    *,
    deadline: Deadline | None = None,
    max_bytes: int | None = None,
) -> AsyncGenerator[StreamEvent, None]:
    """The events of a successful reply, read as its content type says.

    A stream must end with ``[DONE]`` or at least report a finish reason; one that just stops
    is a StreamCutError. A whole JSON reply is read up to ``max_bytes``.
    """
    if content_kind(response) == "json":
        if max_bytes is None:
            body = await response.aread()
        else:
            body = await _read_capped(response, max_bytes, deadline)
        for event in events_from_payload(decode_json(body.decode("utf-8", "replace"), "a reply")):
            yield event
        return
    finished = False
    async with contextlib.aclosing(sse_data(response, deadline=deadline)) as payloads:
        async for data in payloads:
            if data.strip() == DONE:
                return
            for event in events_from_payload(decode_json(data, "an event")):
                finished = finished or isinstance(event, FinishReason)
                yield event
    if not finished:
        raise StreamCutError("the model provider's stream ended before the reply was complete")
