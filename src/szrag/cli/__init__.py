"""The ``szrag`` command: a thin layer over the library."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from szrag.cli.group import LazyGroup as LazyGroup
    from szrag.cli.group import help_command as help_command
    from szrag.cli.group import main as main

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


def run(argv: list[str] | None = None) -> None:
    """The ``szrag`` entry point: ``--debug`` works wherever it stands on the line."""
    args = list(sys.argv[1:] if argv is None else argv)
    end = args.index("--") if "--" in args else len(args)
    if "--debug" in args[:end]:
        args.remove("--debug")
        args.insert(0, "--debug")
    from szrag.cli.quick import answer_quickly

    if answer_quickly(args):
        return
    from szrag.cli.group import main

    main(args, prog_name="szrag")


_GROUP = ("LazyGroup", "help_command", "main")


def __getattr__(name: str) -> Any:
    """The Click group and its parts (``cli/group.py``), imported when first asked for."""
    if name in _GROUP:
        from szrag.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
