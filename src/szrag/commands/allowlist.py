"""Which commands may run without a person typing them: inferred from a question or asked
for by the model through the runCommand tool.

The default holds the built-ins without side effects. A host passes its own ``Allowlist``;
the environment variable ``SZRAG_COMMAND_ALLOWLIST`` replaces the default with a
comma-separated list of ids (``*`` allows every registered command, an empty value none).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from szrag.commands.registry import normalise_command_id

ENV_VARIABLE = "SZRAG_COMMAND_ALLOWLIST"

SAFE_BUILTINS = frozenset(
    {
        "base64",
        "calc",
        "case",
        "count",
        "echo",
        "hash",
        "help",
        "ping",
        "random",
        "release",
        "roll",
        "token",
        "unix",
        "uuid",
    }
)


@dataclass(frozen=True)
class Allowlist:
    """A set of command ids that may run; ``ids=None`` allows every command."""

    ids: frozenset[str] | None = SAFE_BUILTINS

    @classmethod
    def of(cls, ids: Iterable[str]) -> Allowlist:
        """Exactly these commands (ids or slash names)."""
        return cls(frozenset(normalise_command_id(item) for item in ids if item.strip()))

    @classmethod
    def everything(cls) -> Allowlist:
        """Every registered command."""
        return cls(None)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Allowlist:
        """``SZRAG_COMMAND_ALLOWLIST`` when set in ``environ``, else the safe built-ins."""
        raw = environ.get(ENV_VARIABLE)
        if raw is None:
            return cls()
        if raw.strip() == "*":
            return cls.everything()
        return cls.of(raw.split(","))

    def allows(self, command_id: str) -> bool:
        """True when ``command_id`` may run."""
        return self.ids is None or normalise_command_id(command_id) in self.ids

    def describe(self) -> str:
        """A short human description for messages."""
        if self.ids is None:
            return "every command"
        return ", ".join(sorted(self.ids)) or "no commands"
