"""``szrag symbols``, ``refs``, ``routes``, ``deps``, ``dependants`` and ``env``: the structure graph."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from szrag.base.errors import QuestionError
from szrag.cli.common import (
    console,
    handle_errors,
    json_option,
    literal,
    open_index,
    optional_question_argument,
    print_json,
    question_argument,
    root_option,
)
from szrag.structure.queries import (
    all_routes,
    find_environment_variable,
    find_routes,
    find_symbols,
    get_dependants,
    get_dependencies,
    references_report,
)

DEFAULT_LIMIT = 20

limit_option = click.option(
    "--limit",
    type=click.IntRange(1, 1000),
    default=DEFAULT_LIMIT,
    show_default=True,
    help="Most matches to show.",
)


def _question(value: str) -> str:
    clean = value.strip()
    if not clean:
        raise QuestionError("the question is empty: say what to look for")
    return clean


@click.command("symbols")
@question_argument
@root_option
@limit_option
@json_option
@handle_errors
def symbols_command(question: str, root: Path, limit: int, as_json: bool) -> None:
    """Show the functions, classes and methods that best match QUESTION."""
    with open_index(root) as index:
        matches = find_symbols(_question(question), index)[:limit]
    if as_json:
        print_json(matches)
        return
    if not matches:
        console.print("no matching symbols")
        return
    table = Table("score", "symbol", "kind")
    table.add_column("where", overflow="fold")
    for match in matches:
        table.add_row(  # names and paths are the repository's text, never markup
            str(match.score),
            literal(match.qualified_name),
            match.kind,
            literal(f"{match.file}:{match.line}-{match.end_line}"),
        )
    console.print(table)


@click.command("refs")
@click.argument("name")
@root_option
@limit_option
@json_option
@handle_errors
def refs_command(name: str, root: Path, limit: int, as_json: bool) -> None:
    """Show where NAME (a function, method or class) is called, with the code around it."""
    with open_index(root) as index:
        report = references_report(_question(name), index, limit)
    references = report.references
    if as_json:
        print_json(references)
        return
    if not references:
        near = f"; did you mean {' or '.join(report.did_you_mean)}?" if report.did_you_mean else ""
        console.print(f"no calls of {name} found{near}", highlight=False, markup=False)
        return
    table = Table("where", "in", "line")
    for reference in references:
        table.add_row(  # a caller may be a test's description; the text is code
            literal(f"{reference.file}:{reference.line}"),
            literal(reference.caller or "(module)"),
            literal(reference.text),
        )
    console.print(table)


@click.command("routes")
@optional_question_argument
@root_option
@limit_option
@json_option
@handle_errors
def routes_command(question: str | None, root: Path, limit: int, as_json: bool) -> None:
    """Show the HTTP routes that match QUESTION, or every route without one."""
    with open_index(root) as index:
        matches = (
            find_routes(_question(question), index)[:limit]
            if question is not None
            else all_routes(index)
        )
    if as_json:
        print_json(matches)
        return
    if not matches:
        console.print("no matching routes" if question is not None else "no routes found")
        return
    scored = question is not None
    table = Table(*(["score"] if scored else []), "method", "path", "handler")
    table.add_column("where", overflow="fold")
    for match in matches:
        cells = [match.method, match.path, match.handler or "", f"{match.file}:{match.line}"]
        table.add_row(*([str(match.score)] if scored else []), *map(literal, cells))
    console.print(table)


def _print_paths(paths: list[str], as_json: bool, empty: str) -> None:
    if as_json:
        print_json(paths)
    elif not paths:
        console.print(empty, highlight=False)
    else:
        for path in paths:
            console.print(path, highlight=False, markup=False)


@click.command("deps")
@click.argument("path")
@root_option
@json_option
@handle_errors
def deps_command(path: str, root: Path, as_json: bool) -> None:
    """List the files PATH imports or refers to."""
    with open_index(root) as index:
        found = get_dependencies(path, index)
    _print_paths(found, as_json, f"{path} depends on no indexed file")


@click.command("dependants")
@click.argument("path")
@root_option
@json_option
@handle_errors
def dependants_command(path: str, root: Path, as_json: bool) -> None:
    """List the files that import PATH."""
    with open_index(root) as index:
        found = get_dependants(path, index)
    _print_paths(found, as_json, f"no indexed file imports {path}")


@click.command("env")
@click.argument("name")
@root_option
@json_option
@handle_errors
def env_command(name: str, root: Path, as_json: bool) -> None:
    """Show where environment variable NAME is read (any case)."""
    wanted = name.strip()
    if not wanted:
        raise QuestionError("no variable name given")
    with open_index(root) as index:
        references = find_environment_variable(wanted, index)
    if as_json:
        print_json(references)
        return
    if not references:
        console.print(f"no code reads {wanted}", highlight=False)
        return
    for reference in references:
        console.print(
            f"{reference.file}:{reference.line}  {reference.name}", highlight=False, markup=False
        )


def register(group: click.Group) -> None:
    """Add the structure-graph commands to ``group``."""
    for command in (
        symbols_command,
        refs_command,
        routes_command,
        deps_command,
        dependants_command,
        env_command,
    ):
        group.add_command(command)
