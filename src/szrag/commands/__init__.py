"""Commands: the registry, the runner, inference from questions, and the built-ins.

    registry = default_registry()                  # built-ins + installed plugins
    result = await run_command("calc", "2 ^ 10")   # CommandResult {id, command, responses}
    invocation = infer_command_invocation("run /sz-uuid", registry)

Environment: ``SZRAG_COMMAND_ALLOWLIST`` (see ``szrag.commands.allowlist``).
"""

from __future__ import annotations

from szrag.base.errors import CommandError
from szrag.commands.allowlist import SAFE_BUILTINS, Allowlist
from szrag.commands.errors import (
    CommandFailed,
    CommandInputError,
    CommandNotAllowed,
    CommandTimeout,
    MissingHandler,
    NoResponse,
    UnknownCommand,
)
from szrag.commands.inference import (
    Invocation,
    infer_command_invocation,
    is_command_oriented,
    redact_invocation_secrets,
    redact_password_phrases,
)
from szrag.commands.model import (
    CommandContext,
    CommandOutcome,
    CommandResult,
    CommandSpec,
    Handler,
    Identity,
    Response,
)
from szrag.commands.policy import CommandPolicy
from szrag.commands.process import ProcessResult, run_process
from szrag.commands.registry import (
    ENTRY_POINT_GROUP,
    CommandRegistry,
    PluginError,
    builtin_registry,
    default_registry,
    get_command,
)
from szrag.commands.runner import DEFAULT_TIMEOUT, CommandRunner, Observer, run_command

__all__ = [
    "DEFAULT_TIMEOUT",
    "ENTRY_POINT_GROUP",
    "SAFE_BUILTINS",
    "Allowlist",
    "CommandContext",
    "CommandError",
    "CommandFailed",
    "CommandInputError",
    "CommandNotAllowed",
    "CommandOutcome",
    "CommandPolicy",
    "CommandRegistry",
    "CommandResult",
    "CommandRunner",
    "CommandSpec",
    "CommandTimeout",
    "Handler",
    "Identity",
    "Invocation",
    "MissingHandler",
    "NoResponse",
    "Observer",
    "PluginError",
    "ProcessResult",
    "Response",
    "UnknownCommand",
    "builtin_registry",
    "default_registry",
    "get_command",
    "infer_command_invocation",
    "is_command_oriented",
    "redact_invocation_secrets",
    "redact_password_phrases",
    "run_command",
    "run_process",
]
