"""``szrag retrieve`` and ``szrag images``: what retrieval finds, without a model."""

from __future__ import annotations

from pathlib import Path

import click

from szrag.base.config import RANKER_NAMES
from szrag.cli.common import (
    console,
    handle_errors,
    json_option,
    literal,
    open_index,
    print_json,
    question_argument,
    root_option,
    store_from_environment,
    store_option,
)
from szrag.rank.retrieve import DEFAULT_IMAGE_LIMIT, DEFAULT_LIMIT, retrieve, retrieve_images


@click.command("retrieve")
@question_argument
@root_option
@click.option("--limit", type=click.IntRange(1, 100), default=DEFAULT_LIMIT, show_default=True)
@click.option("--text/--no-text", "show_text", default=False, help="Print each chunk's text.")
@click.option("--ranker", type=click.Choice(RANKER_NAMES), help="Override the profile's ranker.")
@click.option(
    "--raw", is_flag=True, help="Show the text as the files hold it, secrets included (local use)."
)
@store_option("Read a published repository from this PostgreSQL store (default SZRAG_STORE).")
@click.option("--repo", metavar="NAME", help="With --store: the published repository to read.")
@json_option
@handle_errors
def retrieve_command(
    question: str,
    root: Path,
    limit: int,
    show_text: bool,
    ranker: str | None,
    raw: bool,
    store: str | None,
    repo: str | None,
    as_json: bool,
) -> None:
    """Show the source chunks that best match QUESTION (secrets redacted unless --raw; in a
    test file, a fixture's low-entropy password or token is shown, marked [TEST VALUE:...]).
    With --store and --repo, from a PostgreSQL store alone: no checkout is read."""
    if store is not None and repo is None and store_from_environment():
        store = None  # SZRAG_STORE is read with --repo NAME; without one, from --root
    if (store is None) != (repo is None):
        raise click.UsageError("--store URL and --repo NAME go together")
    if store is not None and repo is not None:
        from szrag.index.pg import PostgresIndex  # here: only a store's reader loads psycopg

        with PostgresIndex(store, repo) as stored:
            found = retrieve(question, limit, index=stored, ranker=ranker)
    else:
        with open_index(root) as index:
            found = retrieve(question, limit, index=index, ranker=ranker)
    if as_json:  # machine output may end up anywhere: redacted as for a model
        print_json([(source if raw else source.redacted()).to_dict() for source in found])
        return
    sources = found if raw else [source.shown_locally() for source in found]
    if not sources:
        console.print("no matching sources")
        return
    from rich.table import Table  # here: --json prints no table and loads no Rich

    table = Table("score", "source", "type", "section")
    for source in sources:
        table.add_row(  # a section is the repository's text (a test's name), never markup
            str(source.score),
            literal(f"{source.path}:{source.start}-{source.end}"),
            source.type,
            literal(source.heading or ""),
        )
    console.print(table)
    if show_text:
        for source in sources:
            console.rule(f"{source.path}:{source.start}-{source.end}")
            console.print(source.text, markup=False, highlight=False)


@click.command("images")
@question_argument
@root_option
@click.option(
    "--limit", type=click.IntRange(1, 100), default=DEFAULT_IMAGE_LIMIT, show_default=True
)
@json_option
@handle_errors
def images_command(question: str, root: Path, limit: int, as_json: bool) -> None:
    """Show the images whose paths match QUESTION."""
    with open_index(root) as index:
        images = retrieve_images(question, limit, index=index)
    if as_json:
        print_json([image.to_dict() for image in images])
        return
    if not images:
        console.print("no matching images")
    for image in images:
        console.print(f"{image.score:>4}  {image.path}  ({image.url})", highlight=False)


def register(group: click.Group) -> None:
    """Add the retrieval commands to ``group``."""
    for command in (retrieve_command, images_command):
        group.add_command(command)
