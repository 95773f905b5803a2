"""The references index: where a name is called, in every parsed language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from szrag.cli import main
from szrag.index import build_index, load_index
from szrag.structure.queries import find_references, references_report
from szrag.tools.code import references_to

LANGUAGES = Path(__file__).parent.parent / "fixtures" / "languages"


def first_call_in_a_function(folder: Path) -> tuple[str, str, int, str]:
    """(file, called name, line, function) of the first call made inside a function in
    ``folder``'s expected code records."""
    for record in sorted(folder.glob("*.json")):
        for call in json.loads(record.read_text(encoding="utf-8")).get("calls", []):
            if call.get("function"):
                return record.name[: -len(".json")], call["name"], call["line"], call["function"]
    raise AssertionError(f"no call inside a function in {folder}")


@pytest.fixture(scope="module")
def languages_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("languages")
    for source in LANGUAGES.rglob("*"):
        if source.is_file() and source.suffix != ".json":
            target = root / source.relative_to(LANGUAGES)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    build_index(root).close()
    return root


@pytest.mark.parametrize("language", sorted(path.name for path in LANGUAGES.iterdir()))
@pytest.mark.parametrize("in_memory", [False, True])
def test_every_language_finds_its_call_sites(
    languages_root: Path, language: str, in_memory: bool
) -> None:
    name, called, line, function = first_call_in_a_function(LANGUAGES / language)
    path = f"{language}/{name}"
    with load_index(languages_root) as index:
        index.keep_in_memory(in_memory)
        found = find_references(called, index)
    here = [item for item in found if (item.file, item.line) == (path, line)]
    assert here, (called, [(item.file, item.line) for item in found])
    assert here[0].caller is not None and here[0].caller.split(".")[-1] == function
    source_line = (LANGUAGES / language / name).read_text(encoding="utf-8").split("\n")[line - 1]
    assert here[0].text == source_line.strip()


def test_any_spelling_of_a_name_finds_the_same_calls(languages_root: Path) -> None:
    with load_index(languages_root) as index:
        plain = find_references("postMessage", index)
        dotted = find_references("client.chat.postMessage()", index)
        assert plain and plain == [
            type(item)(item.file, item.line, "postMessage", item.caller, item.text)
            for item in dotted
        ]
        assert find_references("neverCalledAnywhere", index) == []
        assert find_references("  ", index) == []


def test_refs_command_lists_call_sites_and_says_when_there_are_none(languages_root: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(main, ["refs", "postMessage", "--root", str(languages_root), "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.output)
    assert {"path", "line", "name", "caller", "text"} == set(rows[0])
    assert rows[0]["path"] == "javascript/calls.js" and rows[0]["caller"] == "notify"
    none = runner.invoke(main, ["refs", "neverCalledAnywhere", "--root", str(languages_root)])
    assert none.exit_code == 0 and "no calls of neverCalledAnywhere found" in none.output


def test_a_name_called_nowhere_suggests_the_defined_names_one_slip_away(
    languages_root: Path,
) -> None:
    with load_index(languages_root) as index:
        report = references_report("notfy", index)  # too short to guess: no suggestion
        assert report.references == [] and report.did_you_mean == []
        report = references_report("notifyy", index)
        assert report.references == [] and report.did_you_mean == ["notify"]
        assert references_report("postMessage", index).did_you_mean == []  # it is called
        # notify is defined: called nowhere, it is no slip of the hand for anything else
        assert references_report("notify", index).did_you_mean == []
        assert references_to(index, "notifyy")["didYouMean"] == ["notify"]
        assert "didYouMean" not in references_to(index, "postMessage")
    runner = CliRunner()
    shown = runner.invoke(main, ["refs", "notifyy", "--root", str(languages_root)])
    assert shown.exit_code == 0, shown.output
    assert "no calls of notifyy found; did you mean notify?" in shown.output
