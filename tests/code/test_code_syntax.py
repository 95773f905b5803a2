"""Names and string values read from the tree: the plainly written forms are read from the
text directly, and must agree with the node-by-node reading of everything else."""

from __future__ import annotations

import pytest

from szrag.code import analyse_source


def call_names(path: str, source: str) -> list[str]:
    record = analyse_source(path, source)
    assert record is not None
    return [call["name"] for call in record["calls"]]


def environment_names(path: str, source: str) -> list[str]:
    record = analyse_source(path, source)
    assert record is not None
    return [item["name"] for item in record["environment_variables"]]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("this.a.b();", ["this.a.b"]),
        ("super.x();", ["super.x"]),
        ("$.ajax();", ["$.ajax"]),
        ("a\n  .b\n  .c();", ["a.b.c"]),
        ("a.b /* c */ .d();", ["a.b.d"]),
        ("a?.b.c();", ["a.b.c"]),
        ('a["b"].c();', ["a.b.c"]),
        ("(a).b();", ["a.b"]),
        ("ñ.x();", ["ñ.x"]),
        # The head is not a name: only the trailing members are kept.
        ('import.meta.resolve("./x");', ["resolve"]),
        ("new.target.x();", ["x"]),
        ("true.toString();", ["toString"]),
        ("f().then();", ["then", "f"]),
    ],
)
def test_javascript_callee_names(source: str, expected: list[str]) -> None:
    assert call_names("calls.js", source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("self.x.y()", ["self.x.y"]),
        ("a . b()", ["a.b"]),
        ("None.__class__()", ["__class__"]),
        ("True.real.bit_length()", ["real.bit_length"]),
    ],
)
def test_python_callee_names(source: str, expected: list[str]) -> None:
    assert call_names("calls.py", source) == expected


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ('"A"', ["A"]),
        ("'B'", ["B"]),
        ('r"C"', ["C"]),
        ("u'H'", ["H"]),
        ('b"G"', ["G"]),
        ('"D\\n"', ["D\\n"]),
        ('"""E"""', ["E"]),
        ('f"F"', []),  # an f-string is not a literal name
        ('""', []),
    ],
)
def test_python_string_values(literal: str, expected: list[str]) -> None:
    assert environment_names("env.py", f"import os\nos.environ.get({literal})\n") == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("process.env['C'];", ["C"]),
        ('process.env["A\\"B"];', ['A\\"B']),  # escapes are kept as written
        ("process.env[`T`];", []),
    ],
)
def test_javascript_string_values(source: str, expected: list[str]) -> None:
    assert environment_names("env.js", source) == expected
