"""``szrag context``: the repository context a model would receive for a question."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click
from rich.markup import escape

from szrag.cli.common import (
    console,
    handle_errors,
    host_for,
    json_option,
    open_index,
    print_json,
    question_argument,
    root_option,
    terminal_safe,
)
from szrag.context import PackedContext
from szrag.context.assemble import assemble_context
from szrag.context.tokens import TOKENIZER_SETTING, TOKENIZERS
from szrag.rank.retrieve import DEFAULT_LIMIT


def register(group: click.Group) -> None:
    """Add the ``context`` command to ``group``."""
    group.add_command(context_command)


@click.command("context")
@question_argument
@click.option(
    "--budget",
    type=click.IntRange(min=0),
    default=None,
    help="Token budget of the packed context (default: SZRAG_CONTEXT_BUDGET, the repository's"
    " context_budget, else 12000; 4000 in the slackzilla profile).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=DEFAULT_LIMIT,
    show_default=True,
    help="Retrieved sources at most.",
)
@click.option(
    "--tokenizer",
    type=click.Choice(TOKENIZERS),
    default=None,
    help=f"How tokens are counted (default: {TOKENIZER_SETTING}, else the profile's).",
)
@root_option
@json_option
@handle_errors
def context_command(
    question: str, budget: int | None, limit: int, tokenizer: str | None, root: Path, as_json: bool
) -> None:
    """Print the packed repository context for QUESTION, its token use and what it holds."""
    with open_index(root) as index:
        plan = host_for(root, index).plan(budget=budget)
        if tokenizer:
            plan = replace(plan, tokenizer=tokenizer)
        found = assemble_context(question, index, limit=limit, plan=plan)
    if as_json:
        print_json(found.to_dict(question))
        return
    _print_human(found.packed, plan.counter().note)


def _print_human(packed: PackedContext, note: str | None) -> None:
    if packed.text:
        click.echo(terminal_safe(packed.text))
        click.echo()
    else:
        console.print("[dim]no repository context matched the question[/]")
    included = sum(1 for chunk in packed.chunks if chunk.included)
    skipped = len(packed.chunks) - included
    console.print(
        f"[bold]tokens[/] {packed.tokens} / {packed.budget} ({escape(packed.tokenizer)})"
        f" · {included} chunks · {skipped} skipped · {packed.redactions} redacted",
        highlight=False,
    )
    if note:
        console.print(f"[yellow]tokenizer:[/] {escape(note)}", highlight=False)
    console.print(f"[bold]code contexts[/] {packed.code_contexts}", highlight=False)
    if packed.files:
        console.print("[bold]files[/]", highlight=False)
        for path in packed.files:
            console.print(f"  {escape(path)}", highlight=False)
