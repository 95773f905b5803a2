"""A file's name or content cannot drive the terminal: control characters are shown escaped."""

from __future__ import annotations

import os
import subprocess
import sys
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


def test_piped_output_stays_proportionate_and_keeps_long_lines_whole(tmp_path: Path) -> None:
    # `szrag debug Q | wc -c`: no terminal says how wide a separator line may be
    long_line = "const deployTargets = [" + ", ".join(f'"target-{n}"' for n in range(40)) + "];"
    (tmp_path / "deploy.js").write_text(f"// deploy webhook\n{long_line}\n")
    (tmp_path / "README.md").write_text("# Deploys\nThe deploy webhook runs the deploy.\n")
    environment = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    szrag = [sys.executable, "-m", "szrag"]
    subprocess.run([*szrag, "index", "--root", str(tmp_path)], check=True, env=environment)

    for command in ("debug", "retrieve --text"):
        done = subprocess.run(
            [*szrag, *command.split(), "--root", str(tmp_path), "deploy", "webhook"],
            capture_output=True,
            text=True,
            env=environment,
            check=True,
        )
        assert len(done.stdout) < 20_000, command  # not megabytes of separator
        rules = [line for line in done.stdout.splitlines() if line.startswith("──")]
        assert rules and all(len(line) == 80 for line in rules), command
        assert long_line in done.stdout, command  # nothing wrapped or cut
