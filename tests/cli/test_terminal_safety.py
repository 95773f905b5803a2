"""A file's name or content cannot drive the terminal: control characters are shown escaped."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from szrag.cli import main
from szrag.cli.common import terminal_safe


def test_control_characters_are_escaped_and_line_ends_kept() -> None:
    assert terminal_safe("a\x1b[2Jb\x07\x9b\r\nc\td") == "a\\x1b[2Jb\\x07\\x9b\nc\td"


def test_a_file_name_with_escape_sequences_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    evil = tmp_path / "notes\x1b]0;owned\x07\x1b[2J.md"
    evil.write_text("# Wombat\nThe wombat burrow \x1b[31mred\x1b[0m is documented here.\n")
    (tmp_path / "README.md").write_text("# Project\n")

    root = ["--root", str(tmp_path)]
    question = ["wombat", "burrow"]
    for arguments in (
        ["index", *root],
        ["retrieve", "--text", *root, *question],
        ["ask", "--no-ai", *root, *question],
    ):
        result = CliRunner().invoke(main, arguments)
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
    shown = CliRunner().invoke(main, ["retrieve", "--root", str(tmp_path), "wombat", "burrow"])
    assert "notes\\x1b]0;owned\\x07\\x1b[2J.md" in shown.output
