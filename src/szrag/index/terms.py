"""The fields each chunk contributes to the full-text index (used by the bm25 ranker).

Kept in one place because the index is contentless: removing a chunk means handing SQLite the
very values it was indexed with, so writes and deletes must compute them the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from szrag.text import Chunk, code_terms

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
    defined = definitions(code)
    return [
        (
            path_terms,
            code_terms(chunk.heading or ""),
            " ".join(
                code_terms(name) for line, name in defined if chunk.start <= line <= chunk.end
            ),
            body,
        )
        for chunk, body in zip(chunks, bodies, strict=True)
    ]
