from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from szrag.base.errors import ConfigError
from szrag.cli import main
from szrag.rank.retrieve import Source
from szrag.service.evaluate import (
    EvalCase,
    evaluate,
    first_files,
    holds_hunk,
    hunk_lines,
    line_rank,
    load_cases,
    score_case,
)


def case(files: tuple[str, ...], query_class: str = "conceptual") -> EvalCase:
    return EvalCase("c", "question", files, Path("."), query_class)


def test_metrics_of_one_case() -> None:
    result = score_case(case(("b.js", "d.js")), ["a.md", "b.js", "b.js", "c.md", "d.js"], k=8)
    assert result.retrieved == ("a.md", "b.js", "c.md", "d.js")
    assert result.rank == 2 and result.reciprocal_rank == 0.5
    assert not result.hit(1) and result.hit(5) and result.recall == 1.0
    missing = score_case(case(("z.js",)), ["a.md"], k=8)
    assert missing.rank is None and missing.reciprocal_rank == 0.0 and missing.recall == 0.0
    cut = score_case(case(("z.js",)), ["a", "b", "c", "z.js"], k=3)
    assert cut.rank is None


def test_nomatch_cases_succeed_only_when_nothing_is_returned() -> None:
    assert score_case(case((), "nomatch"), [], k=8).hit(1)
    noisy = score_case(case((), "nomatch"), ["docs/a.md"], k=8)
    assert not noisy.hit(8) and noisy.reciprocal_rank == 0.0 and noisy.recall == 0.0


def write_cases(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    return path


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"question": ""}, "question must be a non-empty string"),
        ({"question": "q", "files": "a.js"}, "files must be a list"),
        ({"question": "q", "files": ["a"], "class": "odd"}, "class must be one of"),
        ({"question": "q", "files": [], "class": "docs"}, "nomatch cases, and only they"),
        ({"question": "q", "files": ["a"], "hunks": [[1, 2]]}, "hunks must map paths"),
        ({"question": "q", "files": ["a"], "hunks": {"a": [[3, 2]]}}, "hunks of a must be"),
        ({"question": "q", "files": ["a"], "hunks": {"a": [[0, 2]]}}, "hunks of a must be"),
    ],
)
def test_bad_cases_name_their_line(tmp_path: Path, row: dict[str, object], message: str) -> None:
    path = write_cases(tmp_path / "cases.jsonl", [{"question": "fine", "files": ["a"]}, row])
    with pytest.raises(ConfigError, match=re.escape(f"cases.jsonl:2: {message}")):
        load_cases(path)


def test_invalid_json_and_duplicates(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"question": \n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:1: invalid JSON"):
        load_cases(tmp_path / "bad.jsonl")
    path = write_cases(tmp_path / "dup.jsonl", [{"id": "x", "question": "q", "files": ["a"]}] * 2)
    with pytest.raises(ConfigError, match="duplicate id x"):
        load_cases(path)


def test_evaluate_both_rankers_over_a_fixture(retrieval_repo: Path, tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"id": "e1", "question": "What does server/lib/systemd.js do?", "files": ["server/lib/systemd.js"], "class": "exact"},
        {"id": "i1", "question": "where is verifyGithubSignature?", "files": ["server/webhook.js"], "class": "identifier"},
        {"id": "d1", "question": "How is replay of Slack requests prevented?", "files": ["docs/security.md"], "class": "docs"},
        {"id": "n1", "question": "qwxz vbnm", "files": [], "class": "nomatch"},
    ]  # fmt: skip
    for row in rows:
        row["root"] = str(retrieval_repo)
    cases = load_cases(write_cases(tmp_path / "cases.jsonl", rows))
    bm25 = evaluate(cases, k=8, ranker="bm25")
    assert bm25.overall.hit_at_1 == 1.0 and bm25.overall.mrr == 1.0
    assert set(bm25.per_class) == {"exact", "identifier", "docs", "nomatch"}
    spec = evaluate(cases, k=8, ranker="spec")
    assert spec.per_class["exact"].hit_at_1 == 1.0
    assert spec.per_class["nomatch"].hit_at_1 == 1.0  # the default profile returns nothing
    assert spec.to_dict()["ranker"] == "spec"


def test_eval_command_prints_metrics_and_failures(retrieval_repo: Path, tmp_path: Path) -> None:
    path = write_cases(
        tmp_path / "cases.jsonl",
        [
            {
                "id": "i1",
                "question": "verifyGithubSignature",
                "files": ["server/webhook.js"],
                "class": "identifier",
            },
            {
                "id": "bad",
                "question": "scheduler pages",
                "files": ["no/such/file.js"],
                "class": "conceptual",
            },
        ],
    )
    runner = CliRunner()
    result = runner.invoke(
        main, ["eval", str(path), "--root", str(retrieval_repo), "--ranker", "bm25", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["overall"]["cases"] == 2
    assert [failure["id"] for failure in data["failures"]] == ["bad"]
    human = runner.invoke(
        main, ["eval", str(path), "--root", str(retrieval_repo), "--ranker", "spec"]
    )
    assert human.exit_code == 0 and "overall" in human.stdout and "ranker spec" in human.stdout


def test_line_rank_counts_a_files_units_as_one_result() -> None:
    case = EvalCase("c", "q", ("b.py",), Path("."), "history", hunks=(("b.py", ((40, 42),)),))
    sources = [("a.py", 1, 10), ("a.py", 20, 30), ("b.py", 1, 9), ("b.py", 35, 41)]
    assert line_rank(case, sources) == 2  # the second file, however many units the first had
    assert line_rank(case, [("b.py", 43, 50), ("c.py", 40, 42)]) is None  # off by one line


def test_hunk_evidence_needs_half_of_a_hunks_telling_lines(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "def verify(signature, body):\n    expected = sign(body)\n    return compare(expected, signature)\n    }\n",
        encoding="utf-8",
    )
    case = EvalCase("c", "q", ("m.py",), tmp_path, "history", hunks=(("m.py", ((1, 4),)),))
    hunks = hunk_lines(case)
    assert hunks == [
        [
            "def verify(signature, body):",
            "expected = sign(body)",
            "return compare(expected, signature)",
        ]
    ]
    assert holds_hunk(hunks, "FILE: m.py\n    expected = sign(body)\ndef verify(signature, body):")
    assert not holds_hunk(hunks, "expected = sign(body)\n}")  # one of three, and "}" proves nothing


def test_the_context_packs_every_unit_of_the_first_files_as_an_answer_does() -> None:
    def source(path: str, start: int) -> Source:
        return Source(path, start, start + 9, "python", None, "x = 1", 5)

    sources = [source("a.py", 1), source("a.py", 40), source("b.py", 1), source("c.py", 1)]
    sources += [source("b.py", 30), source("d.py", 1)]
    chosen = first_files(sources, 2)
    assert [(item.path, item.start) for item in chosen] == [
        ("a.py", 1), ("a.py", 40), ("b.py", 1), ("b.py", 30)
    ]  # fmt: skip
    assert first_files(sources, 8) == sources
