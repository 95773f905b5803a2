"""Markdown to Slack mrkdwn, and the Block Kit messages built from an answer."""

from __future__ import annotations

from typing import Any

import pytest

from szrag.server.mrkdwn import escape, inline, to_mrkdwn
from szrag.server.slack_blocks import (
    CONTEXT_ELEMENTS,
    CUT_NOTE,
    FEEDBACK_BLOCK,
    FEEDBACK_DOWN,
    FEEDBACK_UP,
    MAX_BLOCKS,
    MAX_MESSAGES,
    MESSAGE_CHARS,
    QUESTION_LIMIT,
    SECTION_LIMIT,
    answer_blocks,
    answer_messages,
    block_chars,
    command_blocks,
    fallback_text,
    help_blocks,
    source_url,
    split_text,
)


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**bold** and __bold__", "*bold* and *bold*"),
        ("*italic* and _italic_", "_italic_ and _italic_"),
        ("~~gone~~", "~gone~"),
        ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
        ("<!channel> hi", "&lt;!channel&gt; hi"),
        ("[docs](https://x.example/a?b=1&c=2)", "<https://x.example/a?b=1&amp;c=2|docs>"),
        ("[pipe](https://x.example/a|b)", "<https://x.example/a%7Cb|pipe>"),
        ("[code](src/app.js)", "code (src/app.js)"),
        ("[bad](javascript:alert(1))", "bad (javascript:alert(1))"),
        ("<https://auto.example>", "<https://auto.example>"),
        ("![diagram](/docs/a.png)", "diagram (/docs/a.png)"),
        ("`a <b> **c**`", "`a &lt;b&gt; **c**`"),
        ("snake_case_name stays", "snake_case_name stays"),
        ("2*3*4 stays", "2*3*4 stays"),
    ],
)
def test_inline_conversion(markdown: str, mrkdwn: str) -> None:
    assert inline(markdown) == mrkdwn


def test_blocks_conversion() -> None:
    markdown = "\n".join(
        [
            "# Title with **bold**",
            "- one",
            "  * nested",
            "> quoted *text*",
            "---",
            "```python",
            "if a < b:",
            "    print('**no**')",
            "```",
            "| a | b |",
            "|---|---|",
            "| 1 | 2 |",
        ]
    )
    assert to_mrkdwn(markdown).split("\n") == [
        "*Title with bold*",
        "• one",
        "  • nested",
        "> quoted _text_",
        "──────────",
        "```",
        "if a &lt; b:",
        "    print('**no**')",
        "```",
        "```",
        "| a | b |",
        "| 1 | 2 |",
        "```",
    ]


def test_an_unclosed_fence_still_closes() -> None:
    assert to_mrkdwn("```\ncode") == "```\ncode\n```"
    assert escape("&<>") == "&amp;&lt;&gt;"


def test_long_text_splits_at_lines_and_keeps_code_fences_balanced() -> None:
    lines = ["```"] + [f"line {n} " + "x" * 80 for n in range(120)] + ["```", "after"]
    pieces = split_text("\n".join(lines))

    assert len(pieces) > 1
    assert all(len(piece) <= SECTION_LIMIT for piece in pieces)
    for piece in pieces:
        fences = sum(1 for line in piece.split("\n") if line.startswith("```"))
        assert fences % 2 == 0
    joined = "\n".join(pieces)
    assert all(f"line {n} " in joined for n in range(120)) and pieces[-1].endswith("after")
    # a single word longer than a section is the one thing cut inside a word (room is kept to
    # reopen and close a code fence around a piece)
    assert split_text("y" * (SECTION_LIMIT * 2))[0] == "y" * (SECTION_LIMIT - 8)


RESULT: dict[str, Any] = {
    "answer": "The **bucket** refills.",
    "sources": [
        {
            "path": f"src/file{n}.js",
            "start": 1,
            "end": 40,
            "type": "javascript",
            "heading": None,
            "text": "",
            "score": 9,
        }
        for n in range(12)
    ],
    "images": [{"path": "docs/a b.png", "url": "/docs/a b.png", "score": 10}],
    "usage": {"input": 10, "output": 5, "total": 15},
}


def test_answer_blocks_with_linked_sources_images_and_usage() -> None:
    blocks = answer_blocks(RESULT, question="why <b>?", repo_url="https://github.com/o/r/blob/main")

    assert blocks[0] == {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": "*Q:* why &lt;b&gt;?"}],
    }
    assert blocks[1]["text"]["text"] == "The *bucket* refills."
    sources = blocks[2]["elements"]
    assert len(sources) == CONTEXT_ELEMENTS
    assert (
        sources[1]["text"]
        == "<https://github.com/o/r/blob/main/src/file0.js#L1-L40|src/file0.js:1-40>"
    )
    assert sources[-1]["text"].endswith("and 3 more")
    assert (
        blocks[3]["elements"][1]["text"]
        == "<https://github.com/o/r/blob/main/docs/a%20b.png|docs/a b.png>"
    )
    assert blocks[4]["elements"][0]["text"] == "tokens: 10 in · 5 out"


def test_answer_blocks_without_a_repository_url_or_extras() -> None:
    blocks = answer_blocks({"answer": "", "sources": RESULT["sources"][:1]}, question="q")

    assert blocks[1]["text"]["text"] == "_No answer was produced._"
    assert blocks[2]["elements"][1]["text"] == "`src/file0.js:1-40`"
    assert len(blocks) == 3


def test_answer_blocks_can_leave_the_question_out() -> None:
    blocks = answer_blocks({"answer": "done"}, question=None)

    assert blocks == [{"type": "section", "text": {"type": "mrkdwn", "text": "done"}}]


def test_a_huge_answer_is_cut_to_slacks_block_limit() -> None:
    huge = "\n\n".join("paragraph " + "z" * 2900 for _ in range(80))

    blocks = answer_blocks({"answer": huge, "sources": RESULT["sources"]}, question="q")

    assert len(blocks) == MAX_BLOCKS
    assert "cut" in blocks[-2]["text"]["text"] and blocks[-1]["type"] == "context"


def test_source_urls_and_fallback_text() -> None:
    assert (
        source_url("https://h/x/", {"path": "a/b c.md", "start": 3, "end": 9})
        == "https://h/x/a/b%20c.md#L3-L9"
    )
    assert fallback_text("a\n\nb   c") == "a b c"
    assert len(fallback_text("w " * 500)) == 300


def test_help_and_command_blocks() -> None:
    shown = str(help_blocks([("/sz-echo", "Repeat <text>")]))
    assert "/sz-ask run /sz-&lt;command&gt;" in shown and "Repeat &lt;text&gt;" in shown

    given = [{"type": "section", "text": {"type": "mrkdwn", "text": "own"}}]
    assert command_blocks([{"text": "x", "blocks": given}]) == given
    assert command_blocks([{"text": "<!here> hi"}])[0]["text"]["text"] == "&lt;!here&gt; hi"


def test_a_long_line_splits_between_words_and_keeps_links_whole() -> None:
    link = "<https://example.com/a|a label with spaces>"
    line = " ".join(f"{link} word{n}" if n % 50 == 0 else f"word{n}" for n in range(2000))

    pieces = split_text(line)

    assert len(pieces) > 3 and all(len(piece) <= SECTION_LIMIT for piece in pieces)
    assert " ".join(pieces).split() == line.split()  # nothing cut inside a word or lost
    assert all(piece.count("<") == piece.count(">") for piece in pieces)  # links whole


def test_a_piece_ends_at_a_paragraph_in_its_second_half() -> None:
    first = ("a " * 800).strip()  # a paragraph of 1,599 characters: over half a section
    second = ("b " * 250).strip()  # the next paragraph begins with a short line...
    third = ("c " * 750).strip()  # ...and goes on past the section's end

    pieces = split_text(f"{first}\n\n{second}\n{third}")

    # lines alone would end the first piece after `second`; the paragraph keeps it together
    assert pieces == [first, f"{second}\n{third}"]
    # a paragraph break early in a piece is no place to end it: lines fill the piece
    early = split_text("x\n\n" + "\n".join(["y" * 100] * 40))
    assert early[0].startswith("x\n\nyyyy") and len(early[0]) > SECTION_LIMIT - 200


def test_a_long_answer_becomes_several_messages_within_slacks_bounds() -> None:
    answer = "\n\n".join(f"paragraph {n} " + "word " * 500 for n in range(40))  # ~100,000
    result = {**RESULT, "answer": answer, "answerId": "00112233aabbccdd"}

    messages = answer_messages(result, question="why?")

    assert 5 < len(messages) <= MAX_MESSAGES
    assert all(len(blocks) <= MAX_BLOCKS for blocks in messages)
    assert all(block_chars(blocks) <= MESSAGE_CHARS for blocks in messages)
    assert messages[0][0]["type"] == "context" and "*Q:* why?" in str(messages[0][0])
    assert messages[-1][-1]["block_id"] == FEEDBACK_BLOCK
    assert [block["type"] for block in messages[-1][-4:-1]] == ["context"] * 3  # sources...
    shown = " ".join(
        block["text"]["text"]
        for blocks in messages
        for block in blocks
        if block["type"] == "section"
    )
    assert shown.split() == answer.split()


def test_an_answer_beyond_the_messages_allowed_is_cut_with_a_note() -> None:
    answer = "\n\n".join("word " * 500 for _ in range(200))  # ~500,000 characters

    messages = answer_messages({"answer": answer, "answerId": "00112233aabbccdd"}, question=None)

    assert len(messages) == MAX_MESSAGES
    assert all(block_chars(blocks) <= MESSAGE_CHARS for blocks in messages)
    assert messages[-1][-2]["text"]["text"] == CUT_NOTE
    assert messages[-1][-1]["block_id"] == FEEDBACK_BLOCK


def test_feedback_buttons_carry_the_answer_id() -> None:
    blocks = answer_blocks({"answer": "done", "answerId": "00112233aabbccdd"}, question=None)

    [actions] = [block for block in blocks if block["type"] == "actions"]
    assert [(e["action_id"], e["value"]) for e in actions["elements"]] == [
        (FEEDBACK_UP, "00112233aabbccdd"),
        (FEEDBACK_DOWN, "00112233aabbccdd"),
    ]
    assert answer_blocks({"answer": "done"}, question=None)[-1]["type"] == "section"


def test_a_long_question_is_echoed_cut_between_words() -> None:
    question = "why " * 1000

    echoed = answer_blocks({"answer": "x"}, question=question)[0]["elements"][0]["text"]

    assert len(echoed) <= QUESTION_LIMIT + len("*Q:* ") and echoed.endswith("why…")
