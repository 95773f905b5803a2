"""The code context of one file: its structure (definitions, imports, routes, dependencies)
and the source of the definitions a question names, bounded for minified and generated files.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path

from szrag.base.memo import TextMemo
from szrag.code.model import (
    CodeRecord,
    SymbolMatch,
)
from szrag.index.protocol import IndexStore
from szrag.index.records import records_by_path
from szrag.structure.queries import (
    MAX_LINE_CHARS,
    bounded_line,
    indexed_path,
    routes_by_path,
)

# A minified bundle is thousands of functions on one line: what a context shows of one
# file stays readable and cheap to redact and count (lines are cut at MAX_LINE_CHARS).
MAX_SECTION_ITEMS = 200


def _section(title: str, lines: Iterable[str]) -> str | None:
    items = list(dict.fromkeys(lines))
    if not items:
        return None
    shown = [f"- {item}" for item in items[:MAX_SECTION_ITEMS]]
    if len(items) > MAX_SECTION_ITEMS:
        shown.append(f"- … and {len(items) - MAX_SECTION_ITEMS} more")
    return f"{title}:\n" + "\n".join(shown)


def _symbol_ranges(
    record: CodeRecord, path: str, symbol: str | SymbolMatch
) -> list[tuple[int, int]]:
    if isinstance(symbol, SymbolMatch):
        return [(symbol.line, symbol.end_line)] if symbol.file == path else []
    return [(item.line, item.end_line) for item in record.functions if item.name == symbol]


def splice(chunks: Iterable[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Join overlapping line windows ``(start, text)`` into runs of distinct lines.

    Returns ``(first, last, text)`` per run of consecutive lines, each line once (as the
    first window holding it gives it).
    """
    windows = list(chunks)
    if any(earlier[0] > later[0] for earlier, later in itertools.pairwise(windows)):
        return _splice_unordered(windows)
    # In start order, the lines a window adds are those past the last one taken: a window
    # starting no later than this one reaches that line, so everything before it is taken.
    runs: list[tuple[int, int, list[str]]] = []
    taken = None  # the last line number taken
    for start, text in windows:
        lines = text.split("\n")
        skip = 0 if taken is None else max(0, taken + 1 - start)
        if skip >= len(lines):
            continue
        added = lines[skip:]
        if max(map(len, added)) > MAX_LINE_CHARS:
            added = [bounded_line(line) for line in added]
        first = start + skip
        taken = first + len(added) - 1
        if runs and runs[-1][1] == first - 1:
            runs[-1][2].extend(added)
            runs[-1] = (runs[-1][0], taken, runs[-1][2])
        else:
            runs.append((first, taken, added))
    return [(first, last, "\n".join(lines)) for first, last, lines in runs]


def _splice_unordered(windows: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    lines: dict[int, str] = {}
    for start, text in windows:
        for offset, content in enumerate(text.split("\n")):
            if start + offset not in lines:
                lines[start + offset] = bounded_line(content)
    runs: list[tuple[int, int, list[str]]] = []  # joined at the end: a long run is not
    for number in sorted(lines):  # copied once per line
        if runs and runs[-1][1] == number - 1:
            first, _last, texts = runs[-1]
            texts.append(lines[number])
            runs[-1] = (first, number, texts)
        else:
            runs.append((number, number, [lines[number]]))
    return [(first, last, "\n".join(texts)) for first, last, texts in runs]


def _source_sections(index: IndexStore, path: str, ranges: list[tuple[int, int]]) -> Iterator[str]:
    overlapping = [(chunk.start, chunk.text) for chunk in index.chunks(path, ranges)]
    for first, last, text in splice(overlapping):
        yield f"SOURCE ({first}-{last}):\n{text}"


def _structure(path: str, index: IndexStore, record: CodeRecord) -> str:
    """The structure sections of one file's context (without its source)."""
    sections = [
        _section("IMPORTS", (item.source for item in record.imports)),
        _section(
            "FUNCTIONS", (f"{item.name} ({item.line}-{item.end_line})" for item in record.functions)
        ),
        _section(
            "ROUTES",
            (
                f"{item.method} {item.path} ({item.line})"
                for item in routes_by_path(index).get(path, record.routes)
            ),
        ),
        _section(
            "ENVIRONMENT VARIABLES",
            (f"{item.name} ({item.line})" for item in record.environment_variables),
        ),
    ]
    return "\n\n".join(section for section in sections if section)


STRUCTURE_MEMO_CHARS = 4_000_000  # one generation's structure texts kept by a server


def _structure_memo(index: IndexStore) -> TextMemo[str]:
    """A memo of ``_structure`` by path for one generation of ``index`` (held weakly: the
    memo is one of the index's own views, and a cycle through it would outlive a closed
    index in a process whose views are frozen out of the collector)."""
    held = weakref.ref(index)

    def structure(path: str) -> str:
        owner = held()
        if owner is None:
            return ""
        record = records_by_path(owner).get(path)
        return _structure(path, owner, record) if record is not None else ""

    return TextMemo(structure, max_chars=STRUCTURE_MEMO_CHARS, size=len)


def get_code_context(
    path: str | Path, index: IndexStore, symbol: str | SymbolMatch | None = None
) -> str:
    """A file's structure as text, and with ``symbol`` the source chunks around it.

    Sections (only those with content): IMPORTS, FUNCTIONS ``name (start-end)``, ROUTES
    ``METHOD path (line)``, ENVIRONMENT VARIABLES ``NAME (line)``, then SOURCE blocks of the
    chunks overlapping the symbol's lines, spliced so overlapping chunks repeat no line.
    Files without a code record give an empty string.
    """
    with index.reading():  # the record, its views and its chunks of one generation
        relative = indexed_path(path, index)
        record = records_by_path(index).get(relative)
        if record is None:
            return ""
        if index.in_memory:  # the same files come back question after question
            memo = index.derived("code.structure", lambda: _structure_memo(index))
            structure = memo(relative)
        else:
            structure = _structure(relative, index, record)
        sections = [structure]
        if symbol is not None:
            ranges = _symbol_ranges(record, relative, symbol)
            if ranges:
                sections.extend(_source_sections(index, relative, ranges))
        return "\n\n".join(section for section in sections if section)
