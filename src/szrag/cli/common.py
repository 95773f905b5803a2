"""Shared pieces of the CLI: options, JSON output, and one place that turns errors into exits."""

from __future__ import annotations

import functools
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from szrag.base.errors import ConfigError, SzragError
from szrag.base.public import dumps
from szrag.index import Index, load_index
from szrag.index.build import IN_REPORT, answered_current, opened_current
from szrag.index.build import Progress as ProgressCallback
from szrag.index.build import log as _index_log

if TYPE_CHECKING:
    import click
    from rich.console import Console
    from rich.text import Text

    from szrag.conversations import ConversationMemory
    from szrag.index.handle import RefreshReport
    from szrag.index.protocol import IndexStore
    from szrag.rank.retrieve import Source
    from szrag.service.configuration import Config
    from szrag.service.host import Host
    from szrag.service.repositories import ServicePlan

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with control characters shown as ``\\x1b`` escapes: a file name or a file's
    content can then never clear the screen or rewrite the terminal's title."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text.replace("\r\n", "\n"))


def literal(value: str) -> Text:
    """``value`` as a table cell shows it: the repository's text (a name, a test's
    description, a line of code) never read as markup, its control characters escaped."""
    from rich.text import Text

    return Text(terminal_safe(value))


# Wider than any line szrag prints: without a terminal, a table takes the width its cells need.
UNBOUNDED_WIDTH = 1_000_000


class _DeferredConsole:
    """A console made on first use (``cli/console.py``): a command that prints nothing
    through Rich, such as any ``--json`` one, never imports it."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._made: Console | None = None

    def made(self) -> Console:
        """The console itself, made now if it was not yet."""
        if self._made is None:
            from szrag.cli.console import SafeConsole

            options = dict(self._options)
            if options.pop("stdout_soft_wrap", False):
                # output for a pipe or a file is never wrapped: lines stay whole for grep
                options["soft_wrap"] = not sys.stdout.isatty()
            self._made = SafeConsole(**options)
        return self._made

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)


def rich_console(deferred: Console) -> Console:
    """The console behind ``console`` or ``err_console``, for Rich objects that drive it
    themselves (a live display enters it as a context manager, which a stand-in cannot be)."""
    found: Any = deferred
    return found.made() if isinstance(found, _DeferredConsole) else deferred


console = cast("Console", _DeferredConsole(stdout_soft_wrap=True))
err_console = cast("Console", _DeferredConsole(stderr=True, soft_wrap=True))


def say(text: str, *, lead: str = "", style: str = "", error: bool = False) -> None:
    """One line for the user, ``lead`` in ``style`` before ``text``: through Rich on a
    terminal (or where FORCE_COLOR asks for colours); as plain text, control characters
    escaped, to a pipe or a file, so a script's ``szrag index`` never loads Rich."""
    stream = sys.stderr if error else sys.stdout
    if writes_to_terminal(stream) or os.environ.get("FORCE_COLOR"):
        from rich.markup import escape

        shown = f"[{style}]{escape(lead)}[/]{escape(text)}" if style else escape(lead + text)
        (err_console if error else console).print(shown, highlight=False)
        return
    stream.write(terminal_safe(lead + text) + "\n")
    stream.flush()


def writes_to_terminal(stream: Any) -> bool:
    """True when ``stream`` is a terminal (a closed or unusual stream is not)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


# The options every command shares are decorators that import Click when a command is
# defined with them, not when this module is: a one-shot question answered without Click
# (``cli/quick.py``) loads this module's printing and index helpers alone.


def root_option(command: F) -> F:
    """``--root``: the repository root to index and query."""
    import click

    return click.option(
        "--root",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=Path("."),
        show_default=True,
        help="Repository root to index and query.",
    )(command)


def json_option(command: F) -> F:
    """``--json``: machine-readable output."""
    import click

    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(
        command
    )


REPLICA_DATA = ".szrag/replica"  # a replica's own files, each repository's in a folder


def store_option(help_text: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``--store URL``, a PostgreSQL store, by default ``SZRAG_STORE``."""
    import click

    return click.option("--store", metavar="URL", envvar="SZRAG_STORE", help=help_text)


def replica(
    store: str, repos: tuple[str, ...], service_file: Path | None, data: Path
) -> ServicePlan:
    """The plan of a replica of ``store``: the published repositories ``--repo`` names (all
    of them without one), each checked to be published before anything runs; their own
    folders (conversations, audit log) under ``data``."""
    import click

    from szrag.index.pg import published
    from szrag.service.repositories import replica_plan

    if service_file is not None:
        raise click.UsageError("give --store URL or --config FILE, not both")
    paths = [item for item in repos if "=" in item]
    if paths:
        raise click.UsageError(
            f"--repo {paths[0]!r}: with --store, --repo names a published repository (NAME);"
            " the indexer publishes a checkout with `szrag index --store URL --repo NAME=PATH`"
        )
    found = published(store)
    names = list(dict.fromkeys(repos)) or found
    if not names:
        raise ConfigError(
            "the store holds no published repository yet: publish one with"
            " `szrag index --store URL --repo NAME=PATH`"
        )
    missing = [name for name in names if name not in found]
    if missing:
        raise ConfigError(
            f"no repository {missing[0]!r} is published in the store"
            f" (published: {', '.join(found) or 'none'})"
        )
    return replica_plan(store, names, data)


def store_from_environment() -> bool:
    """Whether the running command's ``--store`` came from ``SZRAG_STORE`` rather than its
    command line (a command that needs ``--repo`` too then works locally without one)."""
    import click
    from click.core import ParameterSource

    source = click.get_current_context().get_parameter_source("store")
    return source is ParameterSource.ENVIRONMENT


def config_for(root: Path, index: IndexStore | None = None) -> Config:
    """The configuration of ``root`` as its file and this process's environment describe it,
    read once (the CLI is a face: it alone reads ``os.environ``); with ``index``, the
    repository configuration that index was opened with."""
    from szrag.service.configuration import (
        load_config,  # here: commands that need none start faster
    )

    return load_config(root, os.environ, repository=index.config if index is not None else None)


def host_for(
    root: Path,
    index: IndexStore | None = None,
    conversations: ConversationMemory | None = None,
    **parts: Any,
) -> Host:
    """The host of ``root``, built from :func:`config_for`; ``parts`` given instead of what
    was read (``settings``, ``allowlist``, ``live_tools``: None keeps the configured one);
    ``conversations``, a store given (a service's), instead of the repository's own."""
    from szrag.service.host import Host, with_parts

    config = with_parts(config_for(root, index), **parts)
    return Host.of(config, index=index, conversations=conversations)


def _joined(context: click.Context, parameter: click.Parameter, value: tuple[str, ...]) -> str:
    return " ".join(value)


def _joined_or_none(
    context: click.Context, parameter: click.Parameter, value: tuple[str, ...]
) -> str | None:
    return " ".join(value) or None


def question_argument(command: F) -> F:
    """QUESTION, any number of words: `szrag retrieve how are blueprints registered` needs
    no quotes."""
    import click

    return click.argument("question", nargs=-1, required=True, callback=_joined)(command)


def optional_question_argument(command: F) -> F:
    """QUESTION, as :func:`question_argument`, but it may be left out (None)."""
    import click

    return click.argument("question", nargs=-1, required=False, callback=_joined_or_none)(command)


def print_json(value: Any) -> None:
    """Write ``value`` as indented public JSON (camelCase, one timestamp form) to stdout."""
    sys.stdout.write(dumps(value, indent=2) + "\n")


def handle_errors(function: Callable[P, R]) -> Callable[P, R]:
    """Turn SzragError into a message on stderr and its exit code; tracebacks only with --debug."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except SzragError as error:
            if _debug_enabled():
                raise
            err_console.print(f"[bold red]error:[/] {error.message}", highlight=False)
            raise SystemExit(error.exit_code) from None
        except KeyboardInterrupt:
            err_console.print("interrupted")
            raise SystemExit(130) from None

    return wrapper


def _debug_enabled() -> bool:
    import click

    context = click.get_current_context(silent=True)
    while context is not None:
        if context.obj and isinstance(context.obj, dict) and context.obj.get("debug"):
            return True
        context = context.parent
    return False


def configure_logging(debug: bool) -> None:
    """Warnings to stderr; everything with --debug."""
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


PROGRESS_DELAY = 0.5  # seconds of work before a progress bar is worth showing
NOTE_MIN_FILES = 200  # without a terminal, indexing fewer files is not worth a line


@contextmanager
def progress_bar(enabled: bool) -> Iterator[ProgressCallback | None]:
    """A progress callback that shows a bar on stderr once work lasts more than a moment."""
    if not enabled:
        yield None
        return
    if not writes_to_terminal(sys.stderr):  # a log or a pipe: one line, once the work is real
        said = False

        def note(done: int, total: int, path: str) -> None:
            nonlocal said
            if not said and total >= NOTE_MIN_FILES:
                say(f"indexing {total} files...", error=True)
                said = True

        yield note
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    started = time.monotonic()
    bar = Progress(
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=rich_console(err_console),
        transient=True,
    )
    task = bar.add_task("files", total=None)
    shown = False

    def update(done: int, total: int, path: str) -> None:
        nonlocal shown
        if not shown and time.monotonic() - started > PROGRESS_DELAY:
            bar.start()
            shown = True
        bar.update(task, completed=done, total=total)

    try:
        yield update
    finally:
        if shown:
            bar.stop()


class _InReport(logging.Filter):
    """Leaves out the index's log records whose warning the command prints from the report."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, IN_REPORT, False)


@contextmanager
def report_shown() -> Iterator[None]:
    """While the block loads an index whose report the command prints, its warnings are not
    logged as well (a damaged index is reported once, not twice)."""
    only_once = _InReport()
    _index_log.addFilter(only_once)
    try:
        yield
    finally:
        _index_log.removeFilter(only_once)


def show_report(report: RefreshReport) -> None:
    """A load's warnings and notes on stderr."""
    for warning in report.warnings:
        say(warning, lead="warning: ", style="yellow", error=True)
    for note in report.notes:
        say(f"note: {note}", error=True)


def retrieved_current(root: Path, question: str, limit: int | None = None) -> list[Source]:
    """What ``retrieve`` finds for ``question`` in the index of ``root`` brought current as
    ``open_index`` brings it (its bar, its warnings), the freshness proof running beside the
    search (``build.answered_current``): a one-shot question's way."""

    def search(index: Index) -> list[Source]:
        from szrag.rank.retrieve import DEFAULT_LIMIT, retrieve  # imported as the proof runs

        return retrieve(question, DEFAULT_LIMIT if limit is None else limit, index=index)

    with progress_bar(True) as callback, report_shown():
        found, report = answered_current(root, search, progress=callback)
    show_report(report)
    return found


@contextmanager
def open_index(
    root: Path, *, progress: bool = True, meanwhile: Callable[[Index], object] | None = None
) -> Iterator[Index]:
    """The index of ``root`` for a command: built or refreshed with the same progress bar as
    ``szrag index`` (a one-line note without a terminal), its warnings and notes on stderr.
    ``meanwhile(index)``, work that reads nothing a refresh could change, runs beside the
    proof that the index is current (``build.opened_current``)."""
    with progress_bar(progress) as callback, report_shown():
        if meanwhile is None:
            index = load_index(root, progress=callback)
        else:
            index = opened_current(root, meanwhile, progress=callback)
    show_report(index.last_report)
    try:
        yield index
    finally:
        index.close()
