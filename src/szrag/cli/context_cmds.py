"""``szrag context``: the repository context a model would receive for a question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from szrag.cli.common import console, handle_errors, json_option, print_json, root_option
from szrag.context import (
    MAX_CONTEXT_TOKENS,
    CodebaseContext,
    PackedContext,
    build_codebase_context,
    load_counter,
    pack_repository_context,
)
from szrag.context.tokens import TOKENIZER_SETTING, TOKENIZERS
from szrag.index import load_index
from szrag.retrieve import DEFAULT_LIMIT, Source, retrieve


def register(group: click.Group) -> None:
    """Add the ``context`` command to ``group``."""
    group.add_command(context_command)


@click.command("context")
@click.argument("question")
@click.option(
    "--budget",
    type=click.IntRange(min=0),
    default=MAX_CONTEXT_TOKENS,
    show_default=True,
    help="Token budget of the packed context.",
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
    help=f"How tokens are counted (default: {TOKENIZER_SETTING}, else the estimate).",
)
@root_option
@json_option
@handle_errors
def context_command(
    question: str, budget: int, limit: int, tokenizer: str | None, root: Path, as_json: bool
) -> None:
    """Print the packed repository context for QUESTION, its token use and what it holds."""
    counter = load_counter(tokenizer)
    with load_index(root) as index:
        sources = retrieve(question, limit, index=index)
        context = build_codebase_context(question, index, sources)
    packed = pack_repository_context(sources, context, budget=budget, counter=counter)
    if as_json:
        print_json(_as_json(question, sources, context, packed, counter.note))
        return
    _print_human(packed, counter.note)


def _as_json(
    question: str,
    sources: list[Source],
    context: CodebaseContext,
    packed: PackedContext,
    note: str | None,
) -> dict[str, Any]:
    return {
        "question": question.strip(),
        **packed.metadata(),
        "tokenizer_note": note,
        "text": packed.text,
        "chunks": packed.to_dict()["chunks"],
        "sources": [
            {key: value for key, value in source.to_dict().items() if key != "text"}
            for source in sources
        ],
        "context": context.metadata(),
    }


def _print_human(packed: PackedContext, note: str | None) -> None:
    if packed.text:
        click.echo(packed.text)
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
