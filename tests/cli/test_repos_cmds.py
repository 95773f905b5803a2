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
from szrag.conversations import ConversationStore
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
    service_file.write_text(
        'fetch_interval = 60\n[[repositories]]\nname = "r"\nurl = "file:///x.git"\n'
        'webhook_secret_env = "R_SECRET"\n',
        "utf-8",
    )
    remote = service_plan((), service_file)  # served: cloned once the server runs
    assert remote is not None and remote.named("r").remote and remote.fetch_interval == 60
    assert remote.named("r").path == tmp_path / ".szrag/repositories/r"
    assert remote.named("r").webhook_secret_env == "R_SECRET"
    assert remote.first_present() is None and remote.configured_root() == tmp_path
    service_file.write_text("", "utf-8")
    with pytest.raises(ConfigError, match="lists no repository"):
        service_plan((), service_file)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('fetch_interval = "often"\n', "fetch_interval must be a number of seconds"),
        ("fetch_interval = -1\n", "fetch_interval must be a number of seconds"),
        ("fetchinterval = 5\n", "unknown key(s) fetchinterval"),
        (
            '[[repositories]]\nname = "r"\npath = "one"\nwebhook_secret_env = "S"\n',
            "webhook_secret_env belongs to a url",
        ),
        (
            '[[repositories]]\nname = "r"\nurl = "file:///x.git"\nwebhook_secret_env = "a b"\n',
            "names an environment variable",
        ),
        ('[[repositories]]\nname = "r"\nurl = "--upload-pack=x"\n', "url must be a git URL"),
        ('[[repositories]]\nname = "a/b"\nurl = "file:///x.git"\n', "cannot name a repository"),
        (
            '[[repositories]]\nname = "r"\nurl = "file:///x.git"\n'
            '[[repositories]]\nname = "r"\nurl = "file:///y.git"\n',
            "two repositories are called 'r'",
        ),
    ],
)
def test_a_service_file_with_bad_remote_entries_is_refused(
    tmp_path: Path, text: str, message: str
) -> None:
    service_file = tmp_path / "szrag.toml"
    service_file.write_text(text, encoding="utf-8")
    with pytest.raises(RepositoryError) as raised:
        read_service_file(service_file)
    assert message in raised.value.message


def test_a_url_is_added_with_its_branch_and_webhook_variable_and_listed_without_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    url = "https://deploy:tok3n@example.com/web.git"
    added = runner.invoke(
        main,
        ["repos", "add", "web", url, "--branch", "release", "--webhook-secret-env", "WEB_HOOK"],
    )
    assert added.exit_code == 0, added.output
    assert "tok3n" not in added.output and "https://example.com/web.git is cloned" in added.output
    text = (tmp_path / "szrag.toml").read_text()
    assert 'webhook_secret_env = "WEB_HOOK"' in text and 'branch = "release"' in text
    spec = read_service_file(tmp_path / "szrag.toml").named("web")
    assert spec.url == url and spec.branch == "release" and spec.webhook_secret_env == "WEB_HOOK"

    listed = runner.invoke(main, ["repos", "list"])
    assert "https://example.com/web.git (release)" in listed.output and "tok3n" not in listed.output
    rows = json.loads(runner.invoke(main, ["repos", "list", "--json"]).output)
    assert rows[0]["url"] == "https://example.com/web.git"
    assert rows[0]["webhookSecretEnv"] == "WEB_HOOK"

    asked = runner.invoke(main, ["ask", "--no-ai", "--repo", "web", "anything"])
    assert asked.exit_code != 0 and "web is not cloned yet" in asked.output
    assert "tok3n" not in asked.output and "https://example.com/web.git" in asked.output

    (tmp_path / "api").mkdir()
    local = runner.invoke(main, ["repos", "add", "api", "api", "--webhook-secret-env", "X"])
    assert local.exit_code != 0 and "belong to a repository given by URL" in local.output
    bad = runner.invoke(main, ["repos", "add", "w2", url, "--webhook-secret-env", "not a name"])
    assert bad.exit_code != 0 and "names an environment variable" in bad.output


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
    # kept in the service's one store beside its file, each answer with its repository
    kept = ConversationStore(tmp_path / ".szrag" / "conversations.db")
    try:
        assert kept.repository_of_answer(named["answerId"]) == "billing"
        assert kept.repository_of_answer(routed["answerId"]) == "mailer"
    finally:
        kept.close()
    assert not (tmp_path / "billing" / ".rag" / "conversations.db").exists()

    unknown = runner.invoke(main, ["ask", "--no-ai", "--repo", "mobile", "anything"])
    assert unknown.exit_code != 0 and "known: mailer, billing" in unknown.output
    (tmp_path / "szrag.toml").unlink()
    missing = runner.invoke(main, ["ask", "--no-ai", "--repo", "billing", "anything"])
    assert missing.exit_code != 0 and "no service file" in missing.output


def test_repos_add_keeps_the_fetch_interval_and_each_webhook_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "szrag.toml").write_text(
        'memory_mb = 512\nfetch_interval = 0.5\n[[repositories]]\nname = "web"\n'
        'url = "file:///srv/web.git"\nwebhook_secret_env = "WEB_HOOK"\n',
        encoding="utf-8",
    )
    (tmp_path / "api").mkdir()

    assert CliRunner().invoke(main, ["repos", "add", "api", "api"]).exit_code == 0

    plan = read_service_file(tmp_path / "szrag.toml")
    assert plan.memory_mb == 512 and plan.fetch_interval == 0.5
    assert plan.named("web").webhook_secret_env == "WEB_HOOK" and plan.names() == ["web", "api"]
