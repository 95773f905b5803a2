"""The built-in commands; every one but ``ask`` is free of side effects."""

from __future__ import annotations

from szrag.commands.builtins import crypto, general, maths, text
from szrag.commands.model import CommandSpec
from szrag.commands.registry import CommandRegistry

BUILTIN_COMMANDS: tuple[CommandSpec, ...] = (
    *general.COMMANDS,
    *text.COMMANDS,
    *crypto.COMMANDS,
    *maths.COMMANDS,
)


def register_builtins(registry: CommandRegistry) -> None:
    """Add every built-in command to ``registry``."""
    for spec in BUILTIN_COMMANDS:
        registry.register(spec)


__all__ = ["BUILTIN_COMMANDS", "register_builtins"]
