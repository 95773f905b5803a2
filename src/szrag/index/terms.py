"""The fields each chunk contributes to the full-text index (used by the bm25 ranker).

Kept in one place because the index is contentless: removing a chunk means handing SQLite the
very values it was indexed with, so writes and deletes must compute them the same way.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Any

from szrag.base.text import Chunk, code_terms, symbol_key

NAME_KINDS = ("definition", "call", "route", "environment")

TermFields = tuple[str, str, str, str]
"""(path, heading, symbols, body) as indexed."""


def definitions(code: dict[str, Any] | None) -> list[tuple[int, str]]:
    """(line, name) of the functions and classes a code record defines."""
    if not code:
        return []
    found = []
    for item in code.get("functions") or []:
        if isinstance(item, dict) and isinstance(item.get("line"), int) and item.get("name"):
            found.append((item["line"], str(item["name"])))
    return found


def term_fields(
    path: str, chunks: Sequence[Chunk], code: dict[str, Any] | None, bodies: Sequence[str]
) -> list[TermFields]:
    """The indexed fields of each chunk; ``bodies`` are the chunks' ``code_terms``."""
    path_terms = code_terms(path)
    # each name once, though overlapping chunks hold most of them twice
    defined = [(line, code_terms(name)) for line, name in definitions(code)]
    # a chunk's names are found by binary search over their lines, kept in record order
    by_line = sorted(range(len(defined)), key=lambda place: defined[place][0])
    lines = [defined[place][0] for place in by_line]
    headings: dict[str, str] = {}

    def heading_terms(heading: str) -> str:
        if heading not in headings:
            headings[heading] = code_terms(heading)
        return headings[heading]

    def symbol_terms(start: int, end: int) -> str:
        inside = by_line[bisect_left(lines, start) : bisect_right(lines, end)]
        return " ".join(defined[place][1] for place in sorted(inside))

    return [
        (path_terms, heading_terms(chunk.heading or ""), symbol_terms(chunk.start, chunk.end), body)
        for chunk, body in zip(chunks, bodies, strict=True)
    ]


def code_names(code: dict[str, Any] | None) -> list[tuple[str, str, int]]:
    """(kind, name, line) of what a file defines, calls, serves and reads, for lookups by name."""
    if not code:
        return []
    found: set[tuple[str, str, int]] = set()
    for kind, key, field, normalise in (
        ("definition", "functions", "name", True),
        ("call", "calls", "name", True),
        ("route", "routes", "path", False),
        ("environment", "environment_variables", "name", False),
    ):
        for item in code.get(key) or []:
            value = item.get(field) if isinstance(item, dict) else None
            line = item.get("line") if isinstance(item, dict) else None
            if isinstance(value, str) and value and isinstance(line, int):
                found.add((kind, symbol_key(value) if normalise else value, line))
    return sorted(found)
