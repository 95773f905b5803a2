"""Markdown to Slack mrkdwn, and the Block Kit messages built from an answer."""

from __future__ import annotations

from typing import Any

import pytest

from szrag.server.mrkdwn import escape, inline, to_mrkdwn
from szrag.server.slack_blocks import (
    CONTEXT_ELEMENTS,
    MAX_BLOCKS,
    SECTION_LIMIT,
    answer_blocks,
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
    assert split_text("y" * (SECTION_LIMIT * 2))[0] == "y" * (SECTION_LIMIT - 5)


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
