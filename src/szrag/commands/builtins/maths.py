"""calc, random, roll and unix."""

from __future__ import annotations

import random
import re
import secrets
from datetime import UTC, datetime

from szrag.commands import calc, dice
from szrag.commands.errors import CommandInputError
from szrag.commands.model import CommandContext, CommandSpec

MAX_RANDOM = 10**18
MILLISECONDS_FROM = 10**11  # larger timestamps are read as milliseconds (after year 5138)
_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")

_rng: random.Random = secrets.SystemRandom()


async def calc_command(context: CommandContext) -> None:
    """Evaluate arithmetic safely."""
    try:
        value = calc.evaluate(context.text)
    except calc.CalcError as error:
        raise CommandInputError(f"calc: {error}") from None
    context.respond(f"{context.text} = {calc.format_number(value)}")


async def random_command(context: CommandContext) -> None:
    """A random whole number between MIN and MAX inclusive (default 1 to 100)."""
    parts = context.text.split()
    if len(parts) > 2 or not all(_INTEGER.fullmatch(part) for part in parts):
        raise CommandInputError("usage: /sz-random [MIN] MAX (whole numbers)")
    numbers = [int(part) for part in parts]
    low, high = (1, 100) if not numbers else (1, numbers[0]) if len(numbers) == 1 else numbers
    if low > high:
        raise CommandInputError(f"the minimum {low} is above the maximum {high}")
    if max(abs(low), abs(high)) > MAX_RANDOM:
        raise CommandInputError(f"numbers are limited to ±{MAX_RANDOM:.0e}")
    context.respond(str(_rng.randint(low, high)))


async def roll_command(context: CommandContext) -> None:
    """Roll dice in dice notation (default 1d6)."""
    rolls = dice.roll(dice.parse_dice(context.text), _rng)
    context.respond(dice.describe(rolls))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def convert_time(text: str, now: datetime | None = None) -> str:
    """A UNIX timestamp as an ISO date, an ISO date as a timestamp, or now as both."""
    text = text.strip()
    if not text or text.lower() == "now":
        moment = now or datetime.now(UTC)
        return f"{int(moment.timestamp())} = {_iso(moment.replace(microsecond=0))}"
    if _NUMBER.fullmatch(text):
        seconds = float(text)
        unit = "s"
        if abs(seconds) >= MILLISECONDS_FROM:
            seconds, unit = seconds / 1000, "ms"
        try:
            moment = datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            raise CommandInputError(f"{text} is outside the range of dates") from None
        return f"{text} ({unit}) = {_iso(moment)}"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CommandInputError(
            f"cannot read {text!r}: give a UNIX timestamp or an ISO date like 2024-05-01T12:00:00Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # a date without a zone is read as UTC
    stamp = moment.timestamp()
    shown = str(int(stamp)) if stamp.is_integer() else f"{stamp:.3f}"
    return f"{_iso(moment)} = {shown}"


async def unix_command(context: CommandContext) -> None:
    """Convert between UNIX timestamps and ISO dates."""
    context.respond(convert_time(context.text))


COMMANDS = (
    CommandSpec(
        "calc",
        "Evaluate arithmetic: + - * / // % ^, parentheses, sqrt, log, sin, pi ...",
        calc_command,
        category="numbers",
        usage="/sz-calc EXPRESSION",
    ),
    CommandSpec(
        "random",
        "Pick a random whole number between MIN and MAX (default 1 to 100).",
        random_command,
        category="numbers",
        usage="/sz-random [MIN] MAX",
    ),
    CommandSpec(
        "roll",
        "Roll dice in dice notation, e.g. 2d6+3.",
        roll_command,
        category="numbers",
        usage="/sz-roll [NdM+K]",
    ),
    CommandSpec(
        "unix",
        "Convert a UNIX timestamp to an ISO date or back; no input gives the current time.",
        unix_command,
        category="numbers",
        usage="/sz-unix [TIMESTAMP|ISO DATE]",
    ),
)
