"""Index and retrieval speed on a generated repository.

Prints: cold build files/s, refresh with nothing changed, refresh after one file changed,
retrieve median and p95 in a warm process, and the one-shot CLI ``szrag retrieve``.

    python benchmarks/bench_index.py [--files 10000] [--queries 50]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.generate_repo import WORDS, Zipf, generate, vocabulary
from szrag.index import build_index, load_index, refresh_index
from szrag.rank.retrieve import retrieve

WORK = Path(__file__).parent / ".work"


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--vocabulary", type=int, default=5000, help="distinct words (Zipf)")
    args = parser.parse_args()

    root = WORK / f"repo-{args.files}-{args.vocabulary}"
    if root.exists():
        shutil.rmtree(root)
    started = time.perf_counter()
    generate(root, args.files, args.lines, vocabulary_size=args.vocabulary)
    print(f"generated {args.files} files in {time.perf_counter() - started:.1f}s at {root}")

    started = time.perf_counter()
    index = build_index(root)
    cold = time.perf_counter() - started
    counts = index.counts()
    size = index.path.stat().st_size / 1e6
    print(
        f"cold build: {counts['files']} files, {counts['chunks']} chunks, {counts['edges']} edges"
        f" in {cold:.2f}s = {counts['files'] / cold:.0f} files/s (database {size:.0f} MB)"
    )

    timings = []
    for _ in range(5):
        started = time.perf_counter()
        report = refresh_index(index)
        timings.append(time.perf_counter() - started)
        assert not report.changed_anything
    print(f"refresh, nothing changed: median {statistics.median(timings) * 1000:.0f} ms")

    target = next(root.glob("pkg000/m0.js"))
    timings = []
    for round_number in range(5):
        target.write_text(target.read_text() + f"// edit {round_number}\n")
        started = time.perf_counter()
        report = refresh_index(index)
        timings.append(time.perf_counter() - started)
        assert report.changed == ["pkg000/m0.js"], report
    print(f"refresh, one file changed: median {statistics.median(timings) * 1000:.0f} ms")

    import random

    rng = random.Random(3)
    words = Zipf(vocabulary(args.vocabulary), rng)
    questions = [
        f"how does the {words.choice()} {words.choice()} {rng.choice(WORDS)} work?"
        for _ in range(args.queries)
    ]
    index.keep_in_memory()
    started = time.perf_counter()
    retrieve(questions[0], index=index, ranker="spec")  # builds the in-memory arrays
    print(f"in-memory arrays built in {time.perf_counter() - started:.2f}s")
    timings = []
    for question in questions:
        started = time.perf_counter()
        retrieve(question, index=index, ranker="spec")
        timings.append(time.perf_counter() - started)
    print(
        f"retrieve --ranker spec (warm process, in-memory arrays, {len(questions)} questions): median {statistics.median(timings) * 1000:.1f} ms,"
        f" p95 {_percentile(timings, 0.95) * 1000:.1f} ms"
    )
    timings = []
    for question in questions:
        started = time.perf_counter()
        retrieve(question, index=index, ranker="bm25")
        timings.append(time.perf_counter() - started)
    print(
        f"retrieve --ranker bm25 (warm process, the default): median {statistics.median(timings) * 1000:.1f} ms,"
        f" p95 {_percentile(timings, 0.95) * 1000:.1f} ms"
    )
    index.close()

    with load_index(root):
        pass
    szrag = Path(sys.executable).parent / "szrag"
    timings = []
    for question in questions[: args.cli_runs]:
        started = time.perf_counter()
        subprocess.run(
            [str(szrag), "retrieve", question, "--root", str(root), "--json"],
            check=True,
            capture_output=True,
        )
        timings.append(time.perf_counter() - started)
    print(
        f"one-shot CLI szrag retrieve (default ranker bm25, {len(timings)} runs): median {statistics.median(timings):.2f} s,"
        f" max {max(timings):.2f} s"
    )
    timings = []
    for question in questions[: args.cli_runs]:
        started = time.perf_counter()
        subprocess.run(
            [str(szrag), "retrieve", question, "--root", str(root), "--json", "--ranker", "spec"],
            check=True,
            capture_output=True,
        )
        timings.append(time.perf_counter() - started)
    print(
        f"one-shot CLI szrag retrieve --ranker spec: median {statistics.median(timings):.2f} s,"
        f" max {max(timings):.2f} s"
    )


if __name__ == "__main__":
    main()
