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
from szrag.index import build_index
from szrag.index.pg import PostgresIndex, publish
from szrag.rank.retrieve import Source, retrieve
from szrag.service.evaluate import EvalCase, load_cases

LIMIT = 8


def files_of(sources: list[Source]) -> list[str]:
    return list(dict.fromkeys(source.path for source in sources))


def same_sources(left: list[Source], right: list[Source]) -> bool:
    return len(left) == len(right) and all(
        (a.path, a.start, a.end) == (b.path, b.start, b.end) and abs(a.score - b.score) <= 1e-9
        for a, b in zip(left, right, strict=True)
    )


def main(argv: Sequence[str] | None = None) -> int:
    from tests.conftest import running_cluster

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", type=Path)
    parser.add_argument("--only", action="append", default=[], help="only these datasets")
    args = parser.parse_args(argv)
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
