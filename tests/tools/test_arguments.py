"""Tool arguments as models send them: JSON numbers with a fraction part of zero."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from szrag.commands import Allowlist, builtin_registry
from szrag.runtime import ProcessRuntime
from szrag.service.audit import AuditLog
from szrag.tools import ToolAdapter


@pytest.fixture
def adapter(tmp_path: Path) -> Iterator[ToolAdapter]:
    """An adapter over a process runtime that has logged five warnings."""
    root = tmp_path / "repo"
    root.mkdir()
    with ProcessRuntime(root, environ={}) as runtime:
        log = logging.getLogger("szrag.test_arguments")
        for number in range(5):
            log.warning("event %d", number)
        yield ToolAdapter.of(builtin_registry(), runtime, root, Allowlist(), AuditLog(None))


async def test_an_integer_sent_as_a_float_is_used_as_an_integer(adapter: ToolAdapter) -> None:
    result = await adapter.call("getLogs", '{"limit": 2.0}')
    assert result.ok, result.error
    assert [entry["message"] for entry in result.content["entries"]] == ["event 3", "event 4"]


async def test_a_fractional_integer_is_refused_with_a_clear_message(adapter: ToolAdapter) -> None:
    result = await adapter.call("getLogs", '{"limit": 2.5}')
    assert not result.ok
    assert result.error is not None and "limit: expected an integer, got 2.5" in result.error
