"""The command line behaves like the best ones: unquoted questions, ``help``, unwrapped pipes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.table import Table

from szrag.cli import main
from szrag.cli.console import SafeConsole


def test_questions_need_no_quotes(retrieval_repo: Path) -> None:
    for command in ("retrieve", "symbols", "context", "images"):
        result = CliRunner().invoke(
            main, [command, "where", "is", "verifyGithubSignature", "--root", str(retrieval_repo)]
        )
        assert result.exit_code == 0, (command, result.output)
    found = CliRunner().invoke(
        main, ["retrieve", "verify", "github", "signature", "--json", "--root", str(retrieval_repo)]
    )
    assert json.loads(found.stdout)[0]["path"] == "server/webhook.js"


def test_help_for_szrag_and_for_one_command() -> None:
    whole = CliRunner().invoke(main, ["help"])
    assert whole.exit_code == 0 and "retrieve" in whole.stdout and "doctor" in whole.stdout
    one = CliRunner().invoke(main, ["help", "retrieve"], prog_name="szrag")
    assert one.exit_code == 0 and one.stdout.startswith("Usage: szrag retrieve")
    missing = CliRunner().invoke(main, ["help", "nope"])
    assert missing.exit_code == 2 and "no command 'nope'" in missing.stderr


def test_output_for_a_pipe_is_never_wrapped(retrieval_repo: Path) -> None:
    long_question = "where is verifyGithubSignature " + "and the deploy webhook " * 6
    completed = subprocess.run(
        [sys.executable, "-m", "szrag.cli", "ask", long_question, "--no-ai", "--root",
         str(retrieval_repo)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    wide = [line for line in completed.stdout.splitlines() if len(line) > 80]
    assert wide, "a long line was wrapped at 80 columns"


LONG_PACKAGE = "services/payments_gateway_integration/webhook_signature_verification"


def _repository_with_long_paths(root: Path) -> Path:
    package = root / LONG_PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "signature_helpers.py").write_text(
        "def compute_expected_provider_signature(secret, body):\n    return secret + body\n"
    )
    (package / "provider_callback_handlers.py").write_text(
        "from flask import Flask\n"
        "from .signature_helpers import compute_expected_provider_signature\n\n"
        "app = Flask(__name__)\n\n\n"
        '@app.route("/webhooks/payments/provider-callback/<callback_identifier>")\n'
        "def receive_provider_callback_and_verify_signature(callback_identifier):\n"
        '    return compute_expected_provider_signature("secret", callback_identifier)\n'
    )
    return root


def test_tables_for_a_pipe_keep_every_cell_on_one_line(tmp_path: Path) -> None:
    root = str(_repository_with_long_paths(tmp_path / "repository-with-a-rather-long-name"))
    handlers = f"{LONG_PACKAGE}/provider_callback_handlers.py"
    handler = "receive_provider_callback_and_verify_signature"
    expected = {
        ("symbols", "verify", "provider", "callback", "signature"): [f"{handlers}:7-9", handler],
        ("routes",): [
            "/webhooks/payments/provider-callback/<callback_identifier>",
            f"{handlers}:7",
        ],
        ("retrieve", "provider", "callback", "signature"): [f"{handlers}:7-9"],  # the function
        ("deps", handlers): [f"{LONG_PACKAGE}/signature_helpers.py"],
        ("stats",): [f"{root}/.rag/index.db"],
        ("commands",): ["Answer a question about the repository and the running application."],
    }
    # Rich would fall back to COLUMNS (or 80) for a stream that is no terminal.
    for arguments, cells in expected.items():
        result = CliRunner().invoke(main, [*arguments, "--root", root], env={"COLUMNS": "40"})
        assert result.exit_code == 0, (arguments, result.output)
        lines = result.stdout.splitlines()
        for cell in cells:
            assert any(cell in line for line in lines), (arguments, cell, result.stdout)
        assert "…" not in result.stdout, arguments


def test_a_terminal_keeps_its_width() -> None:
    class Terminal(StringIO):
        def isatty(self) -> bool:
            return True

    cell = f"{LONG_PACKAGE}/provider_callback_handlers.py:7-9"
    shown: dict[bool, list[str]] = {}
    for stream in (Terminal(), StringIO()):
        table = Table()
        table.add_column("where", overflow="fold")
        table.add_row(cell)
        # as the CLI's console is made: soft wrapping for anything but a terminal
        SafeConsole(
            file=stream,
            _environ={"COLUMNS": "40"},
            soft_wrap=not stream.isatty(),
            color_system=None,
        ).print(table)
        shown[stream.isatty()] = stream.getvalue().splitlines()
    assert max(len(line) for line in shown[True]) == 40
    assert not any(cell in line for line in shown[True])
    assert any(cell in line for line in shown[False])


def test_stats_is_a_table_of_counts(retrieval_repo: Path) -> None:
    CliRunner().invoke(main, ["index", "--root", str(retrieval_repo)])
    result = CliRunner().invoke(main, ["stats", "--root", str(retrieval_repo)])
    assert result.exit_code == 0
    assert "{" not in result.stdout  # no Python dict
    assert any(line.strip().startswith("javascript files") for line in result.stdout.splitlines())


def test_debug_works_wherever_it_stands(tmp_path: Path) -> None:
    missing = tmp_path / "absent-root"
    for args in (["--debug", "retrieve", "x", "--root", str(missing)],
                 ["retrieve", "x", "--root", str(missing), "--debug"]):  # fmt: skip
        completed = subprocess.run(
            [sys.executable, "-m", "szrag.cli", *args], capture_output=True, text=True
        )
        assert completed.returncode == 2 and "absent-root" in completed.stderr


def test_every_command_takes_root(retrieval_repo: Path) -> None:
    result = CliRunner().invoke(main, ["commands", "--root", str(retrieval_repo), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)


def test_a_path_not_in_the_index_suggests_the_indexed_one(retrieval_repo: Path) -> None:
    result = CliRunner().invoke(main, ["deps", "webhook.js", "--root", str(retrieval_repo)])
    assert result.exit_code != 0
    assert "did you mean server/webhook.js?" in result.stderr


def test_a_busy_port_is_an_error_before_anything_claims_to_serve(retrieval_repo: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            main, ["serve", "--root", str(retrieval_repo), "--port", str(port)]
        )
    assert result.exit_code != 0
    assert "cannot listen on 127.0.0.1" in result.stderr
    assert "serving" not in result.stdout


def test_a_folder_that_is_no_repository_is_said_to_be_one_doubtfully(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(main, ["ask", "what is this", "--no-ai", "--root", str(empty)])
    assert result.exit_code == 0
    assert "holds no file szrag indexes: is it the repository's root?" in result.stderr
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "notes.md").write_text("# Notes\n\nsome text\n")
    result = CliRunner().invoke(main, ["retrieve", "notes", "--root", str(loose)])
    assert "no version control and no project file" in result.stderr


def test_every_command_that_builds_the_index_says_so_without_a_terminal(
    retrieval_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from szrag.cli import common

    monkeypatch.setattr(common, "NOTE_MIN_FILES", 1)
    result = CliRunner().invoke(
        main, ["symbols", "verifyGithubSignature", "--root", str(retrieval_repo)]
    )
    assert result.exit_code == 0
    assert "indexing " in result.stderr and " files..." in result.stderr


def test_a_line_for_a_pipe_is_plain_with_control_characters_escaped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from szrag.cli.common import say

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    say("evil\x1b]0;title\x07name.py [bold]x[/]", lead="warning: ", style="yellow", error=True)
    say("done")
    captured = capsys.readouterr()
    assert captured.err == "warning: evil\\x1b]0;title\\x07name.py [bold]x[/]\n"
    assert captured.out == "done\n"


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_progress_bar_runs_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from szrag.cli import common

    screen = _Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monkeypatch.setattr(common, "PROGRESS_DELAY", 0.0)
    # a console not yet made, as at the start of a command
    fresh = common._DeferredConsole(stderr=True, soft_wrap=True)
    monkeypatch.setattr(common, "err_console", fresh)
    with common.progress_bar(True) as update:
        assert update is not None
        for done in range(1, 4):
            update(done, 3, f"file{done}.py")
    assert "indexing" in screen.getvalue()  # drawn on the (fake) terminal, then cleared
