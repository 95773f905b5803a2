"""The ``szrag`` command: a thin layer over the library."""

from __future__ import annotations

import sys

import click

from szrag.cli import (
    ask_cmds,
    chat_cmds,
    code_cmds,
    context_cmds,
    eval_cmds,
    feedback_cmds,
    index_cmds,
    mcp_cmds,
    serve_cmds,
    tool_cmds,
)
from szrag.cli.common import configure_logging
from szrag.version import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="szrag")
@click.option("--debug", is_flag=True, help="Show debug logs and full tracebacks.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Ask questions about a code repository and the application that runs from it."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    configure_logging(debug)


for _module in (
    index_cmds,
    code_cmds,
    context_cmds,
    ask_cmds,
    chat_cmds,
    feedback_cmds,
    tool_cmds,
    serve_cmds,
    mcp_cmds,
    eval_cmds,
):
    _module.register(main)


@main.command("help")
@click.argument("command", required=False)
@click.pass_context
def help_command(ctx: click.Context, command: str | None) -> None:
    """Show what szrag does, or how one COMMAND is used."""
    parent = ctx.parent
    assert parent is not None and isinstance(parent.command, click.Group)
    if command is None:
        click.echo(parent.command.get_help(parent))
        return
    found = parent.command.get_command(parent, command)
    if found is None:
        raise click.UsageError(f"no command {command!r}: `szrag help` lists them", ctx)
    with click.Context(found, info_name=command, parent=parent) as context:
        click.echo(found.get_help(context))


def run(argv: list[str] | None = None) -> None:
    """The ``szrag`` entry point: ``--debug`` works wherever it stands on the line."""
    args = list(sys.argv[1:] if argv is None else argv)
    end = args.index("--") if "--" in args else len(args)
    if "--debug" in args[:end]:
        args.remove("--debug")
        args.insert(0, "--debug")
    main(args, prog_name="szrag")
