"""The ``szrag`` command group, made with Click: imported when a command needs Click to
parse it (every command but the plain one-shot forms ``cli/quick.py`` answers)."""

from __future__ import annotations

import importlib

import click

from szrag.cli import COMMANDS
from szrag.cli.common import configure_logging
from szrag.version import __version__


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
