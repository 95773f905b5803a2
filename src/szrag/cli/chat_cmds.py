"""``szrag chat``: a conversation with the repository at the terminal.

Each line is a question answered as ``szrag ask`` answers it (streamed, then sources, usage and
the answer's id), in one conversation, so a follow-up ("and where is that called from?") is
understood. An empty line, ``/exit`` or the end of input (Ctrl-D) ends it; Ctrl-C stops the
answer being written and returns to the prompt. With readline available the line can be
edited and earlier lines recalled.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from szrag.base.errors import SzragError
from szrag.cli.ask_cmds import AnswerChoices, AnswerView, answer_options, conversation_for
from szrag.cli.common import console, err_console, handle_errors, open_index, root_option
from szrag.index import refresh_index
from szrag.service.host import answer_question

PROMPT = "> "
ENDINGS = frozenset({"/exit", "/quit", "/bye"})
REFRESH_LOCK_WAIT = 2.0  # seconds: a busy index answers as it is rather than keep you waiting


def _line_editing() -> None:
    """Arrow keys, editing and recall for ``input()`` where the platform has readline."""
    with contextlib.suppress(ImportError):  # Windows without it: plain input still works
        import readline  # noqa: F401 - importing it is what turns line editing on


@click.command("chat")
@answer_options
@root_option
@handle_errors
def chat(choices: AnswerChoices, root: Path) -> None:
    """Ask, then follow up: one conversation, each answer streamed as `szrag ask` does.

    An empty line, /exit or Ctrl-D ends it; Ctrl-C stops the current answer.
    """
    _line_editing()
    with open_index(root) as index:
        host = choices.host(root, index)
        current = conversation_for(host, choices.continue_last, choices.conversation)
        if current is not None:
            kept = len(host.conversations.turns(current))
            err_console.print(
                f"[dim]continuing conversation {current} ({kept} earlier turns kept)[/]",
                highlight=False,
            )
        else:
            err_console.print("[dim]ask about the repository; an empty line ends[/]")
        asked = 0
        while True:
            try:
                line = input(PROMPT)
            except (EOFError, KeyboardInterrupt):
                err_console.print()
                break
            question = line.strip()
            if not question or question.lower() in ENDINGS:
                break
            if asked:  # files may have changed since the last answer
                refresh_index(index, lock_wait=REFRESH_LOCK_WAIT)
            asked += 1
            view = AnswerView(console, err_console, verbose=choices.verbose)
            try:
                turn = choices.question(question, current)
                result = answer_question(turn.heard_by(view.on_activity, view.on_token), host)
            except KeyboardInterrupt:
                err_console.print("\n[dim]interrupted[/]")
                continue
            except SzragError as error:  # one failed question does not end the conversation
                err_console.print(f"[bold red]error:[/] {error.message}", highlight=False)
                continue
            view.finish(result, follow_up_hint=False)
            console.print()
            current = result.conversation_id or current
    if current is not None:
        err_console.print(
            f"[dim]conversation {current}: `szrag chat --continue` picks it up again[/]",
            highlight=False,
        )


def register(group: click.Group) -> None:
    """Add ``chat`` to the ``szrag`` command."""
    group.add_command(chat)
