"""A command loads only what it uses: a one-shot question pays for no model client, server,
numpy or parser when its index is current."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from szrag.cli import COMMANDS, main
from szrag.cli.quick import QuickRetrieve, parse_quick

HEAVY = ("numpy", "httpx", "fastapi", "uvicorn", "mcp", "tree_sitter", "szrag.answer", "slack_bolt")

PROBE = """
import json, sys
from szrag.cli import run
try:
    run(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _modules_after(arguments: list[str]) -> tuple[str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *arguments], capture_output=True, text=True, check=True
    )
    return done.stdout, set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_a_question_on_a_current_index_loads_no_heavy_module(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text("def refresh_cache():\n    return 'ok'\n", "utf-8")
    subprocess.run([sys.executable, "-m", "szrag", "index", "--root", str(tmp_path)], check=True)
    for command in (["retrieve", "--json"], ["symbols"]):
        out, loaded = _modules_after([*command, "--root", str(tmp_path), "refresh", "cache"])
        assert "server.py" in out
        heavy = sorted(name for name in loaded if name.split(".")[0] in HEAVY or name in HEAVY)
        assert heavy == [], command
        if "--json" in command:  # printed as JSON: no console, so no Rich
            assert sorted(name for name in loaded if name.startswith("rich")) == []


def test_a_keyless_answer_loads_no_model_client(tmp_path: Path) -> None:
    # ``ask --no-ai`` retrieves, packs and answers from the sources: the model's client, its
    # HTTP stack and the live application's metrics parser stay unloaded
    (tmp_path / "server.py").write_text("def refresh_cache():\n    return 'ok'\n", "utf-8")
    subprocess.run([sys.executable, "-m", "szrag", "index", "--root", str(tmp_path)], check=True)
    out, loaded = _modules_after(["ask", "--no-ai", "--root", str(tmp_path), "refresh", "cache"])
    assert "server.py" in out
    unwanted = ("httpx", "prometheus_client", "fastapi", "uvicorn", "numpy", "tree_sitter")
    model_side = ("szrag.llm.client", "szrag.llm.loop", "szrag.answer.model", "szrag.answer.live")
    assert sorted(name for name in loaded if name.split(".")[0] in unwanted) == []
    assert sorted(name for name in loaded if name in model_side) == []


def test_every_command_lives_where_the_table_says() -> None:
    defined: dict[str, str] = {}
    for module_name in sorted(set(COMMANDS.values())):
        group = click.Group()
        importlib.import_module(f"szrag.cli.{module_name}").register(group)
        defined.update(dict.fromkeys(group.commands, module_name))
    assert defined == COMMANDS
    context = click.Context(main)
    assert set(COMMANDS) | {"help"} == set(main.list_commands(context))


def test_a_refresh_that_finds_nothing_changed_reads_no_ignore_rule_nor_loads_rich(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "server.py").write_text("def refresh_cache():\n    return 1\n", "utf-8")
    (tmp_path / ".gitignore").write_text("build-*/\n**/tmp[0-9]/\n", "utf-8")  # need pathspec
    subprocess.run([sys.executable, "-m", "szrag", "index", "--root", str(tmp_path)], check=True)
    past = time.time() - 60  # old enough that the walk trusts every listing (.rag/ included)
    for path in (tmp_path / ".gitignore", tmp_path / "src", tmp_path):
        os.utime(path, (past, past))
    subprocess.run([sys.executable, "-m", "szrag", "index", "--root", str(tmp_path)], check=True)
    out, loaded = _modules_after(["index", "--root", str(tmp_path)])
    assert "0 added, 0 changed, 0 removed" in out
    unused = (
        "pathspec",
        "szrag.rank.retrieve",
        "szrag.base.redact",
        "szrag.rank",
        "szrag.code",
        "rich",
    )
    assert sorted(name for name in loaded if name.startswith(unused)) == []


def test_a_refresh_that_parses_a_changed_file_loads_no_question_over_the_index(
    tmp_path: Path,
) -> None:
    source = tmp_path / "server.py"
    source.write_text("def refresh_cache():\n    return 1\n", "utf-8")
    subprocess.run([sys.executable, "-m", "szrag", "index", "--root", str(tmp_path)], check=True)
    source.write_text("def refresh_cache():\n    return 2\n\ndef warm():\n    pass\n", "utf-8")
    out, loaded = _modules_after(["index", "--root", str(tmp_path)])
    assert "1 changed" in out
    assert "szrag.code.extract" in loaded  # the file was parsed
    unused = (
        "szrag.structure.queries",
        "szrag.code.symbol_table",
        "szrag.rank.retrieve",
        "szrag.rank",
    )
    assert sorted(name for name in loaded if name.startswith(unused)) == []


def _szrag(arguments: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "szrag", *arguments], capture_output=True, text=True, cwd=cwd
    )


def test_a_plain_one_shot_question_is_answered_without_click(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text("def refresh_cache():\n    return 'ok'\n", "utf-8")
    (tmp_path / "notes.md").write_text("# Cache\n\nThe cache is refreshed hourly.\n", "utf-8")
    subprocess.run([sys.executable, "-m", "szrag", "index", "--root", str(tmp_path)], check=True)
    line = ["retrieve", "--json", "--limit", "3", "refresh", "--root", str(tmp_path), "cache"]
    out, loaded = _modules_after(line)
    assert sorted(name for name in loaded if name.startswith("click")) == []
    quick = _szrag(line)
    # --text changes nothing in JSON output, and only Click knows it: the same line through Click
    through_click = _szrag([*line, "--text"])
    assert quick.returncode == through_click.returncode == 0
    assert quick.stdout == through_click.stdout == out
    assert [source["path"] for source in json.loads(quick.stdout)][:1] == ["server.py"]
    # a failure is told as the Click command tells it
    empty = _szrag(["retrieve", "--json", "--root", str(tmp_path), " "])
    empty_through_click = _szrag(["retrieve", "--json", "--text", "--root", str(tmp_path), " "])
    assert empty.returncode == empty_through_click.returncode == 2
    assert empty.stderr == empty_through_click.stderr
    assert "error: the question is empty" in empty.stderr


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            ["retrieve", "--json", "how", "are", "routes", "found"],
            ("how are routes found", ".", None),
        ),
        (["retrieve", "x", "--json", "--limit=100", "--root=ROOT"], ("x", "ROOT", 100)),
        (["retrieve", "--limit", "1", "--json", "x"], ("x", ".", 1)),
        (["retrieve", "x"], None),  # a table: Rich, through Click
        (["retrieve", "--json"], None),  # no question: Click's usage error
        (["retrieve", "--json", "--limit", "0", "x"], None),
        (["retrieve", "--json", "--limit", "101", "x"], None),
        (["retrieve", "--json", "--limit", "٣", "x"], None),  # not an ASCII number
        (["retrieve", "--json", "--limit"], None),
        (["retrieve", "--json", "x", "--limit"], None),  # no value: Click's usage error
        (["retrieve", "--json", "x", "--limit="], None),
        (["retrieve", "--json", "x", "--root"], None),
        (["retrieve", "--json", "x", "--root="], None),
        (["retrieve", "--json", "--root", "MISSING", "x"], None),
        (["retrieve", "--json", "--root", "FILE", "x"], None),
        (["retrieve", "--json", "--ranker", "spec", "x"], None),
        (["retrieve", "--json", "--", "-x"], None),
        (["retrieve", "--json", "-h"], None),
        (["--debug", "retrieve", "--json", "x"], None),
        (["ask", "--json", "x"], None),
        ([], None),
    ],
)
def test_only_the_plain_line_takes_the_quick_path(
    tmp_path: Path, line: list[str], expected: tuple[str, str, int | None] | None
) -> None:
    (tmp_path / "FILE").write_text("not a folder\n", "utf-8")
    (tmp_path / "ROOT").mkdir()
    with contextlib.chdir(tmp_path):
        found = parse_quick(line)
    if expected is None:
        assert found is None
    else:
        question, root, limit = expected
        assert found == QuickRetrieve(question, Path(root), limit)


def test_a_one_shot_question_after_an_edit_is_answered_from_the_edit(tmp_path: Path) -> None:
    source = tmp_path / "server.py"
    source.write_text("def refresh_cache():\n    return 'ok'\n", "utf-8")
    line = ["retrieve", "--json", "--root", str(tmp_path), "refresh", "cache"]
    first = _szrag(line)  # builds the index
    assert first.returncode == 0 and "return 'ok'" in first.stdout
    source.write_text("def refresh_cache():\n    return 'renewed'\n", "utf-8")
    again = _szrag(line)
    assert again.returncode == 0, again.stderr
    assert "return 'renewed'" in again.stdout and "return 'ok'" not in again.stdout
