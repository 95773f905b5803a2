"""Code structure: per-language parsers and the structure graph.

``analyse_source(path, text)`` returns the JSON-ready code record the index stores for a
file, or None when the file is not code szrag can parse. ``resolve_edges(path, record,
known_paths)`` turns a record's imports and path references into dependency edges.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def analyse_source(path: str, text: str) -> dict[str, Any] | None:
    """The code record of one file, or None when no parser handles it."""
    del path, text
    return None


def resolve_edges(
    path: str, record: dict[str, Any], known_paths: Collection[str]
) -> list[tuple[str, str]]:
    """(target path, kind) dependency edges of one file; kind is "import" or "path"."""
    del path, record, known_paths
    return []
