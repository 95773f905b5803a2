"""``szrag serve``: help text, the refusal to expose an open API, and what it says at start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import httpx
import pytest
from click.testing import CliRunner

from szrag.cli import serve_cmds
from szrag.index import build_index, store
from szrag.llm.testing import free_port

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.fixture
def cli() -> click.Group:
    @click.group()
    def group() -> None:
        """Test group."""

    serve_cmds.register(group)
    return group


def test_serve_has_help_with_its_options(cli: click.Group) -> None:
    result = CliRunner().invoke(cli, ["serve", "--help"])

    assert result.exit_code == 0
    for option in (
        "--root",
        "--host",
        "--port",
        "127.0.0.1",
        "8787",
        "/api/ask",
        "SLACK_SIGNING_SECRET",
    ):
        assert option in result.output


def test_serve_refuses_a_public_address_without_tokens(
    cli: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SZRAG_API_TOKENS", raising=False)

    result = CliRunner().invoke(cli, ["serve", "--root", str(tmp_path), "--host", "0.0.0.0"])

    assert result.exit_code == 2
    assert "refusing to listen on 0.0.0.0" in result.output
    assert "SZRAG_API_TOKENS" in result.output


def test_serve_reports_bad_settings(
    cli: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SZRAG_RATE_LIMIT", "lots")

    result = CliRunner().invoke(cli, ["serve", "--root", str(tmp_path)])

    assert result.exit_code == 2 and "SZRAG_RATE_LIMIT" in result.output


def test_serve_needs_an_existing_root(cli: click.Group, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["serve", "--root", str(tmp_path / "missing")])

    assert result.exit_code == 2 and "does not exist" in result.output


def serve_until_healthy(root: Path, **environment: str) -> str:
    """Run ``szrag serve`` until /healthz answers, stop it, and return all it printed."""
    port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AI_", "OPENAI_", "SZRAG_", "SLACK_"))
    }
    env.update(PYTHONUNBUFFERED="1", SZRAG_WATCH="0", **environment)
    server = subprocess.Popen(
        [sys.executable, "-m", "szrag", "serve", "--root", str(root), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=30)
    return output


def test_serve_says_which_model_answers_and_reports_a_damaged_index_once(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "retrieval_repo", root)
    build_index(root).close()
    store.index_path(root).write_bytes(b"not a database at all" * 1000)

    unconfigured = serve_until_healthy(root)

    assert "model:  none configured (no AI_API_KEY)" in unconfigured, unconfigured
    damage = [line for line in unconfigured.splitlines() if "moved to index.db.corrupt-" in line]
    assert len(damage) == 1, unconfigured  # once, not as a log record and a warning too

    configured = serve_until_healthy(
        root, AI_API_KEY="k", AI_URL="http://127.0.0.1:9/v1", AI_MODEL="qwen2.5-coder"
    )

    assert "model:  qwen2.5-coder at http://127.0.0.1:9/v1/chat/completions" in configured
    assert "corrupt" not in configured


def test_serve_clones_a_service_of_remote_repositories_and_answers_from_them(
    tmp_path: Path, git_remote: Callable[..., Any]
) -> None:
    good = git_remote("mailer", {"src/welcome.py": "def send_welcome_email(user):\n    pass\n"})
    missing = (tmp_path / "remotes" / "gone.git").as_uri()
    service_file = tmp_path / "szrag.toml"
    service_file.write_text(
        f'[[repositories]]\nname = "broken"\nurl = "{missing}"\n'
        f'[[repositories]]\nname = "mailer"\nurl = "{good.url}"\n',
        encoding="utf-8",
    )
    port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AI_", "OPENAI_", "SZRAG_", "SLACK_"))
    }
    env.update(PYTHONUNBUFFERED="1", SZRAG_WATCH="0")
    command = [sys.executable, "-m", "szrag", "serve", "--config", str(service_file)]
    server = subprocess.Popen(
        [*command, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    states: dict[str, Any] = {}
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.poll() is None:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/api/repositories", timeout=1)
            except httpx.HTTPError:
                time.sleep(0.1)
                continue
            states = {item["name"]: item for item in answer.json()["data"]}
            if states["broken"]["state"] == "failed":
                break
            time.sleep(0.1)
        asked = httpx.post(
            f"http://127.0.0.1:{port}/api/ask",
            json={"question": "welcome email", "repository": "mailer", "withAi": False},
            timeout=30,
        )
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=30)

    assert states["mailer"]["state"] == "ready", output
    assert "does not appear to be a git repository" in states["broken"]["error"]
    assert asked.json()["data"]["sources"][0]["path"] == "src/welcome.py"
    assert f"mailer ({good.url})" in output and "clones:" in output
    assert (tmp_path / ".szrag/repositories/mailer/src/welcome.py").is_file()


def test_serve_says_clearly_when_no_remote_repository_can_be_cloned(tmp_path: Path) -> None:
    missing = (tmp_path / "gone.git").as_uri()
    service_file = tmp_path / "szrag.toml"
    service_file.write_text(f'[[repositories]]\nname = "a"\nurl = "{missing}"\n', "utf-8")

    result = subprocess.run(
        [sys.executable, "-m", "szrag", "serve", "--config", str(service_file)],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 1
    assert "no repository of the service can be served: repository 'a'" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
