"""Source lines as highlighted HTML for the page, with Pygments (a maintained highlighter that
ships with the package: no build step, no script from elsewhere).

Each line is its own HTML fragment (a token spanning lines is closed and reopened), so the
page can number lines and mark a cited range. The style sheet is generated from a Pygments
style once and served with the page's other assets.
"""

from __future__ import annotations

import functools
import html

from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.token import STANDARD_TYPES, _TokenType
from pygments.util import ClassNotFound

CSS_SCOPE = ".hl"
STYLE = "default"


def _css_class(token: _TokenType) -> str:
    found: _TokenType | None = token
    while found is not None and found not in STANDARD_TYPES:
        found = found.parent
    return STANDARD_TYPES.get(found, "") if found is not None else ""


@functools.lru_cache(maxsize=256)
def _lexer(path: str) -> Lexer:
    try:
        found: Lexer = get_lexer_for_filename(path, stripnl=False, ensurenl=False)
        return found
    except ClassNotFound:
        plain: Lexer = TextLexer(stripnl=False, ensurenl=False)
        return plain


def language(path: str) -> str:
    """The name of the language ``path`` is highlighted as (``Text only`` when unknown)."""
    return str(_lexer(path).name)


def highlight_lines(text: str, path: str) -> list[str]:
    """``text`` (a file's lines) as one escaped, highlighted HTML fragment per line."""
    lines: list[str] = [""]
    for token, value in _lexer(path).get_tokens(text):
        css = _css_class(token)
        pieces = value.split("\n")
        for number, piece in enumerate(pieces):
            if number:
                lines.append("")
            if piece:
                escaped = html.escape(piece, quote=False)
                lines[-1] += f'<span class="{css}">{escaped}</span>' if css else escaped
    if len(lines) > 1 and lines[-1] == "" and text.endswith("\n"):
        lines.pop()
    return lines


@functools.cache
def style_sheet() -> str:
    """The CSS of the highlighted spans, scoped to ``.hl``."""
    formatter: HtmlFormatter[str] = HtmlFormatter(style=STYLE)
    return str(formatter.get_style_defs(CSS_SCOPE))  # type: ignore[no-untyped-call]
