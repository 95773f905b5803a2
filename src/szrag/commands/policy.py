"""The one decision of whether a command may run, for every caller.

A person who names a command (``szrag run``, a library call with ``command_id``) runs any
registered command. Every other caller (a command inferred from a question, the model's
``runCommand`` tool, the HTTP API, Slack) runs only what the allowlist holds, and never a
command that would recurse into answering (``ask``). The runner asks this policy before every
run and tells its observers about refusals, so the audit log sees who tried what wherever the
request came from; listings (``getCommands``, ``/api/commands``, ``szrag commands``) ask it
too, so what they call runnable is what runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from szrag.base.errors import CommandBlocked, CommandNotAllowed, MissingHandler, UnknownCommand
from szrag.commands.allowlist import Allowlist
from szrag.commands.model import CommandSpec
from szrag.commands.registry import CommandRegistry, default_registry

PERSON_SOURCES = frozenset({"cli", "host"})
"""Where a person chose the command directly: the allowlist does not apply."""

NEVER_FOR_CALLERS = frozenset({"ask"})
"""Commands no caller but a person may run: ``/sz-ask`` from a tool or the API would recurse."""

_CALLERS = {"tool": "a tool", "inference": "a question", "api": "the API", "slack": "Slack"}


@dataclass(frozen=True)
class CommandPolicy:
    """Which commands of ``registry`` may run, by who asks (``source``)."""

    registry: CommandRegistry = field(default_factory=default_registry)
    allowlist: Allowlist = field(default_factory=Allowlist)
    blocked: frozenset[str] = NEVER_FOR_CALLERS

    def check(self, command_id: str, source: str) -> CommandSpec:
        """The command that would run for ``source``, or the CommandError that says why not
        (UnknownCommand, CommandBlocked, CommandNotAllowed, MissingHandler)."""
        spec = self.registry.get(command_id)
        if spec is None:
            hint = self.registry.suggestions(command_id)
            suffix = (
                f"; did you mean {', '.join(hint)}?"
                if hint
                else "; `/sz-help` (`szrag commands`) lists them"
            )
            raise UnknownCommand(f"unknown command {command_id.strip()[:64]!r}{suffix}")
        if source not in PERSON_SOURCES:
            if spec.id in self.blocked:
                where = _CALLERS.get(source, source)
                raise CommandBlocked(f"{spec.name} cannot be run from {where}")
            if not self.allowlist.allows(spec.id):
                raise CommandNotAllowed(
                    f"command {spec.id!r} is not on the allowlist "
                    f"(allowed: {self.allowlist.describe()})"
                )
        if spec.handler is None:
            raise MissingHandler(f"command {spec.id!r} is registered without a handler")
        return spec

    def runnable(self, spec: CommandSpec, source: str = "tool") -> bool:
        """Whether ``spec`` would run for ``source`` (listings; nothing is reported)."""
        try:
            self.check(spec.id, source)
        except (UnknownCommand, CommandNotAllowed, MissingHandler):
            return False
        return True

    def is_private(self, command_id: object) -> bool:
        """Whether the command's input or output is a secret, so its replies stay with the
        asker (as each command declares; an unknown id is not private)."""
        if not isinstance(command_id, str):
            return False
        spec = self.registry.get(command_id)
        return spec is not None and spec.private

    def output_is_secret(self, command_id: object) -> bool:
        """Whether the command's output must not reach the model."""
        if not isinstance(command_id, str):
            return False
        spec = self.registry.get(command_id)
        return spec is not None and spec.secret_output
