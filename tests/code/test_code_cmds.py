"""The structure-graph commands, registered on a fresh group and run through click."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from szrag.cli.code_cmds import register

CopyFixture = Callable[[str], Path]


@pytest.fixture
def app_root(copy_fixture: CopyFixture) -> Path:
    return copy_fixture("express_app")


def run(*args: str) -> tuple[int, str, str]:
    group = click.Group("szrag")
    register(group)
    result = CliRunner().invoke(group, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_every_command_is_registered_with_help() -> None:
    group = click.Group("szrag")
    register(group)
    assert sorted(group.commands) == ["dependants", "deps", "env", "refs", "routes", "symbols"]
    for name, command in group.commands.items():
        assert command.help, name
        code, out, _ = run(name, "--help")
        assert code == 0 and "--root" in out and "--json" in out


def test_symbols_json_and_table(app_root: Path) -> None:
    code, out, _ = run("symbols", "verifyGithubSignature", "--root", str(app_root), "--json")
    assert code == 0
    first = json.loads(out)[0]
    assert first == {
        "path": "server/lib/github.js",
        "name": "verifyGithubSignature",
        "kind": "function",
        "container": None,
        "line": 9,
        "endLine": 18,
        "score": 160,
    }
    code, out, _ = run("symbols", "verifyGithubSignature", "--root", str(app_root), "--limit", "1")
    assert code == 0 and "server/lib/github.js:9-18" in out and "verifySlackRequest" not in out
    code, out, _ = run("symbols", "zebra", "--root", str(app_root))
    assert code == 0 and "no matching symbols" in out


def test_routes_with_and_without_a_question(app_root: Path) -> None:
    code, out, _ = run("routes", "--root", str(app_root), "--json")
    assert code == 0
    routes = json.loads(out)
    assert {
        "path": "server/metrics.js",
        "method": "GET",
        "route": "/healthz",
        "line": 12,
        "handler": "sendJson",
        "score": 0,
    } in routes
    code, out, _ = run("routes", "what does /healthz return", "--root", str(app_root), "--json")
    assert json.loads(out)[0]["route"] == "/healthz"
    code, out, _ = run("routes", "--root", str(app_root))
    assert code == 0 and "/webhooks" in out and "server/metrics.js:16" in out


def test_deps_and_dependants(app_root: Path) -> None:
    code, out, _ = run("deps", "server/lib/deploy.js", "--root", str(app_root), "--json")
    assert code == 0
    assert json.loads(out) == ["scripts/deploy.sh", "server/lib/logger.js", "server/lib/slack.js"]
    code, out, _ = run("dependants", "server/lib/github.js", "--root", str(app_root))
    assert code == 0 and out.split() == ["server/routes/webhook.js"]
    code, out, _ = run("dependants", "server/index.js", "--root", str(app_root))
    assert code == 0 and "no indexed file imports server/index.js" in out


def test_env(app_root: Path) -> None:
    code, out, _ = run("env", "admin_token", "--root", str(app_root), "--json")
    assert code == 0
    # two reads on one line of auth.js count once
    assert [(item["path"], item["line"]) for item in json.loads(out)] == [
        ("server/config.js", 21),
        ("server/middleware/auth.js", 16),
    ]
    code, out, _ = run("env", "ADMIN_TOKEN", "--root", str(app_root))
    assert code == 0 and "server/config.js:21  ADMIN_TOKEN" in out


def test_errors_go_to_stderr_with_an_exit_code(app_root: Path) -> None:
    code, out, err = run("deps", "server/missing.js", "--root", str(app_root))
    assert code == 2 and out == "" and "server/missing.js is not in the index" in err
    assert "Traceback" not in err
    code, _out, err = run("symbols", "   ", "--root", str(app_root))
    assert code == 2 and "question is empty" in err
    code, _out, err = run("env", "", "--root", str(app_root))
    assert code == 2 and "no variable name" in err


def test_routes_list_the_application_before_its_tests(tmp_path: Path) -> None:
    # gin's own tests register routes of their own, and "api/..._test.go" sorts first
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "handlers.test.js").write_text(
        "const app = require('express')();\napp.get('/ping', (req, res) => res.send('x'));\n"
    )
    (tmp_path / "server.js").write_text(
        "const app = require('express')();\n"
        "app.get('/ping', (req, res) => res.send('pong'));\n"
        "app.post('/items', (req, res) => res.send('ok'));\n"
    )

    code, out, err = run("routes", "--root", str(tmp_path), "--json")
    assert code == 0, err
    assert [route["path"] for route in json.loads(out)] == [
        "server.js",
        "server.js",
        "api/handlers.test.js",
    ]
    code, out, err = run("routes", "ping", "--root", str(tmp_path), "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found[0]["score"] == found[1]["score"]  # an equal match: the application first
    assert [route["path"] for route in found[:2]] == ["server.js", "api/handlers.test.js"]
