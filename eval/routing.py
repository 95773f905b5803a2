"""Routing: the real-history cases asked to one service holding every dataset's repository,
with the repository named (scoped) and without (unscoped), side by side.

    python eval/routing.py ~/.cache/szrag/history/cases.jsonl [--only httpx --only koa]

Each case is asked at its own revision (its dataset's tree checked out there and the index
refreshed, the other repositories as they are): scoped, to its own repository's retriever;
unscoped, through ``Service.route``, which searches every repository and merges their files on
one scale (``service/merging.py``). A case is a file hit at 5 when one of its gold files is
among the first five files of the eight files retrieved: scoped, its own repository's;
merged, the eight best files of all the repositories (a file of another repository is a miss,
whatever its path); answered, the sources of the repository the question is routed to (the
repository of the best merged file), from which an answer is made; likeliest, the former
rule's: the sources of the repository most likely to have produced the question's words.
What an answer is given is judged too, over all eight files: given, a gold file among the
routed repository's eight; given beside, that or a gold file among the other repositories'
files offered beside them (``Routed.elsewhere``: the case's own repository's, when the
question went elsewhere).
Prints per dataset the cases, scoped, merged, answered and likeliest file hit@5, the share
routed to the right repository by the merged rule and by the likeliest words, and merged /
scoped.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
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
    results: dict[str, list[Judged]] = defaultdict(list)
    try:
        for case in cases:
            results[str(case.dataset)].append(ask(service, case))
    finally:
        service.close()
    print_table(results)
    print(f"{len(cases)} cases in {time.perf_counter() - started:.0f} s")
    return 0


@dataclass(frozen=True, slots=True)
class Judged:
    """One case's file hits at 5 and whether each rule chose its repository."""

    scoped: bool
    merged: bool
    answered: bool
    likeliest: bool
    routed_right: bool
    likeliest_right: bool
    given: bool
    given_beside: bool


def ask(service: Service, case: EvalCase) -> Judged:
    """How one case fares at its revision, scoped and unscoped."""
    name = str(case.dataset)
    host = service.host(name)
    assert host.index is not None and case.revision is not None
    check_out(case.root, case.revision)
    refresh_index(host.index)
    gold = set(case.files)
    scoped = files_of(retrieve(case.question, LIMIT, index=host.index))
    routed = service.route(case.question, LIMIT)
    merged = list(dict.fromkeys((item.repository, item.source.path) for item in routed.merged))
    right = routed.repository == name
    likely_right = routed.likeliest == name
    likely = host.index if likely_right else None
    given = right and bool(gold & {source.path for source in routed.sources})
    beside = any(
        item.repository == name and item.source.path in gold for item in routed.elsewhere()
    )
    return Judged(
        scoped=bool(gold & set(scoped)),
        merged=any(repository == name and path in gold for repository, path in merged[:K]),
        answered=right and bool(gold & set(files_of(routed.sources))),
        likeliest=likely is not None
        and bool(gold & set(files_of(retrieve(case.question, LIMIT, index=likely)))),
        routed_right=right,
        likeliest_right=likely_right,
        given=given,
        given_beside=given or beside,
    )


def files_of(sources: Sequence[Source]) -> list[str]:
    """The first ``K`` distinct files of ``sources``."""
    return list(dict.fromkeys(source.path for source in sources))[:K]


COLUMNS = (
    "scoped",
    "merged",
    "answered",
    "likeliest",
    "routed_right",
    "likeliest_right",
    "given",
    "given_beside",
)


def print_table(results: dict[str, list[Judged]]) -> None:
    header = (
        f"{'dataset':<14} {'cases':>5} {'scoped':>7} {'merged':>7} {'answered':>9}"
        f" {'likeliest':>10} {'routed':>7} {'likely':>7} {'ratio':>6} {'given':>6} {'beside':>7}"
    )
    print(header)
    print("-" * len(header))
    totals: list[Judged] = []
    for dataset in sorted(results):
        rows = results[dataset]
        totals.extend(rows)
        print(line(dataset, rows))
    print("-" * len(header))
    print(line("all", totals))
    print("routed, likely: the right repository by the merged rule, by the likeliest words;")
    print("ratio: merged / scoped; given, beside: a gold file in what the answer is given,")
    print("without and with the other repositories' files offered beside (all eight files)")


def line(name: str, rows: list[Judged]) -> str:
    count = len(rows)
    share = {column: sum(getattr(row, column) for row in rows) / count for column in COLUMNS}
    ratio = share["merged"] / share["scoped"] if share["scoped"] else float("nan")
    return (
        f"{name:<14} {count:>5} {share['scoped']:>7.3f} {share['merged']:>7.3f}"
        f" {share['answered']:>9.3f} {share['likeliest']:>10.3f} {share['routed_right']:>7.3f}"
        f" {share['likeliest_right']:>7.3f} {ratio:>6.2f} {share['given']:>6.3f}"
        f" {share['given_beside']:>7.3f}"
    )


if __name__ == "__main__":
    sys.exit(main())
