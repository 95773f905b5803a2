"""A file the grammar cannot read as written, read again rewritten, where a language's
writers use what its grammar does not know.

- **C and C++** are read before their preprocessor runs. A conditional directive whose
  condition the grammar cannot parse (``#if FMT_HAS_INCLUDE(<string_view>)``) inside the
  include guard that wraps a file, or a project macro where a specifier goes
  (``FMT_CONSTEXPR inline void f()``, ``class FMT_API format_error``), can leave the rest
  of the file one error, a struct seeming to own every function after it. The file is read
  again with each conditional's first branch kept and its other branches and directives
  blanked (as ctags reads them: the braces that branches open stay balanced), then with such
  macros blanked too.
- **Kotlin**'s grammar needs a line break or ``;`` after a class member before the ``}``
  that closes its body: ``companion object { const val A = 1 }`` made the whole file an
  error. The file is read again with a ``;`` in place of the space before each such ``}``.

Every rewrite keeps each byte and line where it was, and each is applied to the best reading
so far. The reading kept is the one with the fewest bytes in errors (an ``ERROR``
node's, and a ``MISSING`` node's parent's). A rewrite that should lose no definition (a
macro blanked, a ``;`` written) is not kept when its reading finds fewer than the one it
rewrote: ``STATUS_CODE dev_open(...)``, where ``STATUS_CODE`` is a type, is no function once
blanked. Keeping a conditional's first branch drops the others' definitions on purpose.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Query, QueryCursor, Tree

from szrag.code.languages import grammar, parser

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")
_OPENS = frozenset({b"if", b"ifdef", b"ifndef"})
# ``#if 0`` (or ``false``): code set aside, its ``#else`` the branch that is read
_DISABLED = re.compile(rb"^[ \t]*#[ \t]*if[ \t]+(?:0|false)[ \t]*(?:/[/*].*)?\r?$")
_NOT_LINE_END = re.compile(rb"[^\r]")
# an upper-case name with an underscore (a project's macro: ``FMT_API``, ``JV_INLINE``)
# followed on its line by a name or a keyword; a directive's own lines are passed over, so
# ``#define FMT_CONSTEXPR constexpr`` keeps the name it defines
_SPECIFIER_MACRO = re.compile(
    rb"(?P<directive>^[ \t]*#(?:[^\n]*\\\r?\n)*[^\n]*)"
    rb"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b(?=[ \t]+[A-Za-z_~])",
    re.MULTILINE,
)
# a member's end and the ``}`` closing its body on one line: ``{ const val A = 1 }``
# (not an empty lambda's ``{ _ -> }``)
_MEMBER_THEN_CLOSE = re.compile(rb"(?<=[^\s{;])(?<!->)[ \t](?=\}[ \t]*(?:\r?\n|$))", re.MULTILINE)


def first_branches(source: bytes) -> bytes:
    """``source`` with each conditional's first branch kept (the one after an ``#if 0``'s)
    and its directives and other branches blanked."""
    lines = source.split(b"\n")
    # per open conditional: whether the branch being read is blanked, and whether a branch
    # of it has been kept
    blanked: list[bool] = []
    kept: list[bool] = []
    continued = False
    for number, text in enumerate(lines):
        directive = None if continued else _DIRECTIVE.match(text)
        if continued or directive is not None:
            if directive is not None:
                word = directive[1]
                if word in _OPENS:
                    disabled = bool(_DISABLED.match(text))
                    blanked.append(disabled)
                    kept.append(not disabled)
                elif word == b"endif":
                    if blanked:
                        blanked.pop()
                        kept.pop()
                elif blanked:
                    blanked[-1] = kept[-1]
                    kept[-1] = True
            lines[number] = _NOT_LINE_END.sub(b" ", text)
            continued = text.rstrip(b"\r").endswith(b"\\")
        elif any(blanked):
            lines[number] = _NOT_LINE_END.sub(b" ", text)
    return b"\n".join(lines)


def _blank_macro(match: re.Match[bytes]) -> bytes:
    return match[0] if match["directive"] else b" " * len(match[0])


def without_specifier_macros(source: bytes) -> bytes:
    """``source`` with the macros that stand where a specifier goes blanked."""
    return _SPECIFIER_MACRO.sub(_blank_macro, source)


def members_ended(source: bytes) -> bytes:
    """``source`` with a ``;`` in place of the space between a member and the ``}`` that
    closes its body on the same line."""
    return _MEMBER_THEN_CLOSE.sub(b";", source)


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One rewrite of a file's text, and whether its reading must find every definition the
    text it rewrote gave."""

    apply: Callable[[bytes], bytes]
    keeps_definitions: bool


@dataclass(frozen=True, slots=True)
class Rereading:
    """How a language's file is read again: its rewrites, each applied to the best reading
    so far, and the nodes that count as its definitions."""

    rewrites: tuple[Rewrite, ...]
    definitions: str  # a query capturing the definition nodes
    least_share: float  # errors in less of the file are left as they are


# errors in less of a C file than this are local (a statement, a declaration): the file keeps
# its structure, and reading it again would cost a parse or two for little. Kotlin's member
# rule is read again whatever the share: an error there loses the members' owner
_C_REWRITES = (Rewrite(first_branches, False), Rewrite(without_specifier_macros, True))
# error recovery reads ``struct API options {...}`` as a function: a rewrite that makes it a
# struct again loses a function and gains a type with a body
_C_DEFINITIONS = (
    "(function_definition) (struct_specifier body: (_)) (union_specifier body: (_))"
    " (enum_specifier body: (_))"
)
REREADINGS: dict[str, Rereading] = {
    "c": Rereading(_C_REWRITES, f"[{_C_DEFINITIONS}] @definition", least_share=0.1),
    "cpp": Rereading(
        _C_REWRITES,
        f"[{_C_DEFINITIONS} (class_specifier body: (_))] @definition",
        least_share=0.1,
    ),
    "kotlin": Rereading(
        (Rewrite(members_ended, True),),
        "[(function_declaration) (class_declaration) (object_declaration)] @definition",
        least_share=0.0,
    ),
}


@functools.cache
def _query(name: str, text: str) -> Query:
    return Query(grammar(name), text)


def error_bytes(tree: Tree, name: str) -> int:
    """How many bytes of the file ``tree`` read lie in an error: in an ``ERROR`` node, or in
    the node a ``MISSING`` one was put into (overlaps counted once)."""
    if not tree.root_node.has_error:
        return 0
    captures = QueryCursor(_query(name, "(ERROR) @error (MISSING) @missing")).captures(
        tree.root_node
    )
    spans = [(node.start_byte, node.end_byte) for node in captures.get("error", [])]
    for node in captures.get("missing", []):
        around = node.parent or node
        spans.append((around.start_byte, around.end_byte))
    total = reached = 0
    for start, end in sorted(spans):
        if end > reached:
            total += end - max(start, reached)
            reached = end
    return total


def _definitions(tree: Tree, name: str, query: str) -> int:
    return len(QueryCursor(_query(name, query)).captures(tree.root_node).get("definition", []))


def best_reading(name: str, source: bytes, tree: Tree) -> tuple[bytes, Tree]:
    """``source`` and its ``tree``, or, for a language with a ``Rereading`` and errors in at
    least its share of the file, the rewritten reading with the fewest bytes in errors."""
    best = (source, tree)
    rereading = REREADINGS.get(name)
    if rereading is None:
        return best
    least = error_bytes(tree, name)
    if not least or least < rereading.least_share * len(source):
        return best
    found = _definitions(tree, name, rereading.definitions)
    for rewrite in rereading.rewrites:
        # each rewrite starts from the best reading so far: one that did not help (a
        # conditional's other branch dropped for nothing) is not built on
        rewritten = rewrite.apply(best[0])
        if rewritten == best[0]:
            continue
        reread = parser(name).parse(rewritten)
        count = _definitions(reread, name, rereading.definitions)
        if rewrite.keeps_definitions and count < found:
            continue  # it broke what it rewrote
        errors = error_bytes(reread, name)
        if errors < least:
            least, best, found = errors, (rewritten, reread), count
            if not least:
                break
    return best
