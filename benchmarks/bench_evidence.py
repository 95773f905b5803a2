"""A warm server's evidence for a new question, phase by phase, beside a baseline revision.

    python benchmarks/bench_evidence.py [--baseline REV] [--rounds 3] [--mirrors DIR] [--large]

One process opens the index as a server does (``open_shared_index``, views kept in memory:
new words scored by the full-text index while their postings are read in the background),
builds the views a server warms, asks the five questions of ``bench_mixed.py`` (their words' postings read), then asks
the new questions of ``bench_growth.py`` once each: words and files it has not seen. Each is
timed by phase (retrieval with the second stage's units, the codebase context, the packed
context) as ``answer/evidence.py`` runs them, in a worker thread as a server does. Prints the
median and p95 of each phase and of the whole, per version; a round is one fresh process per
version, the versions alternating, so both meet the same machine. The corpus is
``mixed_corpus.py``'s (``--large``: the growth corpus); the baseline runs from a git worktree
under ``benchmarks/.work`` on its own copy of the corpus, so neither reads the other's index.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_growth import NEW_QUESTIONS
from benchmarks.bench_mixed import QUESTIONS, add_version_arguments, versions_of
from benchmarks.bench_server import _percentile

if TYPE_CHECKING:
    from szrag.index.shared import SharedIndex

REPOSITORY = Path(__file__).resolve().parent.parent
PHASES = ("retrieval", "context", "packing", "evidence")


def measure(root: Path) -> dict[str, list[float]]:
    """In this process: the phases of each new question over the index of ``root``."""
    from szrag.index.shared import open_shared_index

    index = open_shared_index(root)
    try:
        return _measure(index)
    finally:
        index.close()


def _measure(index: SharedIndex) -> dict[str, list[float]]:
    import threading
    import time

    from szrag.context import build_codebase_context, pack_repository_context
    from szrag.context.plan import ContextPlan
    from szrag.rank.retrieve import retrieve
    from szrag.service.watch import warm_views

    index.keep_in_memory()  # as a server keeps its views
    warm_views(index)
    plan = ContextPlan.of(index.config, {})
    counter = plan.counter()
    times: dict[str, list[float]] = {phase: [] for phase in PHASES}
    failed: list[BaseException] = []

    def ask(question: str, record: bool) -> None:
        with index.reading():
            started = time.perf_counter()
            sources = retrieve(question, index=index)
            retrieved = time.perf_counter()
            context = build_codebase_context(question, index, sources)
            built = time.perf_counter()
            pack_repository_context(
                sources, context, budget=plan.budget, counter=counter, packing=plan.packing
            )
            packed = time.perf_counter()
        if record:
            for phase, seconds in zip(
                PHASES,
                (retrieved - started, built - retrieved, packed - built, packed - started),
                strict=True,
            ):
                times[phase].append(seconds)

    def run() -> None:
        try:
            for question in QUESTIONS:  # as a server's first questions: their postings read
                ask(question, record=False)
            time.sleep(1.0)  # the background reads of those words are over
            for question in NEW_QUESTIONS:
                ask(question, record=True)
        except BaseException as error:  # raised again below, not lost with the thread
            failed.append(error)

    worker = threading.Thread(target=run)  # a server gathers evidence in a worker thread
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return times


def run_version(source: Path, root: Path) -> dict[str, list[float]]:
    """``measure`` in a fresh process running szrag from ``source``."""
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(REPOSITORY)])}
    completed = subprocess.run(
        [sys.executable, __file__, "--measure", str(root)],
        env=environ,
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, list[float]] = json.loads(completed.stdout.splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_version_arguments(parser)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return

    versions = versions_of(args)
    for _, source, root in versions:  # each index built (or refreshed) by its own version
        subprocess.run(
            [sys.executable, "-m", "szrag.cli", "index", "--root", str(root)],
            env={**os.environ, "PYTHONPATH": str(source)},
            check=True,
            capture_output=True,
        )
    figures: dict[str, dict[str, list[float]]] = {label: {} for label, _, _ in versions}
    for _ in range(args.rounds):
        for label, source, root in versions:
            for phase, values in run_version(source, root).items():
                figures[label].setdefault(phase, []).extend(values)

    questions = len(NEW_QUESTIONS)
    print(f"a warm new question's evidence, {questions} questions x {args.rounds} rounds (ms)")
    print(f"{'phase':12}" + "".join(f"{label:>34}" for label, _, _ in versions))
    for phase in PHASES:
        cells = []
        for label, _, _ in versions:
            values = figures[label][phase]
            cells.append(
                f"{statistics.median(values) * 1000:.1f} (p95 {_percentile(values, 0.95) * 1000:.1f})"
            )
        print(f"{phase:12}" + "".join(f"{cell:>34}" for cell in cells))


if __name__ == "__main__":
    main()
