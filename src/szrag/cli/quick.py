"""The one-shot question answered without Click: ``szrag retrieve --json QUESTION`` with at
most ``--root PATH`` and ``--limit N`` besides, in any order, is the form scripts and editors
run again and again, and Click's import (with the parts of the standard library it pulls in:
``inspect``, ``uuid``, ``gettext``...) was a sixth of its time.

Anything else, or anything Click would judge differently (a root that is not a directory, a
limit out of range, a word that starts with ``-``, help), is left to the Click command, which
answers it as always: this path never gives a second kind of error message. What it prints,
and how it reports a failure, is ``retrieve_cmds.retrieve_command``'s for the same line
(``tests/cli/test_lean_commands.py`` compares the two)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

LIMIT_RANGE = range(1, 101)  # as ``--limit``'s IntRange


@dataclass(frozen=True, slots=True)
class QuickRetrieve:
    """A plain ``szrag retrieve --json`` line: its question, root and limit."""

    question: str
    root: Path
    limit: int | None  # None: retrieve's own default


def parse_quick(args: list[str]) -> QuickRetrieve | None:
    """The plain one-shot form of ``args`` (the words after ``szrag``), or None when the line
    is anything else."""
    if not args or args[0] != "retrieve":
        return None
    words: list[str] = []
    root, limit, as_json = ".", None, False
    rest = iter(args[1:])
    for word in rest:
        name, equals, value = word.partition("=")
        if word == "--json":
            as_json = True
        elif name in ("--root", "--limit"):
            if not equals:
                value = next(rest, "")
            if name == "--root":
                root = value
            else:
                limit = value
        elif word.startswith("-") or not word:
            return None  # another option, help, ``--`` or an empty word: Click decides
        else:
            words.append(word)
    if not as_json or not words or not root or not Path(root).is_dir():
        return None
    if limit is not None and not (
        limit.isascii() and limit.isdigit() and int(limit) in LIMIT_RANGE
    ):
        return None  # missing, not a number or out of range: Click says which
    # the limit's default is the retrieval's: importing it here would import the search
    # before the proof that the index is current starts beside it
    return QuickRetrieve(" ".join(words), Path(root), None if limit is None else int(limit))


def answer_quickly(args: list[str]) -> bool:
    """Answer ``args`` when it is the plain one-shot form (True), exactly as the Click
    command would; False leaves the line to Click."""
    asked = parse_quick(args)
    if asked is None:
        return False
    from szrag.base.errors import SzragError
    from szrag.cli.common import configure_logging, err_console, print_json, retrieved_current

    configure_logging(False)
    try:
        found = retrieved_current(asked.root, asked.question, asked.limit)
        # machine output may end up anywhere: redacted as for a model
        print_json([source.redacted().to_dict() for source in found])
    except SzragError as error:
        err_console.print(f"[bold red]error:[/] {error.message}", highlight=False)
        raise SystemExit(error.exit_code) from None
    except KeyboardInterrupt:
        err_console.print("interrupted")
        raise SystemExit(130) from None
    except BrokenPipeError:  # a reader that stopped early (``| head``), as Click takes it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None
    return True
