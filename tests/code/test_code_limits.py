"""Pathological sources: analysis gives up quickly instead of running for minutes."""

from __future__ import annotations

import time

from szrag.code import analyse_source
from szrag.code.extract import MAX_NESTING, bracket_depth


def test_bracket_depth() -> None:
    assert bracket_depth(b"") == 0
    assert bracket_depth(b"f(a[1], {b: (2)})") == 3
    assert bracket_depth(b"(()(()))") == 3


def test_deeply_nested_generated_code_is_skipped_quickly() -> None:
    depth = 200_000
    source = "f(" * depth + "1" + ")" * depth + "\n"
    started = time.perf_counter()
    assert analyse_source("generated.js", source) is None
    assert time.perf_counter() - started < 5  # the query walk alone would take many minutes


def test_ordinary_nesting_is_still_analysed() -> None:
    depth = MAX_NESTING // 4
    source = "function outer() { return " + "g(" * depth + "1" + ")" * depth + " }\n"
    record = analyse_source("nested.js", source)
    assert record is not None
    assert [item["name"] for item in record["functions"]] == ["outer"]
