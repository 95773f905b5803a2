"""The patterns of a structure query, and the text each needs in a source to match at all.

A pattern whose predicate asks a capture's text to equal a literal (``#eq?``, ``#any-eq?``,
``#any-of?``) cannot match in a source that holds none of its literals. Compiling a query
costs time for each pattern in it (a few milliseconds each for Python's grammar, about five
for TypeScript's), in every process that parses, so a process that parses one changed file
compiles only the patterns that file could match. Leaving out patterns that cannot match
changes none of the others' matches, nor their order.

A predicate over a capture that may hold no node is true whatever the literal (tree-sitter
checks every node the capture holds), so only captures a match always fills are read this
way: not one under ``?`` or ``*``, nor one that some branch of an alternation lacks. Whether
a file holds a literal is asked of its tree (``languages.query``): some node must span one
of the literal's occurrences exactly, so ``environment`` does not hold ``environ``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

_TOKEN = re.compile(
    r'(?P<space>\s+)|(?P<comment>;[^\n]*)|(?P<string>"(?:[^"\\]|\\.)*")|(?P<open>[(\[])'
    r"|(?P<close>[)\]])|(?P<quantifier>[?*+])|(?P<capture>@[\w.\-]+)|(?P<predicate>#[\w\-]+[?!])"
    r"|(?P<word>[^\s()\[\]\"@;?*+]+)"
)
_GATING = frozenset({"#eq?", "#any-eq?", "#any-of?"})
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"'}


@dataclass(frozen=True, slots=True)
class Pattern:
    """One top-level pattern's text, and the literals it needs: every group must have a
    member in the source for the pattern to match."""

    text: str
    needs: tuple[tuple[bytes, ...], ...] = ()

    def possible(self, holds: Callable[[bytes], bool]) -> bool:
        """Whether the pattern could match in a file where ``holds(literal)`` says whether
        some node's text is ``literal``."""
        return all(any(holds(literal) for literal in group) for group in self.needs)


def split_patterns(query: str) -> tuple[Pattern, ...]:
    """The top-level patterns of ``query``, in order, each with the literals it needs."""
    return tuple(_pattern(text) for text in _top_level(query))


def _tokens(text: str) -> Iterator[tuple[str, str, int, int]]:
    """(kind, text, start, end) of each token, spaces and comments left out."""
    at = 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:  # not query syntax szrag reads: the compiler reports it
            yield "word", text[at], at, at + 1
            at += 1
            continue
        kind = match.lastgroup
        assert kind is not None
        if kind not in ("space", "comment"):
            yield kind, match.group(), match.start(), match.end()
        at = match.end()


def _top_level(query: str) -> list[str]:
    """The text of each top-level pattern, as written: a node, alternation, string or
    wildcard with the captures and quantifier after it."""
    spans: list[list[int]] = []
    depth = 0
    for kind, _, start, end in _tokens(query):
        # captures and quantifiers belong to the pattern before them; anything else at the
        # top level starts one
        if (depth == 0 and kind not in ("capture", "quantifier", "close")) or not spans:
            spans.append([start, end])
        spans[-1][1] = end
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(depth - 1, 0)
    return [query[start:end] for start, end in spans]


@dataclass
class _Element:
    """A node, alternation, string or wildcard of a pattern, as far as captures go."""

    alternation: bool = False
    children: list[_Element] = field(default_factory=list)
    captures: list[str] = field(default_factory=list)
    optional: bool = False

    def filled(self) -> set[str]:
        """The captures every match of this element fills."""
        if self.optional:
            return set()
        own = set(self.captures)
        if self.alternation:
            branches = [child.filled() for child in self.children]
            return own | (set.intersection(*branches) if branches else set())
        return own.union(*(child.filled() for child in self.children))


def _pattern(text: str) -> Pattern:
    try:
        root, predicates = _parse([(kind, value) for kind, value, _, _ in _tokens(text)])
    except _Unreadable:
        return Pattern(text)
    filled = root.filled()
    needs = [
        literals
        for name, capture, literals in predicates
        # an empty text would be a node of no width: not looked for
        if name in _GATING and capture in filled and literals and b"" not in literals
    ]
    # the longest literals first: the rarest, so a pattern that cannot match is told soonest
    needs.sort(key=lambda group: -min(map(len, group)))
    return Pattern(text, tuple(needs))


class _Unreadable(Exception):
    """Query text this reader does not follow: the pattern is kept without needs."""


def _parse(
    tokens: list[tuple[str, str]],
) -> tuple[_Element, list[tuple[str, str, tuple[bytes, ...]]]]:
    """The element tree of one top-level pattern and its predicates (name, capture,
    literals)."""
    predicates: list[tuple[str, str, tuple[bytes, ...]]] = []
    root = _Element()
    stack = [root]
    at = 0
    while at < len(tokens):
        kind, text = tokens[at]
        parent = stack[-1]
        if kind == "open" and at + 1 < len(tokens) and tokens[at + 1][0] == "predicate":
            at = _read_predicate(tokens, at + 1, predicates)
            continue
        if kind == "open":
            element = _Element(alternation=text == "[")
            parent.children.append(element)
            stack.append(element)
        elif kind == "close":
            if len(stack) == 1:
                raise _Unreadable(text)
            stack.pop()
        elif kind == "string" or (kind == "word" and text == "_"):
            parent.children.append(_Element())
        elif kind == "capture":
            target = parent.children[-1] if parent.children else parent
            target.captures.append(text[1:])
        elif kind == "quantifier":
            if not parent.children:
                raise _Unreadable(text)
            if text in "?*":
                parent.children[-1].optional = True
        # words (node names, fields, anchors, negated fields) fill no capture
        at += 1
    if len(stack) != 1:
        raise _Unreadable("unbalanced")
    return root, predicates


def _read_predicate(
    tokens: list[tuple[str, str]], at: int, into: list[tuple[str, str, tuple[bytes, ...]]]
) -> int:
    """Read the predicate starting at ``tokens[at]`` (its name); the index after its ``)``."""
    name = tokens[at][1]
    arguments: list[tuple[str, str]] = []
    at += 1
    while at < len(tokens) and tokens[at][0] != "close":
        arguments.append(tokens[at])
        at += 1
    if at == len(tokens):
        raise _Unreadable(name)
    if arguments and arguments[0][0] == "capture":
        literals = tuple(_literal(text) for kind, text in arguments[1:] if kind == "string")
        if len(literals) == len(arguments) - 1:  # literals only: no second capture
            into.append((name, arguments[0][1][1:], tuple(literals)))
    return at + 1


def _literal(text: str) -> bytes:
    """A query string's value, as the bytes a source holds."""
    value: list[str] = []
    chars = iter(text[1:-1])
    for char in chars:
        if char == "\\":
            escaped = next(chars, "")
            if escaped not in _ESCAPES:
                raise _Unreadable(text)
            value.append(_ESCAPES[escaped])
        else:
            value.append(char)
    return "".join(value).encode("utf-8")
