"""Store parity on real history: the real-history questions retrieved from the SQLite store and
from the PostgreSQL store built from the same trees, compared source by source.

    python eval/store_parity.py ~/.cache/szrag/history/cases.jsonl [--only httpx]

For each dataset, its tree at the revision of its first case is exported from its git
repository (its objects read: the work tree is not touched; blobs a partial clone lacks are
left out), indexed into SQLite and published
to a throwaway PostgreSQL cluster (started as the tests start one); every case of the dataset
is then retrieved from both (the default ranker, eight sources) and the two lists compared:
the same files in the same order, the same units (path, start, end) and scores equal to
1e-9. Prints per dataset the cases, identical file rankings, identical sources, and each
difference.

    python eval/store_parity.py ~/.cache/szrag/history/cases.jsonl --each-revision

runs the real-history evaluation twice instead, as `szrag eval --ranker bm25 --context`
does: once reading the SQLite index, once reading the PostgreSQL store the index is published
to after every case's checkout and refresh (each case at its own revision), and prints both
sets of figures per dataset, then the cases whose files or gold-line ranks differ.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.mixed_corpus import export
from szrag.index import Index, build_index
from szrag.index.pg import PostgresIndex, publish
from szrag.rank.retrieve import Source, retrieve
from szrag.service.evaluate import EvalCase, EvalReport, evaluate, load_cases

LIMIT = 8


def files_of(sources: list[Source]) -> list[str]:
    return list(dict.fromkeys(source.path for source in sources))


def same_sources(left: list[Source], right: list[Source]) -> bool:
    return len(left) == len(right) and all(
        (a.path, a.start, a.end) == (b.path, b.start, b.end) and abs(a.score - b.score) <= 1e-9
        for a, b in zip(left, right, strict=True)
    )


FIGURES = ("hit@1", "hit@5", "hit@8", "line-hit@5", "hunk evidence", "evidence")


def figures_of(report: EvalReport, dataset: str | None) -> list[float | None]:
    metrics = report.overall if dataset is None else report.per_dataset.get(dataset, report.overall)
    return [
        metrics.hit_at_1,
        metrics.hit_at_5,
        metrics.hit_at_k,
        metrics.line_hit_at_5,
        metrics.hunk_evidence,
        metrics.evidence_recall,
    ]


def each_revision(cases: list[EvalCase], url: str) -> int:
    """Both stores through the whole evaluation, each case at its own revision."""
    readers: dict[str, PostgresIndex] = {}

    def published_copy(index: Index, case: EvalCase) -> PostgresIndex:
        name = case.dataset or "repository"
        publish(index, url, name)
        if name not in readers:
            readers[name] = PostgresIndex(url, name)
        return readers[name]

    def shown(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    try:
        sqlite = evaluate(cases, ranker="bm25", context=True)
        stored = evaluate(cases, ranker="bm25", context=True, read_through=published_copy)
    finally:
        for reader in readers.values():
            reader.close()
    print("| dataset | " + " | ".join(f"{name} SQLite / PostgreSQL" for name in FIGURES) + " |")
    print("|---" * (len(FIGURES) + 1) + "|")
    for dataset in [*sqlite.per_dataset, None]:
        pairs = zip(figures_of(sqlite, dataset), figures_of(stored, dataset), strict=True)
        cells = [f"{shown(left)} / {shown(right)}" for left, right in pairs]
        print(f"| {dataset or '**all**'} | " + " | ".join(cells) + " |")
    differing = [
        f"{left.case.id}: {list(left.retrieved)} != {list(right.retrieved)}"
        for left, right in zip(sqlite.results, stored.results, strict=True)
        if (left.retrieved, left.line_rank, left.hunk_evidence)
        != (right.retrieved, right.line_rank, right.hunk_evidence)
    ]
    print(f"\n{len(cases) - len(differing)} of {len(cases)} cases judged identically")
    for line in differing:
        print(line)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from tests.conftest import running_cluster

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", type=Path)
    parser.add_argument("--only", action="append", default=[], help="only these datasets")
    parser.add_argument(
        "--each-revision", action="store_true", help="the whole evaluation on both stores"
    )
    args = parser.parse_args(argv)
    if args.each_revision:
        chosen = [
            case for case in load_cases(args.cases) if not args.only or case.dataset in args.only
        ]
        with running_cluster() as cluster:
            if isinstance(cluster, str):
                print(cluster, file=sys.stderr)
                return 2
            return each_revision(chosen, cluster.create_database())
    by_dataset: dict[str, list[EvalCase]] = defaultdict(list)
    for case in load_cases(args.cases):
        if case.dataset and case.revision and (not args.only or case.dataset in args.only):
            by_dataset[case.dataset].append(case)
    rows: list[tuple[str, int, int, int]] = []
    differences: list[str] = []
    with running_cluster() as cluster, tempfile.TemporaryDirectory() as scratch:
        if isinstance(cluster, str):
            print(cluster, file=sys.stderr)
            return 2
        url = cluster.create_database()
        for dataset, cases in sorted(by_dataset.items()):
            revision = cases[0].revision
            assert revision is not None
            tree = Path(scratch) / dataset
            export(cases[0].root / ".git", tree, revision)
            with build_index(tree) as sqlite:
                publish(sqlite, url, dataset)
                with PostgresIndex(url, dataset) as stored:
                    same_files = same_units = 0
                    for case in cases:
                        expected = retrieve(case.question, LIMIT, index=sqlite)
                        found = retrieve(case.question, LIMIT, index=stored)
                        same_files += files_of(expected) == files_of(found)
                        same_units += same_sources(expected, found)
                        if not same_sources(expected, found):
                            differences.append(
                                f"{dataset} {case.id}: {files_of(expected)} != {files_of(found)}"
                            )
            rows.append((dataset, len(cases), same_files, same_units))
            print(f"{dataset}: {same_units}/{len(cases)} identical", file=sys.stderr)
    print("| dataset | cases | identical file rankings | identical sources and scores |")
    print("|---|---|---|---|")
    for dataset, total, same_files, same_units in rows:
        print(f"| {dataset} | {total} | {same_files} | {same_units} |")
    total = sum(row[1] for row in rows)
    print(f"| **all** | {total} | {sum(row[2] for row in rows)} | {sum(row[3] for row in rows)} |")
    for line in differences:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
