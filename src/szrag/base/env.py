"""Reading settings from environment variables, with a clear error for a bad value."""

from __future__ import annotations

import math
from collections.abc import Mapping

from szrag.base.errors import ConfigError


def text(env: Mapping[str, str], name: str) -> str:
    """The variable's value without surrounding space ("" when unset)."""
    return env.get(name, "").strip()


def text_list(env: Mapping[str, str], name: str) -> list[str]:
    """A comma-separated list, empty items dropped."""
    return [item.strip() for item in text(env, name).split(",") if item.strip()]


def flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    """1/true/yes/on or 0/false/no/off."""
    raw = text(env, name).lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be 1 or 0, not {raw!r}")


def number(
    env: Mapping[str, str],
    name: str,
    default: float,
    *,
    positive: bool = False,
    integer: bool = False,
) -> float:
    """A finite number, 0 or more (more than 0 with ``positive``; whole with ``integer``)."""
    raw = text(env, name)
    if not raw:
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        kind = "a whole number" if integer else "a number"
        raise ConfigError(f"{name} must be {kind}, not {raw!r}") from None
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        bound = "greater than 0" if positive else "0 or more"
        raise ConfigError(f"{name} must be {bound}, not {raw!r}")
    return value


def choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    """One of ``choices`` (case-insensitive); the first when unset."""
    raw = text(env, name).lower()
    if not raw:
        return choices[0]
    if raw not in choices:
        allowed = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
        raise ConfigError(f"{name} must be {allowed}, not {raw!r}")
    return raw
