"""``szrag repos`` keeps a service file; ``szrag serve --repo/--config`` reads the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from szrag.base.errors import ConfigError, RepositoryError
from szrag.cli import main
from szrag.cli.serve_cmds import service_plan
from szrag.service.repositories import read_service_file


def test_repositories_are_added_listed_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "api").mkdir()
    runner = CliRunner()
    added = runner.invoke(main, ["repos", "add", "api", "api", "--slack-channel", "C01"])
    assert added.exit_code == 0, added.output
    added = runner.invoke(
        main, ["repos", "add", "web", "https://example.com/web.git", "--branch", "main"]
    )
    assert added.exit_code == 0, added.output
    plan = read_service_file(tmp_path / "szrag.toml")
    assert plan.names() == ["api", "web"]
    assert plan.named("api").path == (tmp_path / "api").resolve()
    assert plan.named("api").slack_channels == ("C01",)
    assert plan.named("web").url == "https://example.com/web.git"

    listed = runner.invoke(main, ["repos", "list", "--json"])
    rows = json.loads(listed.output)
    assert [row["name"] for row in rows] == ["api", "web"]
    assert rows[0]["slackChannels"] == ["C01"] and rows[1]["branch"] == "main"
    assert rows[0]["folder"] == str((tmp_path / "api").resolve()) and "path" not in rows[0]

    twice = runner.invoke(main, ["repos", "add", "api", "api"])
    assert twice.exit_code != 0 and "two repositories are called 'api'" in twice.output
    slash = runner.invoke(main, ["repos", "add", "a/b", "api"])
    assert slash.exit_code != 0 and "cannot name a repository" in slash.output

    removed = runner.invoke(main, ["repos", "remove", "api"])
    assert removed.exit_code == 0
    assert read_service_file(tmp_path / "szrag.toml").names() == ["web"]
    unknown = runner.invoke(main, ["repos", "remove", "api"])
    assert unknown.exit_code != 0 and "known: web" in unknown.output


def test_serve_reads_repositories_from_options_or_a_service_file(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    plan = service_plan((f"one={tmp_path / 'one'}", f"two={tmp_path / 'two'}"), None)
    assert plan is not None and plan.names() == ["one", "two"]
    assert service_plan((), None) is None  # --root, as always
    with pytest.raises(click.UsageError, match="not both"):
        service_plan(("one=x",), tmp_path / "szrag.toml")
    with pytest.raises(RepositoryError, match="is not a folder"):
        service_plan((f"gone={tmp_path / 'gone'}",), None)

    service_file = tmp_path / "szrag.toml"
    service_file.write_text('[[repositories]]\nname = "one"\npath = "one"\n', encoding="utf-8")
    from_file = service_plan((), service_file)
    assert from_file is not None and from_file.named("one").path == (tmp_path / "one").resolve()
    service_file.write_text('[[repositories]]\nname = "r"\nurl = "file:///x.git"\n', "utf-8")
    with pytest.raises(ConfigError, match="not served yet"):
        service_plan((), service_file)


def test_ask_answers_from_the_repository_named_or_the_one_the_question_is_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    common = {
        "src/config.py": "def load_settings(path):\n    return parse_toml(path.read_text())\n",
        "src/logging.py": "def setup_logging(level):\n    return basic_config(level=level)\n",
    }
    topics = {
        "mailer": {"src/welcome.py": "def send_welcome_email(user):\n    return smtp(user)\n"},
        "billing": {"src/invoice.py": "def render_invoice(order):\n    return vat(order)\n"},
    }
    runner = CliRunner()
    for name, files in topics.items():
        for relative, text in {**common, **files}.items():
            path = tmp_path / name / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert runner.invoke(main, ["repos", "add", name, name]).exit_code == 0

    def ask(*args: str) -> Any:
        result = runner.invoke(main, ["ask", "--no-ai", "--json", *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    named = ask("--repo", "billing", "how", "is", "the", "invoice", "rendered")
    assert named["repository"] == "billing"
    assert named["sources"][0]["path"] == "src/invoice.py"
    routed = ask("--config", "szrag.toml", "which", "function", "sends", "the", "welcome", "email")
    assert routed["repository"] == "mailer"

    unknown = runner.invoke(main, ["ask", "--no-ai", "--repo", "mobile", "anything"])
    assert unknown.exit_code != 0 and "known: mailer, billing" in unknown.output
    (tmp_path / "szrag.toml").unlink()
    missing = runner.invoke(main, ["ask", "--no-ai", "--repo", "billing", "anything"])
    assert missing.exit_code != 0 and "no service file" in missing.output
