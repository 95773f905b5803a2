from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from szrag.cli import context_cmds

CopyFixture = Callable[[str], Path]
QUESTION = "How does listUsers answer GET /api/users, and where is DATABASE_URL read?"


@click.group()
def cli() -> None:
    """A group holding only the context command."""


context_cmds.register(cli)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def root(copy_fixture: CopyFixture) -> Path:
    return copy_fixture("context_app_js")


def test_context_prints_the_packed_text_and_its_budget(root: Path) -> None:
    code, out, _ = run("context", QUESTION, "--root", str(root))
    assert code == 0
    assert out.startswith("FILE: server/")
    assert "FILE: server/routes/users.js\n" in out
    assert "- DATABASE_URL in server/lib/db.js:7" in out
    assert "/ 12000 (cl100k_base)" in out  # the default profile counts real tokens
    assert "code contexts 3" in out
    assert "  server/lib/db.js" in out


def test_context_json_has_figures_text_sources_and_metadata(root: Path) -> None:
    code, out, _ = run("context", QUESTION, "--root", str(root), "--json", "--budget", "500")
    assert code == 0
    data = json.loads(out)
    assert data["budget"] == 500 and 0 < data["tokens"] <= 500
    assert data["tokenizer"] == "cl100k_base" and data["tokenizerNote"] is None
    assert "server/routes/users.js" in [source["path"] for source in data["sources"]]
    assert "text" not in data["sources"][0]
    assert data["context"]["environmentVariables"][0]["name"] == "DATABASE_URL"
    assert data["codeContexts"] == sum(
        1 for chunk in data["chunks"] if chunk["kind"] == "code" and chunk["status"] == "included"
    )
    # evidence first: at 500 tokens the retrieved sources go in, structure listings wait
    included = [chunk["key"] for chunk in data["chunks"] if chunk["status"] == "included"]
    assert any(key.startswith("source:server/routes/users.js:") for key in included)
    assert data["text"].startswith("FILE: server/")
    kinds = [chunk["kind"] for chunk in data["chunks"]]
    assert kinds.index("code") > max(i for i, kind in enumerate(kinds) if kind == "source")


def test_context_limit_bounds_the_sources(root: Path) -> None:
    code, out, _ = run(
        "context", "users loans database", "--root", str(root), "--json", "--limit", "1"
    )
    assert code == 0
    sources = json.loads(out)["sources"]  # one file: its best units, at most three
    assert len({source["path"] for source in sources}) == 1 and 1 <= len(sources) <= 3


def test_context_with_no_match_says_so(root: Path) -> None:
    code, out, _ = run("context", "zzzz qqqq", "--root", str(root))
    assert code == 0
    assert "no repository context matched" in out
    assert "tokens 0 / 12000" in out


def test_context_refuses_bad_input_cleanly(root: Path) -> None:
    code, _, err = run("context", "   ", "--root", str(root))
    assert code == 2 and "question is empty" in err
    code, _, err = run("context", QUESTION, "--root", str(root), "--budget", "-5")
    assert code == 2 and "Invalid value" in err
    code, _, err = run("context", QUESTION, "--root", str(root), "--tokenizer", "words")
    assert code == 2 and "Invalid value" in err


def test_an_unknown_configured_tokenizer_is_reported(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SZRAG_TOKENIZER", "words")
    code, _, err = run("context", QUESTION, "--root", str(root))
    assert code == 2 and "unknown tokenizer 'words'" in err


def test_context_help_describes_the_command() -> None:
    code, out, _ = run("context", "--help")
    assert code == 0
    assert "packed repository context" in out and "--budget" in out and "--tokenizer" in out
