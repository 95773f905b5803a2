"""Block Kit messages for Slack: the answer, its sources, feedback buttons, help, "thinking"
and failures.

Slack caps a section's text at 3,000 characters and a message at 50 blocks; a message posted
with ``chat.postMessage`` is also refused (``msg_blocks_too_long``) once its blocks hold about
12,000 characters of text, a bound Slack does not document. Long answers are split into
sections where a paragraph ends, else where a line ends, else between words (a code block cut
in two is closed and reopened); the bot posts them as several messages
(:func:`answer_messages`), and the one reply a ``response_url`` takes is cut with a note
(:func:`answer_blocks`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from szrag.server.mrkdwn import escape, to_mrkdwn

SECTION_LIMIT = 3000
MAX_BLOCKS = 50
MESSAGE_CHARS = 11_000  # text of one posted message's blocks, below Slack's ~12,000
MAX_MESSAGES = 10  # messages one answer may take; the rest is cut with a note
CONTEXT_ELEMENTS = 10
FALLBACK_LIMIT = 300
QUESTION_LIMIT = 2000  # characters of a question echoed above its answer
FENCE = "```"
FEEDBACK_UP = "szrag_feedback_up"
FEEDBACK_DOWN = "szrag_feedback_down"
FEEDBACK_BLOCK = "szrag_feedback"
CUT_NOTE = "_The answer was cut: it is too long for Slack._"
THINKING = ":hourglass_flowing_sand: Thinking…"

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


# A word: optional leading space, then characters up to the next space, where a Slack link or
# mention (``<url|label with spaces>``) counts as one character.
_WORD = re.compile(r"\s*(?:<[^<>\n]*>|[^\s<]|<)+|\s+")


def wrap_words(line: str, limit: int) -> list[str]:
    """``line`` in parts of at most ``limit`` characters, broken between words (the space at
    a break is dropped); only a word longer than ``limit`` is itself cut."""
    if len(line) <= limit:
        return [line]
    parts: list[str] = []
    current = ""
    for word in _WORD.findall(line):
        if len(current) + len(word) <= limit:
            current += word
            continue
        if current.strip():
            parts.append(current.rstrip())
        word = word.lstrip()
        while len(word) > limit:
            parts.append(word[:limit])
            word = word[limit:]
        current = word
    if current.strip() or not parts:
        parts.append(current.rstrip())
    return parts


def split_text(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    """Pieces of at most ``limit`` characters: a piece ends where a paragraph ends (a blank
    line in its second half), else where a line ends, else between words; never inside a word
    unless the word alone is longer than a piece. A code block cut in two is closed and
    reopened, so each piece renders alone."""
    budget = limit - 2 * (len(FENCE) + 1)  # room to reopen and close a fence
    pieces: list[str] = []
    lines: list[str] = []
    size = -1  # of "\n".join(lines)
    for line in text.split("\n"):
        for part in wrap_words(line, budget):
            while lines and size + 1 + len(part) > budget:
                head, lines = _close_piece(lines, budget)
                pieces.append(head)
                size = len("\n".join(lines)) if lines else -1
            lines.append(part)
            size += 1 + len(part)
    if lines or not pieces:
        pieces.append("\n".join(lines))
    return _balance_fences([piece for piece in pieces if piece.strip()] or [""])


def _close_piece(lines: list[str], budget: int) -> tuple[str, list[str]]:
    """The piece ``lines`` make, up to their last paragraph break when one lies in the second
    half of the piece; and the lines left over for the next piece."""
    offset = 0
    cut = None
    for index, line in enumerate(lines):
        if index and not line.strip() and offset >= budget // 2:
            cut = index
        offset += len(line) + 1
    if cut is None:
        return "\n".join(lines), []
    rest = lines[cut + 1 :]
    while rest and not rest[0].strip():
        rest.pop(0)
    return "\n".join(lines[:cut]).rstrip("\n"), rest


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


def shown_question(question: str) -> str:
    """A question as it is echoed above its answer: escaped, a long one cut between words."""
    if len(question) > QUESTION_LIMIT:
        question = wrap_words(question, QUESTION_LIMIT - 1)[0] + "…"
    return escape(question)


def question_block(question: str) -> Block:
    """The ``*Q:*`` line above an answer."""
    return context([f"*Q:* {shown_question(question)}"])


def feedback_block(answer_id: str) -> Block:
    """Thumbs up and down for the answer ``answer_id`` (the value each button sends back)."""

    def button(action_id: str, label: str) -> Block:
        return {
            "type": "button",
            "action_id": action_id,
            "text": {"type": "plain_text", "text": label, "emoji": True},
            "value": answer_id,
        }

    return {
        "type": "actions",
        "block_id": FEEDBACK_BLOCK,
        "elements": [
            button(FEEDBACK_UP, ":+1: Helpful"),
            button(FEEDBACK_DOWN, ":-1: Not helpful"),
        ],
    }


def repository_block(repository: str) -> Block:
    """Which repository an answer is from (on a server of several)."""
    return context([f"From the repository *{escape(repository)}*"])


def _answer_parts(
    result: Mapping[str, Any], question: str | None, repo_url: str | None, repository: str | None
) -> tuple[list[Block], list[Block], list[Block]]:
    """The blocks of an answer: the question and the repository it is from (when named),
    the answer's sections, and what follows them (sources, images, usage, the feedback
    buttons when the answer has an id)."""
    repo_url = at_commit(repo_url, result.get("runningCommit"))
    head = [question_block(question)] if question else []
    if repository:
        head.append(repository_block(repository))
    answer = to_mrkdwn(str(result.get("answer") or "")) or "_No answer was produced._"
    sections = [section(piece) for piece in split_text(answer) if piece.strip()]
    tail = [
        sources_block(result.get("sources") or [], repo_url),
        images_block(result.get("images") or [], repo_url),
    ]
    usage = usage_element(result.get("usage"))
    if usage:
        tail.append(context([usage]))
    answer_id = result.get("answerId")
    if isinstance(answer_id, str) and answer_id:
        tail.append(feedback_block(answer_id))
    return head, sections, [block for block in tail if block is not None]


def answer_blocks(
    result: Mapping[str, Any],
    *,
    question: str | None,
    repo_url: str | None = None,
    repository: str | None = None,
) -> list[Block]:
    """The answer as one message (a ``response_url`` reply): question (None: not echoed),
    answer sections, sources, images, usage and feedback buttons; cut to 50 blocks."""
    head, sections, extra = _answer_parts(result, question, repo_url, repository)
    blocks = head + sections
    room = MAX_BLOCKS - len(extra)
    if len(blocks) > room:
        blocks = [*blocks[: room - 1], section(CUT_NOTE)]
    return blocks + extra


def block_chars(block: Any) -> int:
    """The characters of text a block holds (what Slack counts against a message)."""
    if isinstance(block, dict):
        return sum(
            len(value) if key == "text" and isinstance(value, str) else block_chars(value)
            for key, value in block.items()
        )
    if isinstance(block, list):
        return sum(block_chars(item) for item in block)
    return 0


def _fits(message: Sequence[Block], more: Sequence[Block]) -> bool:
    return (
        len(message) + len(more) <= MAX_BLOCKS
        and block_chars(list(message)) + block_chars(list(more)) <= MESSAGE_CHARS
    )


def _pack(blocks: Sequence[Block], tail: Sequence[Block]) -> list[list[Block]]:
    messages: list[list[Block]] = []
    current: list[Block] = []
    for block in blocks:
        if current and not _fits(current, [block]):
            messages.append(current)
            current = []
        current.append(block)
    if current and not _fits(current, tail):
        messages.append(current)
        current = []
    messages.append([*current, *tail])
    return messages


def answer_messages(
    result: Mapping[str, Any],
    *,
    question: str | None,
    repo_url: str | None = None,
    repository: str | None = None,
) -> list[list[Block]]:
    """The answer as the bot posts it: one message, or for a long answer several in order
    (each within Slack's block and text bounds; at most ``MAX_MESSAGES``, the rest cut with a
    note). The question opens the first; sources, images, usage and the feedback buttons
    close the last."""
    head, sections, tail = _answer_parts(result, question, repo_url, repository)
    blocks = head + sections
    messages = _pack(blocks, tail)
    if len(messages) <= MAX_MESSAGES:
        return messages
    kept = messages[: MAX_MESSAGES - 1]
    last: list[Block] = []
    note = section(CUT_NOTE)
    for block in blocks[sum(len(message) for message in kept) :]:
        if not _fits(last, [block, note, *tail]):
            break
        last.append(block)
    return [*kept, [*last, note, *tail]]


def message_text(blocks: Sequence[Block], default: str) -> str:
    """The notification text of a message: its first section's start, else ``default``."""
    for block in blocks:
        if block.get("type") == "section":
            return fallback_text(str(block["text"]["text"]))
    return default


def thinking_blocks(question: str | None) -> list[Block]:
    """The message shown while an answer is prepared: the question (when echoed) and an
    hourglass."""
    return [*([question_block(question)] if question else []), section(THINKING)]


def private_notice(user_id: str) -> str:
    """What replaces a public "thinking" message when the answer may only reach the asker."""
    return (
        f":lock: The answer went only to <@{escape(user_id)}>: "
        "it shows what a command keeps secret."
    )


def thinking_text(question: str) -> str:
    """The immediate reply while the answer is being prepared."""
    return f":hourglass_flowing_sand: Thinking about: _{shown_question(question)}_"


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
