"""Admin-only tools: getErrors (stack traces, the data ``/api/admin/errors`` guards) is offered
and run only for privileged callers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from szrag.commands import Allowlist, builtin_registry
from szrag.runtime import ProcessRuntime
from szrag.service.audit import AuditLog
from szrag.tools import ToolAdapter


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[ProcessRuntime]:
    with ProcessRuntime(tmp_path, environ={}) as process:
        process.record_error(RuntimeError("database password=hunter2 refused"), "test")
        yield process


def adapter(runtime: ProcessRuntime, tmp_path: Path, privileged: bool = True) -> ToolAdapter:
    audit = AuditLog(tmp_path / "a.log")
    return ToolAdapter.of(
        builtin_registry(), runtime, tmp_path, Allowlist(), audit, privileged=privileged
    )


def names(definitions: list[dict[str, object]]) -> set[str]:
    found = set()
    for definition in definitions:
        function = definition["function"]
        assert isinstance(function, dict)
        found.add(str(function["name"]))
    return found


def test_an_adapter_is_privileged_by_default(runtime: ProcessRuntime, tmp_path: Path) -> None:
    tools = adapter(runtime, tmp_path)

    assert "getErrors" in names(tools.definitions())


async def test_an_unprivileged_adapter_neither_offers_nor_runs_get_errors(
    runtime: ProcessRuntime, tmp_path: Path
) -> None:
    tools = adapter(runtime, tmp_path, privileged=False)

    offered = names(tools.definitions())
    result = await tools.call("getErrors", {"includeStack": True})

    assert "getErrors" not in offered and "getStatus" in offered
    assert not result.ok and result.content["error"]["type"] == "forbidden"
    assert "Traceback" not in result.text and "RuntimeError" not in result.text


async def test_privilege_can_be_given_per_call_or_per_copy(
    runtime: ProcessRuntime, tmp_path: Path
) -> None:
    tools = adapter(runtime, tmp_path, privileged=False)
    admin = tools.with_privilege(True)

    per_call = await tools.call("getErrors", {}, privileged=True)
    copied = await admin.call("getErrors", {})
    refused = await tools.call("getErrors", {})

    assert per_call.ok and copied.ok and not refused.ok
    assert "getErrors" in names(tools.definitions(privileged=True))
    assert "getErrors" in names(admin.definitions())
    assert tools.privileged is False  # the copy did not change the original
