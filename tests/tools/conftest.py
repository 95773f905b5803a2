"""A tool adapter over a temporary repository, with its activities and audit log at hand."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from toolbench import ToolBench

from szrag.audit import AuditLog
from szrag.commands import builtin_registry
from szrag.runtime import ProcessRuntime


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[ToolBench]:
    """Built-in commands, a process runtime attached to the szrag logger, an audit log."""
    root = tmp_path / "repo"
    root.mkdir()
    runtime = ProcessRuntime(root, environ={})
    with runtime:
        yield ToolBench(root, builtin_registry(), runtime, AuditLog(tmp_path / "audit.log"))
