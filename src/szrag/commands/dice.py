"""Dice notation for the ``roll`` command: ``d20``, ``2d6+3``, ``4d8 - 1d4 + 2``, ``d%``."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from szrag.commands.errors import CommandInputError

MAX_DICE = 100
MAX_SIDES = 1000
MAX_TERMS = 10
MAX_MODIFIER = 1_000_000
DEFAULT_EXPRESSION = "1d6"

_TERM = re.compile(r"([+-]?)\s*(?:(\d*)d(\d+|%)|(\d+))", re.IGNORECASE)


@dataclass(frozen=True)
class DiceTerm:
    """``count`` dice of ``sides`` sides (or a constant when sides is 0), added or subtracted."""

    sign: int
    count: int
    sides: int

    def label(self) -> str:
        """The term as written in normalised notation."""
        body = f"{self.count}d{self.sides}" if self.sides else str(self.count)
        return ("-" if self.sign < 0 else "+") + body


@dataclass(frozen=True)
class Roll:
    """The dice thrown for one term and what they add up to."""

    term: DiceTerm
    faces: tuple[int, ...]

    @property
    def value(self) -> int:
        """The signed contribution of this term."""
        return self.term.sign * (sum(self.faces) if self.term.sides else self.term.count)


def parse_dice(expression: str) -> list[DiceTerm]:
    """The terms of a dice expression; bad notation or excessive sizes are refused."""
    text = expression.strip() or DEFAULT_EXPRESSION
    if text.isdigit():  # "roll 20" means one twenty-sided die
        text = f"1d{text}"
    terms: list[DiceTerm] = []
    position = 0
    while position < len(text):
        if text[position].isspace():
            position += 1
            continue
        match = _TERM.match(text, position)
        if match is None or (terms and not match.group(1)):
            raise CommandInputError(f"cannot read {expression!r} as dice notation (e.g. 2d6+3)")
        sign = -1 if match.group(1) == "-" else 1
        if match.group(4) is not None:
            count, sides = int(match.group(4)), 0
            if count > MAX_MODIFIER:
                raise CommandInputError(f"modifiers are limited to {MAX_MODIFIER:,}")
        else:
            count = int(match.group(2)) if match.group(2) else 1
            sides = 100 if match.group(3) == "%" else int(match.group(3))
            if not 2 <= sides <= MAX_SIDES:
                raise CommandInputError(f"dice need 2 to {MAX_SIDES} sides")
            if count < 1:
                raise CommandInputError("roll at least one die")
        terms.append(DiceTerm(sign, count, sides))
        position = match.end()
    if len(terms) > MAX_TERMS:
        raise CommandInputError(f"at most {MAX_TERMS} terms")
    if sum(term.count for term in terms if term.sides) > MAX_DICE:
        raise CommandInputError(f"at most {MAX_DICE} dice at once")
    return terms


def roll(terms: list[DiceTerm], rng: random.Random) -> list[Roll]:
    """Throw every die of ``terms``."""
    return [
        Roll(
            term, tuple(rng.randint(1, term.sides) for _ in range(term.count)) if term.sides else ()
        )
        for term in terms
    ]


def describe(rolls: list[Roll]) -> str:
    """``2d6+3: [4, 2] + 3 = 9``."""
    notation = "".join(r.term.label() for r in rolls).removeprefix("+")
    parts: list[str] = []
    for index, item in enumerate(rolls):
        shown = f"[{', '.join(map(str, item.faces))}]" if item.term.sides else str(item.term.count)
        if index == 0:
            parts.append(("-" if item.term.sign < 0 else "") + shown)
        else:
            parts.append(("- " if item.term.sign < 0 else "+ ") + shown)
    total = sum(item.value for item in rolls)
    return f"{notation}: {' '.join(parts)} = {total}"
