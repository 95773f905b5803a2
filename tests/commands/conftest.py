"""A fresh built-in registry and a helper that runs a command and returns its text."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from szrag.commands import CommandRegistry, CommandRunner, builtin_registry

RunText = Callable[..., Awaitable[str]]


@pytest.fixture
def registry() -> CommandRegistry:
    """The built-in commands, in a registry no other test shares."""
    return builtin_registry()


@pytest.fixture
def run_text(registry: CommandRegistry, tmp_path: Path) -> RunText:
    """Run a built-in with a repository root in tmp_path and return its responses' text."""

    async def run(command_id: str, text: str = "", *, root: Path | None = None) -> str:
        runner = CommandRunner(registry=registry, root=root or tmp_path)
        result = await runner.run(command_id, text)
        return result.text

    return run
