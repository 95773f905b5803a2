"""Patterns rooted at a file's root node run in a cursor held at the root: a pattern that
started anywhere else would silently never match there."""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_sitter import QueryCursor

from szrag.code.languages import LANGUAGES, parser, root_query

LANGUAGE_FIXTURES = Path(__file__).parent.parent / "fixtures" / "languages"


def matched(language: str, source: bytes, max_start_depth: int | None) -> list[tuple[int, int]]:
    compiled = root_query(language)
    assert compiled is not None
    cursor = QueryCursor(compiled)
    if max_start_depth is not None:
        cursor.set_max_start_depth(max_start_depth)
    tree = parser(language).parse(source)
    return [
        (pattern, node.start_byte)
        for pattern, captures in cursor.matches(tree.root_node)
        for nodes in captures.values()
        for node in nodes
    ]


@pytest.mark.parametrize(
    "language", sorted(name for name, spec in LANGUAGES.items() if spec.root_query_files)
)
def test_root_patterns_find_the_same_at_the_root_only(language: str) -> None:
    sources = sorted((LANGUAGE_FIXTURES / language).glob("*.py"))
    assert sources
    for source in sources:
        data = source.read_bytes()
        assert matched(language, data, 0) == matched(language, data, None)
    found = matched(language, (LANGUAGE_FIXTURES / language / "exports.py").read_bytes(), 0)
    assert found


def test_only_python_has_root_patterns() -> None:
    assert root_query("python") is not None
    assert root_query("javascript") is None
