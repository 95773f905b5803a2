"""``szrag feedback``: rate an answer, list what was said, export it as evaluation cases.

``szrag feedback ID up|down [--right-file PATH ...] [--comment TEXT]`` is the short form of
``szrag feedback give ...``; ``szrag feedback list`` shows the feedback kept and
``szrag feedback export [--out FILE] [--pin]`` writes the cases ``szrag eval`` reads. With
``--config FILE`` both read the feedback a service of several repositories keeps.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from szrag.base.public import utc_timestamp
from szrag.cli.common import (
    console,
    err_console,
    handle_errors,
    host_for,
    json_option,
    open_index,
    print_json,
    root_option,
)
from szrag.service.feedback import (
    FeedbackCases,
    export_feedback,
    export_service_feedback,
    give_feedback,
    list_feedback,
    service_feedback,
)

if TYPE_CHECKING:
    from szrag.conversations import Feedback
    from szrag.service.service import Service

QUESTION_CHARS = 60

service_option = click.option(
    "--config",
    "service_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A service file (szrag.toml): the feedback its server keeps for every repository.",
)


@contextlib.contextmanager
def opened_service(service_file: Path) -> Iterator[Service]:
    """The service of ``service_file`` (no repository's index is opened), closed after."""
    from szrag.service.repositories import read_service_file
    from szrag.service.service import Service

    service = Service(read_service_file(service_file), os.environ)
    try:
        yield service
    finally:
        service.close()


class FeedbackGroup(click.Group):
    """A group whose first argument may be an answer id: ``feedback ID up`` is ``feedback give
    ID up``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["give", *args]
        return super().parse_args(ctx, args)


@click.group("feedback", cls=FeedbackGroup, no_args_is_help=True)
def feedback() -> None:
    """Say whether an answer was right (`szrag feedback ANSWER_ID up|down`), list the
    feedback, or export it as evaluation cases for `szrag eval`."""


@feedback.command("give")
@click.argument("answer_id", metavar="ANSWER_ID")
@click.argument("rating", type=click.Choice(["up", "down"], case_sensitive=False))
@click.option(
    "--right-file",
    "right_files",
    multiple=True,
    metavar="PATH",
    help="A file that answers the question (repeat for several); checked against the index.",
)
@click.option("--comment", help="What was wrong or right, in a sentence.")
@root_option
@json_option
@handle_errors
def give(
    answer_id: str,
    rating: str,
    right_files: tuple[str, ...],
    comment: str | None,
    root: Path,
    as_json: bool,
) -> None:
    """Rate the answer ANSWER_ID (shown after each answer of `szrag ask`) up or down."""
    with open_index(root) as index:
        kept = give_feedback(
            host_for(root, index), answer_id, rating, right_files=right_files, comment=comment
        )
    if as_json:
        print_json(kept)
        return
    files = f"; right files: {', '.join(kept.right_files)}" if kept.right_files else ""
    console.print(
        f"kept: {kept.rating.value} for answer {kept.answer_id} ({_short(kept.question)}){files}",
        highlight=False,
        markup=False,
    )


@feedback.command("list")
@root_option
@service_option
@json_option
@handle_errors
def list_command(root: Path, service_file: Path | None, as_json: bool) -> None:
    """The feedback kept for this repository (or each of a service's), oldest first."""
    kept: list[Feedback]
    if service_file is not None:
        with opened_service(service_file) as service:
            kept = service_feedback(service)
    else:
        kept = list_feedback(host_for(root))
    if as_json:
        print_json(kept)
        return
    if not kept:
        console.print("no feedback yet: `szrag feedback ANSWER_ID up|down` gives some")
        return
    for item in kept:  # one line each: whole ids to copy, lines to grep
        expects = ", ".join(item.expected_files) or "nothing (no right file named)"
        scope = f"{item.repository}  " if item.repository else ""
        console.print(
            f"{_given(item.given_at)}  {item.rating.value:<4}  {scope}{item.answer_id}  "
            f"{_short(item.question)}  -> {expects}",
            highlight=False,
            markup=False,
        )


@feedback.command("export")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The case file to write (default: standard output); roots are written relative to it.",
)
@click.option(
    "--pin",
    is_flag=True,
    help="Pin each case to the commit it was answered at (`szrag eval` then checks that commit"
    " out in the root, discarding changes: use a clone).",
)
@root_option
@service_option
@handle_errors
def export(out: Path | None, pin: bool, root: Path, service_file: Path | None) -> None:
    """Write the feedback as evaluation cases (JSON lines) that `szrag eval` reads: a rating
    with right files expects them, an up without expects the files the answer cited."""
    cases: FeedbackCases
    if service_file is not None:
        with opened_service(service_file) as service:
            cases = export_service_feedback(service, out=out, pin=pin)
    else:
        cases = export_feedback(host_for(root), out=out, pin=pin)
    text = cases.jsonl()
    if out is None:
        sys.stdout.write(text)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    where = f" to {out}" if out is not None else ""
    left = (
        f"; {cases.left_out} down rating(s) without right files give none" if cases.left_out else ""
    )
    err_console.print(f"{len(cases.cases)} case(s){where}{left}", highlight=False, markup=False)


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= QUESTION_CHARS else line[: QUESTION_CHARS - 1] + "…"


def _given(moment: float) -> str:
    return utc_timestamp(moment)[:16].replace("T", " ")


def register(group: click.Group) -> None:
    """Add ``feedback`` to the ``szrag`` command."""
    group.add_command(feedback)
