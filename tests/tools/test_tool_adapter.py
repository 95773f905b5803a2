"""The tool adapter: every failure the spec lists, timeouts that cancel, the size cap,
sanitising, activities, the audit log, and each tool's output."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest

from szrag.base.public import public_dict
from szrag.commands import (
    Allowlist,
    CommandContext,
    CommandRegistry,
    CommandSpec,
    Identity,
    builtin_registry,
)
from szrag.index import build_index
from szrag.runtime import ProcessRuntime
from szrag.service.audit import AuditLog
from szrag.tools import ToolAdapter
from szrag.tools.adapter import ToolResult, fit_output


@dataclass
class ToolBench:
    """An adapter and everything it reports to."""

    root: Path
    registry: CommandRegistry
    runtime: ProcessRuntime
    audit: AuditLog
    activities: list[dict[str, Any]] = field(default_factory=list)

    def adapter(self, **options: Any) -> ToolAdapter:
        """An adapter over this bench; options override the defaults."""
        settings: dict[str, Any] = {
            "registry": self.registry,
            "runtime": self.runtime,
            "index_root": self.root,
            "allowlist": Allowlist(),
            "audit": self.audit,
            "on_activity": lambda event: self.activities.append(public_dict(event)),
        }
        settings.update(options)
        return ToolAdapter.of(**settings)


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[ToolBench]:
    """Built-in commands, a process runtime attached to the szrag logger, an audit log."""
    root = tmp_path / "repo"
    root.mkdir()
    runtime = ProcessRuntime(root, environ={})
    with runtime:
        yield ToolBench(root, builtin_registry(), runtime, AuditLog(tmp_path / "audit.log"))


def _error(result: ToolResult) -> dict[str, Any]:
    assert not result.ok
    assert json.loads(result.text) == result.content
    error: dict[str, Any] = result.content["error"]
    assert result.error == error["message"]
    return error


# Failures ------------------------------------------------------------------------------


async def test_unknown_tool(bench: ToolBench) -> None:
    result = await bench.adapter().call("getWeather", "{}")
    error = _error(result)
    assert error["type"] == "unknown_tool"
    assert "getStatus" in error["message"]
    assert bench.activities[-1]["status"] == "failed"
    assert bench.activities[-1]["endpoint"] is None


async def test_malformed_json_arguments(bench: ToolBench) -> None:
    error = _error(await bench.adapter().call("getLogs", '{"limit": 3'))
    assert error["type"] == "invalid_json"
    assert error["message"].startswith("arguments are not valid JSON")


async def test_arguments_that_are_not_an_object(bench: ToolBench) -> None:
    error = _error(await bench.adapter().call("getLogs", "[1, 2]"))
    assert error == {
        "type": "invalid_arguments",
        "message": "arguments must be a JSON object, not list",
    }


async def test_undeclared_argument_field(bench: ToolBench) -> None:
    error = _error(await bench.adapter().call("getStatus", {"verbose": True}))
    assert error["type"] == "invalid_arguments"
    assert "undeclared field 'verbose' (allowed: none)" in error["message"]


async def test_argument_of_the_wrong_type_or_size(bench: ToolBench) -> None:
    adapter = bench.adapter()
    assert (
        "limit: must be at most 10"
        in _error(await adapter.call("getLogs", {"limit": 11}))["message"]
    )
    long_text = {"commandId": "echo", "text": "x" * 501}
    assert "longer than 500" in _error(await adapter.call("runCommand", long_text))["message"]
    missing = _error(await adapter.call("runCommand", {}))
    assert "missing required field 'commandId'" in missing["message"]


async def test_blocked_command(bench: ToolBench) -> None:
    adapter = bench.adapter(allowlist=Allowlist.everything())
    error = _error(await adapter.call("runCommand", {"commandId": "/sz-ask", "text": "why?"}))
    assert error == {"type": "blocked", "message": "/sz-ask cannot be run from a tool"}
    record = bench.audit.read()[-1]
    assert (record["command"], record["outcome"], record["source"]) == ("ask", "blocked", "tool")


async def test_command_not_on_the_allowlist(bench: ToolBench) -> None:
    async def deploy(context: CommandContext) -> None:
        context.respond("deployed")

    bench.registry.register(CommandSpec("deploy", "Deploy production.", deploy))
    error = _error(await bench.adapter().call("runCommand", {"commandId": "deploy"}))
    assert error["type"] == "not_allowed"
    assert "not on the allowlist" in error["message"]
    assert bench.audit.read()[-1]["outcome"] == "not_allowed"
    allowed = bench.adapter(allowlist=Allowlist.of(["deploy"]))
    assert (await allowed.call("runCommand", {"commandId": "deploy"})).ok


async def test_unknown_command(bench: ToolBench) -> None:
    error = _error(await bench.adapter().call("runCommand", {"commandId": "pnig"}))
    assert error["type"] == "unknown_command" and "ping" in error["message"]


async def test_missing_handler(bench: ToolBench) -> None:
    bench.registry.register(CommandSpec("ghost", "Metadata only."))
    adapter = bench.adapter(allowlist=Allowlist.of(["ghost"]))
    error = _error(await adapter.call("runCommand", {"commandId": "ghost"}))
    assert error["type"] == "missing_handler"


async def test_command_without_a_response(bench: ToolBench) -> None:
    async def silent(context: CommandContext) -> None:
        return None

    bench.registry.register(CommandSpec("silent", "Says nothing.", silent))
    adapter = bench.adapter(allowlist=Allowlist.of(["silent"]))
    error = _error(await adapter.call("runCommand", {"commandId": "silent"}))
    assert error == {"type": "no_response", "message": "/sz-silent finished without a response"}


async def test_command_input_error_reaches_the_model(bench: ToolBench) -> None:
    error = _error(await bench.adapter().call("runCommand", {"commandId": "calc", "text": "1/0"}))
    assert error == {"type": "bad_input", "message": "calc: division by zero"}


async def test_timeout_cancels_a_command(bench: ToolBench) -> None:
    observed: list[str] = []

    async def slow(context: CommandContext) -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            observed.append("cancelled")
            raise

    bench.registry.register(CommandSpec("slow", "Sleeps.", slow))
    adapter = bench.adapter(allowlist=Allowlist.of(["slow"]), timeout=0.2)
    started = time.perf_counter()
    error = _error(await adapter.call("runCommand", {"commandId": "slow"}))
    assert time.perf_counter() - started < 2
    assert observed == ["cancelled"]
    assert error["type"] == "timeout"
    assert bench.activities[-1]["status"] == "timeout"
    assert bench.audit.read()[-1]["outcome"] == "timeout"


async def test_timeout_cancels_a_runtime_read(bench: ToolBench) -> None:
    observed: list[str] = []

    class SlowRuntime(ProcessRuntime):
        async def status(self) -> dict[str, Any]:  # type: ignore[override]
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                observed.append("cancelled")
                raise
            return {}

    adapter = bench.adapter(runtime=SlowRuntime(bench.root, environ={}), timeout=0.1)
    error = _error(await adapter.call("getStatus"))
    assert error == {
        "type": "timeout",
        "message": "getStatus did not finish within 0.1 s and was cancelled",
    }
    assert observed == ["cancelled"]


async def test_a_failing_runtime_is_a_structured_failure_and_an_error_record(
    bench: ToolBench,
) -> None:
    class BrokenRuntime(ProcessRuntime):
        def metrics(self, name: str | None = None, label: str | None = None) -> NoReturn:
            raise RuntimeError("counter store unavailable")

    runtime = BrokenRuntime(bench.root, environ={})
    with runtime:
        error = _error(await bench.adapter(runtime=runtime).call("getMetrics"))
        assert error == {
            "type": "internal_error",
            "message": "RuntimeError: counter store unavailable",
        }
        records = public_dict(runtime.errors(10))["errors"]
    assert records[0]["type"] == "RuntimeError" and "tool getMetrics failed" in records[0]["where"]


async def test_a_timeout_raised_inside_a_handler_is_not_the_adapters_timeout(
    bench: ToolBench,
) -> None:
    class UpstreamRuntime(ProcessRuntime):
        def metrics(self, name: str | None = None, label: str | None = None) -> NoReturn:
            raise TimeoutError("metrics backend timed out")

    error = _error(
        await bench.adapter(runtime=UpstreamRuntime(bench.root, environ={})).call("getMetrics")
    )
    assert error == {"type": "internal_error", "message": "TimeoutError: metrics backend timed out"}
    assert bench.activities[-1]["status"] == "failed"


async def test_an_activity_callback_that_raises_does_not_break_the_call(bench: ToolBench) -> None:
    def explode(activity: dict[str, Any]) -> None:
        raise RuntimeError("listener bug")

    assert (await bench.adapter(on_activity=explode).call("getMetrics")).ok


# Size cap ------------------------------------------------------------------------------


async def test_oversized_output_becomes_a_valid_truncation_object(bench: ToolBench) -> None:
    async def flood(context: CommandContext) -> None:
        for _ in range(20):  # each response under the sanitiser's string cap, all over 32 KiB
            context.respond('"quoted" ünïcode line\n' * 150)

    bench.registry.register(CommandSpec("flood", "Too much.", flood))
    adapter = bench.adapter(allowlist=Allowlist.of(["flood"]))
    result = await adapter.call("runCommand", {"commandId": "flood"})
    assert result.ok
    assert len(result.text.encode("utf-8")) <= 32 * 1024
    parsed = json.loads(result.text)
    assert parsed == result.content
    assert parsed["truncated"] is True
    assert parsed["originalBytes"] > 32 * 1024
    assert parsed["preview"].startswith('{"id":"flood","command":"/sz-flood"')
    assert "over the 32768-byte limit" in parsed["message"]


@pytest.mark.parametrize("limit", [120, 200, 500, 1000, 4096])
def test_fit_output_never_exceeds_the_limit(limit: int) -> None:
    value = {"text": '"\\ü' * 3000}
    content, text = fit_output(value, limit)
    assert len(text.encode("utf-8")) <= limit
    assert json.loads(text) == content
    assert content["truncated"] is True


def test_fit_output_keeps_small_values() -> None:
    assert fit_output({"a": 1}, 100) == ({"a": 1}, '{"a":1}')


# Sanitising ----------------------------------------------------------------------------


async def test_secrets_are_redacted_from_tool_output(bench: ToolBench) -> None:
    slack = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
    github = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

    class LeakyRuntime(ProcessRuntime):
        def status(self) -> dict[str, Any]:  # type: ignore[override]  # a host's own JSON
            return {
                "ok": True,
                "headers": {"Authorization": "Bearer abc", "cookie": "sid=1"},
                "deploy": [{"log": f"pushed with {github}"}, {"log": f"notified {slack}"}],
                "telemetryHistory": [1, 2, 3],
            }

    result = await bench.adapter(runtime=LeakyRuntime(bench.root, environ={})).call("getStatus")
    assert result.ok
    for secret in (github, slack, "Bearer abc", "sid=1"):
        assert secret not in result.text
    assert "telemetryHistory" not in result.content
    assert result.content["headers"] == {"Authorization": "[REDACTED]", "cookie": "[REDACTED]"}


async def test_sensitive_command_input_stays_out_of_activities_and_audit(bench: ToolBench) -> None:
    result = await bench.adapter().call(
        "runCommand", {"commandId": "hash", "text": "pbkdf2 sha256 1000 hunter2 NaCl"}
    )
    assert result.ok and result.content["responses"] == []  # a secret output stays out
    assert "derived key" not in result.text and "run /sz-hash themselves" in result.text
    assert bench.activities[-1]["arguments"] == {"commandId": "hash", "text": "[REDACTED]"}
    assert bench.audit.read()[-1]["arguments"] == {"text": "[REDACTED]"}
    assert "hunter2" not in (bench.root.parent / "audit.log").read_text()


# Tools ---------------------------------------------------------------------------------


async def test_run_command_success_activity_and_audit(bench: ToolBench) -> None:
    who = Identity(user_id="U1", user_name="ada", channel_id="C1", team_id="T1")
    result = await bench.adapter().call(
        "runCommand", '{"commandId": "echo", "text": "hello"}', identity=who
    )
    assert result.ok
    assert result.content == {"id": "echo", "command": "/sz-echo", "responses": [{"text": "hello"}]}
    activity = bench.activities[-1]
    assert activity["stage"] == "tool" and activity["type"] == "command_tool"
    assert activity["tool"] == "runCommand" and activity["status"] == "completed"
    assert activity["endpoint"] == "/api/commands/run"
    assert activity["arguments"] == {"commandId": "echo", "text": "hello"}
    assert activity["durationMs"] >= 0 and activity["message"].startswith("runCommand completed")
    record = bench.audit.read()[-1]
    assert record["identity"] == {
        "userId": "U1",
        "userName": "ada",
        "channelId": "C1",
        "teamId": "T1",
    }
    assert (record["command"], record["outcome"], record["arguments"]) == (
        "echo",
        "ok",
        {"text": "hello"},
    )
    metrics = public_dict(bench.runtime.metrics())
    assert metrics["commands"]["echo"]["count"] == 1
    assert metrics["toolCalls"]["runCommand"]["count"] == 1


async def test_get_commands(bench: ToolBench) -> None:
    adapter = bench.adapter()
    ids = (await adapter.call("getCommands")).content
    assert ids == {"commands": bench.registry.ids()}
    one = (await adapter.call("getCommands", {"id": "hash"})).content["command"]
    assert one["name"] == "/sz-hash" and one["runnable"] is True
    ask = (await adapter.call("getCommands", {"id": "ask"})).content["command"]
    assert ask["runnable"] is False
    assert (
        _error(await adapter.call("getCommands", {"id": "/sz-hash"}))["type"] == "unknown_command"
    )
    crypto = (await adapter.call("getCommands", {"category": "CRYPTO"})).content
    assert [c["id"] for c in crypto["commands"]] == ["hash", "token", "uuid"]
    combined = (await adapter.call("getCommands", {"category": "crypto", "text": "hex"})).content
    assert [c["id"] for c in combined["commands"]] == ["token"]
    in_numbers = await adapter.call("getCommands", {"category": "numbers", "text": "random"})
    assert [c["id"] for c in in_numbers.content["commands"]] == ["random"]
    narrowed = await adapter.call("getCommands", {"category": "crypto", "description": "uuid"})
    assert [c["id"] for c in narrowed.content["commands"]] == ["uuid"]
    usage = await adapter.call("getCommands", {"usageHint": "NdM"})
    assert [c["id"] for c in usage.content["commands"]] == ["roll"]
    assert (await adapter.call("getCommands", {"name": "zzz"})).content == {
        "commands": [],
        "count": 0,
    }
    assert bench.activities[-1]["endpoint"] == "/api/commands"
    assert bench.activities[-1]["type"] == "api_request"


async def test_get_status(bench: ToolBench) -> None:
    content = (await bench.adapter().call("getStatus")).content
    assert content["service"] == "szrag"
    assert content["index"]["available"] is False
    assert content["repository"]["root"] == str(bench.root.resolve())


async def test_get_release_info(bench: ToolBench) -> None:
    (bench.root / "CHANGELOG.md").write_text(
        "# Changes\n\n## v2.0.0 (2024-06-01)\n- Big.\n\n## v1.0.0\n- First.\n"
    )
    adapter = bench.adapter()
    latest = (await adapter.call("getReleaseInfo")).content
    assert latest["latest"] == {
        "version": "2.0.0",
        "date": "2024-06-01",
        "title": "v2.0.0 (2024-06-01)",
        "notes": "- Big.",
    }
    assert latest["history"] == {"file": "CHANGELOG.md", "versions": ["2.0.0", "1.0.0"], "count": 2}
    one = (await adapter.call("getReleaseInfo", {"version": "1.0.0"})).content
    assert one["found"] is True and one["release"]["notes"] == "- First."


async def test_get_logs_and_errors(bench: ToolBench) -> None:
    log = logging.getLogger("szrag.test_tools")
    log.setLevel(logging.INFO)
    try:
        for number in range(15):
            log.warning("event %d with password=hunter2", number)
        try:
            raise KeyError("missing thing")
        except KeyError:
            log.exception("lookup failed")
    finally:
        log.setLevel(logging.NOTSET)
    adapter = bench.adapter()
    logs = (await adapter.call("getLogs")).content["entries"]
    assert len(logs) == 10
    assert logs[-1]["message"] == "lookup failed" and logs[-1]["level"] == "error"
    assert logs[0]["message"] == "event 6 with password=[REDACTED]"  # 16 logged, last 10
    errors_only = (await adapter.call("getLogs", {"limit": 5, "level": "error"})).content["entries"]
    assert [entry["message"] for entry in errors_only] == ["lookup failed"]
    errors = (await adapter.call("getErrors")).content["errors"]
    assert errors[0]["type"] == "KeyError" and "stack" not in errors[0]
    with_stack = (await adapter.call("getErrors", {"includeStack": True})).content["errors"]
    assert "Traceback" in with_stack[0]["stack"]
    assert bench.activities[-1]["endpoint"] == "/api/admin/errors"


async def test_get_metrics(bench: ToolBench) -> None:
    adapter = bench.adapter()
    await adapter.call("runCommand", {"commandId": "ping"})
    await adapter.call("runCommand", {"commandId": "calc", "text": "x"})
    metrics = (await adapter.call("getMetrics")).content
    assert metrics["commandsExecuted"] == 2 and metrics["commandsFailed"] == 1
    assert metrics["commands"]["calc"]["lastStatus"] == "bad_input"
    assert metrics["uniqueUsers"] == 1 and metrics["bySource"] == {"tool": 2}


EXPRESS_APP = """const express = require("express");
const app = express();
app.get("/api/status", function status(req, res) { res.json({}); });
app.post("/api/ask", ask);
app.delete("/api/feedback/:id", removeFeedback);
"""


@pytest.fixture
def indexed_repo(bench: ToolBench) -> Path:
    (bench.root / "server.js").write_text(EXPRESS_APP)
    (bench.root / "README.md").write_text("# App\n")
    build_index(bench.root).close()
    return bench.root


async def test_get_routes(bench: ToolBench, indexed_repo: Path) -> None:
    adapter = bench.adapter()
    content = (await adapter.call("getRoutes")).content
    assert content["count"] == 3 and content["truncated"] is False
    assert content["routes"][0] == {
        "method": "POST",
        "route": "/api/ask",
        "path": "server.js",
        "line": 4,
        "handler": "ask",
    }
    gets = (await adapter.call("getRoutes", {"method": "get"})).content["routes"]
    assert [route["route"] for route in gets] == ["/api/status"]
    feedback = (await adapter.call("getRoutes", {"route": "FEEDBACK", "limit": 1})).content
    assert [route["method"] for route in feedback["routes"]] == ["DELETE"]


async def test_get_routes_without_an_index(bench: ToolBench) -> None:
    error = _error(await bench.adapter().call("getRoutes"))
    assert error["type"] == "unavailable"
    assert "run `szrag index` first" in error["message"]


def test_definitions_are_the_openai_tools(bench: ToolBench) -> None:
    names = [definition["function"]["name"] for definition in bench.adapter().definitions()]
    assert names == [
        "getStatus",
        "getCommands",
        "getReleaseInfo",
        "runCommand",
        "getLogs",
        "getErrors",
        "getMetrics",
        "getRoutes",
    ]


async def test_a_subprocess_command_is_killed_by_the_tool_timeout(
    bench: ToolBench, tmp_path: Path
) -> None:
    from szrag.commands import run_process

    pid_file = tmp_path / "pid"

    async def shell(context: CommandContext) -> None:
        result = await run_process(["sh", "-c", f"echo $$ > {pid_file}; exec sleep 30"])
        context.respond(result.stdout)

    bench.registry.register(CommandSpec("shell", "Runs a shell.", shell))
    adapter = bench.adapter(allowlist=Allowlist.of(["shell"]), timeout=0.5)
    assert _error(await adapter.call("runCommand", {"commandId": "shell"}))["type"] == "timeout"
    pid = int(pid_file.read_text())
    for _ in range(200):
        stat = Path(f"/proc/{pid}/stat")
        if not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the subprocess outlived its command")
