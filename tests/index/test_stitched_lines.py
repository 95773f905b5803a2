"""A file's lines put together from its chunks: the first chunk holding a line gives it,
whatever order the chunks come in, with gaps read as empty lines."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, cast

from szrag.index.handle import stitched_lines
from szrag.index.protocol import IndexStore
from szrag.index.store import StoredChunk


class _Chunks:
    """Just enough of an index to hand out one file's chunks."""

    def __init__(self, chunks: Sequence[tuple[int, str]]) -> None:
        self._chunks = [
            StoredChunk(place, "f.py", start, start + text.count("\n"), "python", None, text)
            for place, (start, text) in enumerate(chunks)
        ]

    def chunks(self, path: str, lines: Any = None) -> list[StoredChunk]:
        if lines is None:
            return list(self._chunks)
        return [
            chunk
            for chunk in self._chunks
            if any(chunk.start <= last and first <= chunk.end for first, last in lines)
        ]


def _lines(chunks: Sequence[tuple[int, str]], first: int = 1, last: int | None = None) -> list[str]:
    return stitched_lines(cast(IndexStore, _Chunks(chunks)), "f.py", first, last)


def _reference(chunks: Sequence[tuple[int, str]], first: int, last: int | None) -> list[str]:
    wanted = _Chunks(chunks).chunks(
        "f.py", None if first <= 1 and last is None else [(first, last or 1 << 62)]
    )
    held: dict[int, str] = {}
    for chunk in wanted:
        for offset, line in enumerate(chunk.text.split("\n")):
            held.setdefault(chunk.start + offset, line)
    top = max(held, default=0) if last is None else min(last, max(held, default=0))
    return [held.get(number, "") for number in range(max(first, 1), top + 1)]


def test_overlapping_windows_give_each_line_once() -> None:
    chunks = [(1, "a\nb\nc\nd"), (3, "c\nd\ne"), (6, "f")]
    assert _lines(chunks) == ["a", "b", "c", "d", "e", "f"]
    assert _lines(chunks, 2, 4) == ["b", "c", "d"]
    assert _lines(chunks, 5) == ["e", "f"]
    assert _lines(chunks, 9) == []
    assert _lines(chunks, 3, 0) == [] and _lines(chunks, 4, 2) == []  # an empty range


def test_the_first_chunk_holding_a_line_gives_it() -> None:
    assert _lines([(1, "a\nb"), (2, "B\nc")]) == ["a", "b", "c"]
    assert _lines([(2, "B\nc"), (1, "a\nb")]) == ["a", "B", "c"]  # out of file order


def test_lines_no_chunk_holds_are_empty() -> None:
    assert _lines([(1, "a"), (4, "d\ne"), (2, "b")]) == ["a", "b", "", "d", "e"]
    assert _lines([(3, "c")]) == ["", "", "c"]
    assert _lines([(3, "c")], 2, 3) == ["", "c"]
    assert _lines([]) == []


def test_random_layouts_match_the_rule() -> None:
    chooser = random.Random(31)
    for _ in range(2000):
        chunks = []
        for _ in range(chooser.randint(0, 6)):
            start = chooser.randint(1, 30)
            size = chooser.randint(1, 12)
            chunks.append(
                (start, "\n".join(f"{start}:{k}:{chooser.randint(0, 3)}" for k in range(size)))
            )
        if chooser.random() < 0.5:
            chunks.sort()
        first = chooser.randint(0, 25)
        last = chooser.choice([None, first + chooser.randint(0, 20), chooser.randint(0, first)])
        assert _lines(chunks, first, last) == _reference(chunks, first, last), (chunks, first, last)
