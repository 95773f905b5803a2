"""The speed figures on the mixed corpus, for this checkout beside a baseline revision, with
the floor of each on this machine.

    python benchmarks/bench_mixed.py [--baseline REV] [--rounds 3] [--mirrors DIR] [--large]

Figures: cold build (wall, CPU of all processes, largest process's peak memory), refresh with
nothing changed and with one file changed (a Python file, then a TypeScript one), a one-shot
``szrag retrieve`` (process start to printed result, median over five questions, the tree
left alone past a walk's racy window; and one asked just after the edits, which only a walk can
prove current) and a one-shot
``szrag ask --no-ai`` (one question a round), a server's start (process start to ``/healthz``
answering, its index current) and its first ``/api/ask`` after that, the warm server's ``/api/ask`` without a model
(the five questions again and again, and ten others asked once each: words the server has not
searched for yet) and its time to the first token with a scripted provider that answers at
once; with the file watcher on, as ``szrag serve`` runs by default, a question asked just after
a file is rewritten and the server's CPU for that one edit (its refresh and the views it
builds again); and the index on disk. Floors: reading every file, a stat of every file, ``python -c pass``,
tree-sitter's own parse and structure query of every code file (CPU, and that shared by the
cores: the least a build that parses every code file can take), and the least a one-shot
question can do with its index current (open it, compare every file's stat, run the
full-text search, in a fresh process).

Each version runs from its own source tree (the baseline in a git worktree under
``benchmarks/.work``) on its own copy of the corpus, so neither reads the other's index;
one-shot and refresh runs alternate between the versions, round by round. ``--large`` runs
on the growth corpus (``mixed_corpus.py --large``, about 25,000 files) instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_server import _percentile, szrag_server
from benchmarks.mixed_corpus import DEFAULT_MIRRORS, LARGE_EXTRA, REPOSITORIES, WORK, build
from szrag.llm.testing import ScriptedProvider, serve, text_reply

REPOSITORY = Path(__file__).resolve().parent.parent
QUESTIONS = (
    "how does pytest collect test modules from a directory",
    "where are redirects followed when sending a request",
    "how are route parameters parsed in the router",
    "how is the search index written for the html builder",
    "how are command line options parsed into parameters",
)
# asked once each after the warm-up: the words a server has not searched for yet (a server
# keeps each searched term's postings, so the repeated questions above find theirs in memory)
FRESH_QUESTIONS = (
    "how does sphinx resolve cross references between documents",
    "where does pylint report unused imports",
    "how does flask dispatch a request to a view function",
    "how are cookies persisted between sessions in requests",
    "how does aider apply an edit block to a file",
    "where does sqlite-utils create a table from a list of dicts",
    "how does express serve static files",
    "how are plugins registered with llm",
    "where are irc messages parsed in thelounge",
    "how does httpx decode a gzip response body",
)
# (figure, file): a refresh with one of these rewritten; TypeScript's grammar makes the
# costliest structure query to compile
CHANGED_FILES = (
    ("refresh one changed", "click/src/click/core.py"),
    ("refresh one TypeScript changed", "thelounge/server/server.ts"),
)
MEASURED = """
import resource, subprocess, sys, time, json
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "maxrss_kib": usage.ru_maxrss, "code": done.returncode}))
"""
# a walk vouches for no file changed within two seconds of it (``collect._RACY_NS``: the
# same clock tick could hide a second write): the settled one-shot figures wait this long
SETTLE_SECONDS = 2.5
# The least a one-shot question can do with its index current, in a fresh process: open the
# index, compare every indexed file's stat with a stat of the file, run the ranker's
# full-text search (its terms worked out beforehand); no command line, ranking, reading of
# chunks or printing.
ONE_SHOT_FLOOR = """
import os, sqlite3, sys
root, expression = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(os.path.join(root, ".rag", "index.db"))
for path, size, mtime_ns in conn.execute("SELECT path, size, mtime_ns FROM files").fetchall():
    found = os.stat(os.path.join(root, path))
    if (found.st_size, found.st_mtime_ns) != (size, mtime_ns):
        raise SystemExit(f"stale: {path}")
conn.execute(
    "SELECT rowid, bm25(chunk_terms, 4.0, 2.0, 5.0, 1.0) AS rank FROM chunk_terms"
    " WHERE chunk_terms MATCH ? ORDER BY rank LIMIT 400",
    (expression,),
).fetchall()
"""
# tree-sitter's own work in a cold build that parses every code file: each file parsed and
# its structure query's matches walked (szrag's grammars and queries), nothing else
PARSE_FLOOR = """
import json, os, sys, time
from pathlib import Path
from tree_sitter import QueryCursor
from szrag.code.extract import MAX_NESTING, bracket_depth, parser
from szrag.code.languages import compile_whole_queries, language_of, query, root_query
from szrag.base.config import DEFAULT_MAX_FILE_BYTES
root = sys.argv[1]
code = []
for directory, folders, names in os.walk(root):
    folders[:] = [name for name in folders if name not in (".git", ".rag")]
    for name in names:
        path = os.path.join(directory, name)
        language = language_of(os.path.relpath(path, root))
        if language and os.path.getsize(path) <= DEFAULT_MAX_FILE_BYTES:
            source = Path(path).read_bytes()
            if bracket_depth(source) <= MAX_NESTING:  # as the build: too deep is not parsed
                code.append((language, source))
compile_whole_queries()
for language in {language for language, _ in code}:
    query(language), root_query(language)  # compiled before the clock starts
started = time.process_time()
for language, source in code:
    tree = parser(language).parse(source)
    for compiled in (root_query(language), query(language)):
        if compiled is not None:
            for _ in QueryCursor(compiled).matches(tree.root_node):
                pass
print(json.dumps({"files": len(code), "cpu": time.process_time() - started}))
"""


@dataclass
class Version:
    """One source tree of szrag and the corpus copy it reads."""

    label: str
    source: Path
    corpus: Path
    figures: dict[str, list[float]] = field(default_factory=dict)

    @property
    def environment(self) -> dict[str, str]:
        environ = {
            key: value for key, value in os.environ.items() if not key.startswith(("AI_", "SZRAG_"))
        }
        environ["PYTHONPATH"] = str(self.source)
        environ["SZRAG_AUDIT_LOG"] = "off"
        return environ

    def record(self, name: str, value: float) -> None:
        self.figures.setdefault(name, []).append(value)

    def szrag(self, *arguments: str) -> dict[str, float]:
        """Run ``szrag ARGUMENTS`` on the corpus: wall and CPU seconds, peak KiB."""
        command = [sys.executable, "-c", MEASURED, sys.executable, "-m", "szrag.cli", *arguments]
        done = subprocess.run(
            command, env=self.environment, capture_output=True, text=True, check=True
        )
        measured: dict[str, float] = json.loads(done.stdout)
        if measured["code"] != 0:
            raise RuntimeError(f"{self.label}: szrag {' '.join(arguments)} failed")
        return measured


def _corpus_files(root: Path) -> Iterator[Path]:
    for directory, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name not in (".git", ".rag")]
        for name in files:
            yield Path(directory, name)


def _entries(directory: str) -> Iterator[os.DirEntry[str]]:
    with os.scandir(directory) as listing:
        for entry in listing:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in (".git", ".rag"):
                    yield from _entries(entry.path)
            elif entry.is_file(follow_symlinks=False):
                yield entry


def floors(root: Path) -> dict[str, float]:
    """What no implementation can beat on this machine: the best of three warm passes."""

    def best(work: Callable[[], object]) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            work()
            times.append(time.perf_counter() - started)
        return min(times)

    def read_all() -> None:
        for entry in _entries(str(root)):
            with open(entry.path, "rb") as handle:
                handle.read()

    def stat_all() -> None:
        for entry in _entries(str(root)):
            os.stat(entry.path)

    python = best(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
    corpus = sum(entry.stat().st_size for entry in _entries(str(root)))
    return {
        "read": best(read_all),
        "stat": best(stat_all),
        "python": python,
        "corpus_mb": corpus / 1e6,
    }


def parse_floor(version: Version) -> float:
    """CPU seconds of tree-sitter's parse and structure query over every code file (best of
    three): a cold build on N cores takes at least this over N."""
    runs = []
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", PARSE_FLOOR, str(version.corpus)],
            env=version.environment,
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(float(json.loads(done.stdout)["cpu"]))
    return min(runs)


def search_expression(root: Path, question: str) -> str:
    """The full-text expression the bm25 ranker searches for ``question`` in ``root``'s index."""
    from szrag.index import load_index
    from szrag.rank.bm25 import FIELD_WEIGHTS, terms_of

    with load_index(root, refresh=False) as index:
        terms = terms_of(index.full_text(FIELD_WEIGHTS), question)
    return " OR ".join(f'"{term}"' for term in terms.selective)


def one_shot_floor(version: Version, expression: str) -> float:
    """Process start to exit of ``ONE_SHOT_FLOOR`` over an index that is current."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", ONE_SHOT_FLOOR, str(version.corpus), expression],
        env=version.environment,
        check=True,
    )
    return time.perf_counter() - started


def baseline_source(revision: str) -> Path:
    """The baseline's source tree, checked out once under benchmarks/.work."""
    tree = WORK / f"baseline-{revision}"
    if not tree.exists():
        subprocess.run(
            ["git", "-C", str(REPOSITORY), "worktree", "add", "--detach", str(tree), revision],
            check=True,
            capture_output=True,
        )
    return tree / "src"


def index_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in (root / ".rag").glob("index.db*"))


def measure_start(version: Version, url: str, question: str) -> None:
    """A server started over a current index: process start to ``/healthz`` answering, then
    its first ``/api/ask`` without a model (whatever views it has not built yet included)."""
    started = time.perf_counter()
    serving = szrag_server(version.corpus, url, environ=version.environment, start_timeout=300)
    with serving as base, httpx.Client(base_url=base, timeout=120) as client:
        ready = time.perf_counter()
        version.record("server start", ready - started)
        response = client.post("/api/ask", json={"question": question, "withAi": False})
        version.record("first ask after start", time.perf_counter() - ready)
        response.raise_for_status()


def wait_for_views(client: httpx.Client, timeout: float = 300) -> None:
    """Until the server's first views are built (``views`` of ``/api/status``; a version
    without it built them before its first answer): the warm figures are of a warm server."""
    deadline = time.monotonic() + timeout
    while client.get("/api/status").json()["data"].get("views", "ready") != "ready":
        if time.monotonic() > deadline:
            raise TimeoutError("the server's first views were not built")
        time.sleep(0.05)


def measure_server(version: Version, provider: ScriptedProvider, url: str, rounds: int) -> None:
    serving = szrag_server(version.corpus, url, environ=version.environment, start_timeout=300)
    with serving as base, httpx.Client(base_url=base, timeout=60) as client:
        for question in QUESTIONS:  # warm-up: answered while the shared views are built
            client.post("/api/ask", json={"question": question, "withAi": False})
        wait_for_views(client)
        for question in FRESH_QUESTIONS:
            started = time.perf_counter()
            response = client.post("/api/ask", json={"question": question, "withAi": False})
            version.record("warm ask, new words", time.perf_counter() - started)
            response.raise_for_status()
        for _ in range(rounds * 4):
            for question in QUESTIONS:
                started = time.perf_counter()
                response = client.post("/api/ask", json={"question": question, "withAi": False})
                version.record("warm ask", time.perf_counter() - started)
                response.raise_for_status()
        for _ in range(rounds * 2):
            for question in QUESTIONS:
                provider.script(text_reply("The answer. " * 20, pieces=8))
                started = time.perf_counter()
                with client.stream(
                    "POST",
                    "/api/ask",
                    json={"question": question},
                    headers={"Accept": "text/event-stream"},
                ) as response:
                    for line in response.iter_lines():
                        if line == "event: token":
                            version.record("first token", time.perf_counter() - started)
                            break


def _process_cpu(pid: int) -> float:
    """CPU seconds ``pid`` has used (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_edits(version: Version, url: str, rounds: int) -> None:
    """With the file watcher on, as ``szrag serve`` runs by default: one file rewritten, the
    question asked right after it (which may meet the refresh and the new generation's views
    being built), and the server's CPU from the edit until it has refreshed and rebuilt them."""
    serving = szrag_server(
        version.corpus, url, environ=version.environment, start_timeout=300, watch=True
    )
    with serving as base, httpx.Client(base_url=base, timeout=120) as client:

        def refreshes() -> int:
            return int(client.get("/api/status").json()["data"]["watcher"]["refreshes"])

        def ask() -> float:
            started = time.perf_counter()
            client.post("/api/ask", json={"question": QUESTIONS[0], "withAi": False})
            return time.perf_counter() - started

        pid = int(client.get("/api/status").json()["data"]["pid"])
        for _ in range(3):  # warm-up, the views built
            ask()
        wait_for_views(client)
        for round_number in range(rounds * 2):
            _, changed = CHANGED_FILES[round_number % len(CHANGED_FILES)]
            target = version.corpus / changed
            original = target.read_bytes()
            comment = "#" if changed.endswith(".py") else "//"
            time.sleep(2)  # the last round's refresh and collections are over
            seen, cpu = refreshes(), _process_cpu(pid)
            try:
                target.write_bytes(original + f"\n{comment} edited {round_number}\n".encode())
                time.sleep(0.6)  # past the watcher's debounce: the refresh has begun
                version.record("ask after an edit", ask())
                deadline = time.monotonic() + 60
                while refreshes() == seen and time.monotonic() < deadline:
                    time.sleep(0.05)
                version.record("server CPU per edit", _process_cpu(pid) - cpu)
            finally:
                target.write_bytes(original)
                deadline = time.monotonic() + 60
                while refreshes() < seen + 2 and time.monotonic() < deadline:
                    time.sleep(0.05)


def add_version_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a benchmark comparing this checkout with a baseline on the corpus."""
    parser.add_argument("--baseline", default=None, help="a git revision to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--large", action="store_true", help="the growth corpus (25k files)")


def versions_of(args: argparse.Namespace) -> list[tuple[str, Path, Path]]:
    """(label, source tree, corpus) of each version ``add_version_arguments`` asked for, the
    baseline first, each on its own copy of the corpus (built when missing)."""
    name, repositories = (
        ("mixed-large", REPOSITORIES + LARGE_EXTRA) if args.large else ("mixed", REPOSITORIES)
    )
    corpus = build(WORK / name, args.mirrors, repositories=repositories)
    versions = [("current", REPOSITORY / "src", corpus)]
    if args.baseline:
        copy = build(WORK / f"{name}-baseline", args.mirrors, repositories=repositories)
        versions.insert(0, (f"baseline {args.baseline}", baseline_source(args.baseline), copy))
    return versions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_version_arguments(parser)
    args = parser.parse_args()

    versions = [Version(*version) for version in versions_of(args)]
    floor = floors(versions[-1].corpus)
    for version in versions:  # as an installed package runs: from compiled bytecode
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(version.source)], check=True)

    for version in versions:  # one cold build each: the machine has two cores for both
        shutil.rmtree(version.corpus / ".rag", ignore_errors=True)
        built = version.szrag("index", "--root", str(version.corpus))
        version.record("cold build", built["wall"])
        version.record("cold build cpu", built["cpu"])
        version.record("cold build peak MiB", built["maxrss_kib"] / 1024)
        version.record("index MB", index_bytes(version.corpus) / 1e6)
    parse_cpu = parse_floor(versions[-1])
    cores = os.cpu_count() or 1

    floor_runs: list[float] = []
    expressions = {
        question: search_expression(versions[-1].corpus, question) for question in QUESTIONS
    }
    for round_number in range(args.rounds):
        for version in versions:
            root = str(version.corpus)
            version.record("refresh unchanged", version.szrag("index", "--root", root)["wall"])
            for figure, changed in CHANGED_FILES:
                target = version.corpus / changed
                original = target.read_bytes()
                comment = "#" if changed.endswith(".py") else "//"
                target.write_bytes(original + f"\n{comment} touched {round_number}\n".encode())
                version.record(figure, version.szrag("index", "--root", root)["wall"])
                target.write_bytes(original)
                version.szrag("index", "--root", root)
            # just after the edits: a file written within a walk's racy window is proven
            # unchanged only by a walk, which this question pays for
            asked = QUESTIONS[round_number % len(QUESTIONS)]
            shot = version.szrag("retrieve", "--root", root, "--json", asked)
            version.record("one-shot retrieve, just edited", shot["wall"])
            time.sleep(SETTLE_SECONDS)
            version.szrag("index", "--root", root)  # a walk that vouches for every file
            for question in QUESTIONS:
                shot = version.szrag("retrieve", "--root", root, "--json", question)
                version.record("one-shot retrieve", shot["wall"])
                floor_runs.append(one_shot_floor(versions[-1], expressions[question]))
            asked = QUESTIONS[round_number % len(QUESTIONS)]
            shot = version.szrag("ask", "--no-ai", "--root", root, asked)
            version.record("one-shot ask --no-ai", shot["wall"])

    provider = ScriptedProvider()
    with serve(provider) as url:
        for round_number in range(args.rounds):
            for version in versions:
                measure_start(version, url, QUESTIONS[round_number % len(QUESTIONS)])

        for version in versions:
            measure_server(version, provider, url, args.rounds)
        for version in versions:
            measure_edits(version, url, args.rounds)

    files = sum(1 for _ in _corpus_files(versions[-1].corpus))
    print(
        f"{versions[-1].corpus.name} corpus: {files} files, {floor['corpus_mb']:.0f} MB; {os.cpu_count()} cores"
    )
    header = f"{'figure':32}" + "".join(f"{version.label:>22}" for version in versions)
    print(header + f"{'floor':>34}")
    rows = (
        ("cold build", "s", f"parse / {cores} cores {parse_cpu / cores:.2f} s"),
        ("cold build cpu", "s", f"parse {parse_cpu:.2f} s, read {floor['read']:.2f} s"),
        ("cold build peak MiB", "MiB", ""),
        ("refresh unchanged", "s", f"stat all {floor['stat']:.2f} s"),
        ("refresh one changed", "s", ""),
        ("refresh one TypeScript changed", "s", ""),
        (
            "one-shot retrieve",
            "s",
            f"stat+search {statistics.median(floor_runs):.3f}, python {floor['python']:.3f} s",
        ),
        ("one-shot retrieve, just edited", "s", ""),
        ("one-shot ask --no-ai", "s", ""),
        ("server start", "s", f"python {floor['python']:.3f} s"),
        ("first ask after start", "s", "a warm ask, below"),
        ("warm ask", "ms", ""),
        ("warm ask, new words", "ms", ""),
        ("first token", "ms", ""),
        ("ask after an edit", "ms", ""),
        ("server CPU per edit", "s", ""),
        ("index MB", "MB", f"corpus {floor['corpus_mb']:.0f} MB"),
    )
    for name, unit, floor_text in rows:
        cells = []
        for version in versions:
            values = version.figures.get(name, [])
            if not values:
                cells.append(f"{'-':>22}")
                continue
            scale = 1000 if unit == "ms" else 1
            middle = statistics.median(values) * scale
            if len(values) > 4:
                cells.append(
                    f"{middle:9.3g} (p95 {_percentile(values, 0.95) * scale:6.3g}) {unit:>3}"
                )
            else:
                cells.append(f"{middle:18.3g} {unit:>3}")
        print(f"{name:32}" + "".join(f"{cell:>22}" for cell in cells) + f"{floor_text:>34}")


if __name__ == "__main__":
    main()
