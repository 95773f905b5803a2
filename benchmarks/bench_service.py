"""One service over many repositories, on SQLite files and on a PostgreSQL store, side by side.

    python benchmarks/bench_service.py [--rounds 3] [--questions 100] [--skip-store]

The twelve repositories of the mixed corpus (``benchmarks/mixed_corpus.py``) are served as
twelve repositories of one service (``szrag serve --repo NAME=PATH`` twelve times), no model:

- **memory**: the server's RSS after ``--questions`` questions spread over all twelve (each
  asked of its own repository), with the default view budget (``SZRAG_MEMORY_MB`` unset), a
  small one (256 MiB) and none (a budget larger than every view); the repositories whose
  views are open then;
- **warm ask**: then the same questions again, scoped and unscoped (median and p95 of each);
- **store** (a throwaway PostgreSQL cluster, as the tests start one: ``fsync=off``, so its
  writes are cheaper than a production server's): every repository published with
  ``szrag index --store URL --repo ...`` beside the SQLite build of each folder, the refresh
  after one edit with each (the PostgreSQL one: the refresh and its publish), the database's
  size beside the SQLite files', each question's first ask right after the publish (each
  replica in turn), the warm ask through two replicas (``szrag serve --store URL``, the
  questions alternating between them) beside the SQLite service, and the whole corpus
  published as one repository with the first read of its largest files' lines from each.

Questions are made from the code, not chosen: per repository, the names of definitions in
evenly spaced source files, split into words ("how does parse args work").
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.mixed_corpus import DEFAULT_MIRRORS, REPOSITORIES, WORK, build

SOURCE_SUFFIXES = {".py", ".js", ".ts", ".mjs"}
DEFINITION = re.compile(r"^\s*(?:async\s+)?(?:def|function|class)\s+([A-Za-z_][A-Za-z0-9_]{5,})")
UNLIMITED_MB = 1_000_000


def names(root: Path) -> list[str]:
    """The repositories of the corpus at ``root``, in the corpus's order."""
    return [
        repository.split("/")[1]
        for repository in REPOSITORIES
        if (root / repository.split("/")[1]).is_dir()
    ]


def words_of(identifier: str) -> str:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", identifier).replace("_", " ")
    return " ".join(spaced.lower().split())


def questions_of(folder: Path, count: int) -> list[str]:
    """``count`` questions about the repository at ``folder``: a definition's name from each of
    evenly spaced source files (tests and vendored code left out)."""
    sources = sorted(
        path
        for path in folder.rglob("*")
        if path.suffix in SOURCE_SUFFIXES
        and path.is_file()
        and not any(
            part in {"test", "tests", "node_modules", "vendor", "dist"} for part in path.parts
        )
    )
    found: list[str] = []
    step = max(1, len(sources) // (count * 3))
    for path in sources[::step]:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            for line in path.read_text(encoding="utf-8").splitlines():
                match = DEFINITION.match(line)
                if match and not match.group(1).startswith("_"):
                    found.append(f"how does {words_of(match.group(1))} work")
                    break
        if len(found) == count:
            break
    return found


def spread(root: Path, total: int) -> list[tuple[str, str]]:
    """``total`` (repository, question) pairs, the repositories taking turns."""
    repositories = names(root)
    per = -(-total // len(repositories))
    asked = {name: questions_of(root / name, per) for name in repositories}
    pairs: list[tuple[str, str]] = []
    for turn in range(per):
        for name in repositories:
            if turn < len(asked[name]) and len(pairs) < total:
                pairs.append((name, asked[name][turn]))
    return pairs


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def environment(extra: Mapping[str, str]) -> dict[str, str]:
    kept = {
        key: value for key, value in os.environ.items() if not key.startswith(("AI_", "SZRAG_"))
    }
    return {
        **kept,
        "SZRAG_AUDIT_LOG": "off",
        "SZRAG_WATCH": "0",
        "SZRAG_RATE_LIMIT": "0",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


@contextlib.contextmanager
def server(
    arguments: Sequence[str], extra: Mapping[str, str], cwd: Path
) -> Iterator[tuple[str, int]]:
    """``szrag serve ARGUMENTS`` on a free port; its base URL and process id."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "szrag", "serve", "--port", str(port), *arguments],
        env=environment(extra),
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"szrag serve did not start: {process.stderr.read() if process.stderr else ''}"
                )
            time.sleep(0.2)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def ask(client: httpx.Client, question: str, repository: str | None) -> float:
    body: dict[str, object] = {"question": question, "withAi": False}
    if repository is not None:
        body["repository"] = repository
    started = time.perf_counter()
    response = client.post("/api/ask", json=body)
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return elapsed


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def shown(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} / {p95(values) * 1000:.0f} ms"


def repo_options(root: Path) -> list[str]:
    options: list[str] = []
    for name in names(root):
        options += ["--repo", f"{name}={root / name}"]
    return options


def measure_memory(root: Path, pairs: list[tuple[str, str]], rounds: int) -> None:
    print("\n## memory and warm ask: twelve repositories in one service (SQLite)")
    print(
        "| budget | RSS after the questions | views open | warm ask scoped, median / p95 | unscoped |"
    )
    print("|---|---|---|---|---|")
    for label, extra in (
        ("default (SZRAG_MEMORY_MB unset: 1,024)", {}),
        ("256 MiB", {"SZRAG_MEMORY_MB": "256"}),
        ("none", {"SZRAG_MEMORY_MB": str(UNLIMITED_MB)}),
    ):
        with (
            server(repo_options(root), extra, root) as (base, pid),
            httpx.Client(base_url=base, timeout=120) as client,
        ):
            for name, question in pairs:
                ask(client, question, name)
            after = rss_mib(pid)
            states = client.get("/api/repositories").json()["data"]
            open_views = sum(1 for state in states if state["loaded"])
            scoped: list[float] = []
            unscoped: list[float] = []
            for _ in range(rounds):
                for name, question in pairs:
                    scoped.append(ask(client, question, name))
                    unscoped.append(ask(client, question, None))
            print(
                f"| {label} | {after:.0f} MiB (then {rss_mib(pid):.0f}) | {open_views} of {len(states)} | {shown(scoped)} | {shown(unscoped)} |"
            )


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def run_szrag(arguments: Sequence[str], cwd: Path, extra: Mapping[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "szrag", *arguments],
        env=environment(extra or {}),
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def measure_store(root: Path, pairs: list[tuple[str, str]], rounds: int) -> None:
    from tests.conftest import running_cluster

    repositories = names(root)
    for name in repositories:  # every build from nothing
        shutil.rmtree(root / name / ".rag", ignore_errors=True)
    sqlite_build = sum(
        run_szrag(["index", "--root", str(root / name)], root) for name in repositories
    )
    sqlite_bytes = sum(folder_bytes(root / name / ".rag") for name in repositories)
    with running_cluster() as cluster:
        if isinstance(cluster, str):
            print(f"\n(store figures not measured: {cluster})")
            return
        url = cluster.create_database()
        pg_build = run_szrag(["index", "--store", url, *repo_options(root)], root)
        import psycopg

        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        pg_bytes = int(row[0]) if row else 0
        edited = root / "click" / "src" / "click" / "core.py"
        original = edited.read_text(encoding="utf-8")
        sqlite_refresh: list[float] = []
        pg_refresh: list[float] = []
        try:
            for turn in range(rounds):
                edited.write_text(original + f"\n# edit {turn}\n", encoding="utf-8")
                sqlite_refresh.append(run_szrag(["index", "--root", str(root / "click")], root))
                edited.write_text(original + f"\n# edit {turn} again\n", encoding="utf-8")
                pg_refresh.append(
                    run_szrag(["index", "--store", url, "--repo", f"click={root / 'click'}"], root)
                )
        finally:
            edited.write_text(original, encoding="utf-8")
        print("\n## store: SQLite files beside PostgreSQL (twelve repositories)")
        print("| figure | SQLite | PostgreSQL |")
        print("|---|---|---|")
        print(
            f"| build, every repository | {sqlite_build:.1f} s (twelve `szrag index`) | {pg_build:.1f} s (one `szrag index --store`) |"
        )
        print(
            f"| refresh after one edit (click/core.py), median | {statistics.median(sqlite_refresh):.2f} s | {statistics.median(pg_refresh):.2f} s (refresh and publish) |"
        )
        print(
            f"| size | {sqlite_bytes / 2**20:.0f} MiB (`.rag/` folders) | {pg_bytes / 2**20:.0f} MiB (`pg_database_size`) |"
        )
        data = root.parent / "replicas"
        shutil.rmtree(data, ignore_errors=True)
        data.mkdir()
        sqlite_times: list[float] = []
        sqlite_first: list[float] = []
        with (
            server(repo_options(root), {}, root) as (base, _),
            httpx.Client(base_url=base, timeout=120) as client,
        ):
            for name, question in pairs:  # warm-up: each repository's views
                sqlite_first.append(ask(client, question, name))
            for _ in range(rounds):
                for name, question in pairs:
                    sqlite_times.append(ask(client, question, name))
        replica_times: list[float] = []
        replica_first: list[float] = []
        with (
            server(["--store", url, "--data", str(data / "one")], {}, data) as (first, _),
            server(["--store", url, "--data", str(data / "two")], {}, data) as (second, _),
            httpx.Client(base_url=first, timeout=120) as one,
            httpx.Client(base_url=second, timeout=120) as two,
        ):
            for client in (one, two):
                for name, question in pairs:
                    replica_first.append(ask(client, question, name))
            for _ in range(rounds):
                for number, (name, question) in enumerate(pairs):
                    replica_times.append(ask(one if number % 2 else two, question, name))
        print(
            f"| first ask of each question after the build, scoped, median / p95 | {shown(sqlite_first)} (one server) | {shown(replica_first)} (each replica in turn) |"
        )
        print(
            f"| warm ask, scoped, median / p95 | {shown(sqlite_times)} (one server) | {shown(replica_times)} (two replicas, alternating) |"
        )
        sqlite_reads, store_reads = first_reads(root, url)
        print(
            f"| a file's lines read right after the build, the whole corpus as one repository, {FIRST_READS} largest files, median / max | {shown_reads(sqlite_reads)} | {shown_reads(store_reads)} |"
        )


FIRST_READS = 5


def first_reads(root: Path, url: str) -> tuple[list[float], list[float]]:
    """The whole corpus indexed and published as one repository, then the first read of
    the lines of its largest code files from each store (seconds)."""
    from szrag.index import load_index
    from szrag.index.pg import PostgresIndex

    run_szrag(["index", "--store", url, "--repo", f"whole={root}"], root)
    with load_index(root) as index:
        paths = [entry.path for entry in index.file_entries() if entry.path.endswith(".py")]
        largest = sorted(paths, key=lambda path: -(root / path).stat().st_size)[:FIRST_READS]
        sqlite_reads = [timed(index.lines, path) for path in largest]
    with PostgresIndex(url, "whole") as stored:
        store_reads = [timed(stored.lines, path) for path in largest]
    return sqlite_reads, store_reads


def timed(read: Callable[[str], object], path: str) -> float:
    started = time.perf_counter()
    read(path)
    return time.perf_counter() - started


def shown_reads(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} / {max(values) * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--skip-store", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    root = build(WORK / "service" / "mixed", args.mirrors)
    pairs = spread(root, args.questions)
    print(f"{len(pairs)} questions over {len(names(root))} repositories ({root})")
    for name in names(
        root
    ):  # indexed before any server starts: the build is not what is measured here
        run_szrag(["index", "--root", str(root / name)], root)
    if not args.skip_memory:
        measure_memory(root, pairs, args.rounds)
    if not args.skip_store:
        measure_store(root, pairs, args.rounds)


if __name__ == "__main__":
    main()
