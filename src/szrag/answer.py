"""answer_question(): one question through commands, retrieval, context and the model.

The order is the spec's: a command named by the caller or inferred from the question runs
first; then retrieval of sources and images, the codebase context (skipped when the question
asks to run a command), packing within the token budget, and finally either a local answer or
the model with its tool loop. Every step records an activity as it happens.

Result shapes (``sources`` are ``{path, start, end, type, heading, text, score}``):

* with the model: ``{answer, responseRounds, sources, images, command, activities, trace,
  usage}``; ``usage`` is ``{input, output, total, estimated}``.
* when the model request failed: the same keys plus ``error: {code, message}``, a failed ``ai``
  activity, and a local answer that says what went wrong; nothing is raised.
* ``with_ai=False``: ``{answer, sources, images, command, activities, context}`` where
  ``context`` is the packed repository context.
* no ``AI_API_KEY`` in the host's settings: ``{answer, sources, images, command, activities}``
  with a failed ``ai`` activity and a local answer that says how to configure a key.

Everything comes from the :class:`~szrag.host.Host` given (a path stands for the host of that
repository with default settings: no environment variable is read here).

``command`` is ``None`` or ``{id, command, responses}`` (plus ``error`` when it failed).
A conversation (``conversation_id``, or ``remember=True`` to start one): the kept turns are
read first (an unknown id is an UnknownConversation error, before anything runs), a follow-up is
searched with the questions it follows, the model gets the earlier turns as messages (within
the conversation token bound, oldest dropped first), and the new turn is kept; the result then
carries ``answer_id`` and ``conversation_id`` (see :mod:`szrag.conversations`).

``on_activity`` receives each :class:`~szrag.activity.Activity` as it is created.
``on_token(text, round)`` receives model text as it streams, with the 1-based number of the
model request it belongs to; a round that ends in tool calls is followed by a ``reasoning``
activity with ``metadata.kind == "intermediate"`` (see :mod:`szrag.llm.loop`). Local answers
are not streamed: they are complete in the result.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
import os
import re
import time
import weakref
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from szrag.activity import (
    COMPLETED,
    FAILED,
    SKIPPED,
    STARTED,
    Activity,
    ActivityRecorder,
    OnActivity,
)
from szrag.activity import new_id as new_activity_id
from szrag.commands import (
    CommandRegistry,
    CommandRunner,
    Identity,
    infer_command_invocation,
    is_command_oriented,
    redact_invocation_secrets,
)
from szrag.commands.inference import redact_password_phrases, withhold_named_input
from szrag.context import (
    CodebaseContext,
    PackedContext,
    build_codebase_context,
    pack_repository_context,
)
from szrag.context.plan import WINDOW_SETTING, ContextPlan
from szrag.conversations import (
    History,
    ShownSource,
    Turn,
    followed_questions,
    history_messages,
    new_id,
)
from szrag.errors import CommandError, ConversationError, ProviderError, SzragError, ToolError
from szrag.host import Host
from szrag.index import Index
from szrag.llm.client import ChatClient
from szrag.llm.errors import Overflow, context_overflow, provider_code
from szrag.llm.loop import OnToken, ToolExecutor, ToolLoop
from szrag.llm.prompts import (
    SYSTEM_PROMPT,
    TOOL_CALL_LIMIT_PROMPT,
    build_user_message,
    load_prompt,
)
from szrag.rank.words import named_variables
from szrag.redact import redact
from szrag.results import (
    Answer,
    CommandReport,
    DebugReport,
    InferredCommand,
    ModelFailure,
    Outcome,
)
from szrag.retrieve import (
    DEFAULT_LIMIT,
    MAX_QUESTION_CHARS,
    Image,
    Source,
    require_question,
    retrieve,
    retrieve_images,
    source_notes,
)
from szrag.runtime.git import read_git_head
from szrag.runtime.sources import (
    ApplicationRuntime,
    changed_since,
    drift_text,
    environment_names,
    environment_text,
    errors_text,
    matching_errors,
    running_commit,
)
from szrag.settings import DEFAULT_AI_MODEL, DEFAULT_AI_URL, Settings
from szrag.text import tokens, tokens_by_line
from szrag.tools import ToolAdapter
from szrag.tools.sanitise import sanitise_text

T = TypeVar("T")

log = logging.getLogger("szrag.answer")

KEY_HELP = (
    "Set AI_API_KEY to a key for an OpenAI-compatible provider to get a written answer "
    f"(AI_URL and AI_MODEL choose the provider and model; the defaults are {DEFAULT_AI_URL} "
    f"and {DEFAULT_AI_MODEL})."
)


SECRET_OUTPUT_NOTE = (
    "The command ran. Its output is secret, so it was shown to the asker only and is not "
    "given to you; do not guess it."
)
CUT_MARK = "answer cut"
SECRET_ANSWER_KEPT = "(The answer showed a secret command output; it is not kept.)"
LENGTH_NOTE = "the model stopped at its output limit; the answer may be incomplete"


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the repository offers for a question: sources, images, context, the packed text."""

    sources: tuple[Source, ...]
    images: tuple[Image, ...]
    context: CodebaseContext | None
    packed: PackedContext
    live: str = ""  # the running application's records that match this code
    drift: str = ""  # which cited files changed since the commit that runs
    commit: str | None = None  # the commit the running application was built from


@dataclass(frozen=True, slots=True)
class CommandRun:
    """The command run for a question: its result record and the input it was given."""

    report: CommandReport
    input: str
    sensitive: bool = False
    shown_question: str | None = None  # the question with any secret it carried withheld
    secret_output: bool = False

    @property
    def prompt_input(self) -> str | None:
        """The input as the model may see it: withheld when the command marks it sensitive."""
        return None if self.sensitive else self.input

    @property
    def prompt_record(self) -> dict[str, Any]:
        """The result as the model may see it: a secret output is replaced by a note."""
        record = self.report.to_dict()
        if not self.secret_output or self.report.error is not None:
            return record
        return {**record, "responses": [], "outputWithheld": SECRET_OUTPUT_NOTE}


def withheld_question(
    question: str,
    registry: CommandRegistry,
    *,
    command_id: str | None,
    command_text: str | None,
) -> str:
    """``question`` as the audit log, a kept conversation and the model may see it: the input
    of a sensitive command (named by the caller, or with ``/sz-`` in the question) and a hash
    request's password replaced by markers; unchanged when it holds neither."""
    if command_id is None:
        return redact_invocation_secrets(question, infer_command_invocation(question, registry))
    spec = registry.get(command_id)
    if spec is None:
        return question
    # the caller's input for a sensitive command may sit in the question too
    return withhold_named_input(question, command_text or "", sensitive=spec.sensitive)


async def run_question_command(
    question: str,
    recorder: ActivityRecorder,
    *,
    command_id: str | None,
    command_text: str | None,
    identity: Identity,
    runner: CommandRunner,
    source: str = "host",
) -> CommandRun | None:
    """Run the command the caller named or the question asks for; None when there is none.

    ``runner`` decides by its policy: a command the caller named runs for ``source`` (a person
    by default); one inferred from the question runs as ``inference`` (the allowlist applies).
    An unknown ``command_id`` is the caller's mistake and raises CommandError; a command that
    is refused or fails while running becomes a failed activity and a record with ``error``.
    """
    text = command_text or ""
    named = command_id is not None
    if command_id is None:
        invocation = infer_command_invocation(question, runner.registry)
        if invocation is None:
            return None
        command_id, text, source = invocation.id, invocation.text, "inference"
    spec = runner.registry.get(command_id)
    if spec is None:
        raise CommandError(f"unknown command: {command_id}")
    shown = withheld_question(
        question, runner.registry, command_id=command_id if named else None, command_text=text
    )
    pair = new_activity_id()
    # The input stays out of activity metadata: it may hold a secret (hash passwords).
    details = {"id": spec.id, "command": spec.name, "inferred": source == "inference"}
    await recorder.record(
        "command", STARTED, f"Running {spec.name}", activity_id=pair, metadata=details
    )
    kept = functools.partial(
        CommandRun,
        input=text,
        sensitive=spec.sensitive,
        shown_question=shown,
        secret_output=spec.secret_output,
    )
    try:
        result = await runner.run(spec.id, text, identity, source=source)
    except CommandError as error:
        await recorder.record(
            "command",
            FAILED,
            f"{spec.name} failed: {error.message}",
            activity_id=pair,
            metadata=details,
        )
        return kept(CommandReport(spec.id, spec.name, error=error.message))
    count = len(result.responses)
    await recorder.record(
        "command",
        COMPLETED,
        f"{spec.name} responded ({_plural(count, 'response')})",
        activity_id=pair,
        metadata={**details, "responses": count},
    )
    return kept(CommandReport(result.id, result.command, result.responses))


BudgetFor = Callable[[Sequence[Image]], int]


async def gather_evidence(
    question: str,
    index: Index,
    recorder: ActivityRecorder,
    *,
    limit: int = DEFAULT_LIMIT,
    budget: int | None = None,
    expand: bool = True,
    plan: ContextPlan | None = None,
    budget_for: BudgetFor | None = None,
    earlier: int = 0,
) -> Evidence:
    """Retrieval, images, codebase context (when ``expand``) and packing, with activities,
    all from one snapshot of the index.

    The context follows ``plan`` (default: the repository's, with ``budget`` if given);
    ``budget_for``, given the images found, says how many tokens are left for the context
    once the rest of the request is counted. ``earlier``: how many earlier questions of a
    conversation ``question`` carries (a follow-up searched with them)."""
    plan = plan or ContextPlan.of(index.config, {}, budget=budget)
    pair = new_activity_id()
    if earlier:
        await recorder.record(
            "retrieval",
            STARTED,
            f"Searching the repository index with the follow-up and "
            f"{_plural(earlier, 'earlier question')}",
            activity_id=pair,
            metadata={"earlierQuestions": earlier},
        )
    else:
        await recorder.record(
            "retrieval", STARTED, "Searching the repository index", activity_id=pair
        )

    def find() -> Evidence:
        with index.reading():
            return _find(
                question, index, limit=limit, plan=plan, budget_for=budget_for, expand=expand
            )

    # A server's index reads from any thread: the ranking, the structure walk and the
    # redaction of a large file then never hold up the event loop (and every other request).
    if index.reads_from_any_thread:
        async with _evidence_slots():  # as many at once as there are cores, so the event
            evidence = await asyncio.to_thread(find)  # loop is not starved of the GIL
    else:
        evidence = find()
    return await _report(evidence, recorder, pair)


_SLOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _evidence_slots() -> asyncio.Semaphore:
    """The running loop's limit on evidence gathered in worker threads at once."""
    loop = asyncio.get_running_loop()
    slots = _SLOTS.get(loop)
    if slots is None:
        slots = _SLOTS[loop] = asyncio.Semaphore(max(1, os.cpu_count() or 1))
    return slots


def _find(
    question: str,
    index: Index,
    *,
    limit: int,
    plan: ContextPlan,
    budget_for: BudgetFor | None,
    expand: bool,
) -> Evidence:
    """The evidence for ``question`` from one snapshot (synchronous: any thread may run it)."""
    sources = tuple(retrieve(question, limit, index=index))
    images = tuple(retrieve_images(question, index=index))
    context = build_codebase_context(question, index, sources) if expand else None
    budget = budget_for(images) if budget_for is not None else plan.budget
    packed = pack_repository_context(
        sources, context, budget=budget, counter=plan.counter(), packing=plan.packing
    )
    return Evidence(sources, images, context, packed)


async def _report(evidence: Evidence, recorder: ActivityRecorder, pair: str) -> Evidence:
    """The activities of the evidence found, in the order the steps ran."""
    sources, images, context, packed = (
        evidence.sources,
        evidence.images,
        evidence.context,
        evidence.packed,
    )
    await recorder.record(
        "retrieval",
        COMPLETED,
        f"Found {_plural(len(sources), 'source')}",
        activity_id=pair,
        metadata={
            "sources": [
                {
                    "path": item.path,
                    "start": item.start,
                    "end": item.end,
                    "type": item.type,
                    "score": item.score,
                }
                for item in sources
            ]
        },
    )
    await recorder.record(
        "retrieval",
        COMPLETED,
        f"Found {_plural(len(images), 'image')}",
        metadata={"images": [{"path": item.path, "score": item.score} for item in images]},
    )
    metadata: dict[str, Any] = {
        "tokens": packed.tokens,
        "budget": packed.budget,
        "tokenizer": packed.tokenizer,
        "files": list(packed.files),
        "codeContexts": packed.code_contexts,
        "redactions": packed.redactions,
    }
    if context is None:
        message = "Codebase context skipped: the question asks to run a command"
        await recorder.record("context", SKIPPED, message, metadata=metadata)
    else:
        metadata["counts"] = context.counts()
        metadata["codeContextFiles"] = [entry.path for entry in context.code]
        message = (
            f"Packed {_plural(len(packed.files), 'file')} into {packed.tokens} of "
            f"{packed.budget} tokens"
        )
        await recorder.record("context", COMPLETED, message, metadata=metadata)
    return evidence


def public_source(source: Source) -> Source:
    """A source as callers get it: the snippet with secrets redacted, as the model sees it."""
    return source.redacted()


def public_context(context: CodebaseContext) -> CodebaseContext:
    """The codebase context for callers, its code texts redacted like the packed context."""
    code = tuple(dataclasses.replace(entry, text=redact(entry.text)) for entry in context.code)
    return dataclasses.replace(context, code=code)


EXCERPT_SOURCES = 3  # sources shown with lines of their own in an answer without a model
EXCERPT_LINES = 6
EXCERPT_WHOLE = 12  # a unit this short is shown whole
EXCERPT_SYMBOLS = 5
_FENCE_LANGUAGE = re.compile(r"[a-z0-9+#-]{1,12}")


def excerpt(source: Source, question: str, lines: int = EXCERPT_LINES) -> list[str]:
    """Numbered lines of ``source`` as a fenced code block: a short unit whole, else its
    first line (the signature) and the lines around the one sharing most words with the
    question; redacted like everything a caller sees."""
    text = source.text.split("\n")
    if len(text) <= EXCERPT_WHOLE:
        numbers = list(range(len(text)))
    else:
        wanted = tokens(question)
        scores = [len(wanted & line_tokens) for line_tokens in tokens_by_line(source.text)]
        best = max(range(len(text)), key=lambda number: (scores[number], -number))
        first = max(0, min(best - 1, len(text) - lines))
        numbers = sorted({0, *range(first, first + lines)})
    width = len(str(source.start + numbers[-1]))
    shown = []
    for place, number in enumerate(numbers):
        if place and number != numbers[place - 1] + 1:
            shown.append(f"{'':>{width}} | …")
        line = redact(text[number], path=source.path).rstrip()
        shown.append(f"{source.start + number:>{width}} | {line[:160]}")
    suffix = source.path.rpartition(".")[2].lower() if "." in source.path else ""
    language = suffix if _FENCE_LANGUAGE.fullmatch(suffix) else ""
    return [f"```{language}", *shown, "```"]


def symbol_lines(context: CodebaseContext | None) -> list[str]:
    """The definitions the question points at, one line each, best first."""
    if context is None or not context.symbols:
        return []
    found = [
        f"- `{item.name}` ({item.kind}) {item.file}:{item.line}-{item.end_line}"
        for item in list(context.symbols)[:EXCERPT_SYMBOLS]
    ]
    return ["", "Symbols found:", *found]


def local_answer(
    intro: str,
    evidence: Evidence,
    command: CommandReport | None,
    question: str = "",
    *,
    closing: str = "",
) -> str:
    """A readable answer without a model: ``intro``, the command output, the sources (the
    first few with the lines that best match ``question``), images, then ``closing`` (what
    to do next)."""
    lines = [intro]
    if command is not None:
        lines += ["", f"Command {command.command or command.id}:"]
        if command.error is not None:
            lines.append(f"failed: {command.error}")
        lines += [response.plain_text() for response in command.responses]
    if evidence.sources:
        lines += ["", "Most relevant repository sources:"]
        for number, source in enumerate(evidence.sources):
            heading = f" ({source.heading})" if source.heading else ""
            lines.append(f"- {source.path}:{source.start}-{source.end}{heading}")
            if question and number < EXCERPT_SOURCES:
                lines += ["", *excerpt(source, question), ""]  # a block of its own: Markdown
        lines += symbol_lines(evidence.context)
    else:
        lines += ["", "No repository source matched the question."]
    if evidence.images:
        lines += ["", "Matching images:", *(f"- {image.path}" for image in evidence.images)]
    if closing:
        lines += ["", closing]
    return "\n".join(lines)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _tools_for(
    host: Host, tools: bool | None, privileged: bool, recorder: ActivityRecorder
) -> ToolAdapter | None:
    """The host's live tools for this question (None when not offered), their activities
    reported to ``recorder``."""
    if not (host.live_tools if tools is None else tools):
        return None

    def forward(event: dict[str, Any]) -> None:
        recorder.add_nowait(tool_activity(event))

    return host.tools(privileged=privileged, on_activity=forward)


def as_host(host: Host | Path | str) -> Host:
    """``host``, or the host of the repository at that path with the default settings (no
    environment is read: a caller who wants AI_API_KEY and friends builds
    ``Host.from_env(root, os.environ)``)."""
    return host if isinstance(host, Host) else Host.from_env(host)


def tool_activity(event: Mapping[str, Any]) -> Activity:
    """A tool adapter's event as an activity of the ``tool`` stage (details in metadata)."""
    name = str(event.get("tool") or "tool")
    status = str(event.get("status") or COMPLETED)
    message = str(event.get("message") or f"{name} {status}")
    metadata = {key: value for key, value in event.items() if key not in ("stage", "message")}
    kind = event.get("type")
    return Activity(
        stage="tool",
        status=status,
        message=message,
        metadata=metadata,
        kind=kind if isinstance(kind, str) else None,
    )


def _executor(adapter: ToolAdapter, identity: Identity, recorder: ActivityRecorder) -> ToolExecutor:
    async def execute(name: str, arguments: str) -> str:
        result = await adapter.call(name, arguments, identity=identity)
        await recorder.flush()  # the tool's activity reached on_activity before the model goes on
        return result.text

    return execute


async def answer_question_async(
    question: str,
    host: Host | Path | str = ".",
    *,
    with_ai: bool = True,
    command_id: str | None = None,
    command_text: str | None = None,
    source: str = "host",
    identity: Identity | None = None,
    tools: bool | None = None,
    privileged: bool = True,
    on_activity: OnActivity | None = None,
    on_token: OnToken | None = None,
    limit: int = DEFAULT_LIMIT,
    budget: int | None = None,
    http_client: httpx.AsyncClient | None = None,
    conversation_id: str | None = None,
    remember: bool = False,
) -> Answer:
    """Answer ``question`` about the repository of ``host`` (see the module for result shapes).

    ``source`` says where the question came from (``host``: a library call, ``cli``, ``api``,
    ``slack``): the ask is recorded in the host's audit log under it whatever happens, and a
    command the caller names runs for it under the host's policy. ``tools`` (default: the
    host's setting) offers the model the live tools, the admin-only ones when
    ``privileged``.

    ``conversation_id`` continues that conversation of the host's store; the turn is kept in
    it. ``remember`` keeps the turn in a new conversation (owned by ``identity``, of the face
    ``source``) when no id is given."""
    host = as_host(host)
    identity = identity or Identity.local()
    started = time.perf_counter()
    outcome, message = "ok", ""
    try:
        return await _answer(
            question,
            host,
            with_ai=with_ai,
            command_id=command_id,
            command_text=command_text,
            source=source,
            identity=identity,
            tools=tools,
            privileged=privileged,
            on_activity=on_activity,
            on_token=on_token,
            limit=limit,
            budget=budget,
            http_client=http_client,
            conversation_id=conversation_id,
            remember=remember,
        )
    except asyncio.CancelledError:
        outcome, message = "cancelled", "the caller went away"
        raise
    except SzragError as error:
        outcome, message = "failed", error.message
        raise
    except Exception as error:
        outcome, message = "error", f"{type(error).__name__}: {error}"
        raise
    finally:
        host.audit.record_ask(
            identity,
            withheld_question(
                str(question or ""), host.registry, command_id=command_id, command_text=command_text
            )[:MAX_QUESTION_CHARS],
            outcome=outcome,
            duration_ms=(time.perf_counter() - started) * 1000,
            source=source,
            message=message,
        )


async def _answer(
    question: str,
    host: Host,
    *,
    with_ai: bool,
    command_id: str | None,
    command_text: str | None,
    source: str,
    identity: Identity,
    tools: bool | None,
    privileged: bool,
    on_activity: OnActivity | None,
    on_token: OnToken | None,
    limit: int,
    budget: int | None,
    http_client: httpx.AsyncClient | None,
    conversation_id: str | None,
    remember: bool,
) -> Answer:
    clean = require_question(question)
    earlier: tuple[Turn, ...] = ()
    store = host.conversations
    if conversation_id is not None:  # refused before anything runs
        # a library caller is trusted with any id: a face serving several people (the API)
        # checks that the conversation is the caller's before it asks
        conversation = await asyncio.to_thread(store.get, conversation_id)
        conversation_id = conversation.id
        earlier = await asyncio.to_thread(store.turns, conversation.id)
    result, shown, secret = await _answer_turn(
        clean,
        host,
        earlier,
        with_ai=with_ai,
        command_id=command_id,
        command_text=command_text,
        source=source,
        identity=identity,
        tools=tools,
        privileged=privileged,
        on_activity=on_activity,
        on_token=on_token,
        limit=limit,
        budget=budget,
        http_client=http_client,
    )
    if conversation_id is None and not remember:
        return result
    return await _keep(
        result,
        host,
        conversation_id=conversation_id,
        question=shown,
        secret=secret,
        face=source,
        owner=identity.user_id,
    )


async def _keep(
    result: Answer,
    host: Host,
    *,
    conversation_id: str | None,
    question: str,
    secret: bool,
    face: str,
    owner: str,
) -> Answer:
    """``result`` kept as a turn of the conversation (a new one when no id is given), with
    its ids; when the store cannot keep it the answer is still returned, without ids."""
    store = host.conversations
    sources = tuple(ShownSource(item.path, item.start, item.end) for item in result.sources)

    def keep() -> Turn:  # in one worker thread: the commit read, then one transaction
        turn = Turn(
            answer_id=new_id(),
            conversation_id=conversation_id or new_id(),
            question=redact_password_phrases(question),
            answer=SECRET_ANSWER_KEPT if secret else result.answer,
            outcome=result.outcome.value,
            sources=sources,
            commit=result.running_commit or checkout_commit(host.root),
            asked_at=store.clock(),
        )
        if conversation_id is None:
            return store.start_with(turn, face=face, owner=owner)
        return store.append(turn)

    try:
        turn = await asyncio.to_thread(keep)
    except ConversationError as error:
        log.warning("the answer was given but could not be kept: %s", error.message)
        return result
    return dataclasses.replace(
        result, answer_id=turn.answer_id, conversation_id=turn.conversation_id
    )


def checkout_commit(root: Path | str) -> str | None:
    """The commit the checkout at ``root`` is at (its git HEAD), or None."""
    head = read_git_head(Path(root))
    return head.commit if head is not None else None


async def _answer_turn(
    clean: str,
    host: Host,
    earlier: Sequence[Turn],
    *,
    with_ai: bool,
    command_id: str | None,
    command_text: str | None,
    source: str,
    identity: Identity,
    tools: bool | None,
    privileged: bool,
    on_activity: OnActivity | None,
    on_token: OnToken | None,
    limit: int,
    budget: int | None,
    http_client: httpx.AsyncClient | None,
) -> tuple[Answer, str, bool]:
    """The answer to ``clean`` after the ``earlier`` turns, the question as the model may
    see it, and whether the answer shows a secret command output."""
    recorder = ActivityRecorder(on_activity)
    run = await run_question_command(
        clean,
        recorder,
        command_id=command_id,
        command_text=command_text,
        identity=identity,
        runner=host.runner,
        source=source,
    )
    settings = host.settings
    asks_model = with_ai and settings.has_key
    # the model never sees a password the question carried for a command
    shown = run.shown_question if run and run.shown_question else clean
    secret = run is not None and run.secret_output
    adapter = _tools_for(host, tools, privileged, recorder) if asks_model else None
    followed = followed_questions(clean, earlier)
    query = "\n".join((clean, *followed))
    with host.opened_index() as opened:
        plan = host.plan(opened.config, budget=budget)
        history = History.empty()
        if asks_model and earlier:
            history = await _history(earlier, host, plan, recorder)

        def budget_for(images: Sequence[Image]) -> int:
            if not asks_model:
                return plan.budget
            bare = _messages(shown, "", images, run, host.root, prior=history.messages)
            return plan.fitted(bare, adapter.definitions() if adapter else None)

        evidence = await gather_evidence(
            query,
            opened,
            recorder,
            limit=limit,
            plan=plan,
            budget_for=budget_for,
            expand=not is_command_oriented(clean),
            earlier=len(followed),
        )
    if asks_model and isinstance(host.live, ApplicationRuntime):
        evidence = await _join_live(clean, evidence, host.live, recorder)
    found = Found(
        tuple(public_source(source) for source in evidence.sources),
        evidence.images,
        run.report if run else None,
    )
    if not with_ai:
        intro = "The model was not asked (AI disabled); this is what the repository index found."
        answer = found.answer(
            Outcome.NOT_ASKED,
            local_answer(intro, evidence, found.command, shown),
            recorder,
            context=evidence.packed,
        )
        return answer, shown, secret
    if not settings.has_key:
        await recorder.record("ai", FAILED, "AI_API_KEY is not set; answering from retrieval only")
        # what was found first, then how to get a written answer
        intro = "No model is configured, so this answer comes from retrieval alone."
        text = local_answer(intro, evidence, found.command, shown, closing=KEY_HELP)
        answer = found.answer(Outcome.NO_MODEL, text, recorder)
        return answer, shown, secret
    answer = await _answer_with_model(
        shown,
        evidence,
        run,
        found,
        recorder,
        root=host.root,
        identity=identity,
        adapter=adapter,
        on_token=on_token,
        settings=settings,
        http_client=http_client,
        plan=plan,
        prior=history.messages,
    )
    return answer, shown, secret


HISTORY_WINDOW_SHARE = 4  # with a known window, earlier turns take at most a quarter of it


async def _history(
    earlier: Sequence[Turn], host: Host, plan: ContextPlan, recorder: ActivityRecorder
) -> History:
    """The earlier turns as messages within the conversation token bound, with an activity."""
    budget = host.conversations.limits.tokens
    if plan.window is not None:
        budget = min(budget, plan.window // HISTORY_WINDOW_SHARE)
    history = history_messages(earlier, plan.counter(), budget)
    message = (
        f"Conversation: {_plural(history.turns, 'earlier turn')} given to the model "
        f"({history.tokens} tokens)"
    )
    if history.dropped:
        message += f"; {_plural(history.dropped, 'older turn')} left out to stay in {budget}"
    await recorder.record(
        "context",
        COMPLETED,
        message,
        metadata={
            "turns": history.turns,
            "droppedTurns": history.dropped,
            "tokens": history.tokens,
            "budget": budget,
        },
    )
    return history


async def _join_live(
    question: str, evidence: Evidence, live: ApplicationRuntime, recorder: ActivityRecorder
) -> Evidence:
    """The running application's errors raised in the files found or naming the route the
    question names, offered to the model beside the code (names, places and counts; the
    records' text is sanitised like any tool output)."""
    files = {source.path for source in evidence.sources} | set(evidence.packed.files)
    cited = list(dict.fromkeys(source.path for source in evidence.sources))
    started = time.perf_counter()
    source, errors = await asyncio.to_thread(matching_errors, live, question, files)
    wanted = _variables_of(question, evidence)
    commit, drift, environment = await asyncio.to_thread(_release_facts, live, cited, wanted)
    elapsed = (time.perf_counter() - started) * 1000
    metadata: dict[str, Any] = {
        "source": source,
        "errors": len(errors),
        "durationMs": round(elapsed, 1),
    }
    if drift:
        metadata["drift"] = drift
    if commit:
        metadata["runningCommit"] = commit
    parts = [errors_text(source, errors)] if errors else []
    parts += [text for text in (drift, environment) if text]
    message = (
        f"Live evidence: {_plural(len(errors), 'error')} of the running application match this code"
        if errors
        else "No live error matches this code"
    )
    if drift:
        message += "; the running release is older than the checkout for cited files"
    await recorder.record("context", COMPLETED, message, metadata=metadata)
    if not parts:
        return dataclasses.replace(evidence, commit=commit)
    live_text = sanitise_text("\n".join(parts))
    return dataclasses.replace(evidence, live=live_text, drift=drift, commit=commit)


def _variables_of(question: str, evidence: Evidence) -> list[str]:
    """The environment variables a question is about: named in it, or read by the code found."""
    names = list(named_variables(question))
    if evidence.context is not None:
        names += [item.name for item in evidence.context.environment_variables]
    return list(dict.fromkeys(names))[:8]


def _release_facts(
    live: ApplicationRuntime, cited: list[str], wanted: list[str]
) -> tuple[str | None, str, str]:
    """The running commit, the sentence saying which cited files changed since it, and which
    of ``wanted`` the application has set (names only): each empty when not known."""
    try:
        status = live.status()
    except ToolError:
        status = {}
    commit = running_commit(live, status)
    drift = ""
    if commit is not None:
        changed = changed_since(live.root, commit, cited)
        drift = drift_text(commit, changed) if changed else ""
    names = environment_names(live, status) if wanted else None
    environment = environment_text(names, wanted) if names is not None else ""
    return commit, drift, environment


@dataclass(frozen=True, slots=True)
class Found:
    """What every answer carries: the redacted sources, the images and the command run."""

    sources: tuple[Source, ...]
    images: tuple[Image, ...]
    command: CommandReport | None

    def answer(
        self, outcome: Outcome, text: str, recorder: ActivityRecorder, **rest: Any
    ) -> Answer:
        """The result of ``outcome`` with ``text`` as its answer."""
        return Answer(
            outcome=outcome,
            answer=text,
            sources=self.sources,
            images=self.images,
            command=self.command,
            activities=tuple(recorder.activities),
            **rest,
        )


def smaller_budget(error: ProviderError, packed: PackedContext, counted: int) -> int | None:
    """A context budget that should fit after the provider refused the request as too long,
    or None when the refusal is not about length or there is no context to give up.

    The provider's own figures are used where it states them (OpenAI, vLLM and llama.cpp's
    Python server do: "maximum context length is W ... (M in the messages, C in the
    completion)"): its tokenizer may count a third more than ours, so the overshoot is
    converted at the ratio it implies. Otherwise half of the context goes."""
    overflow = context_overflow(error)
    if overflow is None or packed.tokens <= 0:
        return None
    if overflow.window is None or overflow.prompt is None or counted <= 0:
        return packed.tokens // 2
    ratio = overflow.prompt / counted  # the provider's tokens per token of ours
    allowed = (overflow.window - overflow.completion) / ratio * 0.95
    return max(
        0, min(packed.tokens // 2 + packed.tokens // 4, int(packed.tokens - (counted - allowed)))
    )


def window_advice(overflow: Overflow, counted: int) -> str:
    """What to change after a refusal as too long: the window setting, with the value that
    fits by the provider's own figures where it gave them."""
    if overflow.window is None:
        return (
            "the request is longer than the model's context window: set"
            f" {WINDOW_SETTING} to the model's context size so that szrag packs less context"
        )
    ratio = overflow.prompt / counted if overflow.prompt and counted > 0 else 1.0
    # the setting is counted in szrag's tokens; the provider's may be more of them
    fits = int(overflow.window / max(1.0, ratio)) // 64 * 64
    reported = f"the provider reported a window of {overflow.window} tokens"
    if overflow.prompt:
        reported += f" and counted {overflow.prompt} in the messages"
    return (
        f"the request is longer than the model's context window ({reported}): set"
        f" {WINDOW_SETTING}={fits} so that szrag packs the request to fit"
    )


def _counted(
    messages: Sequence[Mapping[str, Any]], adapter: ToolAdapter | None, plan: ContextPlan
) -> int:
    """What the request weighs in our tokens: the messages and the tool definitions."""
    count = plan.counter()
    total = sum(count(str(message.get("content") or "")) for message in messages)
    if adapter is not None:
        total += count(json.dumps(adapter.definitions(), separators=(",", ":")))
    return total


def _messages(
    question: str,
    repository_context: str,
    images: Sequence[Image],
    run: CommandRun | None,
    root: Path | str,
    live: str = "",
    *,
    prior: Sequence[Mapping[str, str]] = (),
) -> list[dict[str, Any]]:
    """The first request's messages: the system prompt, the earlier turns of a conversation
    (``prior``) and the user message."""
    return [
        {"role": "system", "content": load_prompt(SYSTEM_PROMPT, root)},
        *(dict(message) for message in prior),
        {
            "role": "user",
            "content": build_user_message(
                question,
                repository_context=repository_context,
                images=[image.to_dict() for image in images],
                command=run.prompt_record if run else None,
                command_input=run.prompt_input if run else None,
                live_evidence=live,
            ),
        },
    ]


async def _answer_with_model(
    question: str,
    evidence: Evidence,
    run: CommandRun | None,
    found: Found,
    recorder: ActivityRecorder,
    *,
    root: Path | str,
    identity: Identity,
    adapter: ToolAdapter | None,
    on_token: OnToken | None,
    settings: Settings,
    http_client: httpx.AsyncClient | None,
    plan: ContextPlan,
    prior: Sequence[Mapping[str, str]] = (),
) -> Answer:
    messages = _messages(
        question, evidence.packed.text, found.images, run, root, evidence.live, prior=prior
    )
    loop = ToolLoop(
        ChatClient(settings, http_client=http_client),
        limit_prompt=load_prompt(TOOL_CALL_LIMIT_PROMPT, root),
        tools=adapter.definitions() if adapter else None,
        executor=_executor(adapter, identity, recorder) if adapter else None,
        recorder=recorder,
        on_token=on_token,
    )
    try:
        try:
            result = await loop.run(messages)
        except ProviderError as refused:
            budget = smaller_budget(refused, evidence.packed, _counted(messages, adapter, plan))
            if budget is None or refused.partial_text:
                raise
            # the model's window is smaller than counted: pack less and ask once more
            evidence = dataclasses.replace(
                evidence,
                packed=pack_repository_context(
                    evidence.sources,
                    evidence.context,
                    budget=budget,
                    counter=plan.counter(),
                    packing=plan.packing,
                ),
            )
            await recorder.record(
                "context",
                COMPLETED,
                f"The model's window is smaller than counted; packed {evidence.packed.tokens}"
                f" of {budget} tokens and asked again",
                metadata={"budget": budget, "tokens": evidence.packed.tokens},
            )
            messages = _messages(
                question,
                evidence.packed.text,
                found.images,
                run,
                root,
                evidence.live,
                prior=prior,
            )
            result = await loop.run(messages)
    except ProviderError as error:
        code = provider_code(error)
        await recorder.record(
            "ai", FAILED, f"The model request failed: {error.message}", metadata={"code": code}
        )
        overflow = context_overflow(error) if not error.partial_text else None
        said = (
            window_advice(overflow, _counted(messages, adapter, plan))
            if overflow is not None
            else error.message
        )
        intro = f"The model could not answer: {said.rstrip('.')}."
        answer = local_answer(intro, evidence, found.command, question)
        if error.partial_text.strip():  # what the model had said is kept, marked as cut
            answer = f"{error.partial_text.rstrip()}\n\n[{CUT_MARK}: {error.message}]\n\n{answer}"
        return found.answer(
            Outcome.MODEL_FAILED,
            answer,
            recorder,
            response_rounds=loop.requests,
            usage=loop.usage,
            error=ModelFailure(code, said),
            running_commit=evidence.commit,
        )
    answer = result.answer
    if result.finish_reason == "length":
        await recorder.record(
            "ai", COMPLETED, LENGTH_NOTE, metadata={"finishReason": result.finish_reason}
        )
        answer = f"{answer.rstrip()}\n\n[{LENGTH_NOTE}]"
    if evidence.drift:  # said whether or not the model mentions it
        answer = f"{answer.rstrip()}\n\n[{evidence.drift}]"
    return found.answer(
        Outcome.ANSWERED,
        answer,
        recorder,
        response_rounds=result.response_rounds,
        usage=result.usage,
        running_commit=evidence.commit,
    )


def answer_question(question: str, host: Host | Path | str = ".", **options: Any) -> Answer:
    """The synchronous face of :func:`answer_question_async` (same arguments, same result)."""
    return run_sync(lambda: answer_question_async(question, host, **options))


async def debug_question_async(
    question: str,
    host: Host | Path | str = ".",
    *,
    limit: int = DEFAULT_LIMIT,
    budget: int | None = None,
    on_activity: OnActivity | None = None,
) -> DebugReport:
    """Everything the model would be given for ``question``, without running a command or
    calling a model: the inferred command, sources, images, codebase context, packed context
    and activities."""
    host = as_host(host)
    clean = require_question(question)
    recorder = ActivityRecorder(on_activity)
    invocation = infer_command_invocation(clean, host.registry)
    oriented = is_command_oriented(clean)
    with host.opened_index() as opened:
        evidence = await gather_evidence(
            clean,
            opened,
            recorder,
            limit=limit,
            plan=host.plan(opened.config, budget=budget),
            expand=not oriented,
        )
        notes = tuple(source_notes(opened, evidence.sources))
    shown = redact_invocation_secrets(clean, invocation)
    withheld = invocation is not None and bool(invocation.withheld)
    return DebugReport(
        question=shown,
        command=(
            InferredCommand(invocation.id, None if withheld else invocation.text)
            if invocation is not None
            else None
        ),
        command_oriented=oriented,
        sources=tuple(public_source(source) for source in evidence.sources),
        images=evidence.images,
        codebase_context=public_context(evidence.context) if evidence.context else None,
        context=evidence.packed,
        activities=tuple(recorder.activities),
        notes=notes,
    )


def debug_question(question: str, host: Host | Path | str = ".", **options: Any) -> DebugReport:
    """The synchronous face of :func:`debug_question_async`."""
    return run_sync(lambda: debug_question_async(question, host, **options))


def run_sync(start: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``start()`` makes to completion; refused inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(start())
    raise RuntimeError(
        "the synchronous szrag API cannot run inside a running event loop; "
        "await the *_async function instead"
    )
