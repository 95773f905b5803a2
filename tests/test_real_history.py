"""The real-history evaluation: cases made from a git history, asked at their parent commit.

A small repository is written here commit by commit (real git), the preparation script turns
its history into cases, and ``szrag eval`` checks each case's revision out before asking.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from szrag.base.errors import ConfigError
from szrag.cli import main
from szrag.index import build_index
from szrag.service.evaluate import BASELINE, WholeFileBM25, evaluate_rankers, load_cases

SCRIPT = Path(__file__).resolve().parents[1] / "eval" / "prepare_history.py"


@pytest.fixture(scope="module")
def prepare() -> ModuleType:
    spec = importlib.util.spec_from_file_location("prepare_history", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["prepare_history"] = module
    spec.loader.exec_module(module)
    return module


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(repo),
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def commit(repo: Path, message: str, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


FILLER = {f"src/module{n}.py": f"def helper{n}():\n    return {n}\n" for n in range(8)}


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A repository whose history holds good cases and every kind of noise."""
    repo = tmp_path_factory.mktemp("upstream")
    git(repo, "init", "-q", "-b", "main")
    commit(
        repo,
        "Initial layout",
        {
            **FILLER,
            "src/proxy.py": "def proxies_from_environment(env):\n    return env.get('HTTP_PROXY')\n",
            "src/retry.py": "def retry_delay(attempt):\n    return 2 ** attempt\n",
            "CHANGELOG.md": "# Changes\n\n- first release\n",
            "tests/test_proxy.py": "def test_proxy():\n    assert True\n",
        },
    )
    commit(
        repo,
        "Fix environment proxies lookup with NO_PROXY (#12)",
        {
            "src/proxy.py": "def proxies_from_environment(env):\n"
            "    if env.get('NO_PROXY'):\n        return None\n    return env.get('HTTP_PROXY')\n",
            "tests/test_proxy.py": "def test_no_proxy():\n    assert True\n",
            "CHANGELOG.md": "# Changes\n\n- environment proxies honour NO_PROXY\n",
        },
    )
    commit(repo, "Bump version to 1.2.0", {"CHANGELOG.md": "# Changes\n\n- 1.2.0\n"})
    commit(repo, "docs: describe retries", {"README.md": "Retries back off.\n"})
    commit(repo, "Add a brand new module", {"src/fresh.py": "def fresh():\n    return 1\n"})
    commit(
        repo,
        "Add jitter to the retry delay (#14)",
        {"src/retry.py": "import random\n\ndef retry_delay(attempt):\n"
         "    return 2 ** attempt + random.random()  # jitter\n"},
    )  # fmt: skip
    commit(
        repo,
        "Add jitter to the retry delay (#15)",  # the same wording again: one case only
        {"src/retry.py": "import random\n\ndef retry_delay(attempt):\n"
         "    return 2 ** attempt + random.random() / 2  # jitter\n"},
    )  # fmt: skip
    yield repo


def test_history_becomes_cases_with_source_gold_files(prepare: ModuleType, history: Path) -> None:
    cases = prepare.cases_of("tiny", history)
    assert [(case.question, case.files) for case in cases] == [
        ("Fix environment proxies lookup with NO_PROXY (#12)", ("src/proxy.py",)),
        ("Add jitter to the retry delay (#15)", ("src/retry.py",)),
    ]  # oldest first; tests, changelogs, bumps, docs and added files are not gold
    parents = git(history, "rev-list", "--first-parent", "HEAD").split()
    assert cases[0].revision == parents[-1]  # asked against the tree before the fix
    assert prepare.cases_of("tiny", history) == cases  # deterministic


def test_each_case_records_the_old_side_hunks_of_its_gold_files(
    prepare: ModuleType, history: Path
) -> None:
    proxy, retry = prepare.cases_of("tiny", history)
    # the NO_PROXY fix inserted two lines after line 1 of the old file: a pure insertion
    # counts its two neighbours
    assert proxy.hunks == (("src/proxy.py", ((1, 2),)),)
    # the jitter change replaced line 4 of the old file
    assert retry.hunks == (("src/retry.py", ((4, 4),)),)
    assert prepare.old_side_ranges("@@ -10,3 +10,4 @@\n@@ -0,0 +1 @@\n@@ -7 +8 @@") == (
        (10, 12),
        (1, 1),
        (7, 7),
    )


def test_noise_filter_keeps_questions_and_drops_housekeeping(prepare: ModuleType) -> None:
    assert prepare.acceptable("fix(router): keep params on unmatched requests (#5268)")
    assert prepare.acceptable("Detect ZIP archives as binary content")
    for noise in (
        "3.2.0",
        "Bump qs from 6.1 to 6.2",
        "chore: tidy",
        "Fix typo",
        "set version to 1.0",
    ):
        assert not prepare.acceptable(noise), noise
    assert prepare.is_source("lib/route.js") and not prepare.is_source("test/route.test.js")
    assert not prepare.is_source("docs/guide.py") and not prepare.is_source("cmd/root_test.go")


@pytest.fixture(scope="module")
def prepared(prepare: ModuleType, history: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("prepared")
    cases = prepare.cases_of("tiny", history)
    prepare.prepare_tree(history, out / "trees" / "tiny", [case.revision for case in cases])
    return prepare.write_cases(out, cases)  # type: ignore[no-any-return]


def test_eval_checks_out_each_revision_and_scores_every_ranker(prepared: Path) -> None:
    cases = load_cases(prepared)
    assert {case.dataset for case in cases} == {"tiny"} and all(case.revision for case in cases)
    bm25, baseline = evaluate_rankers(cases, ["bm25", BASELINE], k=5, context=True)
    assert bm25.overall.cases == 2 and bm25.overall.hit_at_5 == 1.0
    assert baseline.ranker == BASELINE and baseline.overall.hit_at_5 == 1.0
    # the packed context carried the gold file's own lines, within the budget
    assert all(result.evidence for result in bm25.results)
    assert bm25.overall.evidence_recall == 1.0
    assert all(0 < (result.context_tokens or 0) <= 12000 for result in bm25.results)
    assert baseline.overall.evidence_recall is None  # the baseline has no context
    # line level: the returned unit overlaps the changed lines, and the context holds them
    assert bm25.overall.line_cases == 2
    assert bm25.overall.line_hit_at_5 == 1.0 and bm25.overall.hunk_evidence == 1.0
    assert baseline.overall.line_hit_at_5 is None  # whole files cite no lines
    tree = prepared.parent / "trees" / "tiny"
    assert git(tree, "rev-parse", "HEAD").strip() == cases[-1].revision
    assert git(tree, "status", "--porcelain").strip() == ""  # the index is kept out of git


def test_eval_command_reports_per_dataset_in_one_pass(prepared: Path) -> None:
    result = CliRunner().invoke(
        main, ["eval", str(prepared), "--ranker", "bm25", "--ranker", "files", "--json"]
    )
    assert result.exit_code == 0, result.output
    reports = json.loads(result.stdout)
    assert [report["ranker"] for report in reports] == ["bm25", "files"]
    assert reports[0]["overall"]["cases"] == 2
    assert reports[0]["perClass"]["history"]["hit@5"] == 1.0


def test_a_missing_revision_is_a_clear_error(prepared: Path, tmp_path: Path) -> None:
    row = json.loads(prepared.read_text().splitlines()[0])
    row["revision"] = "0" * 40
    row["root"] = str(prepared.parent / row["root"])
    broken = tmp_path / "cases.jsonl"
    broken.write_text(json.dumps(row) + "\n")
    result = CliRunner().invoke(main, ["eval", str(broken)])
    assert result.exit_code != 0
    assert "cannot check out 0000000" in result.stderr


def test_a_tree_with_work_in_it_is_never_checked_out_by_force(prepared: Path) -> None:
    tree = prepared.parent / "trees" / "tiny"
    tracked = next(path for path in sorted(tree.rglob("*.py")) if ".git" not in path.parts)
    tracked.write_text(tracked.read_text() + "\n# work in progress\n")
    (tree / "notes.txt").write_text("not committed yet\n")
    head = git(tree, "rev-parse", "HEAD").strip()

    try:
        with pytest.raises(ConfigError, match="uncommitted or untracked files"):
            evaluate_rankers(load_cases(prepared), ["bm25"], k=5)

        assert tracked.read_text().endswith("# work in progress\n")  # nothing lost
        assert (tree / "notes.txt").read_text() == "not committed yet\n"
        assert git(tree, "rev-parse", "HEAD").strip() == head
    finally:  # the module's other tests share the tree
        git(tree, "checkout", "--quiet", "--", str(tracked.relative_to(tree)))
        (tree / "notes.txt").unlink()


def test_the_baseline_is_plain_bm25_over_whole_files(tmp_path: Path) -> None:
    (tmp_path / "long.py").write_text("def other():\n    pass\n" * 40 + "# jitter\n")
    (tmp_path / "short.py").write_text("# retry jitter\n")
    (tmp_path / "none.py").write_text("def unrelated():\n    pass\n")
    with build_index(tmp_path) as index:
        baseline = WholeFileBM25()
        baseline.sync(index)
        assert baseline.rank("retry jitter", 5) == ["short.py", "long.py"]
        (tmp_path / "short.py").write_text("# nothing\n")
        from szrag.index import refresh_index

        refresh_index(index)
        baseline.sync(index)  # follows the index: the edited file lost its terms
        assert baseline.rank("retry jitter", 5) == ["long.py"]
