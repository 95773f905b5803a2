"""The CLI: szrag commands, run, tool and use-tool."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from szrag.cli import tool_cmds


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> click.Group:
    monkeypatch.delenv("SZRAG_AUDIT_LOG", raising=False)
    monkeypatch.delenv("SZRAG_LOG_FILE", raising=False)

    @click.group()
    def szrag() -> None:
        """Test group."""

    tool_cmds.register(szrag)
    return szrag


def _invoke(cli: click.Group, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_every_command_has_help(cli: click.Group) -> None:
    for name in ("commands", "run", "tool", "use-tool"):
        code, out, _ = _invoke(cli, name, "--help")
        assert code == 0 and "Usage:" in out, name
        command = cli.commands[name]
        assert command.help and command.help.strip()


def test_commands_lists_the_registry(cli: click.Group) -> None:
    code, out, _ = _invoke(cli, "commands", "--json")
    assert code == 0
    rows = {row["id"]: row for row in json.loads(out)["commands"]}
    assert rows["ask"]["allowlisted"] is False and rows["ping"]["allowlisted"] is True
    assert rows["hash"]["name"] == "/sz-hash"
    code, out, _ = _invoke(cli, "commands")
    assert code == 0 and "/sz-roll" in out


def test_run_prints_responses_and_audits(cli: click.Group, tmp_path: Path) -> None:
    code, out, _ = _invoke(cli, "run", "calc", "2^8", "+", "1", "--root", str(tmp_path))
    assert (code, out) == (0, "2^8 + 1 = 257\n")
    code, out, _ = _invoke(cli, "run", "/sz-random", "-3", "-3", "--root", str(tmp_path), "--json")
    assert code == 0
    assert json.loads(out) == {
        "id": "random",
        "command": "/sz-random",
        "responses": [{"text": "-3"}],
    }
    lines = (tmp_path / ".rag" / "audit.log").read_text().splitlines()
    assert [json.loads(line)["command"] for line in lines] == ["calc", "random"]
    assert json.loads(lines[0])["source"] == "cli"


def test_run_reports_failures(cli: click.Group, tmp_path: Path) -> None:
    code, _, err = _invoke(cli, "run", "pnig", "--root", str(tmp_path))
    assert code == 2 and "unknown command 'pnig'; did you mean ping?" in err
    code, _, err = _invoke(cli, "run", "calc", "1/0", "--root", str(tmp_path))
    assert code == 2 and "calc: division by zero" in err
    assert "Traceback" not in err


def test_run_bypasses_the_allowlist_for_the_person_at_the_terminal(
    cli: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SZRAG_COMMAND_ALLOWLIST", "")
    code, out, _ = _invoke(cli, "run", "ping", "--root", str(tmp_path))
    assert (code, out) == (0, "pong\n")
    code, out, _ = _invoke(
        cli, "tool", "runCommand", "--commandId", "ping", "--root", str(tmp_path)
    )
    assert code == 1 and json.loads(out)["error"]["type"] == "not_allowed"


def test_tool_with_arguments(cli: click.Group, tmp_path: Path) -> None:
    code, out, _ = _invoke(
        cli,
        "tool",
        "runCommand",
        "--commandId",
        "echo",
        "--text=hello there",
        "--root",
        str(tmp_path),
    )
    assert code == 0
    assert json.loads(out)["responses"] == [{"text": "hello there"}]
    code, out, _ = _invoke(
        cli,
        "tool",
        "getErrors",
        "--includeStack",
        "--limit",
        "2",
        "--json",
        "--root",
        str(tmp_path),
    )
    assert code == 0
    result = json.loads(out)
    assert (
        result["ok"] is True
        and result["name"] == "getErrors"
        and result["content"] == {"errors": []}
    )


def test_tool_failures_exit_non_zero(cli: click.Group, tmp_path: Path) -> None:
    code, out, err = _invoke(cli, "tool", "getLogs", "--limit", "50", "--root", str(tmp_path))
    assert code == 1
    assert json.loads(out)["error"]["message"] == "limit: must be at most 10"
    assert "limit: must be at most 10" in err
    code, _, err = _invoke(cli, "tool", "getWeather")
    assert code == 2 and "unknown tool 'getWeather'" in err
    code, _, err = _invoke(cli, "tool", "getLogs", "--limit")
    assert code == 2 and "--limit needs a value" in err


def test_use_tool_get_status(cli: click.Group, tmp_path: Path) -> None:
    code, out, _ = _invoke(cli, "use-tool", "--getStatus", "--root", str(tmp_path))
    assert code == 0
    status = json.loads(out)
    assert status["service"] == "szrag" and status["repository"]["root"] == str(tmp_path.resolve())


def test_use_tool_help_after_the_tool_flag(cli: click.Group) -> None:
    code, out, _ = _invoke(cli, "use-tool", "--getCommands", "--help")
    assert code == 0
    assert out.startswith("getCommands  (endpoint /api/commands, api_request)")
    schema_text = out.split("Arguments (JSON schema):\n", 1)[1].split("\n\n", 1)[0]
    assert json.loads(schema_text)["additionalProperties"] is False


def test_tool_help_and_overview(cli: click.Group) -> None:
    code, out, _ = _invoke(cli, "tool", "runCommand", "--help")
    assert code == 0 and '"maxLength": 500' in out
    code, out, _ = _invoke(cli, "use-tool")
    assert code == 0 and "getRoutes" in out and "runCommand never runs: ask" in out
    code, _, err = _invoke(cli, "use-tool", "--nothing")
    assert code == 2 and "name a tool" in err
