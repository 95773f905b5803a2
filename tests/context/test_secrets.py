"""Secrets planted in a fixture repository never reach the packed context."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from szrag.answer import Question
from szrag.base.redact import KINDS
from szrag.context import build_codebase_context, pack_repository_context
from szrag.index import Index, build_index
from szrag.rank.retrieve import retrieve

FIXTURES = Path(__file__).parent.parent / "fixtures"
CopyFixture = Callable[[str], Path]

QUESTION = (
    "Explain the gateway settings in server/settings.js, config/gateway.yml,"
    " config/service-account.json, config/gateway.env.example and docs/operations.md"
)

# Every credential planted in tests/fixtures/secrets_app, one or more of each kind.
PLANTED = tuple(
    line
    for line in (FIXTURES / "secrets_app.planted").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
)


@pytest.fixture
def index(copy_fixture: CopyFixture) -> Iterator[Index]:
    with build_index(copy_fixture("secrets_app")) as opened:
        yield opened


def test_the_fixture_really_contains_every_planted_secret(index: Index) -> None:
    text = "\n".join(chunk.text for file in index.files() for chunk in index.chunks(file.path))
    missing = [secret for secret in PLANTED if secret not in text]
    assert not missing


def test_no_planted_secret_reaches_the_packed_context(index: Index) -> None:
    sources = retrieve(QUESTION, 12, index=index)
    assert {source.path for source in sources} >= {
        "server/settings.js",
        "config/gateway.yml",
        "config/service-account.json",
        "config/gateway.env.example",
    }
    assert any("ghp_" in source.text for source in sources)  # retrieval itself sees them
    context = build_codebase_context(QUESTION, index, sources)
    packed = pack_repository_context(sources, context, budget=20_000)

    leaked = [secret for secret in PLANTED if secret in packed.text]
    assert not leaked
    assert set(packed.redaction_kinds) == set(KINDS)
    assert packed.redactions >= 24
    assert packed.metadata()["redactions"] == packed.redactions
    # ordinary code next to the secrets is kept as it was
    assert "const token = tokens(question)" in packed.text
    assert "const password_field = form.password" in packed.text
    assert "DB_PASSWORD=[REDACTED:secret_value]" in packed.text


EVERY_FILE = (
    "Explain every setting, token, password and credential in server/settings.js server/text.js"
    " server/Database.cs config/gateway.yml config/service-account.json"
    " config/gateway.env.example config/deploy.ini config/services.yaml config/signing.json"
    " docs/operations.md and README.md"
)
CHANNELS = (
    ["retrieve", "--json", "--limit", "40"],
    ["retrieve", "--text", "--limit", "40"],
    ["context", "--json", "--limit", "40", "--budget", "200000"],
    ["debug", "--json", "--limit", "40", "--budget", "200000"],
    ["ask", "--no-ai", "--json", "--limit", "40", "--budget", "200000"],
    ["ask", "--no-ai", "--limit", "40"],
)


@pytest.mark.parametrize("channel", CHANNELS, ids=" ".join)
def test_no_planted_secret_reaches_any_cli_output(
    copy_fixture: CopyFixture, channel: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from szrag.cli import main

    root = copy_fixture("secrets_app")
    monkeypatch.delenv("AI_API_KEY", raising=False)
    result = CliRunner().invoke(main, [*channel, "--root", str(root), EVERY_FILE])

    assert result.exit_code == 0, result.output
    assert "[REDACTED" in result.stdout
    leaked = [secret for secret in PLANTED if secret in result.stdout]
    assert not leaked


def test_raw_retrieval_shows_the_files_as_they_are(copy_fixture: CopyFixture) -> None:
    from click.testing import CliRunner

    from szrag.cli import main

    root = copy_fixture("secrets_app")
    args = ["retrieve", "--raw", "--json", "--limit", "40", "--root", str(root), EVERY_FILE]
    result = CliRunner().invoke(main, args)

    assert result.exit_code == 0 and "FAKEcurlPass99" in result.stdout


async def test_no_planted_secret_reaches_the_model(
    copy_fixture: CopyFixture, provider: Any, provider_settings: Callable[..., Any]
) -> None:
    from szrag.llm.testing import text_reply
    from szrag.service.host import Host, answer_question_async

    root = copy_fixture("secrets_app")
    provider.script(text_reply("Here is what the settings do."))
    host = Host.from_env(root, {"SZRAG_CONTEXT_BUDGET": "200000"}, settings=provider_settings())

    result = await answer_question_async(Question(EVERY_FILE, limit=40, tools=False), host)

    sent = json.dumps(provider.requests[0].json)
    assert {source.path for source in result.sources} >= {
        "server/Database.cs",
        "config/deploy.ini",
        "config/services.yaml",
        "config/signing.json",
        "docs/operations.md",
    }
    leaked = [
        secret for secret in PLANTED if secret in sent or secret in json.dumps(result.to_dict())
    ]
    assert not leaked
