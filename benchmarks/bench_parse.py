"""Code-structure parsing speed, and its share of a cold index build.

Prints parse throughput (MB/s of source through ``analyse_source``) for every parsed
language, then builds the index of the same tree twice from cold, with and
without code analysis, and prints the share of the build that analysis costs.

By default the tree is the fixture applications and language fixtures copied ``--copies``
times into a temporary directory; ``--root DIR`` measures an existing tree instead (its own
``.rag`` index is never touched: the tree is copied first).

    python benchmarks/bench_parse.py [--copies 40] [--root DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from unittest import mock

from szrag.base.config import load_repo_config
from szrag.code import analyse_source
from szrag.code.languages import EXTENSIONS, LANGUAGES, language_of
from szrag.index import build, build_index
from szrag.index.collect import collect
from szrag.index.store import INDEX_DIRECTORY

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
SAMPLE_TREES = ("express_app", "python_app", "languages")
FAMILIES = {
    "javascript": "JavaScript",
    "typescript": "TypeScript",
    "tsx": "TypeScript",
    "python": "Python",
    "go": "Go",
    "rust": "Rust",
    "java": "Java",
    "ruby": "Ruby",
    "php": "PHP",
    "csharp": "C#",
}


def make_corpus(target: Path, copies: int) -> None:
    """The sample trees copied ``copies`` times under ``target``."""
    for copy in range(copies):
        for name in SAMPLE_TREES:
            shutil.copytree(FIXTURES / name, target / f"copy{copy:03d}" / name)


def code_files(root: Path) -> list[tuple[str, str]]:
    """(relative path, text) of every collected file the parsers handle."""
    files = []
    for item in collect(root, load_repo_config(root)).files:
        if language_of(item.path) is not None:
            files.append((item.path, item.absolute.read_bytes().decode("utf-8", "replace")))
    return files


def throughput(files: list[tuple[str, str]], repeat: int) -> dict[str, tuple[int, int, float]]:
    """Per language family: (files, bytes, best seconds over ``repeat`` runs)."""
    # grammars and queries compile once per process
    for extension in {extension for extension, name in EXTENSIONS.items() if name in LANGUAGES}:
        analyse_source(f"warm{extension}", "x")
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path, text in files:
        language = language_of(path)
        assert language is not None
        groups[FAMILIES[language]].append((path, text))
    results = {}
    for family, members in sorted(groups.items()):
        size = sum(len(text.encode("utf-8")) for _path, text in members)
        timings = []
        for _run in range(repeat):
            started = time.perf_counter()
            for path, text in members:
                analyse_source(path, text)
            timings.append(time.perf_counter() - started)
        results[family] = (len(members), size, min(timings))
    return results


def _timed_builds(root: Path, repeat: int) -> float:
    timings = []
    for _run in range(repeat):
        shutil.rmtree(root / INDEX_DIRECTORY, ignore_errors=True)
        started = time.perf_counter()
        build_index(root).close()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def cold_build(root: Path, *, analyse: bool, repeat: int) -> float:
    """Median seconds of a cold build, with or without code analysis."""
    if analyse:
        return _timed_builds(root, repeat)
    # Pool workers fork from this process, so they see the patched module too.
    with mock.patch.object(build, "analyse_source", lambda path, text: None):
        return _timed_builds(root, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=40, help="copies of the sample trees")
    parser.add_argument("--root", type=Path, help="measure this tree instead of the samples")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="szrag-bench-parse-") as scratch:
        root = Path(scratch) / "tree"
        if args.root:
            shutil.copytree(args.root, root, ignore=shutil.ignore_patterns(INDEX_DIRECTORY))
        else:
            make_corpus(root, args.copies)
        files = code_files(root)
        print(f"corpus: {root if args.root is None else args.root} ({len(files)} code files)")
        parse_total = 0.0
        for family, (count, size, seconds) in throughput(files, args.repeat).items():
            parse_total += seconds
            print(
                f"  {family:<10} {count:>6} files {size / 1e6:>7.2f} MB  {seconds:>6.2f} s"
                f"  {size / 1e6 / seconds:>6.2f} MB/s  {seconds / count * 1000:>6.2f} ms/file"
            )
        with_code = cold_build(root, analyse=True, repeat=args.repeat)
        without = cold_build(root, analyse=False, repeat=args.repeat)
        share = (with_code - without) / with_code
        print(
            f"cold build: {with_code:.2f} s with code analysis, {without:.2f} s without:"
            f" analysis is {share:.0%} of the build (serial parse time {parse_total:.2f} s)"
        )


if __name__ == "__main__":
    main()
