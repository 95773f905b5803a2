"""Pure parts of reply reading: SSE decoding, payload events, gathering, markers, usage."""

from __future__ import annotations

from typing import Any

import pytest

from szrag.llm.errors import MalformedResponseError, ProviderServerError
from szrag.llm.stream import (
    FinishReason,
    MarkerFilter,
    ReasoningDelta,
    ReplyBuilder,
    SSEDecoder,
    TextDelta,
    ToolCallFragment,
    UsageReport,
    decode_json,
    events_from_payload,
    marker_names,
    parse_arguments,
    strip_markers,
    usage_from,
)


def decode_all(lines: list[str]) -> list[str]:
    decoder = SSEDecoder()
    found = [data for line in lines if (data := decoder.feed(line)) is not None]
    last = decoder.end()
    return [*found, last] if last is not None else found


def test_sse_events_end_at_blank_lines_and_join_data_lines() -> None:
    lines = ["data: one", "", "data: a", "data:b", "", "data: [DONE]", ""]

    assert decode_all(lines) == ["one", "a\nb", "[DONE]"]


def test_sse_comments_fields_and_empty_events_are_skipped() -> None:
    lines = [": keep-alive", "", "event: ping", "id: 7", "retry: 100", "", "data: x", ""]

    assert decode_all(lines) == ["x"]


def test_sse_last_event_without_blank_line_is_kept() -> None:
    assert decode_all(["data: tail"]) == ["tail"]


def test_only_one_leading_space_is_removed_from_data() -> None:
    assert decode_all(["data:  two spaces", ""]) == [" two spaces"]


def test_events_from_a_streamed_chunk() -> None:
    payload = {
        "choices": [
            {
                "delta": {
                    "content": "Hi",
                    "reasoning": "hmm",
                    "tool_calls": [
                        {"index": 1, "id": "c", "function": {"name": "getLogs", "arguments": "{"}}
                    ],
                },
                "finish_reason": None,
            }
        ],
        "usage": {"input_tokens": 3},
    }

    assert events_from_payload(payload) == [
        TextDelta("Hi"),
        ReasoningDelta("hmm"),
        ToolCallFragment(index=1, id="c", name="getLogs", arguments="{"),
        UsageReport(3, None),
    ]


def test_events_from_a_complete_message_with_object_arguments() -> None:
    payload = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }

    assert events_from_payload(payload) == [
        ToolCallFragment(index=0, id="c", name="f", arguments='{"a": 1}'),
        FinishReason("tool_calls"),
    ]


def test_error_payload_raises_with_the_providers_message() -> None:
    with pytest.raises(ProviderServerError, match="over capacity"):
        events_from_payload({"error": {"message": "over capacity"}})


@pytest.mark.parametrize("payload", [[], "text", 3])
def test_non_object_payload_is_malformed(payload: Any) -> None:
    with pytest.raises(MalformedResponseError):
        events_from_payload(payload)


def test_decode_json_names_what_was_malformed() -> None:
    with pytest.raises(MalformedResponseError, match="an event"):
        decode_json("{nope", "an event")


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 5, "completion_tokens": 6}, UsageReport(5, 6)),
        ({"input_tokens": 7, "output_tokens": 8}, UsageReport(7, 8)),
        ({"completion_tokens": 2}, UsageReport(None, 2)),
        ({"prompt_tokens": 4.0}, UsageReport(4, None)),
        ({"prompt_tokens": True, "completion_tokens": -1}, None),
        ({"total_tokens": 9}, None),
        ({}, None),
        (None, None),
        ("12", None),
    ],
)
def test_usage_from(usage: Any, expected: UsageReport | None) -> None:
    assert usage_from(usage) == expected


@pytest.mark.parametrize(
    ("raw", "parsed", "error"),
    [
        ("", {}, None),
        ("{}", {}, None),
        ('{"a": [1]}', {"a": [1]}, None),
        ("[1]", None, "arguments must be a JSON object"),
        ('{"a": ', None, "arguments are not valid JSON (Expecting value)"),
    ],
)
def test_parse_arguments(raw: str, parsed: dict[str, Any] | None, error: str | None) -> None:
    assert parse_arguments(raw) == (parsed, error)


def test_builder_keeps_the_last_usage_values_and_unnamed_calls_are_dropped() -> None:
    builder = ReplyBuilder()
    for event in (
        TextDelta("a"),
        UsageReport(1, None),
        UsageReport(None, 2),
        ToolCallFragment(index=0, arguments="{}"),
        ToolCallFragment(index=1, name="getLogs"),
        FinishReason("tool_calls"),
    ):
        builder.add(event)

    reply = builder.build(tool_names={"getLogs"})

    assert reply.usage == UsageReport(1, 2)
    assert [(call.id, call.name, call.arguments) for call in reply.tool_calls] == [
        ("call_1", "getLogs", "{}")
    ]


def test_builder_reports_bad_arguments_without_raising() -> None:
    builder = ReplyBuilder()
    builder.add(ToolCallFragment(index=0, id="x", name="getLogs", arguments='{"limit": '))

    (call,) = builder.build().tool_calls

    assert call.parsed is None
    assert call.error is not None
    assert call.arguments == '{"limit":'


def test_builder_markers_become_calls_once_and_only_for_offered_tools() -> None:
    builder = ReplyBuilder()
    builder.add(
        TextDelta(
            "<tool_call>getStatus</tool_call> <tool_call> getStatus </tool_call>"
            "<tool_call>rmEverything</tool_call> done"
        )
    )

    reply = builder.build(tool_names={"getStatus", "getLogs"})

    assert [call.name for call in reply.tool_calls] == ["getStatus"]
    assert reply.text == "done"


def test_marker_helpers() -> None:
    text = "a <tool_call>getLogs</tool_call> b <tool_call>getErrors</tool_call>"

    assert marker_names(text) == ["getLogs", "getErrors"]
    assert strip_markers(text) == "a  b "


@pytest.mark.parametrize(
    "pieces",
    [
        ["Hello <tool_call>getStatus</tool_call> world"],
        ["Hello <", "tool_", "call>get", "Status</tool", "_call> world"],
        ["Hello <tool_call>", "getStatus</tool_call>", " world"],
    ],
)
def test_marker_filter_hides_markers_split_anywhere(pieces: list[str]) -> None:
    shown = MarkerFilter()

    text = "".join(shown.feed(piece) for piece in pieces) + shown.flush()

    assert text == "Hello  world"


def test_marker_filter_releases_text_that_was_not_a_marker() -> None:
    shown = MarkerFilter()

    first = shown.feed("a <to")
    second = shown.feed("p> b")

    assert (first, second) == ("a ", "<top> b")


def test_marker_filter_gives_up_on_an_unclosed_marker() -> None:
    shown = MarkerFilter()
    held = shown.feed("<tool_call>")

    released = shown.feed("x" * 300)

    assert held == ""
    assert released == "<tool_call>" + "x" * 300


def test_marker_filter_flushes_what_it_held() -> None:
    shown = MarkerFilter()

    assert shown.feed("end <tool") == "end "
    assert shown.flush() == "<tool"
