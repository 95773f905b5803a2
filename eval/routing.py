"""Routing: the real-history cases asked to one service holding every dataset's repository,
with the repository named (scoped) and without (unscoped), side by side.

    python eval/routing.py ~/.cache/szrag/history/cases.jsonl [--only httpx --only koa]

Each case is asked twice at its own revision (its dataset's tree checked out there and the
index refreshed, the other repositories as they are): scoped, to its own repository's
retriever; unscoped, through ``Service.route``, which picks the repository whose best source
scores highest and answers from its sources. A case is a file hit at 5 when one of its gold
files is among the first five files of the eight sources an answer retrieves (unscoped: only
when the right repository was picked).
Prints per dataset the cases, scoped and unscoped file hit@5, the share routed to the right
repository and unscoped / scoped.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from szrag.index import refresh_index
from szrag.rank.retrieve import Source, retrieve
from szrag.service.evaluate import EvalCase, check_out, load_cases, require_clean
from szrag.service.repositories import RepositorySpec, ServicePlan
from szrag.service.service import Service

K = 5
LIMIT = 8  # the sources an answer retrieves by default


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", type=Path)
    parser.add_argument("--only", action="append", default=[], help="only these datasets")
    parser.add_argument("--memory-mb", type=int, default=4096, help="the service's view budget")
    args = parser.parse_args(argv)

    cases = [case for case in load_cases(args.cases) if case.dataset and case.revision]
    if args.only:
        cases = [case for case in cases if case.dataset in args.only]
    roots: dict[str, Path] = {}
    for case in cases:
        assert case.dataset is not None
        roots.setdefault(case.dataset, case.root)
    for root in roots.values():
        require_clean(root)
    # every dataset's repository, whichever cases are asked: unscoped questions see them all
    everything = {case.dataset: case.root for case in load_cases(args.cases) if case.dataset}
    plan = ServicePlan(
        tuple(RepositorySpec(str(name), root.resolve()) for name, root in everything.items()),
        args.memory_mb,
    )
    service = Service(plan, {})
    started = time.perf_counter()
    results: dict[str, list[tuple[bool, bool, bool]]] = defaultdict(list)
    try:
        for case in cases:
            results[str(case.dataset)].append(ask(service, case))
    finally:
        service.close()
    print_table(results)
    print(f"{len(cases)} cases in {time.perf_counter() - started:.0f} s")
    return 0


def ask(service: Service, case: EvalCase) -> tuple[bool, bool, bool]:
    """(scoped hit@5, unscoped hit@5, routed right) of one case at its revision."""
    name = str(case.dataset)
    host = service.host(name)
    assert host.index is not None and case.revision is not None
    check_out(case.root, case.revision)
    refresh_index(host.index)
    gold = set(case.files)
    scoped = files_of(retrieve(case.question, LIMIT, index=host.index))
    routed = service.route(case.question)
    right = routed.repository == name
    return bool(gold & set(scoped)), right and bool(gold & set(files_of(routed.sources))), right


def files_of(sources: Sequence[Source]) -> list[str]:
    """The first ``K`` distinct files of ``sources``."""
    return list(dict.fromkeys(source.path for source in sources))[:K]


def print_table(results: dict[str, list[tuple[bool, bool, bool]]]) -> None:
    header = (
        f"{'dataset':<14} {'cases':>5} {'scoped':>7} {'unscoped':>9} {'routed':>7} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    totals: list[tuple[bool, bool, bool]] = []
    for dataset in sorted(results):
        rows = results[dataset]
        totals.extend(rows)
        print(line(dataset, rows))
    print("-" * len(header))
    print(line("all", totals))


def line(name: str, rows: list[tuple[bool, bool, bool]]) -> str:
    count = len(rows)
    scoped = sum(row[0] for row in rows) / count
    unscoped = sum(row[1] for row in rows) / count
    routed = sum(row[2] for row in rows) / count
    ratio = unscoped / scoped if scoped else float("nan")
    return f"{name:<14} {count:>5} {scoped:>7.3f} {unscoped:>9.3f} {routed:>7.3f} {ratio:>6.2f}"


if __name__ == "__main__":
    sys.exit(main())
