"""``szrag mcp`` over several repositories, as a client sees it: the SDK's own client against
the real server process over stdio. Every code tool takes ``repository`` (an enum of the names
served); without one the searching tools route their question and the others ask the first;
each result names its repository; an unknown name is a tool error listing the known ones."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError, StdioServerParameters

FILES = {
    "mailer": {
        "src/welcome.py": "import os\n\n"
        "def send_welcome_email(user):\n"
        "    # the welcome e-mail every new user receives\n"
        "    host = os.environ['SMTP_HOST']\n"
        "    return smtp_deliver(host, user.email, template='welcome')\n",
    },
    "billing": {
        "src/invoice.py": "import os\n\n"
        "def render_invoice(order):\n"
        "    # an invoice with its tax lines\n"
        "    rate = os.environ['VAT_RATE']\n"
        "    return pdf(order.lines, tax=rate)\n",
        "src/report.py": "from src.invoice import render_invoice\n\n"
        "def monthly_report(orders):\n"
        "    return [render_invoice(order) for order in orders]\n",
    },
}


@pytest.fixture
def folders(write_folders: Callable[..., dict[str, Path]]) -> dict[str, Path]:
    return write_folders(FILES)


@asynccontextmanager
async def session(*options: str) -> AsyncIterator[Client]:
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AI_", "SZRAG_", "SLACK_"))
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "szrag", "mcp", "--no-watch", *options],
        env={**environ, "SZRAG_AUDIT_LOG": "off"},
    )
    async with Client(params) as client:
        yield client


def payload(result: Any) -> Any:
    text = result.content[0].text
    assert json.loads(text) == result.structured_content
    return result.structured_content


async def test_every_code_tool_takes_a_repository(folders: dict[str, Path]) -> None:
    options = [f"--repo=mailer={folders['mailer']}", f"--repo=billing={folders['billing']}"]
    async with session(*options) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        routed = payload(await client.call_tool("search_code", {"question": "invoice tax lines"}))
        named = payload(
            await client.call_tool(
                "search_code", {"question": "invoice tax lines", "repository": "mailer"}
            )
        )
        context = payload(
            await client.call_tool("get_context", {"question": "welcome e-mail for new users"})
        )
        first = payload(await client.call_tool("find_symbols", {"question": "render_invoice"}))
        symbols = payload(
            await client.call_tool(
                "find_symbols", {"question": "render_invoice", "repository": "billing"}
            )
        )
        dependants = payload(
            await client.call_tool(
                "get_dependants", {"path": "src/invoice.py", "repository": "billing"}
            )
        )
        env = payload(
            await client.call_tool(
                "find_environment_variable", {"name": "VAT_RATE", "repository": "billing"}
            )
        )
        missing = await client.call_tool("get_dependants", {"path": "src/invoice.py"})
        unknown = await client.call_tool(
            "search_code", {"question": "anything", "repository": "mobile"}
        )
        [listed_file] = (await client.list_resources()).resources  # the first repository's
        invoice = (
            await client.read_resource("szrag://file/src/invoice.py?repository=billing")
        ).contents[0]
        with pytest.raises(MCPError, match="no indexed file"):
            await client.read_resource("szrag://file/src/invoice.py")
        with pytest.raises(MCPError, match="mailer, billing"):
            await client.read_resource("szrag://file/src/invoice.py?repository=mobile")
        templates = (await client.list_resource_templates()).resource_templates
        [prompt_listed] = (await client.list_prompts()).prompts
        prompted = await client.get_prompt("answer_about_repository", {"question": "invoice tax"})
        asked = await client.get_prompt(
            "answer_about_repository", {"question": "invoice tax", "repository": "mailer"}
        )
        with pytest.raises(MCPError, match="mailer, billing"):
            await client.get_prompt(
                "answer_about_repository", {"question": "invoice", "repository": "mobile"}
            )

    assert str(listed_file.uri) == "szrag://file/src/welcome.py"
    assert str(invoice.uri) == "szrag://file/src/invoice.py?repository=billing"
    assert "def render_invoice" in getattr(invoice, "text", "")
    assert [template.uri_template for template in templates] == [
        "szrag://file/{+path}",
        "szrag://file/{+path}{?repository}",
    ]
    assert [argument.name for argument in prompt_listed.arguments or []] == [
        "question",
        "repository",
    ]
    assert prompted.description is not None and prompted.description.startswith(
        "Answer about billing"
    )
    assert "src/invoice.py" in str(prompted.messages[-1].content)
    assert asked.description is not None and asked.description.startswith("Answer about mailer")
    for tool in listed.values():
        if tool.name in {"search_code", "get_context", "find_symbols", "get_dependants"}:
            choice = tool.input_schema["properties"]["repository"]
            assert choice["enum"] == ["mailer", "billing"], tool.name
            assert "repository" not in tool.input_schema["required"]
            assert tool.input_schema["additionalProperties"] is False
    assert routed["repository"] == "billing"
    assert routed["sources"][0]["path"] == "src/invoice.py"
    # naming no repository searches them all: each source names the repository it is from
    assert routed["sources"][0]["repository"] == "billing"
    assert all(source["repository"] in ("mailer", "billing") for source in routed["sources"])
    assert all(isinstance(source["sharedScore"], float) for source in routed["sources"])
    assert all("repository" not in source for source in named["sources"])
    assert named["repository"] == "mailer"
    assert all(source["path"] != "src/invoice.py" for source in named["sources"])
    assert context["repository"] == "mailer" and "src/welcome.py" in context["files"]
    assert first["repository"] == "mailer"  # no question routing: the first repository
    assert not any(symbol["name"] == "render_invoice" for symbol in first["symbols"])
    assert symbols["repository"] == "billing"
    assert symbols["symbols"][0]["name"] == "render_invoice"
    assert dependants == {
        "repository": "billing",
        "path": "src/invoice.py",
        "dependants": ["src/report.py"],
    }
    assert {item["path"] for item in env["references"]} == {"src/invoice.py"}
    assert missing.is_error  # the first repository has no such file
    assert unknown.is_error
    error = payload(unknown)["error"]
    assert error["type"] == "unknown_repository"
    assert "'mobile'" in error["message"] and "mailer, billing" in error["message"]


async def test_one_root_lists_its_tools_as_before(folders: dict[str, Path]) -> None:
    async with session("--root", str(folders["billing"])) as client:
        listed = (await client.list_tools()).tools
        unexpected = await client.call_tool(
            "search_code", {"question": "invoice", "repository": "billing"}
        )
        found = payload(await client.call_tool("search_code", {"question": "invoice"}))
    assert all("repository" not in tool.input_schema.get("properties", {}) for tool in listed)
    assert unexpected.is_error and "'repository'" in payload(unexpected)["error"]["message"]
    assert "repository" not in found and found["sources"][0]["path"] == "src/invoice.py"


async def test_a_service_file_is_served_too(folders: dict[str, Path], tmp_path: Path) -> None:
    service_file = tmp_path / "szrag.toml"
    service_file.write_text(
        f'[[repositories]]\nname = "billing"\npath = "{folders["billing"]}"\n', encoding="utf-8"
    )
    async with session("--config", str(service_file)) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "search_code")
        found = payload(await client.call_tool("search_code", {"question": "invoice"}))
    assert "enum" not in tool.input_schema["properties"]["repository"]  # one name: no enum
    assert found["repository"] == "billing"


def test_bad_repository_options_are_clear_errors(tmp_path: Path) -> None:
    import subprocess

    for options, said in (
        (["--repo", f"x={tmp_path / 'absent'}"], "is not a folder"),
        (["--repo", "nameless"], "give NAME=PATH"),
        (["--repo", f"a={tmp_path}", "--config", str(tmp_path / "s.toml")], "not both"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "szrag", "mcp", *options],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        assert done.returncode != 0 and said in done.stderr, (options, done.stderr)
        assert "Traceback" not in done.stderr and done.stdout == ""
