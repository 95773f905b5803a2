"""``szrag serve``: help text and the refusal to expose an open API."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from szrag.cli import serve_cmds


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
