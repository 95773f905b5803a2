"""Dice notation: parsing, limits, deterministic rolls with a seeded generator."""

from __future__ import annotations

import random

import pytest

from szrag.commands.dice import DiceTerm, describe, parse_dice, roll
from szrag.commands.errors import CommandInputError


@pytest.mark.parametrize(
    ("expression", "terms"),
    [
        ("d20", [DiceTerm(1, 1, 20)]),
        ("2d6+3", [DiceTerm(1, 2, 6), DiceTerm(1, 3, 0)]),
        ("4d8 - 1d4 + 2", [DiceTerm(1, 4, 8), DiceTerm(-1, 1, 4), DiceTerm(1, 2, 0)]),
        ("d%", [DiceTerm(1, 1, 100)]),
        ("12", [DiceTerm(1, 1, 12)]),
        ("", [DiceTerm(1, 1, 6)]),
        ("3D10", [DiceTerm(1, 3, 10)]),
    ],
)
def test_parse(expression: str, terms: list[DiceTerm]) -> None:
    assert parse_dice(expression) == terms


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("2d6 3", "cannot read"),
        ("roll", "cannot read"),
        ("0d6", "at least one die"),
        ("1d1", "2 to 1000 sides"),
        ("1d1001", "2 to 1000 sides"),
        ("101d6", "at most 100 dice"),
        ("+".join(["1d4"] * 11), "at most 10 terms"),
        ("1d6+2000000", "modifiers are limited"),
    ],
)
def test_refuses(expression: str, message: str) -> None:
    with pytest.raises(CommandInputError, match=message):
        parse_dice(expression)


def test_rolls_are_deterministic_with_a_seed_and_within_bounds() -> None:
    terms = parse_dice("3d6-1d4+2")
    first = roll(terms, random.Random(7))
    again = roll(terms, random.Random(7))
    assert first == again
    assert len(first[0].faces) == 3 and all(1 <= face <= 6 for face in first[0].faces)
    assert len(first[1].faces) == 1 and 1 <= first[1].faces[0] <= 4
    total = sum(first[0].faces) - first[1].faces[0] + 2
    assert describe(first) == (
        f"3d6-1d4+2: [{', '.join(map(str, first[0].faces))}] - [{first[1].faces[0]}] + 2 = {total}"
    )


def test_a_leading_negative_term() -> None:
    rolls = roll(parse_dice("-1d4+10"), random.Random(1))
    assert describe(rolls).startswith("-1d4+10: -[")
    assert 6 <= sum(item.value for item in rolls) <= 9
