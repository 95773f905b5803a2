"""Block Kit messages for Slack: the answer, its sources, help, "thinking" and failures.

Slack caps a section's text at 3,000 characters, a message at 50 blocks and a context block at
10 elements; long answers are split on paragraph boundaries (a split inside a code block closes
and reopens the fence) and the surplus is cut with a note rather than rejected by Slack.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from szrag.server.mrkdwn import escape, to_mrkdwn

SECTION_LIMIT = 3000
MAX_BLOCKS = 50
CONTEXT_ELEMENTS = 10
FALLBACK_LIMIT = 300
FENCE = "```"

Block = dict[str, Any]

EXAMPLES = (
    "/sz-ask How does the index decide that a file changed?",
    "/sz-ask where is the /api/ask route implemented?",
    "/sz-ask run /sz-hash sha256 hello",
    "/sz-ask execute uuid",
)


def section(text: str) -> Block:
    """A mrkdwn section."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def context(elements: Iterable[str]) -> Block:
    """A context block of mrkdwn elements (at most ten are kept)."""
    items = [{"type": "mrkdwn", "text": text} for text in elements]
    return {"type": "context", "elements": items[:CONTEXT_ELEMENTS]}


def _hard_split(text: str, limit: int) -> list[str]:
    return [text[start : start + limit] for start in range(0, len(text), limit)] or [""]


def split_text(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    """Pieces of at most ``limit`` characters, cut at paragraphs, then lines, code fences kept."""
    budget = limit - len(FENCE) - 2  # room to close and reopen a fence
    pieces: list[str] = []
    current = ""
    for line in text.split("\n"):
        for part in _hard_split(line, budget) if len(line) > budget else [line]:
            candidate = f"{current}\n{part}" if current else part
            if len(candidate) <= budget:
                current = candidate
                continue
            pieces.append(current)
            current = part
    if current or not pieces:
        pieces.append(current)
    return _balance_fences(pieces)


def _balance_fences(pieces: list[str]) -> list[str]:
    balanced: list[str] = []
    open_fence = False
    for piece in pieces:
        text = f"{FENCE}\n{piece}" if open_fence else piece
        fences = sum(1 for line in piece.split("\n") if line.strip().startswith(FENCE))
        open_fence = open_fence != (fences % 2 == 1)
        balanced.append(f"{text}\n{FENCE}" if open_fence else text)
    return balanced


def source_label(source: Mapping[str, Any]) -> str:
    """``path:start-end`` of a source record."""
    return f"{source.get('path', '?')}:{source.get('start', '?')}-{source.get('end', '?')}"


_REF = re.compile(r"(/(?:-/)?(?:blob|tree|src)/)[^/]+")


def at_commit(repo_url: str | None, commit: object) -> str | None:
    """``SZRAG_REPO_URL`` pointed at ``commit`` (``.../blob/main`` -> ``.../blob/<commit>``):
    links then show the code that runs; unchanged without a commit or a ref to replace."""
    if not repo_url or not isinstance(commit, str) or not commit:
        return repo_url
    return _REF.sub(lambda match: match.group(1) + commit, repo_url, count=1)


def source_url(repo_url: str, source: Mapping[str, Any]) -> str:
    """The repository browser's address of a source's line range."""
    path = quote(str(source.get("path", "")), safe="/")
    start, end = source.get("start"), source.get("end")
    anchor = f"#L{start}-L{end}" if start and end else ""
    return f"{repo_url.rstrip('/')}/{path}{anchor}"


def source_element(source: Mapping[str, Any], repo_url: str | None) -> str:
    """One source as mrkdwn: a link when the repository browser is known."""
    label = escape(source_label(source))
    if repo_url:
        return f"<{escape(source_url(repo_url, source))}|{label}>"
    return f"`{label}`"


def sources_block(sources: Sequence[Mapping[str, Any]], repo_url: str | None) -> Block | None:
    """The sources context block, or None without sources."""
    if not sources:
        return None
    shown = list(sources[: CONTEXT_ELEMENTS - 1])
    elements = ["*Sources*"] + [source_element(source, repo_url) for source in shown]
    if len(sources) > len(shown):
        elements[-1] += f" and {len(sources) - len(shown)} more"
    return context(elements)


def images_block(images: Sequence[Mapping[str, Any]], repo_url: str | None) -> Block | None:
    """The images as links (Slack cannot fetch a path on this server), or None."""
    if not images:
        return None
    items = []
    for image in images[: CONTEXT_ELEMENTS - 1]:
        path = str(image.get("path", ""))
        if repo_url:
            items.append(
                f"<{escape(repo_url.rstrip('/') + '/' + quote(path, safe='/'))}|{escape(path)}>"
            )
        else:
            items.append(f"`{escape(path)}`")
    return context(["*Images*", *items])


def usage_element(usage: Mapping[str, Any] | None) -> str | None:
    """Token usage as one short line, or None."""
    if not usage:
        return None
    return f"tokens: {usage.get('input', 0)} in · {usage.get('output', 0)} out"


def fallback_text(markdown: str) -> str:
    """The notification text of a message: the answer's start, plain, escaped like the
    blocks (``<!channel>`` in an answer must not notify a channel)."""
    flat = " ".join(markdown.split())
    cut = flat if len(flat) <= FALLBACK_LIMIT else flat[: FALLBACK_LIMIT - 1] + "…"
    return escape(cut)


def answer_blocks(
    result: Mapping[str, Any], *, question: str | None, repo_url: str | None = None
) -> list[Block]:
    """The answer message: question (None: not echoed), answer sections, sources, images and
    usage."""
    repo_url = at_commit(repo_url, result.get("runningCommit"))
    blocks: list[Block] = [context([f"*Q:* {escape(question)}"])] if question else []
    answer = to_mrkdwn(str(result.get("answer") or "")) or "_No answer was produced._"
    blocks.extend(section(piece) for piece in split_text(answer) if piece.strip())
    tail = [
        sources_block(result.get("sources") or [], repo_url),
        images_block(result.get("images") or [], repo_url),
    ]
    usage = usage_element(result.get("usage"))
    if usage:
        tail.append(context([usage]))
    extra = [block for block in tail if block is not None]
    room = MAX_BLOCKS - len(extra)
    if len(blocks) > room:
        blocks = [*blocks[: room - 1], section("_The answer was cut: it is too long for Slack._")]
    return blocks + extra


def thinking_text(question: str) -> str:
    """The immediate reply while the answer is being prepared."""
    return f":hourglass_flowing_sand: Thinking about: _{escape(question)}_"


def failure_blocks(message: str) -> list[Block]:
    """A friendly failure message."""
    return [section(f":warning: Sorry, I could not answer that. {escape(message)}")]


def help_blocks(commands: Sequence[tuple[str, str]]) -> list[Block]:
    """Usage of /sz-ask with examples and the other commands (name, description)."""
    blocks = [
        section(
            "*/sz-ask* answers questions about this repository and the running application, "
            "citing the files it used.\n"
            + escape(
                "• `/sz-ask <question>`: ask anything\n"
                "• `/sz-ask run /sz-<command> <args>` or `/sz-ask execute <command> <args>`: "
                "run a command and explain its result"
            )
        ),
        section("*Examples*\n" + "\n".join(f"• `{escape(example)}`" for example in EXAMPLES)),
    ]
    if commands:
        listed = "\n".join(
            f"• `{escape(name)}`: {escape(description)}" for name, description in commands
        )
        blocks.extend(section(piece) for piece in split_text("*Other commands*\n" + listed))
    return blocks[:MAX_BLOCKS]


def command_blocks(responses: Sequence[Mapping[str, Any]]) -> list[Block]:
    """A command's responses: its own blocks when it gave some, else its text."""
    blocks: list[Block] = []
    for response in responses:
        given = response.get("blocks")
        if given:
            blocks.extend(dict(block) for block in given)
        elif response.get("text"):
            blocks.extend(section(piece) for piece in split_text(escape(str(response["text"]))))
    return blocks[:MAX_BLOCKS]
