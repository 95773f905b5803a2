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
* no ``AI_API_KEY``: ``{answer, sources, images, command, activities}`` with a failed ``ai``
  activity and a local answer that says how to configure a key.

``command`` is ``None`` or ``{id, command, responses}`` (plus ``error`` when it failed).
``on_activity`` receives each :class:`~szrag.activity.Activity` as it is created.
``on_token(text, round)`` receives model text as it streams, with the 1-based number of the
model request it belongs to; a round that ends in tool calls is followed by a ``reasoning``
activity with ``metadata.kind == "intermediate"`` (see :mod:`szrag.llm.loop`). Local answers
are not streamed: they are complete in the result.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from szrag.activity import COMPLETED, FAILED, SKIPPED, STARTED, Activity, ActivityRecorder, OnActivity
from szrag.activity import new_id as new_activity_id
from szrag.commands import (
    Identity,
    default_registry,
    get_command,
    infer_command_invocation,
    is_command_oriented,
    run_command,
)
from szrag.context import (
    MAX_CONTEXT_TOKENS,
    CodebaseContext,
    PackedContext,
    build_codebase_context,
    pack_repository_context,
)
from szrag.errors import CommandError, ProviderError, QuestionError
from szrag.index import Index, load_index
from szrag.llm.client import ChatClient
from szrag.llm.errors import provider_code
from szrag.llm.loop import OnToken, ToolExecutor, ToolLoop, tool_failure
from szrag.llm.prompts import (
    SYSTEM_PROMPT,
    TOOL_CALL_LIMIT_PROMPT,
    build_user_message,
    load_prompt,
    response_text,
)
from szrag.retrieve import DEFAULT_LIMIT, Image, Source, retrieve, retrieve_images
from szrag.settings import Settings, load_settings
from szrag.tools import ToolAdapter

ToolsOption = ToolAdapter | bool | None
"""``None``/``False``: no live tools; ``True``: the default adapter for the root; an adapter."""

KEY_HELP = (
    "Set AI_API_KEY to a key for an OpenAI-compatible provider to get a written answer "
    "(AI_URL and AI_MODEL choose the provider and model; the defaults are "
    "https://ai.hackclub.com/proxy/v1 and openai/gpt-6-luna)."
)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the repository offers for a question: sources, images, context, the packed text."""

    sources: tuple[Source, ...]
    images: tuple[Image, ...]
    context: CodebaseContext | None
    packed: PackedContext


def require_question(question: str) -> str:
    """The question without surrounding space; an empty one is a QuestionError."""
    clean = str(question or "").strip()
    if not clean:
        raise QuestionError("the question is empty: ask something about the repository")
    return clean


@contextlib.contextmanager
def _opened(index: Index | None, root: Path | str) -> Iterator[Index]:
    """``index`` as given (left open), or the index of ``root`` opened for this question."""
    if index is not None:
        yield index
        return
    with load_index(root) as opened:
        yield opened


async def run_question_command(
    question: str,
    recorder: ActivityRecorder,
    *,
    command_id: str | None,
    command_text: str | None,
    identity: Identity,
    root: Path | str,
) -> dict[str, Any] | None:
    """Run the command the caller named or the question asks for; its result, or None.

    An unknown ``command_id`` is the caller's mistake and raises CommandError; a command that
    fails while running becomes a failed activity and a result with ``error``.
    """
    text = command_text or ""
    source = "host"
    if command_id is None:
        invocation = infer_command_invocation(question, default_registry())
        if invocation is None:
            return None
        command_id, text, source = invocation.id, invocation.text, "inference"
    spec = get_command(command_id)
    if spec is None:
        raise CommandError(f"unknown command: {command_id}")
    pair = new_activity_id()
    await recorder.record(
        "command",
        STARTED,
        f"Running /sz-{spec.id}",
        activity_id=pair,
        metadata={"id": spec.id, "inferred": source == "inference"},
    )
    try:
        result = await run_command(spec.id, text, identity, source=source, root=root)
    except CommandError as error:
        await recorder.record(
            "command",
            FAILED,
            f"/sz-{spec.id} failed: {error.message}",
            activity_id=pair,
            metadata={"id": spec.id},
        )
        return {"id": spec.id, "command": text, "responses": [], "error": error.message}
    record = result.to_dict()
    await recorder.record(
        "command",
        COMPLETED,
        f"/sz-{spec.id} responded ({len(record['responses'])} responses)",
        activity_id=pair,
        metadata={"id": spec.id, "responses": len(record["responses"])},
    )
    return record


async def gather_evidence(
    question: str,
    index: Index,
    recorder: ActivityRecorder,
    *,
    limit: int = DEFAULT_LIMIT,
    budget: int = MAX_CONTEXT_TOKENS,
    expand: bool = True,
) -> Evidence:
    """Retrieval, images, codebase context (when ``expand``) and packing, with activities."""
    pair = new_activity_id()
    await recorder.record("retrieval", STARTED, "Searching the repository index", activity_id=pair)
    sources = tuple(retrieve(question, limit, index=index))
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
    images = tuple(retrieve_images(question, index=index))
    await recorder.record(
        "retrieval",
        COMPLETED,
        f"Found {_plural(len(images), 'image')}",
        metadata={"images": [{"path": item.path, "score": item.score} for item in images]},
    )
    context = build_codebase_context(question, index, sources) if expand else None
    packed = pack_repository_context(sources, context, budget=budget)
    metadata: dict[str, Any] = {
        "tokens": packed.tokens,
        "budget": packed.budget,
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
    return Evidence(sources, images, context, packed)


def local_answer(intro: str, evidence: Evidence, command: Mapping[str, Any] | None) -> str:
    """A readable answer without a model: ``intro``, the command output, sources and images."""
    lines = [intro]
    if command is not None:
        lines += ["", f"Command /sz-{command.get('id')}:"]
        if command.get("error"):
            lines.append(f"failed: {command['error']}")
        lines += [response_text(response) for response in command.get("responses") or ()]
    if evidence.sources:
        lines += ["", "Most relevant repository sources:"]
        for source in evidence.sources:
            heading = f" ({source.heading})" if source.heading else ""
            lines.append(f"- {source.path}:{source.start}-{source.end}{heading}")
    else:
        lines += ["", "No repository source matched the question."]
    if evidence.images:
        lines += ["", "Matching images:", *(f"- {image.path}" for image in evidence.images)]
    return "\n".join(lines)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _adapter_for(tools: ToolsOption, root: Path | str) -> ToolAdapter | None:
    if tools is None or tools is False:
        return None
    if tools is True:
        return ToolAdapter(root=Path(root))
    return tools


def _tool_activity(event: Mapping[str, Any]) -> Activity:
    """A tool adapter's event dict as an activity of the ``tool`` stage."""
    name = str(event.get("tool") or "tool")
    status = str(event.get("status") or COMPLETED)
    message = str(event.get("message") or f"{name} {status}")
    metadata = {key: value for key, value in event.items() if key not in ("stage", "message")}
    return Activity(stage="tool", status=status, message=message, metadata=metadata)


def _executor(
    adapter: ToolAdapter, identity: Identity, recorder: ActivityRecorder
) -> ToolExecutor:
    async def execute(name: str, arguments: str) -> str:
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return tool_failure(name, "arguments are not valid JSON")
        result = await adapter.call(
            name, parsed, identity=identity, on_activity=lambda event: recorder.add_nowait(
                _tool_activity(event)
            )
        )
        await recorder.flush()
        return str(result.text)

    return execute


async def answer_question_async(
    question: str,
    *,
    root: Path | str = ".",
    with_ai: bool = True,
    command_id: str | None = None,
    command_text: str | None = None,
    identity: Identity | None = None,
    tools: ToolsOption = None,
    on_activity: OnActivity | None = None,
    on_token: OnToken | None = None,
    limit: int = DEFAULT_LIMIT,
    budget: int = MAX_CONTEXT_TOKENS,
    index: Index | None = None,
    settings: Settings | None = None,
    http_client: httpx.AsyncClient | None = None,
) -> dict[str, Any]:
    """Answer ``question`` about the repository at ``root`` (see the module for result shapes)."""
    clean = require_question(question)
    settings = settings or load_settings()
    identity = identity or Identity.local()
    recorder = ActivityRecorder(on_activity)
    command = await run_question_command(
        clean,
        recorder,
        command_id=command_id,
        command_text=command_text,
        identity=identity,
        root=root,
    )
    with _opened(index, root) as opened:
        evidence = await gather_evidence(
            clean,
            opened,
            recorder,
            limit=limit,
            budget=budget,
            expand=not is_command_oriented(clean),
        )
    base: dict[str, Any] = {
        "sources": [source.to_dict() for source in evidence.sources],
        "images": [image.to_dict() for image in evidence.images],
        "command": command,
    }
    if not with_ai:
        intro = "The model was not asked (AI disabled); this is what the repository index found."
        return {
            "answer": local_answer(intro, evidence, command),
            **base,
            "activities": recorder.to_dicts(),
            "context": {"text": evidence.packed.text, **evidence.packed.to_dict()},
        }
    if not settings.has_key:
        await recorder.record(
            "ai", FAILED, "AI_API_KEY is not set; answering from retrieval only"
        )
        intro = f"No model is configured, so this answer comes from retrieval alone. {KEY_HELP}"
        return {
            "answer": local_answer(intro, evidence, command),
            **base,
            "activities": recorder.to_dicts(),
        }
    return await _answer_with_model(
        clean, evidence, command, base, recorder,
        root=root, identity=identity, tools=tools, on_token=on_token,
        settings=settings, http_client=http_client,
    )


async def _answer_with_model(
    question: str,
    evidence: Evidence,
    command: Mapping[str, Any] | None,
    base: dict[str, Any],
    recorder: ActivityRecorder,
    *,
    root: Path | str,
    identity: Identity,
    tools: ToolsOption,
    on_token: OnToken | None,
    settings: Settings,
    http_client: httpx.AsyncClient | None,
) -> dict[str, Any]:
    messages = [
        {"role": "system", "content": load_prompt(SYSTEM_PROMPT, root)},
        {
            "role": "user",
            "content": build_user_message(
                question,
                repository_context=evidence.packed.text,
                images=base["images"],
                command=command,
            ),
        },
    ]
    adapter = _adapter_for(tools, root)
    loop = ToolLoop(
        ChatClient(settings, http_client=http_client),
        limit_prompt=load_prompt(TOOL_CALL_LIMIT_PROMPT, root),
        tools=adapter.definitions() if adapter else None,
        executor=_executor(adapter, identity, recorder) if adapter else None,
        recorder=recorder,
        on_token=on_token,
    )
    try:
        result = await loop.run(messages)
    except ProviderError as error:
        code = provider_code(error)
        await recorder.record(
            "ai", FAILED, f"The model request failed: {error.message}", metadata={"code": code}
        )
        intro = f"The model could not answer: {error.message}."
        activities = recorder.to_dicts()
        return {
            "answer": local_answer(intro, evidence, command),
            "responseRounds": loop.requests,
            **base,
            "activities": activities,
            "trace": list(activities),
            "usage": loop.usage.to_dict(),
            "error": {"code": code, "message": error.message},
        }
    activities = recorder.to_dicts()
    return {
        "answer": result.answer,
        "responseRounds": result.response_rounds,
        **base,
        "activities": activities,
        "trace": list(activities),
        "usage": result.usage.to_dict(),
    }


def answer_question(
    question: str,
    *,
    root: Path | str = ".",
    with_ai: bool = True,
    command_id: str | None = None,
    command_text: str | None = None,
    identity: Identity | None = None,
    tools: ToolsOption = None,
    on_activity: OnActivity | None = None,
    on_token: OnToken | None = None,
    limit: int = DEFAULT_LIMIT,
    budget: int = MAX_CONTEXT_TOKENS,
    index: Index | None = None,
    settings: Settings | None = None,
    http_client: httpx.AsyncClient | None = None,
) -> dict[str, Any]:
    """The synchronous face of :func:`answer_question_async` (same arguments, same result)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "answer_question() cannot run inside a running event loop; "
            "use 'await answer_question_async(...)' instead"
        )
    return asyncio.run(
        answer_question_async(
            question,
            root=root,
            with_ai=with_ai,
            command_id=command_id,
            command_text=command_text,
            identity=identity,
            tools=tools,
            on_activity=on_activity,
            on_token=on_token,
            limit=limit,
            budget=budget,
            index=index,
            settings=settings,
            http_client=http_client,
        )
    )
