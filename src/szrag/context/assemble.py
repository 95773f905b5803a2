"""The whole road from a question to the context a model receives, in one call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from szrag.base.public import public, public_dict
from szrag.context.build import build_codebase_context
from szrag.context.model import CodebaseContext, ContextSummary
from szrag.context.pack import PackedChunk, PackedContext, PackSummary, pack_repository_context
from szrag.context.plan import ContextPlan
from szrag.index.protocol import IndexStore
from szrag.rank.retrieve import DEFAULT_LIMIT, Source, retrieve


@dataclass(frozen=True, slots=True)
class SourcePlace:
    """A source without its text: where it is and how well it matched."""

    path: str
    start: int
    end: int
    type: str
    heading: str | None
    score: int

    @classmethod
    def of(cls, source: Source) -> SourcePlace:
        return cls(source.path, source.start, source.end, source.type, source.heading, source.score)


@dataclass(frozen=True, slots=True)
class ShownContext:
    """An assembled context as ``szrag context --json`` and ``get_context`` show it."""

    question: str
    summary: PackSummary = field(metadata=public(spread=True))
    tokenizer_note: str | None
    text: str
    chunks: tuple[PackedChunk, ...]
    sources: tuple[SourcePlace, ...]
    context: ContextSummary


@dataclass(frozen=True, slots=True)
class AssembledContext:
    """The retrieved sources, the codebase context around them and the packed text."""

    sources: tuple[Source, ...]
    context: CodebaseContext
    packed: PackedContext
    plan: ContextPlan

    def to_dict(self, question: str) -> dict[str, Any]:
        """The public form of ``szrag context --json`` and the MCP ``get_context`` tool: the
        packed (redacted) text, its figures, the chunks considered and the sources found
        (without their text: it is in ``text`` as far as the budget allowed)."""
        return public_dict(self.shown(question))

    def shown(self, question: str) -> ShownContext:
        """The record :meth:`to_dict` shows."""
        return ShownContext(
            question=question.strip(),
            summary=self.packed.summary(),
            tokenizer_note=self.plan.counter().note,
            text=self.packed.text,
            chunks=self.packed.chunks,
            sources=tuple(SourcePlace.of(source) for source in self.sources),
            context=self.context.summary(),
        )


def assemble_context(
    question: str,
    index: IndexStore,
    *,
    limit: int = DEFAULT_LIMIT,
    plan: ContextPlan | None = None,
    ranker: str | None = None,
) -> AssembledContext:
    """Retrieve, expand and pack ``question`` from one snapshot of ``index``, following
    ``plan`` (default: the repository's configured plan, no environment read)."""
    plan = plan or ContextPlan.of(index.config, {})
    with index.reading():
        sources = tuple(retrieve(question, limit, index=index, ranker=ranker))
        context = build_codebase_context(question, index, sources)
    packed = pack_repository_context(
        sources, context, budget=plan.budget, counter=plan.counter(), packing=plan.packing
    )
    return AssembledContext(sources, context, packed, plan)
