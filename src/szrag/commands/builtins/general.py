"""ping, help, echo, release and ask."""

from __future__ import annotations

from itertools import groupby
from typing import Any

from szrag.base.public import public_dict
from szrag.commands.errors import CommandFailed, CommandInputError, UnknownCommand
from szrag.commands.model import CommandContext, CommandSpec
from szrag.runtime.releases import read_release_info

ASK_TIMEOUT = 180.0


async def ping(context: CommandContext) -> None:
    """Answer ``pong``."""
    context.respond("pong")


async def help_command(context: CommandContext) -> None:
    """List every command, or describe one."""
    registry = context.registry
    if context.text:
        spec = registry.get(context.text.split()[0])
        if spec is None:
            raise UnknownCommand(f"unknown command {context.text.split()[0]!r}")
        lines = [f"{spec.name}: {spec.description}", f"category: {spec.category}"]
        if spec.usage:
            lines.append(f"usage: {spec.usage}")
        context.respond("\n".join(lines))
        return
    specs = sorted(registry.specs(), key=lambda s: (s.category, s.id))
    lines = [f"{len(specs)} commands:"]
    for category, members in groupby(specs, key=lambda s: s.category):
        lines.append(f"\n{category}")
        for spec in members:
            usage = f"  ({spec.usage})" if spec.usage else ""
            lines.append(f"  {spec.name}: {spec.description}{usage}")
    context.respond("\n".join(lines))


async def echo(context: CommandContext) -> None:
    """Say the input back."""
    if not context.text:
        raise CommandInputError("echo needs some text, e.g. /sz-echo hello")
    context.respond(context.text)


def format_release(info: dict[str, Any]) -> str:
    """Release information as a few lines of text."""
    service = info.get("service") or {}
    lines = [f"{service.get('name', 'szrag')} {service.get('version', '?')}"]
    project = info.get("project")
    if project:
        lines.append(
            f"project {project.get('name') or '?'} {project.get('version')} ({project.get('source')})"
        )
    for key, label in (("target", "deployment"), ("release", "release"), ("gitSha", "commit")):
        value = (info.get("deployment") or {}).get(key)
        if value:
            lines.append(f"{label}: {value}")
    entry = info.get("release") if "requested" in info else info.get("latest")
    if "requested" in info and not info.get("found"):
        lines.append(str(info.get("message")))
    elif entry:
        date = f" ({entry['date']})" if entry.get("date") else ""
        lines.append(f"release {entry['version']}{date}")
        if entry.get("notes"):
            lines.append(entry["notes"])
    elif info.get("history") is None:
        lines.append("no release history file (CHANGELOG.md) in the repository")
    return "\n".join(lines)


async def release(context: CommandContext) -> None:
    """The version and the latest (or a named) release's notes."""
    version = context.text.split()[0] if context.text else None
    if context.runtime is not None:
        info = public_dict(await context.runtime.release_info(version))
    else:
        info = read_release_info(context.root, version)
    context.respond(format_release(info))


async def ask(context: CommandContext) -> None:
    """Answer a question about the repository (the /sz-ask command itself), through the
    pipeline of the host whose runner runs this command."""
    if not context.text:
        raise CommandInputError("ask needs a question, e.g. /sz-ask how is the index built?")
    if context.ask is None:
        raise CommandFailed("no question pipeline is bound to this command runner")
    answer = await context.ask(context.text, context.identity)
    if not answer.strip():
        raise CommandFailed("the question pipeline returned no answer")
    context.respond(answer)


COMMANDS = (
    CommandSpec("ping", "Check that the bot answers.", ping, category="general", usage="/sz-ping"),
    CommandSpec(
        "help",
        "List the commands, or describe one.",
        help_command,
        category="general",
        usage="/sz-help [COMMAND]",
    ),
    CommandSpec("echo", "Repeat the text given.", echo, category="general", usage="/sz-echo TEXT"),
    CommandSpec(
        "release",
        "Show the version and release notes, latest or of one version.",
        release,
        category="general",
        usage="/sz-release [VERSION]",
    ),
    CommandSpec(
        "ask",
        "Answer a question about the repository and the running application.",
        ask,
        category="general",
        usage="/sz-ask QUESTION",
        timeout=ASK_TIMEOUT,
    ),
)
