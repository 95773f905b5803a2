"""``szrag eval``: retrieval quality over a set of questions with known answers."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from szrag.cli.common import console, handle_errors, json_option, print_json
from szrag.config import RANKERS
from szrag.evaluate import EvalReport, Metrics, evaluate, load_cases


def _row(name: str, metrics: Metrics) -> list[str]:
    return [
        name,
        str(metrics.cases),
        f"{metrics.hit_at_1:.3f}",
        f"{metrics.hit_at_5:.3f}",
        f"{metrics.hit_at_k:.3f}",
        f"{metrics.recall_at_k:.3f}",
        f"{metrics.mrr:.3f}",
    ]


def _print(report: EvalReport) -> None:
    table = Table(
        "class", "cases", "hit@1", "hit@5", f"hit@{report.k}", f"recall@{report.k}", "MRR",
        title=f"ranker {report.ranker}",
    )  # fmt: skip
    for name, metrics in report.per_class.items():
        table.add_row(*_row(name, metrics))
    table.add_row(*_row("overall", report.overall), style="bold")
    console.print(table)
    console.print(f"latency: median {report.median_ms:.1f} ms, p95 {report.p95_ms:.1f} ms")
    if report.failures:
        console.print(f"\n{len(report.failures)} failed case(s):")
        for result in report.failures:
            got = ", ".join(result.retrieved[:3]) or "nothing"
            want = ", ".join(result.case.files) or "nothing"
            console.print(
                f"  [{result.case.id}] {result.case.question}\n      want {want}; got {got}",
                highlight=False,
                markup=False,
            )


@click.command("eval")
@click.argument("cases", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Root for cases that name none (default: the case file's folder).",
)
@click.option("--k", "k", type=click.IntRange(1, 50), default=8, show_default=True)
@click.option(
    "--ranker", type=click.Choice(RANKERS), help="Ranker to evaluate (default: the profile's)."
)
@json_option
@handle_errors
def eval_command(cases: Path, root: Path | None, k: int, ranker: str | None, as_json: bool) -> None:
    """Score retrieval on CASES (JSON lines): hit@1, hit@5, hit@k, recall@k and MRR."""
    report = evaluate(load_cases(cases, default_root=root), k=k, ranker=ranker)
    if as_json:
        print_json(report.to_dict())
    else:
        _print(report)


def register(group: click.Group) -> None:
    """Add ``eval`` to ``group``."""
    group.add_command(eval_command)
