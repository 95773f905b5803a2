"""The public JSON, everywhere a user sees it: every ``--json`` command, every API route, the
SSE events and the tool results share one casing (camelCase), one timestamp form (ISO 8601 UTC
with ``Z``) and one meaning of ``path`` (a file of the repository)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import httpx
import pytest
from click.testing import CliRunner

from szrag.cli import main
from szrag.index import build_index
from szrag.llm.testing import ScriptedProvider, text_reply, tool_reply
from szrag.server.testing import sse_events

StartServer = Callable[..., str]

CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

# Mappings whose keys are data, not field names: paths, kinds, metric and command names,
# environment-variable names, the arguments a model sent to a tool.
DATA_MAPS = {"scores", "types", "deployment", "arguments", "bySource", "toolCalls", "commands"}
# A command's id, a tool's arguments and the like are data, and so are the values below.
TIMESTAMP_KEYS = re.compile(r"^(time|since|.*At)$")


DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "PUBLIC_JSON.md"
DOCUMENTED = frozenset(re.findall(r"`([A-Za-z][A-Za-z0-9]*)`", DOCUMENT.read_text("utf-8")))


def problems(
    value: Any, root: Path, where: str = "$", documented: frozenset[str] = DOCUMENTED
) -> Iterator[str]:
    """Every breach of the public conventions in ``value``, and every field that
    docs/PUBLIC_JSON.md does not name."""
    if isinstance(value, list):
        for number, item in enumerate(value):
            yield from problems(item, root, f"{where}[{number}]", documented)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        here = f"{where}.{key}"
        if not CAMEL.match(key):
            yield f"{here}: not camelCase"
        elif documented and key not in documented:
            yield f"{here}: not described in docs/PUBLIC_JSON.md"
        if (
            TIMESTAMP_KEYS.match(key)
            and item is not None
            and not (isinstance(item, str) and ISO_UTC.match(item))
        ):
            yield f"{here}: {item!r} is not an ISO 8601 UTC timestamp with Z"
        if key == "path" and isinstance(item, str) and not (root / item).is_file():
            yield f"{here}: {item!r} is not a file of the repository"
        if key in DATA_MAPS and isinstance(item, dict):
            for inner in item.values():
                yield from problems(inner, root, f"{here}.*", documented)
            continue
        yield from problems(item, root, here, documented)


def takes_json(command: click.Command) -> bool:
    return any(
        "--json" in option.opts for option in command.params if isinstance(option, click.Option)
    )


def json_commands() -> dict[str, click.Command]:
    """Every command with --json, a group's as ``group command`` (``feedback list``)."""
    assert isinstance(main, click.Group)
    found: dict[str, click.Command] = {}
    context = click.Context(main)
    every = {name: main.get_command(context, name) for name in main.list_commands(context)}
    for name, command in every.items():
        if command is None:
            continue
        inner = command.commands if isinstance(command, click.Group) else {"": command}
        for sub, each in inner.items():
            if takes_json(each):
                found[f"{name} {sub}".strip()] = each
    return found


# How each --json command is asked (arguments after the command name); every command with
# --json must be listed, so a new one cannot escape the check.
INVOCATIONS: dict[str, list[str]] = {
    "index": [],
    "stats": [],
    "retrieve": ["how", "are", "webhooks", "verified"],
    "images": ["architecture"],
    "symbols": ["verifyGithubSignature"],
    "refs": ["verifyGithubSignature"],
    "routes": [],
    "deps": ["server/webhook.js"],
    "dependants": ["server/webhook.js"],
    "env": ["GITHUB_WEBHOOK_SECRET"],
    "context": ["webhook", "signature"],
    "debug": ["run", "/sz-calc", "1+1", "and", "explain", "webhook.js"],
    "ask": ["--no-ai", "how", "is", "the", "webhook", "verified"],
    "commands": [],
    "run": ["calc", "2 + 2"],
    "tool": ["getStatus"],
    "use-tool": ["--getRoutes"],
    "eval": [],
    "doctor": [],
    "feedback give": [],
    "feedback list": [],
    "repos list": [],
}
NOT_RUN_HERE = {
    "feedback give": "needs an answer id: test_conversation_and_feedback_json_follow_them",
    "eval": "needs a case file; its JSON is checked in tests/test_evaluate.py",
    "doctor": "needs a provider; its JSON is checked in tests/llm/test_doctor.py",
    "repos list": "reads a service file, not --root: test_a_service_of_repositories_follows_them",
}


def test_every_json_command_is_checked() -> None:
    assert set(json_commands()) == set(INVOCATIONS)


@pytest.mark.parametrize("name", sorted(set(INVOCATIONS) - set(NOT_RUN_HERE)))
def test_json_commands_follow_the_public_conventions(
    name: str, retrieval_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_index(retrieval_repo).close()
    monkeypatch.delenv("AI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(
        main, [*name.split(), *INVOCATIONS[name], "--root", str(retrieval_repo), "--json"]
    )
    assert result.exit_code == 0, result.output
    found = list(problems(json.loads(result.stdout), retrieval_repo))
    assert found == [], "\n".join(found)


def test_conversation_and_feedback_json_follow_them(retrieval_repo: Path) -> None:
    build_index(retrieval_repo).close()
    root = ["--root", str(retrieval_repo), "--json"]

    def run(*args: str) -> Any:
        result = CliRunner().invoke(main, [*args, *root])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    first = run("ask", "--no-ai", "how", "is", "the", "webhook", "verified")
    followed = run("ask", "--no-ai", "--continue", "and", "where", "is", "that", "called")
    given = run("feedback", first["answerId"], "down", "--right-file", "server/auth.js")
    listed = run("feedback", "list")
    assert followed["conversationId"] == first["conversationId"] and listed == [given]
    found = [
        *problems(followed, retrieval_repo, "ask --continue"),
        *problems(given, retrieval_repo, "feedback give"),
        *problems(listed, retrieval_repo, "feedback list"),
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "tool",
    [
        "getStatus",
        "getCommands",
        "getReleaseInfo",
        "getLogs",
        "getErrors",
        "getMetrics",
        "getRoutes",
    ],
)
def test_tool_results_follow_the_public_conventions(tool: str, retrieval_repo: Path) -> None:
    build_index(retrieval_repo).close()
    result = CliRunner().invoke(main, ["tool", tool, "--root", str(retrieval_repo), "--json"])
    assert result.exit_code == 0, result.output
    found = list(problems(json.loads(result.stdout), retrieval_repo))
    assert found == [], "\n".join(found)


ADMIN = {"Authorization": "Bearer admin-secret"}
ROUTES = [
    "/api/status",
    "/api/commands",
    "/api/release",
    "/api/logs",
    "/api/metrics",
    "/api/routes",
    "/api/admin/errors",
    "/healthz",
    "/_szrag/info",  # the page's own reads
    "/_szrag/source?path=src/gateway.js&start=1&end=28",
]


def test_api_routes_and_sse_events_follow_the_public_conventions(
    start_server: StartServer, web_repo: Path, provider: ScriptedProvider
) -> None:
    base = start_server(admin_token="admin-secret")
    provider.script(
        tool_reply(("getRoutes", "{}"), text="Looking."),
        text_reply("Done."),
        text_reply("Followed up."),
        text_reply("Done again."),
    )
    found: list[str] = []
    with httpx.Client(base_url=base, timeout=10) as client:
        for route in ROUTES:
            response = client.get(route, headers=ADMIN)
            assert response.status_code == 200, (route, response.text)
            found += problems(response.json(), web_repo, route)
        answered = client.post("/api/ask", json={"question": "which routes exist?"}, headers=ADMIN)
        assert answered.status_code == 200
        found += problems(answered.json(), web_repo, "POST /api/ask")
        followed = client.post(
            "/api/ask",
            json={
                "question": "and where is that?",
                "conversationId": answered.json()["data"]["conversationId"],
            },
            headers=ADMIN,
        )
        assert followed.status_code == 200, followed.text
        found += problems(followed.json(), web_repo, "POST /api/ask in a conversation")
        rated = client.post(
            "/api/feedback",
            json={
                "answerId": followed.json()["data"]["answerId"],
                "rating": "down",
                "rightFiles": ["src/gateway.js"],
                "comment": "the routes are in the gateway",
            },
            headers=ADMIN,
        )
        assert rated.status_code == 200, rated.text
        found += problems(rated.json(), web_repo, "POST /api/feedback")
        with client.stream(
            "POST",
            "/api/ask",
            json={"question": "how is the webhook verified?"},
            headers={**ADMIN, "Accept": "text/event-stream"},
        ) as streamed:
            events = list(sse_events(iter(streamed.read().decode().split("\n"))))
        assert {name for name, _ in events} >= {"activity", "token", "result"}
        for name, data in events:
            found += problems(data, web_repo, f"SSE {name}")
        refused = client.post("/api/ask", json={"question": ""})
        found += problems(refused.json(), web_repo, "an error")
    assert found == [], "\n".join(found)


def test_a_service_of_repositories_follows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git_remote: Callable[..., Any]
) -> None:
    from szrag.commands import Allowlist
    from szrag.server import ServerSettings, create_app
    from szrag.server.testing import serve_asgi
    from szrag.service.repositories import read_service_file

    common = {"src/config.py": "def load_settings(path):\n    return parse(path)\n"}
    topics = {
        "mailer": {"src/welcome.py": "def send_welcome_email(user):\n    return smtp(user)\n"},
        "billing": {"src/invoice.py": "def render_invoice(order):\n    return vat(order)\n"},
    }
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for name, files in topics.items():
        for relative, text in {**common, **files}.items():
            (tmp_path / name / relative).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name / relative).write_text(text, encoding="utf-8")
        assert runner.invoke(main, ["repos", "add", name, name]).exit_code == 0
    outbox = git_remote("outbox", {"src/queue.py": "def enqueue(message):\n    return 1\n"})
    added = ["repos", "add", "outbox", outbox.url, "--webhook-secret-env", "OUTBOX_HOOK"]
    assert runner.invoke(main, added).exit_code == 0
    listed = runner.invoke(main, ["repos", "list", "--json"])
    found = list(problems(json.loads(listed.stdout), tmp_path, "repos list"))
    app = create_app(
        plan=read_service_file(tmp_path / "szrag.toml"),
        environ={"SZRAG_AUDIT_LOG": "off", "OUTBOX_HOOK": "hook", "PATH": os.environ["PATH"]},
        settings=ServerSettings(watch=False),
        allowlist=Allowlist(),
        live_tools=False,
    )
    with serve_asgi(app) as base, httpx.Client(base_url=base, timeout=30) as client:
        found += problems(client.get("/api/repositories").json(), tmp_path, "repositories")
        answered = client.post(
            "/api/ask", json={"question": "welcome email sender", "withAi": False}
        ).json()
        assert answered["data"]["repository"] == "mailer"
        found += problems(answered, tmp_path / "mailer", "POST /api/ask, routed")
        deadline = time.monotonic() + 30
        while client.get("/api/repositories").json()["data"][2]["state"] != "ready":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        found += problems(client.get("/api/repositories").json(), tmp_path, "cloned")
        hook = client.post(
            "/api/repositories/outbox/webhook",
            json={"ref": "refs/heads/main"},
            headers={"X-Gitlab-Token": "hook"},
        )
        assert hook.status_code == 202
        found += problems(hook.json(), tmp_path, "webhook")
        refused = client.post("/api/repositories/outbox/webhook", json={})
        found += problems(refused.json(), tmp_path, "webhook refused")
    assert found == [], "\n".join(found)


def test_the_checker_catches_each_breach(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    sample = {
        "end_line": 1,
        "path": "/api/x",
        "generatedAt": "2026-12-01T11:36:23.266+00:00",
        "scores": {"a_b.py": 1},
        "items": [{"path": "a.py", "time": "2026-12-01T11:36:23.266Z"}],
    }
    assert list(problems(sample, tmp_path, documented=frozenset())) == [
        "$.end_line: not camelCase",
        "$.path: '/api/x' is not a file of the repository",
        "$.generatedAt: '2026-12-01T11:36:23.266+00:00' is not an ISO 8601 UTC timestamp with Z",
    ]


@pytest.mark.parametrize("tool", ["getLogs", "getErrors", "getStatus", "getMetrics"])
def test_live_source_results_follow_the_public_conventions(
    tool: str, retrieval_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (retrieval_repo / "logs").mkdir()
    (retrieval_repo / "logs" / "app.log").write_text(
        "2026-12-01 10:00:00,000 INFO started\n"
        "2026-12-01 10:00:01,000 ERROR POST /api/report failed\n"
        "Traceback (most recent call last):\n"
        f'  File "{retrieval_repo / "server" / "webhook.js"}", line 4, in verify\n'
        "KeyError: 'signature'\n"
    )
    monkeypatch.setenv("SZRAG_LOG_FILES", "logs/app.log")
    build_index(retrieval_repo).close()

    result = CliRunner().invoke(main, ["tool", tool, "--root", str(retrieval_repo), "--json"])

    assert result.exit_code == 0, result.output
    found = list(problems(json.loads(result.stdout), retrieval_repo))
    assert found == [], "\n".join(found)


def test_an_answer_s_other_sources_follow_them(tmp_path: Path) -> None:
    from szrag.answer.elsewhere import MergedSource
    from szrag.answer.results import Answer, Outcome
    from szrag.rank.retrieve import Source

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
    offered = MergedSource("web", Source("src/app.py", 1, 3, "python", None, "x = 1", 5), 1.5)
    shown = Answer(Outcome.NO_MODEL, "answer", (), (), None, (), elsewhere=(offered,)).to_dict()
    assert shown["otherSources"][0]["sharedScore"] == 1.5
    assert list(problems(shown, tmp_path, "otherSources")) == []


CODE_TOOL_CALLS: dict[str, dict[str, Any]] = {
    "searchCode": {"question": "how are webhooks verified"},
    "findSymbols": {"question": "verifyGithubSignature"},
    "findReferences": {"name": "verifyGithubSignature"},
    "readCode": {"path": "server/webhook.js", "startLine": 4, "endLine": 12},
}


@pytest.mark.parametrize("tool", sorted(CODE_TOOL_CALLS))
async def test_code_tool_results_follow_the_public_conventions(
    tool: str, retrieval_repo: Path
) -> None:
    from szrag.service.host import Host

    build_index(retrieval_repo).close()
    result = await Host.from_env(retrieval_repo).tools().call(tool, CODE_TOOL_CALLS[tool])
    assert result.ok, result.content
    found = list(problems(result.content, retrieval_repo))
    assert found == [], "\n".join(found)


def test_a_publish_s_json_follows_them(retrieval_repo: Path, pg_url: str) -> None:
    for _ in range(2):  # the first writes every row, the second the files that changed
        result = CliRunner().invoke(
            main, ["index", "--store", pg_url, "--repo", f"web={retrieval_repo}", "--json"]
        )
        assert result.exit_code == 0, result.output
        reports = json.loads(result.stdout)
        found = list(problems(reports, retrieval_repo))
        assert found == [], "\n".join(found)
    assert reports[0]["filesRewritten"] == 0
