"""``szrag commands``, ``run``, ``tool`` and ``use-tool`` (the spec's ``rag:use-tool``)."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from szrag.base.public import public, public_dict
from szrag.cli.common import (
    console,
    err_console,
    handle_errors,
    host_for,
    json_option,
    print_json,
    root_option,
    terminal_safe,
)
from szrag.commands import CommandSpec, Identity
from szrag.commands.registry import PluginError
from szrag.commands.runner import DEFAULT_TIMEOUT
from szrag.tools import TOOLS, ToolDefinition
from szrag.tools.adapter import ToolResult
from szrag.tools.definitions import BLOCKED_TOOL_COMMANDS, TOOLS_BY_NAME

_PASS_THROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}
_HELP_FLAGS = ("--help", "-h")
_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


@dataclass(frozen=True, slots=True)
class ListedCommand:
    """A registered command as ``szrag commands`` lists it, with what may run it."""

    spec: CommandSpec = field(metadata=public(spread=True))
    allowlisted: bool
    runnable: bool
    has_handler: bool
    private: bool


@dataclass(frozen=True, slots=True)
class CommandListing:
    """``szrag commands --json``: every command, and the plugins that failed to load."""

    commands: list[dict[str, Any]]
    plugin_errors: list[PluginError]


@click.command("commands")
@root_option
@json_option
@handle_errors
def commands_command(root: Path, as_json: bool) -> None:
    """List the registered commands and whether tools and inference may run them."""
    host = host_for(root)
    registry = host.registry
    rows = [
        public_dict(
            ListedCommand(
                spec,
                allowlisted=host.policy.allowlist.allows(spec.id),
                runnable=host.policy.runnable(spec, "tool"),
                has_handler=spec.handler is not None,
                private=spec.private,
            )
        )
        for spec in registry.specs()
    ]
    if as_json:
        print_json(CommandListing(rows, registry.plugin_errors))
        return
    # the repository and runtime commands first, the built-in utilities apart below them
    groups = [
        ("repository and runtime", [row for row in rows if row["category"] == "general"]),
        ("utilities", [row for row in rows if row["category"] != "general"]),
    ]
    table = Table("command", "category", "allowlisted", "description")
    for title, members in groups:
        if not members:
            continue
        table.add_row(f"[bold]{title}[/]", "", "", "")
        for number, row in enumerate(
            sorted(members, key=lambda item: (item["category"], item["name"]))
        ):
            table.add_row(
                row["name"],
                row["category"],
                "yes" if row["allowlisted"] else "no",
                row["description"],
                end_section=number == len(members) - 1,
            )
    console.print(table)
    for error in registry.plugin_errors:
        err_console.print(
            f"[yellow]plugin failed:[/] {error.entry_point}: {error.message}", highlight=False
        )


@click.command("run", context_settings={"ignore_unknown_options": True})
@click.argument("command")
@click.argument("text", nargs=-1)
@root_option
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 600),
    default=None,
    help=f"Seconds before the command is cancelled (default {DEFAULT_TIMEOUT:g}, or the command's own).",
)
@json_option
@handle_errors
def run_command_cli(
    command: str, text: tuple[str, ...], root: Path, timeout: float | None, as_json: bool
) -> None:
    """Run COMMAND (an id such as hash, or /sz-hash) with TEXT as its input.

    You run it yourself, so the allowlist does not apply; the run is still audited.
    """
    host = host_for(root)
    with host.runtime:
        result = asyncio.run(
            host.runner.run(
                command, " ".join(text), Identity.local(), source="cli", timeout=timeout
            )
        )
    if as_json:
        print_json(result)
        return
    for response in result.responses:
        click.echo(terminal_safe(response.plain_text()))


def tool_help(tool: ToolDefinition) -> str:
    """A tool's description, schema and an example invocation."""
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    example = " ".join(f"--{name} VALUE" for name in tool.parameters.get("required", []))
    lines = [
        f"{tool.name}  (endpoint {tool.endpoint}, {tool.kind})",
        "",
        tool.description,
        "",
        "Arguments (JSON schema):",
        json.dumps(tool.parameters, indent=2),
        "",
        f"Example: szrag use-tool --{tool.name} {example}".rstrip(),
    ]
    if properties:
        lines.append(
            f"Arguments are given as --name value: {', '.join('--' + p for p in properties)}"
        )
    return "\n".join(lines)


def _coerce(value: str, schema: dict[str, Any] | None) -> Any:
    """A command-line string as the type the schema asks for (left as is when it is not one)."""
    kind = (schema or {}).get("type")
    if kind == "integer" and value.lstrip("+-").isdigit():
        return int(value)
    if kind == "number":
        try:
            return float(value)
        except ValueError:
            return value
    if kind == "boolean" and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    return value


def parse_tool_arguments(tool: ToolDefinition, tokens: list[str]) -> dict[str, Any]:
    """``--name value``, ``--name=value`` and bare boolean flags as the tool's arguments."""
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    arguments: dict[str, Any] = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if not token.startswith("--") or token == "--":
            raise click.UsageError(f"unexpected {token!r}: give tool arguments as --name value")
        name, has_value, value = token[2:].partition("=")
        schema = properties.get(name)
        if not has_value:
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            if (schema or {}).get("type") == "boolean" and (
                following is None or following.startswith("--")
            ):
                value = "true"
            elif following is None:
                raise click.UsageError(f"--{name} needs a value")
            else:
                value = following
                index += 1
        arguments[name] = _coerce(value, schema)
        index += 1
    return arguments


def _call_tool(root: Path, tool: ToolDefinition, arguments: dict[str, Any]) -> ToolResult:
    host = host_for(root)
    with host.runtime:
        adapter = host.tools(privileged=True)  # a person at this machine
        return asyncio.run(adapter.call(tool.name, arguments, identity=Identity.local()))


def _run_tool(name: str, tokens: list[str], root: Path, as_json: bool) -> None:
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise click.UsageError(f"unknown tool {name!r}; tools: {', '.join(TOOLS_BY_NAME)}")
    if any(token in _HELP_FLAGS for token in tokens):
        click.echo(tool_help(tool))
        return
    result = _call_tool(root, tool, parse_tool_arguments(tool, tokens))
    if as_json:
        print_json(result)
    else:
        click.echo(json.dumps(json.loads(result.text), indent=2, ensure_ascii=False))
    if not result.ok:
        err_console.print(f"[bold red]error:[/] {result.error}", highlight=False)
        sys.exit(1)


def _tools_overview() -> str:
    width = max(len(tool.name) for tool in TOOLS)
    lines = ["Live tools:"]
    for tool in TOOLS:
        lines.append(f"  {tool.name.ljust(width)}  {tool.description.split('. ')[0].rstrip('.')}.")
    blocked = ", ".join(sorted(BLOCKED_TOOL_COMMANDS))
    lines.append(f"\nrunCommand never runs: {blocked}. Others must be on the allowlist.")
    return "\n".join(lines)


@click.command("tool", context_settings=_PASS_THROUGH)
@click.argument("name", required=False)
@root_option
@json_option
@click.pass_context
@handle_errors
def tool_command(ctx: click.Context, name: str | None, root: Path, as_json: bool) -> None:
    """Call live tool NAME as the model would: szrag tool getLogs --limit 5.

    Arguments are given as --name value; `szrag tool NAME --help` shows the tool's schema.
    Prints the JSON the model would read (--json: the whole result).
    """
    tokens = list(ctx.args)
    if name is None or name in _HELP_FLAGS:
        click.echo(ctx.get_help() + "\n\n" + _tools_overview())
        return
    _run_tool(name, tokens, root, as_json)


@click.command("use-tool", context_settings=_PASS_THROUGH)
@root_option
@json_option
@click.pass_context
@handle_errors
def use_tool_command(ctx: click.Context, root: Path, as_json: bool) -> None:
    """The spec's `rag:use-tool` form: szrag use-tool --getStatus, szrag use-tool --getCommands --help.

    The first --<toolName> flag picks the tool; the remaining --name value pairs are its
    arguments; --help after the tool flag prints its description and schema.
    """
    tokens = list(ctx.args)
    position = next(
        (
            i
            for i, token in enumerate(tokens)
            if token.startswith("--") and token[2:] in TOOLS_BY_NAME
        ),
        None,
    )
    if position is None:
        click.echo(ctx.get_help() + "\n\n" + _tools_overview())
        if any(token not in _HELP_FLAGS for token in tokens):
            raise click.UsageError("name a tool, e.g. szrag use-tool --getStatus")
        return
    name = tokens[position][2:]
    _run_tool(name, tokens[:position] + tokens[position + 1 :], root, as_json)


def register(group: click.Group) -> None:
    """Add the command and tool commands to the ``szrag`` group."""
    for command in (commands_command, run_command_cli, tool_command, use_tool_command):
        group.add_command(command)
