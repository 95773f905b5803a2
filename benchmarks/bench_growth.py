"""How the warm server's costs grow with the corpus: the mixed corpus (about 9,200 files)
beside the large one (about 25,000), side by side with the growth of each figure.

    python benchmarks/bench_growth.py [--rounds 4] [--mirrors DIR] [--corpus NAME=DIR ...]
        [--larger] [--questions FILE [--count 120]]

For each corpus (built from mirrors by ``mixed_corpus.py`` unless given with ``--corpus``,
indexed once if it has no index), a server runs from this checkout (``szrag serve`` as
``bench_server.szrag_server`` starts it, without a model, the watcher off). It is asked the
five questions of ``bench_mixed.py`` (its warm-up: the views are built), then 25 questions
once each (new words for the server), then the five again ``--rounds`` times. Figures: the
median and p95 of ``/api/ask`` without a model for new questions and repeated ones, and the
server's resident memory (``VmRSS``) after its first 30 questions and at the end. The machine
may be shared: the timings are indicative, the memory is not.

``--larger`` adds a third corpus, about 54,000 files (``mixed_corpus.py --larger``: the large
one with Java, PHP and Ruby repositories), and the growth is then from the first to it.

Twenty-five new questions give a median that moves by several milliseconds from run to run.
``--questions`` asks ``--count`` questions of a file instead (one a line, or JSON lines with a
``question`` field such as the real-history set's ``cases.jsonl``), shuffled with a fixed seed:
the words of real issues and commits, and a steadier median.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_mixed import FRESH_QUESTIONS, QUESTIONS, _corpus_files, wait_for_views
from benchmarks.bench_server import _percentile, szrag_server
from benchmarks.mixed_corpus import (
    DEFAULT_MIRRORS,
    LARGE_EXTRA,
    LARGER_EXTRA,
    REPOSITORIES,
    WORK,
    build,
)
from szrag.llm.testing import ScriptedProvider, serve

REPOSITORY = Path(__file__).resolve().parent.parent
# asked once each after the warm-up, with ``bench_mixed.FRESH_QUESTIONS`` before them
MORE_QUESTIONS = (
    "how does pytest rewrite assert statements",
    "where does click format the help text of a command",
    "how are sessions signed in flask",
    "how does sphinx build the table of contents tree",
    "where does pylint load its plugins",
    "how does httpx handle timeouts on a connection pool",
    "how does express parse query strings",
    "where are fixtures with session scope finalized",
    "how does requests retry a failed connection",
    "how does llm store conversation logs in sqlite",
    "where does aider build the repository map",
    "how does thelounge store user settings",
    "how are environment variables read for configuration",
    "where is the version number of the package defined",
    "how does sqlite-utils add a column to an existing table",
)
NEW_QUESTIONS = (*FRESH_QUESTIONS, *MORE_QUESTIONS)


@dataclass
class Corpus:
    """One corpus and what its server measured."""

    name: str
    root: Path
    files: int = 0
    figures: dict[str, list[float]] = field(default_factory=dict)

    def record(self, name: str, value: float) -> None:
        self.figures.setdefault(name, []).append(value)


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _indexed(root: Path) -> None:
    if not (root / ".rag" / "index.db").exists():
        subprocess.run(
            [sys.executable, "-m", "szrag.cli", "index", "--root", str(root)],
            check=True,
            capture_output=True,
        )


def read_questions(path: Path, count: int) -> tuple[str, ...]:
    """``count`` questions of ``path`` (one a line, or JSON lines with a ``question``),
    shuffled with a fixed seed so that every run and version asks the same ones."""
    found: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if not text:
            continue
        if text.startswith("{"):
            question = json.loads(text).get("question")
            if isinstance(question, str) and question.strip():
                found.append(question.strip())
        else:
            found.append(text)
    if not found:
        raise SystemExit(f"{path}: no questions in it")
    random.Random(0).shuffle(found)
    return tuple(dict.fromkeys(found))[:count]


def measure(
    corpus: Corpus, provider_url: str, rounds: int, new: tuple[str, ...] = NEW_QUESTIONS
) -> None:
    """Ask ``corpus``'s server its questions (``new``: those it has not seen); record their
    times and the server's memory."""
    with (
        szrag_server(corpus.root, provider_url, start_timeout=600) as base,
        httpx.Client(base_url=base, timeout=120) as client,
    ):
        status = client.get("/api/status").json()["data"]
        pid = int(status["pid"])

        def ask(question: str) -> float:
            started = time.perf_counter()
            response = client.post("/api/ask", json={"question": question, "withAi": False})
            elapsed = time.perf_counter() - started
            response.raise_for_status()
            return elapsed

        for question in QUESTIONS:  # warm-up: answered while the shared views are built
            corpus.record("warm-up ask", ask(question))
        wait_for_views(client)
        for number, question in enumerate(new, 1):
            corpus.record("new question", ask(question))
            if number == min(len(new), 30):
                corpus.record("RSS after 30 questions", _rss_mib(pid))
        for _ in range(rounds):
            for question in QUESTIONS:
                corpus.record("repeated question", ask(question))
        corpus.record("RSS at the end", _rss_mib(pid))


def _cell(values: list[float], unit: str) -> str:
    if not values:
        return "-"
    if unit == "ms":
        middle = statistics.median(values) * 1000
        return f"{middle:.1f} (p95 {_percentile(values, 0.95) * 1000:.1f}) ms"
    return f"{statistics.median(values):.0f} {unit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument(
        "--corpus", action="append", default=[], help="NAME=DIR, instead of the two built"
    )
    parser.add_argument(
        "--questions", type=Path, help="ask this file's questions as the new ones (see above)"
    )
    parser.add_argument("--count", type=int, default=120, help="how many of them")
    parser.add_argument("--larger", action="store_true", help="a third corpus of about 54k files")
    args = parser.parse_args()
    new = read_questions(args.questions, args.count) if args.questions else NEW_QUESTIONS
    if args.corpus:
        named = [item.partition("=") for item in args.corpus]
        corpora = [Corpus(name, Path(folder)) for name, _, folder in named]
    else:
        corpora = [
            Corpus("mixed", build(WORK / "mixed", args.mirrors)),
            Corpus(
                "mixed-large",
                build(WORK / "mixed-large", args.mirrors, repositories=REPOSITORIES + LARGE_EXTRA),
            ),
        ]
        if args.larger:
            extra = LARGE_EXTRA + LARGER_EXTRA
            larger = build(WORK / "mixed-larger", args.mirrors, repositories=REPOSITORIES + extra)
            corpora.append(Corpus("mixed-larger", larger))
    for corpus in corpora:
        _indexed(corpus.root)
        corpus.files = sum(1 for _ in _corpus_files(corpus.root))
    with serve(ScriptedProvider()) as url:
        for corpus in corpora:
            measure(corpus, url, args.rounds, new)

    rows = (
        ("new question", "ms"),
        ("repeated question", "ms"),
        ("warm-up ask", "ms"),
        ("RSS after 30 questions", "MiB"),
        ("RSS at the end", "MiB"),
    )
    if args.questions:
        print(f"new questions: {len(new)} of {args.questions}")
    width = 28
    print("files".ljust(width) + "".join(f"{c.files:>30}" for c in corpora) + f"{'growth':>10}")
    print("figure".ljust(width) + "".join(f"{c.name:>30}" for c in corpora))
    for name, unit in rows:
        cells = [_cell(corpus.figures.get(name, []), unit) for corpus in corpora]
        first, last = (corpora[0].figures.get(name), corpora[-1].figures.get(name))
        growth = (
            f"x{statistics.median(last) / statistics.median(first):.2f}"
            if first and last and len(corpora) > 1
            else ""
        )
        print(name.ljust(width) + "".join(f"{cell:>30}" for cell in cells) + f"{growth:>10}")


if __name__ == "__main__":
    main()
