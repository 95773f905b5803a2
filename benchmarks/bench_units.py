"""What the second stage costs a warm question: retrieval with each file's units against the
ranker's windows alone, over one repository and the questions of a case file.

For each question, in a warm process (views in memory, as a server keeps them), prints the
median and p95 of ``retrieve`` in the default profile (files by the ranker, then each file's
best units) beside the same index's ranker alone (one window per file, as the ``slackzilla``
profile returns), and the units cache's first pass (every file's units made) against a second
pass over the same questions (units kept by content hash).

    python benchmarks/bench_units.py ROOT CASES [--dataset NAME] [--rounds 3]

ROOT is a checkout (a real-history tree, say); CASES a case file whose questions are asked
(``--dataset`` keeps one dataset's).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from szrag.index import Index, load_index
from szrag.rank import Query, ranker_named
from szrag.rank.retrieve import retrieve


def questions_of(cases: Path, dataset: str | None) -> list[str]:
    found = []
    for line in cases.read_text(encoding="utf-8").splitlines():
        if line.strip():
            case = json.loads(line)
            if dataset is None or case.get("dataset") == dataset:
                found.append(str(case["question"]))
    return found


def timed(ask: Callable[[str], object], questions: Sequence[str]) -> list[float]:
    timings = []
    for question in questions:
        started = time.perf_counter()
        ask(question)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def figures(label: str, timings: Sequence[float]) -> str:
    ordered = sorted(timings)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{label:52} median {statistics.median(ordered):7.1f} ms, p95 {p95:7.1f} ms"


def windows_only(index: Index) -> Callable[[str], object]:
    ranker = ranker_named(index.config.profile.ranker)

    def ask(question: str) -> object:
        query = Query.parse(question, index.config.extensions)
        chosen = ranker.rank(index, query, 8, fill=True)
        return index.chunk_texts([candidate.chunk_id for candidate in chosen])

    return ask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("cases", type=Path)
    parser.add_argument("--dataset")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    questions = questions_of(options.cases, options.dataset)
    with load_index(options.root) as index:
        index.keep_in_memory()
        retrieve(questions[0], index=index)  # the ranker's views, built once
        print(f"{options.root}: {len(index.files_by_path())} files, {len(questions)} questions")
        first = timed(lambda question: retrieve(question, index=index), questions)
        print(figures("units, first pass (each file's units made)", first))
        kept: list[float] = []
        windows: list[float] = []
        for _ in range(options.rounds):  # alternating, so both see the same machine
            kept += timed(lambda question: retrieve(question, index=index), questions)
            windows += timed(windows_only(index), questions)
        print(figures("units, later passes (units kept)", kept))
        print(figures("the ranker's windows alone (the floor)", windows))


if __name__ == "__main__":
    main()
