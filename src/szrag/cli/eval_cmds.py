"""``szrag eval``: retrieval quality over a set of questions with known answers."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from szrag.cli.common import console, err_console, handle_errors, json_option, print_json
from szrag.service.evaluate import (
    EVAL_RANKERS,
    EvalCase,
    EvalReport,
    Metrics,
    evaluate_rankers,
    load_cases,
)


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _row(name: str, metrics: Metrics, with_context: bool, with_lines: bool) -> list[str]:
    row = [
        name,
        str(metrics.cases),
        f"{metrics.hit_at_1:.3f}",
        f"{metrics.hit_at_5:.3f}",
        f"{metrics.hit_at_k:.3f}",
        f"{metrics.recall_at_k:.3f}",
        f"{metrics.mrr:.3f}",
    ]
    if with_context:
        evidence = metrics.evidence_recall
        tokens = metrics.median_context_tokens
        row += [
            "-" if evidence is None else f"{evidence:.3f}",
            "-" if tokens is None else f"{tokens:.0f}",
        ]
    if with_lines:
        row += [_figure(metrics.line_hit_at_1), _figure(metrics.line_hit_at_5)]
        if with_context:
            row.append(_figure(metrics.hunk_evidence))
    return row


def _print(report: EvalReport, with_context: bool, show_failures: bool) -> None:
    columns = ["group", "cases", "hit@1", "hit@5", f"hit@{report.k}", f"recall@{report.k}", "MRR"]
    if with_context:
        columns += ["evidence", "ctx tokens"]
    with_lines = report.overall.line_cases > 0
    if with_lines:
        columns += ["line@1", "line@5"] + (["hunk ev."] if with_context else [])
    table = Table(*columns, title=f"ranker {report.ranker}")
    for name, metrics in report.per_dataset.items():
        table.add_row(*_row(name, metrics, with_context, with_lines))
    if len(report.per_class) > 1 or not report.per_dataset:
        for name, metrics in report.per_class.items():
            table.add_row(*_row(f"class {name}", metrics, with_context, with_lines))
    table.add_row(*_row("overall", report.overall, with_context, with_lines), style="bold")
    console.print(table)
    console.print(f"latency: median {report.median_ms:.1f} ms, p95 {report.p95_ms:.1f} ms")
    if report.failures and show_failures:
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
    "--ranker",
    "rankers",
    type=click.Choice(EVAL_RANKERS),
    multiple=True,
    help="Ranker(s) to evaluate, in one pass; `files` is a plain whole-file BM25 baseline"
    " (default: the profile's).",
)
@click.option(
    "--context",
    "with_context",
    is_flag=True,
    help="Also pack each answer's context and report evidence recall and its tokens.",
)
@click.option(
    "--budget",
    type=click.IntRange(0, None),
    default=None,
    help="Token budget of the packed context (with --context; default: the configured one).",
)
@click.option("--only", "datasets", multiple=True, help="Only the cases of these dataset(s).")
@click.option("--failures/--no-failures", default=True, help="List the failed cases.")
@json_option
@handle_errors
def eval_command(
    cases: Path,
    root: Path | None,
    k: int,
    rankers: tuple[str, ...],
    with_context: bool,
    budget: int | None,
    datasets: tuple[str, ...],
    failures: bool,
    as_json: bool,
) -> None:
    """Score retrieval on CASES (JSON lines): hit@1, hit@5, hit@k, recall@k and MRR."""
    loaded = load_cases(cases, default_root=root)
    if datasets:
        loaded = [case for case in loaded if case.dataset in datasets]
    total = len(loaded)
    interactive = sys.stderr.isatty() and total > 20

    def progress(number: int, case: EvalCase) -> None:
        if interactive:
            err_console.print(f"\r[{number}/{total}] {case.dataset}", end="", highlight=False)

    reports = evaluate_rankers(
        loaded,
        list(rankers) or [None],
        k=k,
        context=with_context,
        budget=budget,
        progress=progress,
    )
    if interactive:
        err_console.print()
    if as_json:
        print_json(reports[0].to_dict() if len(reports) == 1 else [r.to_dict() for r in reports])
        return
    for report in reports:
        _print(report, with_context, failures)


def register(group: click.Group) -> None:
    """Add ``eval`` to ``group``."""
    group.add_command(eval_command)
