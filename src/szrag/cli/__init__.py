"""The ``szrag`` command: a thin layer over the library."""

from __future__ import annotations

import importlib
import sys

import click

from szrag.cli.common import configure_logging
from szrag.version import __version__

COMMANDS: dict[str, str] = {
    "index": "index_cmds",
    "retrieve": "retrieve_cmds",
    "images": "retrieve_cmds",
    "stats": "index_cmds",
    "symbols": "code_cmds",
    "refs": "code_cmds",
    "routes": "code_cmds",
    "deps": "code_cmds",
    "dependants": "code_cmds",
    "env": "code_cmds",
    "context": "context_cmds",
    "ask": "ask_cmds",
    "debug": "ask_cmds",
    "doctor": "ask_cmds",
    "chat": "chat_cmds",
    "feedback": "feedback_cmds",
    "commands": "tool_cmds",
    "run": "tool_cmds",
    "tool": "tool_cmds",
    "use-tool": "tool_cmds",
    "serve": "serve_cmds",
    "repos": "repos_cmds",
    "mcp": "mcp_cmds",
    "eval": "eval_cmds",
}
"""Each command and the module (in ``szrag.cli``) that defines it."""


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command runs (or help lists
    it), so ``szrag retrieve`` never loads the answer pipeline, the model client or a server."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in COMMANDS:
            module = importlib.import_module(f"szrag.cli.{COMMANDS[cmd_name]}")
            module.register(self)
            found = super().get_command(ctx, cmd_name)
        return found


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="szrag")
@click.option("--debug", is_flag=True, help="Show debug logs and full tracebacks.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Ask questions about a code repository and the application that runs from it."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    configure_logging(debug)


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
