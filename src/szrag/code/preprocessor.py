"""C and C++ read as the preprocessor would leave them, where the grammar cannot read them as
written.

tree-sitter reads C and C++ before the preprocessor runs. Two things it cannot read can
make the rest of a file one error, and a definition then seems to reach hundreds of lines
past its end and to own every function after it:

- a conditional directive whose condition the grammar cannot parse
  (``#if FMT_HAS_INCLUDE(<string_view>)``), inside the include guard that wraps the file;
- a macro standing where a specifier goes (``FMT_CONSTEXPR inline void f()``,
  ``class FMT_API format_error``).

A file a tenth or more of which lies in errors is read again with its conditional
directives blanked, then with such macros blanked too; the reading with the fewest bytes in
errors is kept.
Blanking writes spaces over the characters and keeps line breaks, so every byte and line
stays where it was. Each branch of a blanked conditional is then read as code, which is
what a reader searching the file wants.
"""

from __future__ import annotations

import functools
import re

from tree_sitter import Query, QueryCursor, Tree

from szrag.code.languages import grammar, parser

# ``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else``/``#endif``, with their continued lines
_CONDITIONAL = re.compile(
    rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b"
    rb"(?:[^\n]*\\\r?\n)*[^\n]*",
    re.MULTILINE,
)
# an upper-case name with an underscore (a project's macro: ``FMT_API``, ``JV_INLINE``)
# followed on its line by a name or a keyword; a directive's own lines are passed over, so
# ``#define FMT_CONSTEXPR constexpr`` keeps the name it defines
_SPECIFIER_MACRO = re.compile(
    rb"(?P<directive>^[ \t]*#(?:[^\n]*\\\r?\n)*[^\n]*)"
    rb"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b(?=[ \t]+[A-Za-z_~])",
    re.MULTILINE,
)
_NOT_LINE_BREAK = re.compile(rb"[^\r\n]")


def _blank(match: re.Match[bytes]) -> bytes:
    return _NOT_LINE_BREAK.sub(b" ", match[0])


def _blank_macro(match: re.Match[bytes]) -> bytes:
    return match[0] if match["directive"] else b" " * len(match[0])


def without_conditionals(source: bytes) -> bytes:
    """``source`` with its conditional directives blanked."""
    return _CONDITIONAL.sub(_blank, source)


def without_specifier_macros(source: bytes) -> bytes:
    """``source`` with the macros that stand where a specifier goes blanked."""
    return _SPECIFIER_MACRO.sub(_blank_macro, source)


@functools.cache
def _errors_query(name: str) -> Query:
    return Query(grammar(name), "(ERROR) @error")


def error_bytes(tree: Tree, name: str) -> int:
    """How many bytes of the file ``tree`` read lie in an error (nested ones counted once)."""
    if not tree.root_node.has_error:
        return 0
    found = QueryCursor(_errors_query(name)).captures(tree.root_node).get("error", [])
    total = reached = 0
    for node in sorted(found, key=lambda node: (node.start_byte, -node.end_byte)):
        if node.end_byte > reached:
            total += node.end_byte - max(node.start_byte, reached)
            reached = node.end_byte
    return total


# errors in less of a file than this are local (a statement, a declaration): the file keeps
# its structure, and reading it again would cost a parse or two for little
REREAD_SHARE = 0.1


def best_reading(name: str, source: bytes, tree: Tree) -> tuple[bytes, Tree]:
    """``source`` and its ``tree``, or, when errors cover a tenth of it or more, the blanked
    reading of it with the fewest bytes in errors."""
    least = error_bytes(tree, name)
    best = (source, tree)
    if least < REREAD_SHARE * len(source):
        return best
    candidate = source
    for blank in (without_conditionals, without_specifier_macros):
        if not least:
            break
        candidate = blank(candidate)
        if candidate == best[0]:
            continue
        reread = parser(name).parse(candidate)
        errors = error_bytes(reread, name)
        if errors < least:
            least, best = errors, (candidate, reread)
    return best
