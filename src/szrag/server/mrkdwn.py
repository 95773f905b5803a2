"""Markdown to Slack mrkdwn.

Slack's dialect differs from Markdown: ``*bold*``, ``_italic_``, ``~strike~``, ``<url|label>``
links, no headings, no tables, and ``&``, ``<`` and ``>`` must be escaped everywhere (they are
the link syntax). Code spans and fenced blocks keep their content verbatim (escaped only);
headings become bold lines, bullets become ``•``, tables go into a code block so their columns
survive.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![*\w])\*(?=\S)([^*]+?)(?<=\S)\*(?![*\w])")
_ITALIC_UNDERSCORE = re.compile(r"(?<![_\w])_(?=\S)([^_]+?)(?<=\S)_(?![_\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_BOLD_MARK = "\x01"
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")


def escape(text: str) -> str:
    """Escape the three characters Slack reserves for its own markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _link(url: str, label: str) -> str:
    if re.match(r"^(https?|mailto):", url, re.IGNORECASE):
        target = escape(url.replace("|", "%7C"))
        return f"<{target}|{label}>" if label else f"<{target}>"
    # Slack cannot open a relative link: keep both parts as text.
    path = escape(url)
    return f"{label} ({path})" if label and label != path else path


def _emphasis(text: str) -> str:
    text = _BOLD.sub(lambda m: f"{_BOLD_MARK}{m.group(2)}{_BOLD_MARK}", text)
    text = _ITALIC_STAR.sub(r"_\1_", text)
    text = _ITALIC_UNDERSCORE.sub(r"_\1_", text)
    text = _STRIKE.sub(r"~\1~", text)
    return text.replace(_BOLD_MARK, "*")


def inline(text: str) -> str:
    """One line of Markdown inline syntax as mrkdwn."""
    held: list[str] = []

    def hold(value: str) -> str:
        held.append(value)
        return f"\x00{len(held) - 1}\x00"

    text = text.replace("\x00", "").replace(_BOLD_MARK, "")
    text = _CODE_SPAN.sub(lambda m: hold(f"`{escape(m.group(2).strip())}`"), text)
    text = _LINK.sub(lambda m: hold(_link(m.group(3), _emphasis(escape(m.group(2))))), text)
    text = _AUTOLINK.sub(lambda m: hold(_link(m.group(1), "")), text)
    text = _emphasis(escape(text))
    return _PLACEHOLDER.sub(lambda m: held[int(m.group(1))], text)


def _strip_markers(text: str) -> str:
    return _BOLD.sub(r"\2", text)


def _blocks(lines: list[str]) -> Iterator[str]:
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if fence:
            marker = fence.group(1)
            body: list[str] = []
            index += 1
            while index < len(lines) and not lines[index].strip().startswith(marker):
                body.append(lines[index])
                index += 1
            index += 1
            yield "```\n" + escape("\n".join(body)) + "\n```"
            continue
        if "|" in line and index + 1 < len(lines) and _TABLE_RULE.match(lines[index + 1]):
            table = [line]
            index += 2
            while index < len(lines) and "|" in lines[index] and lines[index].strip():
                table.append(lines[index])
                index += 1
            yield "```\n" + escape("\n".join(row.strip() for row in table)) + "\n```"
            continue
        heading = _HEADING.match(line)
        if heading:
            yield f"*{inline(_strip_markers(heading.group(1)))}*"
        elif _RULE.match(line):
            yield "──────────"
        elif bullet := _BULLET.match(line):
            yield f"{bullet.group(1)}• {inline(bullet.group(2))}"
        elif line.lstrip().startswith(">"):
            yield "> " + inline(line.lstrip()[1:].lstrip())
        else:
            yield inline(line)
        index += 1


def to_mrkdwn(markdown: str) -> str:
    """``markdown`` rewritten in Slack's mrkdwn."""
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(_blocks(lines)).strip("\n")
