"""``szrag mcp`` as a client sees it: the SDK's own client against the real server process,
over stdio and over streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

FIXTURES = Path(__file__).parent.parent / "fixtures"
PLANTED = tuple(
    line
    for line in (FIXTURES / "secrets_app.planted").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
)
CODE_TOOLS = {
    "search_code",
    "get_context",
    "find_symbols",
    "find_references",
    "read_code",
    "find_routes",
    "get_dependencies",
    "get_dependants",
    "find_environment_variable",
}
LIVE_TOOLS = {
    "get_status",
    "get_commands",
    "get_release_info",
    "run_command",
    "get_logs",
    "get_errors",
    "get_metrics",
    "get_routes",
}
# a log line of the running application with credentials in it, read by get_logs and get_errors
LOG_LINE = (
    "2026-12-01T10:00:00Z ERROR payment failed for https://admin:FAKElogPassw0rd@db.internal/x"
    " api_key=FAKEloggedApiKey0123 with ghp_FAKEfake0123456789FAKEfake0123456789\n"
)
LOG_SECRETS = ("FAKElogPassw0rd", "FAKEloggedApiKey0123")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A small FastAPI application with every kind of planted secret beside it, in git."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "python_app", root)
    shutil.copytree(FIXTURES / "secrets_app", root / "ops")
    (root / "logs").mkdir()
    (root / "logs" / "app.log").write_text(LOG_LINE, encoding="utf-8")
    (root / ".gitignore").write_text("logs/\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def server_environment(root: Path, **extra: str) -> dict[str, str]:
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AI_", "SZRAG_", "SLACK_"))
    }
    environ.update(
        SZRAG_LOG_FILES=str(root / "logs" / "app.log"),
        SZRAG_COMMAND_ALLOWLIST="ping,echo",
        SZRAG_WATCH_DEBOUNCE_MS="50",
    )
    environ.update(extra)
    return environ


@asynccontextmanager
async def stdio_session(root: Path, **extra: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "szrag", "mcp", "--root", str(root)],
        env=server_environment(root, **extra),
    )
    async with Client(params) as client:
        yield client


def payload(result: Any) -> Any:
    """The JSON a tool result carries (its text and its structured form agree)."""
    text = result.content[0].text
    assert json.loads(text) == result.structured_content
    return result.structured_content


def keys_of(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from keys_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys_of(item)


async def test_lists_code_and_live_tools_with_strict_schemas(repository: Path) -> None:
    async with stdio_session(repository) as client:
        listed = (await client.list_tools()).tools
        assert client.server_info is not None and client.server_info.name == "szrag"
    names = {tool.name for tool in listed}
    assert names == CODE_TOOLS | LIVE_TOOLS  # stdio: the person's own agent gets get_errors
    for tool in listed:
        assert tool.description
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False, tool.name
    by_name = {tool.name: tool for tool in listed}
    assert by_name["search_code"].input_schema["required"] == ["question"]
    assert by_name["search_code"].annotations is not None
    assert by_name["search_code"].annotations.read_only_hint is True


async def test_every_tool_answers_from_the_repository(repository: Path) -> None:
    async with stdio_session(repository) as client:
        search = payload(await client.call_tool("search_code", {"question": "create an item"}))
        context = payload(
            await client.call_tool("get_context", {"question": "webhook signature", "budget": 2000})
        )
        symbols = payload(await client.call_tool("find_symbols", {"question": "require_token"}))
        calls = payload(await client.call_tool("find_references", {"name": "load_settings"}))
        read = payload(
            await client.call_tool(
                "read_code", {"path": "app/auth.py", "start_line": 14, "end_line": 14}
            )
        )
        routes = payload(await client.call_tool("find_routes", {"method": "DELETE"}))
        deps = payload(await client.call_tool("get_dependencies", {"path": "app/main.py"}))
        dependants = payload(await client.call_tool("get_dependants", {"path": "app/settings.py"}))
        env = payload(await client.call_tool("find_environment_variable", {"name": "database_url"}))
        live = {
            name: payload(await client.call_tool(name, {}))
            for name in sorted(LIVE_TOOLS - {"run_command"})
        }
        ping = payload(await client.call_tool("run_command", {"commandId": "ping"}))
    assert search["sources"] and all(
        {"path", "start", "end", "text", "score"} <= set(source) for source in search["sources"]
    )
    assert any(source["path"].startswith("app/routers/items.py") for source in search["sources"])
    assert context["tokens"] <= 2000 and context["text"] and context["files"]
    assert "app/routers/webhooks.py" in context["files"]
    assert symbols["symbols"][0]["name"] == "require_token"
    assert read == {
        "path": "app/auth.py",
        "startLine": 14,
        "endLine": 14,
        "moreLines": True,
        "text": '14:     expected = f"Bearer {load_settings().api_token}"',
    }
    assert symbols["symbols"][0]["endLine"] >= symbols["symbols"][0]["line"]
    assert {
        "path": "app/auth.py",
        "line": 14,
        "name": "load_settings",
        "caller": "require_token",
        "text": 'expected = f"Bearer {load_settings().api_token}"',
    } in calls["references"]
    assert [(route["method"], route["route"], route["path"]) for route in routes["routes"]] == [
        ("DELETE", "/items/{item_id}", "app/routers/items.py")  # under the include_router prefix
    ]
    assert "app/routers/items.py" in deps["dependencies"]
    assert "app/main.py" in dependants["dependants"] or dependants["dependants"]
    assert {reference["path"] for reference in env["references"]} == {"app/settings.py"}
    assert live["get_status"]["service"] == "szrag"
    assert any(route["route"] == "/items/{item_id}" for route in live["get_routes"]["routes"])
    assert live["get_logs"]["entries"], live["get_logs"]
    assert "ping" in live["get_commands"]["commands"]
    assert "pong" in json.dumps(ping).lower()
    every_key = set(keys_of([search, context, symbols, calls, routes, deps, env, *live.values()]))
    assert not {key for key in every_key if "_" in key and not key.startswith("_")} - {
        # mapping keys that are data, not field names
        key
        for key in every_key
        if "/" in key or "." in key
    }


async def test_bad_arguments_are_errors_the_model_can_correct(repository: Path) -> None:
    async with stdio_session(repository) as client:
        wrong_type = await client.call_tool("search_code", {"question": 3})
        extra = await client.call_tool("find_symbols", {"question": "x", "colour": "red"})
        unindexed = await client.call_tool("get_dependencies", {"path": "main.py"})
        bad_live = await client.call_tool("get_logs", {"limit": "ten"})
        with pytest.raises(MCPError, match="unknown tool"):
            await client.call_tool("drop_tables", {})
    assert wrong_type.is_error
    assert "question: expected a string" in payload(wrong_type)["error"]["message"]
    assert extra.is_error and "'colour'" in payload(extra)["error"]["message"]
    assert unindexed.is_error
    assert "did you mean app/main.py" in payload(unindexed)["error"]["message"]
    assert bad_live.is_error and "limit" in payload(bad_live)["error"]["message"]


async def test_commands_follow_the_allowlist_and_never_ask(repository: Path) -> None:
    async with stdio_session(repository) as client:
        hashed = await client.call_tool(
            "run_command", {"commandId": "hash", "text": "sha256 hello"}
        )
        asked = await client.call_tool("run_command", {"commandId": "ask", "text": "why?"})
        echoed = await client.call_tool("run_command", {"commandId": "echo", "text": "hello"})
    assert hashed.is_error and payload(hashed)["error"]["type"] == "not_allowed"
    assert asked.is_error and payload(asked)["error"]["type"] in {"blocked", "not_allowed"}
    assert not echoed.is_error and "hello" in json.dumps(payload(echoed))


async def test_a_planted_secret_never_appears_in_any_result(repository: Path) -> None:
    question = "gateway settings, service account, deploy credentials and the payment error"
    seen: list[str] = []
    async with stdio_session(repository) as client:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("search_code", {"question": question, "limit": 20}),
            ("get_context", {"question": question, "budget": 20000, "limit": 20}),
            ("find_symbols", {"question": "settings token secret"}),
            ("find_routes", {}),
            ("find_environment_variable", {"name": "API_TOKEN"}),
            ("get_dependencies", {"path": "ops/server/settings.js"}),
            ("get_logs", {"limit": 50}),
            ("get_errors", {"includeStack": True}),
            ("get_status", {}),
            ("get_release_info", {}),
            ("get_metrics", {}),
        ]
        for name, args in calls:
            result = await client.call_tool(name, args)
            seen.append(getattr(result.content[0], "text", ""))
            seen.append(json.dumps(result.structured_content))
        cursor: str | None = None
        uris: list[str] = []
        while True:
            page = await client.list_resources(cursor=cursor)
            uris += [resource.uri for resource in page.resources]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert "szrag://file/ops/config/gateway.yml" in uris
        for uri in uris:
            contents = (await client.read_resource(uri)).contents
            seen += [getattr(item, "text", "") for item in contents]
        prompt = await client.get_prompt("answer_about_repository", {"question": question})
        seen += [getattr(message.content, "text", "") for message in prompt.messages]
    everything = "\n".join(seen)
    assert "ops/config/gateway.yml" in everything  # the files were read, only their secrets hidden
    leaked = [secret for secret in (*PLANTED, *LOG_SECRETS) if secret in everything]
    assert leaked == []


async def test_resources_are_indexed_files_only(repository: Path) -> None:
    async with stdio_session(repository) as client:
        main = (await client.read_resource("szrag://file/app/main.py")).contents[0]
        with pytest.raises(MCPError, match="no indexed file"):
            await client.read_resource("szrag://file/../../etc/passwd")
        with pytest.raises(MCPError, match="no indexed file"):
            await client.read_resource("szrag://file/logs/app.log")  # ignored by git
        with pytest.raises(MCPError, match="cursor"):
            await client.list_resources(cursor="not-a-cursor")
        templates = (await client.list_resource_templates()).resource_templates
    assert "include_router" in getattr(main, "text", "")
    assert templates[0].uri_template == "szrag://file/{+path}"


async def test_the_index_follows_edits_while_serving(repository: Path) -> None:
    async with stdio_session(repository) as client:
        before = payload(await client.call_tool("find_symbols", {"question": "reticulate_splines"}))
        (repository / "app" / "splines.py").write_text(
            "def reticulate_splines(count):\n    return count * 2\n", encoding="utf-8"
        )
        deadline = time.monotonic() + 20
        found: list[dict[str, Any]] = []
        while time.monotonic() < deadline and not found:
            await asyncio.sleep(0.2)
            result = payload(
                await client.call_tool("find_symbols", {"question": "reticulate_splines"})
            )
            found = [item for item in result["symbols"] if item["name"] == "reticulate_splines"]
    assert not [item for item in before["symbols"] if item["name"] == "reticulate_splines"]
    assert found and found[0]["path"] == "app/splines.py"


def test_the_process_ends_cleanly_when_the_client_closes_stdin(repository: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "szrag", "mcp", "--root", str(repository)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_environment(repository),
    )
    out, err = process.communicate(input=b"", timeout=60)
    assert process.returncode == 0, err.decode()
    assert out == b""  # nothing but the protocol ever goes to stdout
    assert b"Traceback" not in err


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def http_server(repository: Path) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "szrag",
            "mcp",
            "--http",
            "--port",
            str(port),
            "--root",
            str(repository),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_environment(
            repository, SZRAG_API_TOKENS="reader-token", SZRAG_ADMIN_TOKEN="admin-token"
        ),
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(process.stderr.read().decode() if process.stderr else "")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def test_http_transport_follows_the_api_token_rules(http_server: str) -> None:
    async with httpx2.AsyncClient() as plain:
        refused = await plain.post(http_server, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401
    async with http_session(http_server, "reader-token") as reader:
        reader_tools = {tool.name for tool in (await reader.list_tools()).tools}
        found = payload(await reader.call_tool("search_code", {"question": "list the items"}))
        with pytest.raises(MCPError, match="unknown tool"):
            await reader.call_tool("get_errors", {})
    async with http_session(http_server, "admin-token") as admin:
        admin_tools = {tool.name for tool in (await admin.list_tools()).tools}
    assert reader_tools == CODE_TOOLS | LIVE_TOOLS - {"get_errors"}
    assert admin_tools == CODE_TOOLS | LIVE_TOOLS
    assert found["sources"][0]["path"].startswith("app/")
