"""Live evidence from the running application: a real HTTP app on 127.0.0.1 and real log files
(a rotated, compressed one included) with a real traceback, read through the live tools."""

from __future__ import annotations

import gzip
import importlib.util
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from szrag.base.config import RuntimeConfig
from szrag.base.errors import ConfigError
from szrag.base.public import public_dict
from szrag.runtime.sources import ApplicationRuntime, RuntimeSources
from szrag.server.testing import serve_asgi
from szrag.service.host import Host

TOKEN = "app-token-123"


def application() -> Starlette:
    """A small service exposing the endpoints the original's tools name, behind a token."""

    def guarded(data: dict[str, Any]) -> Any:
        async def endpoint(request: Request) -> JSONResponse:
            if request.headers.get("authorization") != f"Bearer {TOKEN}":
                return JSONResponse({"ok": False, "error": "unauthorized"}, status_code=401)
            payload = dict(data)
            if request.query_params:
                payload["query"] = dict(request.query_params)
            return JSONResponse({"ok": True, "data": payload})

        return endpoint

    return Starlette(
        routes=[
            Route(
                "/api/status", guarded({"service": "shop", "version": "2.1.0", "commit": "abc1234"})
            ),
            Route("/api/metrics", guarded({"requests": 1200, "errors": 3})),
            Route("/api/logs", guarded({"entries": [{"level": "error", "message": "db down"}]})),
            Route("/api/admin/errors", guarded({"errors": [{"type": "KeyError", "count": 2}]})),
            Route("/api/release", guarded({"version": "2.1.0"})),
        ]
    )


@pytest.fixture
def app_url() -> Iterator[str]:
    with serve_asgi(application()) as base:
        yield base


async def call(host: Host, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    result = await host.tools().call(tool, arguments or {})
    return result


async def test_the_tools_read_the_applications_own_endpoints(tmp_path: Path, app_url: str) -> None:
    host = Host.from_env(tmp_path, {"SZRAG_RUNTIME_URL": app_url, "SZRAG_RUNTIME_TOKEN": TOKEN})

    status = await call(host, "getStatus")
    metrics = await call(host, "getMetrics")
    logs = await call(host, "getLogs", {"limit": 5, "level": "error"})
    errors = await call(host, "getErrors")

    assert status.ok and status.content["service"] == "shop"
    assert status.content["source"] == f"http {app_url}/api/status"
    assert metrics.content["requests"] == 1200
    assert logs.content["query"] == {"limit": "5", "level": "error"}
    assert errors.content["errors"][0]["type"] == "KeyError"
    assert TOKEN not in status.text  # the token never reaches the model


async def test_a_wrong_token_is_a_clear_tool_failure(tmp_path: Path, app_url: str) -> None:
    host = Host.from_env(tmp_path, {"SZRAG_RUNTIME_URL": app_url, "SZRAG_RUNTIME_TOKEN": "nope"})

    status = await call(host, "getStatus")

    assert not status.ok and "401" in (status.error or "")


def handler_module(root: Path) -> Any:
    """A repository file whose handler really raises, imported from its path."""
    source = root / "app" / "handlers.py"
    source.parent.mkdir(parents=True)
    source.write_text("def create_report(payload):\n    return payload['title'].upper()\n")
    spec = importlib.util.spec_from_file_location("handlers_under_test", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_logs(root: Path) -> None:
    """app.log with two real tracebacks of the handler; app.log.1.gz, older, rotated away."""
    handlers = handler_module(root)
    logs = root / "logs"
    logs.mkdir()
    with gzip.open(logs / "app.log.1.gz", "wt") as old:
        old.write("2026-11-30 09:00:00,000 INFO shop started\n")
    logger = logging.getLogger("shop.test_sources")
    logger.propagate = False
    handler = logging.FileHandler(logs / "app.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    try:
        logger.info("POST /api/report")
        for _ in range(2):
            try:
                handlers.create_report({})
            except KeyError:
                logger.exception("POST /api/report failed")
        logger.warning("slow query: 1200 ms")
    finally:
        logger.removeHandler(handler)
        handler.close()
    # the rotated file is the older one
    import os

    os.utime(logs / "app.log.1.gz", (1, 1))


async def test_logs_and_grouped_errors_come_from_the_log_files(tmp_path: Path) -> None:
    write_logs(tmp_path)
    host = Host.from_env(tmp_path, {"SZRAG_LOG_FILES": "logs/app.log"})

    everything = await call(host, "getLogs", {"limit": 10})
    errors_only = await call(host, "getLogs", {"limit": 10, "level": "error"})
    grouped = await call(host, "getErrors", {"includeStack": True})

    messages = [entry["message"] for entry in everything.content["entries"]]
    assert everything.content["source"] == "log files"
    assert "shop started" in messages[0]  # the rotated, compressed file comes first
    assert any("slow query" in message for message in messages)
    assert all(entry["level"] == "error" for entry in errors_only.content["entries"])
    (error,) = grouped.content["errors"]
    assert (error["type"], error["count"]) == ("KeyError", 2)
    assert error["where"] == {"path": "app/handlers.py", "line": 2}
    assert error["firstSeen"] and error["lastSeen"] and "create_report" in error["stack"]


async def test_without_sources_the_szrag_process_answers(tmp_path: Path) -> None:
    status = await call(Host.from_env(tmp_path, {}), "getStatus")

    assert status.ok and status.content["service"] == "szrag"


def test_a_public_address_needs_to_be_allowed() -> None:
    with pytest.raises(ConfigError, match="public address"):
        RuntimeSources.of(RuntimeConfig(url="http://93.184.216.34:8080"), {})
    allowed = RuntimeSources.of(
        RuntimeConfig(url="http://93.184.216.34:8080", allow_public=True), {}
    )
    assert allowed.url == "http://93.184.216.34:8080"
    with pytest.raises(ConfigError, match="http"):
        RuntimeSources.of(RuntimeConfig(url="ftp://127.0.0.1/"), {})


def test_the_repository_configuration_names_the_sources(tmp_path: Path) -> None:
    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "config.toml").write_text(
        '[runtime]\nurl = "http://127.0.0.1:9000/"\ntoken_env = "SHOP_TOKEN"\n'
        'log_files = ["logs/*.log"]\n'
    )

    host = Host.from_env(tmp_path, {"SHOP_TOKEN": "from-the-environment"})

    sources = host.repository.runtime
    assert sources.url == "http://127.0.0.1:9000/" and sources.log_files == ("logs/*.log",)
    live = host.live
    assert isinstance(live, ApplicationRuntime) and live.sources.token == "from-the-environment"
    (tmp_path / ".rag" / "config.toml").write_text("[runtime]\nurl = 5\n")
    with pytest.raises(ConfigError, match=r"runtime\.url"):
        Host.from_env(tmp_path, {})


def test_a_question_about_a_failing_route_gets_its_code_and_its_live_error(
    tmp_path: Path,
    provider_server: tuple[Any, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """End to end: the handler raises, the error is logged, and one model request carries both
    the handler's source and that error."""
    import json

    from click.testing import CliRunner

    from szrag.cli import main
    from szrag.llm.testing import text_reply

    provider, base_url = provider_server
    write_logs(tmp_path)  # app/handlers.py raises KeyError; logs/app.log holds the traceback
    (tmp_path / "app" / "routes.py").write_text(
        "from flask import Flask, request\n"
        "from app.handlers import create_report\n\n"
        "app = Flask(__name__)\n\n\n"
        '@app.route("/api/report", methods=["POST"])\n'
        "def report():\n"
        "    return create_report(request.get_json())\n"
    )
    (tmp_path / "README.md").write_text("# Shop\nReports are created by POST /api/report.\n")
    for name, value in {
        "AI_URL": base_url,
        "AI_API_KEY": "test-key",
        "AI_MODEL": "test-model",
        "SZRAG_AI_RETRIES": "0",
        "SZRAG_LOG_FILES": "logs/app.log",
        "SZRAG_TOOLS": "0",
    }.items():
        monkeypatch.setenv(name, value)
    provider.script(text_reply("create_report reads payload['title'], which is missing."))

    result = CliRunner().invoke(
        main, ["ask", "--root", str(tmp_path), "--json", "why does POST /api/report fail?"]
    )

    assert result.exit_code == 0, result.output
    sent = provider.requests[-1].json["messages"][1]["content"]
    assert "def create_report" in sent and "<live_evidence>" in sent
    assert "KeyError: 'title' (2 times" in sent and "app/handlers.py:2" in sent
    activities = json.loads(result.stdout)["activities"]
    joined = [a for a in activities if a["message"].startswith("Live evidence")]
    assert joined and joined[0]["metadata"]["errors"] == 1
    assert joined[0]["metadata"]["durationMs"] >= 0


def test_log_times_come_out_in_the_public_form() -> None:
    from szrag.runtime.sources import log_time, parse_entry

    assert log_time("2026-12-01T13:06:13.454Z") == "2026-12-01T13:06:13.454Z"
    assert log_time("2026-12-01 13:06:13,454+01:00") == "2026-12-01T12:06:13.454Z"
    assert log_time(0) == "1970-01-01T00:00:00.000Z"
    assert log_time("yesterday") is None
    entry = parse_entry('{"ts": "2026-12-01T10:00:00Z", "level": "WARNING", "msg": "slow"}')
    assert entry is not None and (entry["time"], entry["level"], entry["message"]) == (
        "2026-12-01T10:00:00.000Z",
        "warning",
        "slow",
    )


async def test_metrics_come_from_a_prometheus_exposition(tmp_path: Path) -> None:
    from prometheus_client import CollectorRegistry, Counter, generate_latest
    from starlette.responses import Response

    registry = CollectorRegistry()
    requests = Counter(
        "http_requests", "Requests served.", ["method", "route", "code"], registry=registry
    )
    requests.labels("post", "/api/report", "500").inc(7)
    requests.labels("get", "/api/items", "200").inc(120)

    async def exposition(request: Request) -> Response:
        return Response(generate_latest(registry), media_type="text/plain; version=0.0.4")

    with serve_asgi(Starlette(routes=[Route("/metrics", exposition)])) as base:
        host = Host.from_env(tmp_path, {"SZRAG_METRICS_URL": f"{base}/metrics"})
        failing = await call(host, "getMetrics", {"label": "route=/api/report"})
        requested = await call(host, "getMetrics", {"name": "requests_total"})

    assert failing.ok and failing.content["source"] == f"prometheus {base}/metrics"
    (sample,) = [s for s in failing.content["samples"] if s["name"] == "http_requests_total"]
    assert sample["labels"] == {"method": "post", "route": "/api/report", "code": "500"}
    assert sample["value"] == 7
    assert {s["value"] for s in requested.content["samples"]} == {7, 120}


async def test_the_process_runtime_ignores_metric_filters(tmp_path: Path) -> None:
    metrics = await call(Host.from_env(tmp_path, {}), "getMetrics", {"name": "commands"})

    assert metrics.ok and "commandsExecuted" in metrics.content


async def test_an_answer_says_when_the_running_release_is_older_than_the_cited_code(
    tmp_path: Path, provider_settings: Any, provider: Any
) -> None:
    import shutil
    import subprocess

    from szrag.llm.testing import text_reply
    from szrag.service.host import answer_question_async

    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(tmp_path), *args], check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    handlers = tmp_path / "app" / "handlers.py"
    handlers.parent.mkdir()
    handlers.write_text("def create_report(payload):\n    return payload['title']\n")
    git("init", "-q")
    git("-c", "user.email=a@b.c", "-c", "user.name=t", "add", ".")
    git("-c", "user.email=a@b.c", "-c", "user.name=t", "commit", "-qm", "first")
    released = git("rev-parse", "HEAD")
    for number in (2, 3):
        handlers.write_text(
            f"def create_report(payload):\n    return payload.get('title', {number})\n"
        )
        git("-c", "user.email=a@b.c", "-c", "user.name=t", "commit", "-qam", f"change {number}")

    async def status(request: Request) -> JSONResponse:
        return JSONResponse({"service": "shop", "commit": released})

    provider.script(text_reply("create_report returns the title."))
    with serve_asgi(Starlette(routes=[Route("/api/status", status)])) as base:
        host = Host.from_env(
            tmp_path, {"SZRAG_RUNTIME_URL": base}, settings=provider_settings(), live_tools=False
        )
        result = await answer_question_async("what does create_report return?", host)

    sent = provider.requests[-1].json["messages"][1]["content"]
    assert f"built from commit {released[:12]}" in sent
    assert "app/handlers.py changed in 2 commits" in sent
    assert result.answer.endswith("the code shown is newer than the code that runs.]")
    assert result.running_commit == released and result.to_dict()["runningCommit"] == released


def journal_records(root: Path) -> list[dict[str, Any]]:
    """Records in journalctl's JSON form (``-o json``) as a Python service under systemd
    leaves them: each line of a traceback is a record of its own."""
    stamp = 1_764_590_000_000_000  # microseconds, as __REALTIME_TIMESTAMP is written
    lines = [
        ("6", "POST /api/report"),
        ("3", "POST /api/report failed"),
        ("3", "Traceback (most recent call last):"),
        ("3", f'  File "{root}/app/handlers.py", line 2, in create_report'),
        ("3", "    return payload['title'].upper()"),
        ("3", "KeyError: 'title'"),
        ("4", "slow query: 1200 ms"),
    ]
    return [
        {
            "__REALTIME_TIMESTAMP": str(stamp + number * 1000),
            "PRIORITY": priority,
            "MESSAGE": message,
            "_SYSTEMD_UNIT": "shop.service",
        }
        for number, (priority, message) in enumerate(lines)
    ]


def test_journal_records_are_read_like_log_lines(tmp_path: Path) -> None:
    from szrag.runtime.sources import group_errors, journal_lines, parse_entry

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "handlers.py").write_text("x = 1\n")
    lines = journal_lines(journal_records(tmp_path))

    entries = [parse_entry(line) for line in lines]
    (group,) = group_errors(lines, tmp_path.resolve(), include_stack=False)
    error = public_dict(group)

    assert lines[0].endswith("INFO POST /api/report") and lines[0].startswith("2025-12-01T")
    assert [entry["level"] for entry in entries if entry][-1] == "warning"
    assert (error["type"], error["count"]) == ("KeyError", 1)
    assert error["where"] == {"path": "app/handlers.py", "line": 2}
    assert error["logged"].endswith("ERROR POST /api/report failed")


def test_the_journal_is_read_where_there_is_one(tmp_path: Path) -> None:
    import shutil
    import subprocess

    if shutil.which("journalctl") is None:
        pytest.skip("journalctl is not installed on this machine")
    if not (Path("/run/systemd/journal").exists() or Path("/var/log/journal").exists()):
        pytest.skip("this machine runs no systemd journal (a container): nothing to read")
    units = subprocess.run(
        ["journalctl", "-o", "json", "-n", "1", "--no-pager"], capture_output=True, text=True
    ).stdout
    if not units.strip():
        pytest.skip("the journal is empty")
    import json

    unit = json.loads(units.splitlines()[0]).get("_SYSTEMD_UNIT")
    if not unit:
        pytest.skip("the latest journal record belongs to no unit")
    host = Host.from_env(tmp_path, {"SZRAG_JOURNAL_UNIT": unit})
    live = host.live
    assert isinstance(live, ApplicationRuntime)
    logs = public_dict(live.logs(5))
    assert logs["source"] == f"journal of {unit}" and logs["entries"]


def test_a_journal_unit_must_be_a_unit_name() -> None:
    with pytest.raises(ConfigError, match="unit name"):
        RuntimeSources.of(RuntimeConfig(journal_unit="shop; rm -rf /"), {})


async def test_endpoints_can_be_moved_or_turned_off(tmp_path: Path) -> None:
    async def status(request: Request) -> JSONResponse:
        return JSONResponse({"service": "shop"})

    (tmp_path / ".rag").mkdir()
    with serve_asgi(Starlette(routes=[Route("/status.json", status)])) as base:
        (tmp_path / ".rag" / "config.toml").write_text(
            f'[runtime]\nurl = "{base}"\n[runtime.paths]\nstatus = "/status.json"\nlogs = false\n'
        )
        host = Host.from_env(tmp_path, {})
        moved = await call(host, "getStatus")
        turned_off = await call(host, "getLogs", {"limit": 2})

    assert moved.content == {"source": f"http {base}/status.json", "service": "shop"}
    assert turned_off.ok and turned_off.content["source"] == "szrag process"
    (tmp_path / ".rag" / "config.toml").write_text('[runtime.paths]\nstatus = "status"\n')
    with pytest.raises(ConfigError, match="paths"):
        Host.from_env(tmp_path, {})


async def test_the_model_learns_which_variables_the_running_application_has_set(
    tmp_path: Path, provider_settings: Any, provider: Any
) -> None:
    from szrag.llm.testing import text_reply
    from szrag.service.host import answer_question_async

    (tmp_path / "config.py").write_text(
        "import os\n\nDATABASE_URL = os.environ['DATABASE_URL']\nAPI_KEY = os.getenv('API_KEY')\n"
    )

    async def status(request: Request) -> JSONResponse:
        return JSONResponse(
            {"service": "shop", "environment": {"DATABASE_URL": True, "API_KEY": False}}
        )

    provider.script(text_reply("API_KEY is not set in the running service."))
    with serve_asgi(Starlette(routes=[Route("/api/status", status)])) as base:
        host = Host.from_env(
            tmp_path, {"SZRAG_RUNTIME_URL": base}, settings=provider_settings(), live_tools=False
        )
        await answer_question_async("why is API_KEY missing?", host)

    sent = provider.requests[-1].json["messages"][1]["content"]
    assert "Environment of the running application:" in sent
    assert "API_KEY not set" in sent and "DATABASE_URL set" in sent


def test_source_links_point_at_the_running_commit() -> None:
    from szrag.server.slack_blocks import answer_blocks, at_commit

    assert at_commit("https://github.com/o/r/blob/main", "abc1234") == (
        "https://github.com/o/r/blob/abc1234"
    )
    assert at_commit("https://gitlab.com/o/r/-/blob/dev/", "abc1234") == (
        "https://gitlab.com/o/r/-/blob/abc1234/"
    )
    assert at_commit("https://example.com/code", "abc1234") == "https://example.com/code"
    blocks = answer_blocks(
        {
            "answer": "See the handler.",
            "sources": [{"path": "app/handlers.py", "start": 1, "end": 2, "type": "python"}],
            "runningCommit": "abc1234",
        },
        question=None,
        repo_url="https://github.com/o/r/blob/main",
    )
    assert "https://github.com/o/r/blob/abc1234/app/handlers.py#L1-L2" in str(blocks)


async def test_logs_since_a_time_or_a_span(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "app.log").write_text(
        "2020-01-01T00:00:00Z INFO long ago\n2030-01-01T00:00:00Z ERROR in the future\n"
    )
    host = Host.from_env(tmp_path, {"SZRAG_LOG_FILES": "logs/app.log"})

    recent = await call(host, "getLogs", {"since": "2h"})
    dated = await call(host, "getLogs", {"since": "2019-12-31T00:00:00Z"})
    wrong = await call(host, "getLogs", {"since": "last tuesday"})

    assert [entry["message"] for entry in recent.content["entries"]] == [
        "2030-01-01T00:00:00Z ERROR in the future"
    ]
    assert len(dated.content["entries"]) == 2
    assert not wrong.ok and "ISO 8601" in (wrong.error or "")
    process = await call(Host.from_env(tmp_path, {}), "getLogs", {"since": "1m"})
    assert process.ok and process.content["entries"] == []  # szrag's own, nothing logged


def test_a_commit_file_names_the_running_commit(tmp_path: Path) -> None:
    from szrag.runtime.sources import running_commit

    (tmp_path / "REVISION").write_text("3f2a1c9d8e7b6a5f\n")
    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "config.toml").write_text('[runtime]\ncommit_file = "REVISION"\n')

    live = Host.from_env(tmp_path, {}).live

    assert isinstance(live, ApplicationRuntime) and running_commit(live) == "3f2a1c9d8e7b6a5f"
