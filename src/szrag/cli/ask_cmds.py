"""``szrag ask`` (a streamed answer, kept in a conversation) and ``szrag debug`` (what the model
would be given)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click
from rich.console import Console

from szrag.answer.elsewhere import MergedSource
from szrag.answer.question import Question
from szrag.answer.results import Answer, Outcome, ScopedAnswer
from szrag.base.activity import Activity
from szrag.base.errors import ConfigError
from szrag.base.settings import Settings
from szrag.cli.common import (
    REPLICA_DATA,
    config_for,
    console,
    err_console,
    handle_errors,
    host_for,
    json_option,
    open_index,
    print_json,
    replica,
    root_option,
    store_from_environment,
    store_option,
)
from szrag.commands import Identity
from szrag.rank.retrieve import DEFAULT_LIMIT, Image, Source
from szrag.service.host import answer_question, debug_question

if TYPE_CHECKING:
    from szrag.conversations import ConversationMemory
    from szrag.index import Index
    from szrag.index.protocol import IndexStore
    from szrag.service.host import Host
    from szrag.service.repositories import ServicePlan

P = ParamSpec("P")
R = TypeVar("R")

limit_option = click.option(
    "--limit",
    type=click.IntRange(1, 100),
    default=DEFAULT_LIMIT,
    show_default=True,
    help="Most repository sources to retrieve.",
)
budget_option = click.option(
    "--budget",
    type=click.IntRange(100, 1_000_000),
    default=None,
    help="Token budget of the repository context given to the model (default: configured,"
    " else 12000; 4000 in the slackzilla profile).",
)
continue_option = click.option(
    "--continue",
    "continue_last",
    is_flag=True,
    help="Follow up in the last conversation of `szrag ask` or `szrag chat` in this repository.",
)
conversation_option = click.option(
    "--conversation",
    "conversation",
    metavar="ID",
    help="Follow up in the conversation ID (a conversationId from --json, the API or Slack).",
)
CLI_FACE = "cli"


@dataclasses.dataclass(frozen=True, slots=True)
class AnswerChoices:
    """What every command that answers was told: model, tools, activity output,
    conversation, sources and budget."""

    no_ai: bool
    tools: bool | None
    verbose: bool
    model: str | None
    continue_last: bool
    conversation: str | None
    limit: int
    budget: int | None

    def host(
        self, root: Path, index: IndexStore, conversations: ConversationMemory | None = None
    ) -> Host:
        """The host these choices answer with (the live tools and model they name; a
        service's conversation store when given, else the repository's own)."""
        host = host_for(root, index, conversations=conversations, live_tools=self.tools)
        if self.model:
            host = host.replace(settings=dataclasses.replace(host.settings, ai_model=self.model))
        return host

    def question(self, text: str, conversation_id: str | None) -> Question:
        """``text`` asked from the terminal with these choices."""
        return Question(
            text,
            with_ai=not self.no_ai,
            face=CLI_FACE,
            limit=self.limit,
            budget=self.budget,
            conversation_id=conversation_id,
            remember=True,
        )


_CHOICES = tuple(field.name for field in dataclasses.fields(AnswerChoices))


def answer_options(command: Callable[..., R]) -> Callable[..., R]:
    """The options of every command that answers (``ask``, ``chat``), handed to it as one
    ``choices`` record."""

    @functools.wraps(command)
    def gathered(**values: Any) -> R:
        choices = AnswerChoices(**{name: values.pop(name) for name in _CHOICES})
        return command(choices=choices, **values)

    for option in reversed(
        (
            click.option(
                "--no-ai", is_flag=True, help="Answer from retrieval alone; never call a model."
            ),
            click.option(
                "--tools/--no-tools",
                default=None,
                help="Let the model call live tools (status, logs, commands...); default:"
                " SZRAG_TOOLS, on.",
            ),
            click.option(
                "--verbose", "-v", is_flag=True, help="Show every step (activity) as it happens."
            ),
            click.option("--model", "-m", help="The model to ask (default: AI_MODEL)."),
            continue_option,
            conversation_option,
            limit_option,
            budget_option,
        )
    ):
        gathered = option(gathered)
    return gathered


def conversation_for(host: Host, continue_last: bool, conversation: str | None) -> str | None:
    """The conversation a CLI question continues: ``--conversation ID``, the last one of the
    CLI with ``--continue`` (a note and a new one when there is none), else None (new)."""
    if continue_last and conversation:
        raise click.UsageError("give --continue or --conversation ID, not both")
    if conversation:
        return host.conversations.get(conversation).id  # an unknown id stops here
    if not continue_last:
        return None
    latest = host.conversations.latest(CLI_FACE, owner=Identity.local().user_id)
    if latest is None:
        err_console.print("note: no earlier conversation to continue; starting a new one")
        return None
    return latest.id


class AnswerView:
    """Shows an answer in the terminal as it streams, then its sources, images and usage."""

    def __init__(self, out: Console, err: Console, *, verbose: bool) -> None:
        self.out = out
        self.err = err
        self.verbose = verbose
        self.streamed: dict[int, str] = {}
        self._round: int | None = None
        self._line_open = False  # streamed text printed without its line break yet

    def on_token(self, text: str, round: int) -> None:
        """Print streamed text; a new model round starts on a new line."""
        if round != self._round:
            self._close_line()
            self._round = round
        self.streamed[round] = self.streamed.get(round, "") + text
        self.out.print(text, end="", markup=False, highlight=False, soft_wrap=True)
        self._line_open = not text.endswith("\n")

    def on_activity(self, activity: Activity) -> None:
        """With --verbose every activity on stderr; otherwise only when tools are consulted."""
        if self.verbose:
            self._close_line()
            self.err.print(
                f"[dim]{activity.stage:<9} {activity.status:<9}[/] {_escape(activity.message)}",
                highlight=False,
            )
            return
        tools = (activity.metadata or {}).get("tool_calls") if activity.stage == "ai" else None
        if tools:
            self._close_line()
            self.err.print(f"[dim]… consulting live data: {', '.join(map(str, tools))}[/]")

    def finish(self, result: Answer, *, follow_up_hint: bool = True) -> None:
        """The answer (unless it streamed in full), then sources, images, usage and the ids
        to rate it by and follow up with."""
        answer = result.answer
        last = self.streamed.get(result.response_rounds, "")
        self._close_line()
        if last.strip() and answer.startswith(last.strip()):
            rest = answer[len(last.strip()) :].strip()  # a note after what already streamed
            if rest:
                self.out.print(f"\n{rest}", markup=False, highlight=False, soft_wrap=True)
        elif last.strip() != answer.strip():
            self.out.print(answer, markup=False, highlight=False, soft_wrap=True)
        if result.outcome is Outcome.ANSWERED:  # local answers list them already
            self._sources(result.sources)
            self._elsewhere(result.elsewhere)
            self._images(result.images)
        usage = result.usage
        # a request that failed has no usage worth a line (the JSON still carries the estimate)
        if usage is not None and result.asked_model and result.outcome is not Outcome.MODEL_FAILED:
            guess = " (estimated)" if usage.estimated else ""
            self.out.print(
                f"\n[dim]usage: {usage.input_tokens} input + {usage.output_tokens} output = "
                f"{usage.total_tokens} tokens{guess}[/]"
            )
        if result.answer_id is not None:
            hint = "; follow up: szrag ask --continue ..." if follow_up_hint else ""
            self.out.print(
                f"[dim]answer {result.answer_id} (rate it: szrag feedback {result.answer_id}"
                f" up|down){hint}[/]",
                highlight=False,
            )
        if result.error is not None:
            failure = f"[bold red]model error ({result.error.code})[/]"
            if result.error.message not in answer:  # said once: the answer may say it already
                failure += f": {_escape(result.error.message)}"
            self.err.print(failure)

    def _sources(self, sources: Sequence[Source]) -> None:
        if not sources:
            return
        self.out.print("\n[bold]Sources[/]")
        for source in sources:
            heading = f"  {source.heading}" if source.heading else ""
            self.out.print(
                f"  {_escape(source.path)}:{source.start}-{source.end}"
                f"[dim]{_escape(heading)}  (score {source.score})[/]",
                highlight=False,
            )

    def _elsewhere(self, offered: Sequence[MergedSource]) -> None:
        if not offered:
            return
        self.out.print("\n[bold]In other repositories[/]")
        for item in offered:
            heading = f"  {item.source.heading}" if item.source.heading else ""
            self.out.print(f"  {_escape(item.cited)}[dim]{_escape(heading)}[/]", highlight=False)

    def _images(self, images: Sequence[Image]) -> None:
        if not images:
            return
        self.out.print("\n[bold]Images[/]")
        for image in images:
            self.out.print(f"  {_escape(image.path)} [dim]{_escape(image.url)}[/]")

    def _close_line(self) -> None:
        if self._line_open:
            self.out.print()
            self._line_open = False


def _escape(text: str) -> str:
    return text.replace("[", r"\[")


@click.command("ask")
@click.argument("question", nargs=-1, required=True)
@answer_options
@root_option
@click.option(
    "--repo",
    "repository",
    metavar="NAME",
    help="Ask repository NAME of the service file (see --config), or of the store (--store).",
)
@store_option(
    "Answer from this PostgreSQL store (default SZRAG_STORE, with --repo), no checkout: the"
    " repository --repo names, else the one the question is most likely about."
)
@click.option(
    "--config",
    "service_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A service file (szrag.toml): with no --repo, the question goes to the repository it"
    " is most likely about.",
)
@json_option
@handle_errors
def ask(
    question: tuple[str, ...],
    choices: AnswerChoices,
    root: Path,
    repository: str | None,
    store: str | None,
    service_file: Path | None,
    as_json: bool,
) -> None:
    """Answer QUESTION about the repository, streaming the model's answer.

    Without AI_API_KEY the answer comes from retrieval alone; set AI_API_KEY (and AI_URL,
    AI_MODEL for another OpenAI-compatible provider or model) for a written answer. Every
    answer is kept with an id to rate it by (`szrag feedback ID up|down`) in a conversation
    that --continue follows up.
    """
    view = AnswerView(console, err_console, verbose=choices.verbose)
    text = " ".join(question)
    scope, plan = None, None
    elsewhere: tuple[MergedSource, ...] = ()
    if store is not None and repository is None and store_from_environment():
        store = None  # SZRAG_STORE is asked with --repo NAME; without one, --root as ever
    if store is not None:
        scope, root, plan, elsewhere = stored_repository_of(text, repository, store, service_file)
    elif repository is not None or service_file is not None:
        scope, root, plan, elsewhere = repository_of(text, repository, service_file)
    if scope is not None and not as_json:
        err_console.print(f"[dim]repository {scope}[/]", highlight=False)
    opened = (
        open_store(store, scope) if store and scope else open_index(root, meanwhile=_made_ready)
    )
    with opened as index, contextlib.ExitStack() as kept:
        memory = None
        if plan is not None and scope is not None:  # the service's one store, as it serves
            from szrag.conversations import open_conversation_store

            memory = open_conversation_store(plan.conversations_at)
            kept.callback(memory.close)
            memory = memory.for_repository(scope)
        host = choices.host(root, index, memory)
        asked = dataclasses.replace(
            choices.question(
                text, conversation_for(host, choices.continue_last, choices.conversation)
            ),
            elsewhere=elsewhere,
        ).heard_by(
            on_activity=view.on_activity if choices.verbose or not as_json else None,
            on_token=None if as_json else view.on_token,
        )
        result = answer_question(asked, host)
    if as_json:
        print_json(ScopedAnswer(result, scope) if scope is not None else result)
    else:
        view.finish(result)
    if result.error is not None:
        raise SystemExit(1)


def _made_ready(index: Index) -> None:
    """What an answer will load anyway, loaded while the index is proven current: the
    pipeline's modules and the configured tokenizer (a tenth of a second for an exact one).
    A failure here is met again, and reported, where the answer needs the part."""
    with contextlib.suppress(Exception):
        import szrag.answer.pipeline  # noqa: F401

        config_for(index.root, index).plan.counter()


def repository_of(
    question: str, repository: str | None, service_file: Path | None
) -> tuple[str, Path, ServicePlan, tuple[MergedSource, ...]]:
    """The repository of a service file a question is asked of, its folder, the service's
    plan and the other repositories' sources offered beside: the one named (none offered),
    else the one the question is routed to."""
    from szrag.service.repositories import SERVICE_FILE, read_service_file
    from szrag.service.service import Service

    chosen = service_file or Path(SERVICE_FILE)
    if not chosen.is_file():
        raise ConfigError(f"no service file at {chosen}: give --config FILE (szrag repos add)")
    plan = read_service_file(chosen)
    elsewhere: tuple[MergedSource, ...] = ()
    if repository is not None:
        spec = plan.named(repository)
    else:
        service = Service(plan, os.environ)
        try:
            routed = service.route(question)
        finally:
            service.close()
        spec, elsewhere = plan.named(routed.repository), routed.elsewhere()
    if spec.remote and not spec.path.is_dir():
        raise ConfigError(
            f"repository {spec.name} is not cloned yet: `szrag serve --config` clones"
            f" {spec.shown_url} into {spec.path}"
        )
    return spec.name, spec.path, plan, elsewhere


def stored_repository_of(
    question: str, repository: str | None, store: str, service_file: Path | None
) -> tuple[str, Path, ServicePlan, tuple[MergedSource, ...]]:
    """The published repository of ``store`` a question is asked of (the one named, else the
    one the question is most likely about), a local folder of its own and the replica's
    plan (its conversations in the store's database)."""
    from szrag.service.service import Service

    plan = replica(store, (repository,) if repository else (), service_file, Path(REPLICA_DATA))
    elsewhere: tuple[MergedSource, ...] = ()
    if repository is None:
        service = Service(plan, os.environ)
        try:
            routed = service.route(question)
        finally:
            service.close()
        repository, elsewhere = routed.repository, routed.elsewhere()
    return repository, plan.named(repository).path, plan, elsewhere


@contextlib.contextmanager
def open_store(store: str, repository: str) -> Iterator[IndexStore]:
    """The published ``repository`` of ``store``, read with no checkout (closed at the end)."""
    from szrag.index.pg import PostgresIndex  # here: only a store's reader loads psycopg

    with PostgresIndex(store, repository) as index:
        yield index


@click.command("debug")
@click.argument("question", nargs=-1, required=True)
@limit_option
@budget_option
@root_option
@json_option
@handle_errors
def debug(
    question: tuple[str, ...], limit: int, budget: int | None, root: Path, as_json: bool
) -> None:
    """Show what answering QUESTION would use, without running a command or calling a model:
    retrieval, images, codebase context, the packed context and the activities."""
    with open_index(root, meanwhile=_made_ready) as index:
        asked = Question(" ".join(question), face=CLI_FACE, limit=limit, budget=budget)
        result = debug_question(asked, host_for(root, index))
    if as_json:
        print_json(result)
        return
    show_debug(result.to_dict(), console)


def show_debug(result: Mapping[str, Any], out: Console) -> None:
    """The diagnostic report, section by section."""
    out.rule("question")
    out.print(_escape(result["question"]), highlight=False)
    command = result.get("command")
    if command:
        out.print(f"command inferred (not run): /sz-{command['id']} {_escape(command['text'])}")
    if result.get("commandOriented"):
        out.print("command-oriented question: codebase context skipped")
    out.rule(f"sources ({len(result['sources'])})")
    for source in result["sources"]:
        heading = f" - {source['heading']}" if source.get("heading") else ""
        out.print(
            f"{source['score']:>6}  {_escape(source['path'])}:{source['start']}-{source['end']}"
            f"  [dim]{source['type']}{_escape(heading)}[/]",
            highlight=False,
        )
    for note in result.get("notes", ()):
        out.print(f"  [dim]note: {_escape(note)}[/]", highlight=False)
    out.rule(f"images ({len(result['images'])})")
    for image in result["images"]:
        out.print(f"{image['score']:>6}  {_escape(image['path'])}", highlight=False)
    codebase = result.get("codebaseContext")
    out.rule("codebase context")
    if codebase is None:
        out.print("skipped")
    else:
        counts = ", ".join(f"{key} {value}" for key, value in codebase["counts"].items())
        out.print(counts)
        for path in codebase["files"]:
            out.print(f"  {_escape(path)}  [dim]score {codebase['scores'].get(path)}[/]")
    packed = result["context"]
    out.rule(f"packed context ({packed['tokens']} of {packed['budget']} tokens)")
    out.print(packed["text"] or "(empty)", markup=False, highlight=False)
    out.rule("activities")
    for activity in result["activities"]:
        out.print(
            f"[dim]{activity['stage']:<9} {activity['status']:<9}[/] {_escape(activity['message'])}",
            highlight=False,
        )


@click.command("doctor")
@click.option("--model", "-m", help="The model to check (default: AI_MODEL).")
@json_option
@handle_errors
def doctor(model: str | None, as_json: bool) -> None:
    """Check the configured model provider: reachable, key, model, completion, streaming,
    tool calls; and say what to change."""
    from szrag.llm.doctor import check_provider, format_checks, verdict

    settings = Settings.from_env(os.environ)
    if model:
        settings = dataclasses.replace(settings, ai_model=model)
    checks = asyncio.run(check_provider(settings))
    if as_json:
        print_json(checks)
    else:
        console.print(format_checks(checks), highlight=False, markup=False)
    if not verdict(checks):
        raise SystemExit(1)


def register(group: click.Group) -> None:
    """Add ``ask`` and ``debug`` to the ``szrag`` command."""
    group.add_command(ask)
    group.add_command(debug)
    group.add_command(doctor)
