"""What the repository offers a question: sources, images, the codebase context and the
packed text, gathered from one snapshot of the index with an activity for each step."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from szrag.answer.elsewhere import MergedSource
from szrag.base.activity import COMPLETED, SKIPPED, STARTED, ActivityRecorder, plural
from szrag.base.activity import new_id as new_activity_id
from szrag.base.redact import redact
from szrag.context import (
    CodebaseContext,
    PackedContext,
    build_codebase_context,
    pack_repository_context,
)
from szrag.context.plan import ContextPlan
from szrag.index.protocol import IndexStore
from szrag.rank.retrieve import DEFAULT_LIMIT, Image, Source, retrieve, retrieve_images


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
    elsewhere: tuple[MergedSource, ...] = ()  # other repositories' sources, redacted
    elsewhere_text: str = ""  # those sources as the model reads them


BudgetFor = Callable[[Sequence[Image]], int]


async def gather_evidence(
    question: str,
    index: IndexStore,
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
            f"{plural(earlier, 'earlier question')}",
            activity_id=pair,
            metadata={"earlier_questions": earlier},
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
    index: IndexStore,
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
        f"Found {plural(len(sources), 'source')}",
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
        f"Found {plural(len(images), 'image')}",
        metadata={"images": [{"path": item.path, "score": item.score} for item in images]},
    )
    metadata: dict[str, Any] = {
        "tokens": packed.tokens,
        "budget": packed.budget,
        "tokenizer": packed.tokenizer,
        "files": list(packed.files),
        "code_contexts": packed.code_contexts,
        "redactions": packed.redactions,
    }
    if context is None:
        message = "Codebase context skipped: the question asks to run a command"
        await recorder.record("context", SKIPPED, message, metadata=metadata)
    else:
        metadata["counts"] = context.counted()
        metadata["code_context_files"] = [entry.path for entry in context.code]
        message = (
            f"Packed {plural(len(packed.files), 'file')} into {packed.tokens} of "
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
