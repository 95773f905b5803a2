"""The token-budgeted packer: what of the repository knowledge reaches the model.

Retrieved sources, the structural summary and the code entries become ranked chunks. Each
chunk's text is redacted first, then counted; chunks are taken in priority order while they
fit the remaining budget, never truncated, and a key seen once is not taken again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from szrag.base.public import public_dict
from szrag.base.redact import Redaction, redact_text
from szrag.context.model import DIRECT, CodebaseContext, CodeEntry
from szrag.context.tokens import TokenCounter, estimate_token_count, load_counter
from szrag.rank.retrieve import Source

MAX_CONTEXT_TOKENS = 4000  # the original's budget, kept by the slackzilla profile
SPEC_PACKING = "spec"
EVIDENCE_PACKING = "evidence"
PACKINGS = (SPEC_PACKING, EVIDENCE_PACKING)
SOURCE_BASE_SCORE = 1000
STRUCTURE_SCORE = 180
KIND_BONUS: Mapping[str, int] = {"code": 250, "structure": 100, "source": 0}
SIZE_PENALTY_DIVISOR = 20
MAX_SIZE_PENALTY = 100
SEPARATOR = "\n\n"
# Included chunks are written sources first, as the original prompt put them, then the
# structural summary, then code; priority decides the order within each kind.
KIND_ORDER = ("source", "symbol", "structure", "code", "related")

INCLUDED = "included"
DUPLICATE = "duplicate"
OVER_BUDGET = "over budget"


@dataclass(frozen=True, slots=True)
class ContextChunk:
    """One candidate piece of the model's repository context; ``key`` identifies its content."""

    key: str
    kind: str
    score: float
    text: str
    path: str | None = None
    carries_source: bool = False  # holds lines of the file itself, not only its structure
    # the lines naming the file, written once before all of its chunks that go in (which
    # follow in line order, ``line`` the first of each): a file's excerpts read together,
    # and the header is paid for once
    file_header: str | None = None
    line: int = 0


@dataclass(frozen=True, slots=True)
class PackedChunk:
    """How the packer judged one chunk: its priority, size and whether it went in."""

    key: str
    kind: str
    path: str | None
    score: float
    priority: float
    # its count; in evidence-first packing a repeated key is 0, and a chunk left out before it
    # was counted shows the least its text, as it stands, could count
    tokens: int
    status: str
    redactions: int
    carries_source: bool = False

    @property
    def included(self) -> bool:
        """True when the chunk is part of the packed text."""
        return self.status == INCLUDED


@dataclass(frozen=True, slots=True)
class PackedContext:
    """The packed context text and what it is made of."""

    text: str
    tokens: int
    budget: int
    files: tuple[str, ...]
    code_contexts: int
    redactions: int
    redaction_kinds: tuple[str, ...]
    tokenizer: str
    chunks: tuple[PackedChunk, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record (the chunk list included), in the public casing."""
        return public_dict(self)

    def summary(self) -> PackSummary:
        """Summary figures for an activity record: no text, no chunk list."""
        return PackSummary(
            tokens=self.tokens,
            budget=self.budget,
            tokenizer=self.tokenizer,
            files=self.files,
            code_contexts=self.code_contexts,
            chunks=sum(1 for chunk in self.chunks if chunk.included),
            skipped=sum(1 for chunk in self.chunks if not chunk.included),
            redactions=self.redactions,
            redaction_kinds=self.redaction_kinds,
        )

    def metadata(self) -> dict[str, Any]:
        """The summary figures in their public form."""
        return public_dict(self.summary())


@dataclass(frozen=True, slots=True)
class PackSummary:
    """A packed context's figures: what it holds and what was left out."""

    tokens: int
    budget: int
    tokenizer: str
    files: tuple[str, ...]
    code_contexts: int
    chunks: int  # the chunks that went in
    skipped: int  # the chunks left out
    redactions: int
    redaction_kinds: tuple[str, ...]


def size_penalty(tokens: int) -> float:
    """One point per 20 tokens, at most 100: long chunks yield to short ones of equal score."""
    return min(tokens / SIZE_PENALTY_DIVISOR, MAX_SIZE_PENALTY)


def chunk_priority(kind: str, score: float, text: str) -> float:
    """The spec's getChunkPriority: score + kind bonus - size penalty.

    The penalty always uses the spec's estimate, so the order of chunks does not depend on
    which tokenizer measures the budget.
    """
    return score + KIND_BONUS.get(kind, 0) - size_penalty(estimate_token_count(text))


def format_source(source: Source) -> str:
    """A retrieved source as the model sees it: FILE/LINES/TYPE[/SECTION] then the text."""
    header = [f"FILE: {source.path}", f"LINES: {source.start}-{source.end}", f"TYPE: {source.type}"]
    if source.heading:
        header.append(f"SECTION: {source.heading}")
    return "\n".join(header) + "\n" + source.text


def file_header(source: Source) -> str:
    """The lines naming a source's file in evidence packing: FILE/TYPE, once per file."""
    return f"FILE: {source.path}\nTYPE: {source.type}"


def excerpt_text(source: Source) -> str:
    """A source under its file's header: LINES[/SECTION] then the text."""
    header = [f"LINES: {source.start}-{source.end}"]
    if source.heading:
        header.append(f"SECTION: {source.heading}")
    return "\n".join(header) + "\n" + source.text


def source_chunk(source: Source) -> ContextChunk:
    """A retrieved source as a chunk scored 1000 + its retrieval score."""
    return ContextChunk(
        key=f"source:{source.path}:{source.start}-{source.end}",
        kind="source",
        score=SOURCE_BASE_SCORE + source.score,
        text=format_source(source),
        path=source.path,
        carries_source=True,
    )


def excerpt_chunk(source: Source) -> ContextChunk:
    """A source as one excerpt of its file: written under the file's header, with the
    file's other excerpts that go in (scored by its place: ``evidence_chunks``)."""
    return ContextChunk(
        key=f"source:{source.path}:{source.start}-{source.end}",
        kind="source",
        score=0,
        text=excerpt_text(source),
        path=source.path,
        carries_source=True,
        file_header=file_header(source),
        line=source.start,
    )


def more_chunk(source: Source) -> ContextChunk:
    """A found file's further unit, scored with its file's retrieval score alone: after
    every retrieved source, among the structure the original's priorities weigh."""
    return ContextChunk(
        key=f"source:{source.path}:{source.start}-{source.end}",
        kind="source",
        score=source.score,
        text=format_source(source),
        path=source.path,
        carries_source=True,
    )


def structure_chunk(context: CodebaseContext) -> ContextChunk | None:
    """The structural summary as a chunk scored 180, or None when there is nothing to say."""
    text = context.structure_text()
    if not text:
        return None
    return ContextChunk(key="structure", kind="structure", score=STRUCTURE_SCORE, text=text)


def code_chunk(entry: CodeEntry) -> ContextChunk:
    """A code entry as a chunk scored with its context score."""
    return ContextChunk(
        key=f"code:{entry.path}",
        kind="code",
        score=entry.score,
        text=entry.text,
        path=entry.path,
        carries_source=bool(entry.symbols),
    )


def context_chunks(
    sources: Iterable[Source], context: CodebaseContext | None
) -> list[ContextChunk]:
    """Every candidate chunk: sources, then the structural summary, code entries and the
    found files' further units."""
    chunks = [source_chunk(source) for source in sources]
    if context is not None:
        summary = structure_chunk(context)
        if summary is not None:
            chunks.append(summary)
        chunks.extend(code_chunk(entry) for entry in context.code)
        chunks.extend(more_chunk(source) for source in context.more_sources)
    return chunks


# Evidence-first weights. The r-th file found is the answer's file less often the lower it
# ranks, and its j-th unit holds the change less often than its first: a unit is worth
# 1 / (r * j), so the second unit of the first file goes before the first unit of the third.
STRUCTURE_WEIGHT = 0.2  # the structural summary: with the first units of the first five files
CODE_WEIGHT = 0.1  # a direct file's structure listing, over its file's rank
RELATED_WEIGHT = 0.01  # a line per dependency or dependant: what is left


def evidence_chunks(
    sources: Sequence[Source], context: CodebaseContext | None
) -> list[ContextChunk]:
    """The evidence-first candidates, best first: each unit of a found file (the retrieved
    sources, then the found files' next best units) weighted by its file's rank and its
    own within the file (``1 / (r * j)``); the units of the symbols the question names
    with its file's first unit; then the structural summary, each direct file's structure
    and one line per dependency or dependant (its path and the names that tie it to the
    file it was reached from). The score is the place in that order."""
    ranks: dict[str, int] = {}
    units: Counter[str] = Counter()

    def unit_weight(path: str) -> float:
        rank = ranks.setdefault(path, len(ranks) + 1)
        units[path] += 1
        return 1.0 / (rank * units[path])

    weighted: list[tuple[float, ContextChunk]] = [
        (unit_weight(source.path), excerpt_chunk(source)) for source in sources
    ]
    if context is not None:
        unranked = len(ranks) + 1  # a named symbol's file that retrieval did not return
        for entry in context.code:
            weight = 1.0 / ranks.get(entry.path, unranked)
            if entry.symbol_units:  # the file's own units: a line already taken is not again
                weighted.extend((weight, excerpt_chunk(unit)) for unit in entry.symbol_units)
            elif entry.symbol_source:
                weighted.append((weight, symbols_chunk(entry)))
        summary = structure_chunk(context)
        if summary is not None:
            weighted.append((STRUCTURE_WEIGHT, summary))
        weighted.extend(
            (unit_weight(source.path), excerpt_chunk(source)) for source in context.more_sources
        )
        weighted.extend(
            (
                CODE_WEIGHT / ranks.get(entry.path, unranked),
                ContextChunk(
                    key=f"code:{entry.path}",
                    kind="code",
                    score=0,
                    text=f"CODE: {entry.path}\n{entry.structure}",
                    path=entry.path,
                ),
            )
            for entry in context.code
            if entry.relation == DIRECT and entry.structure
        )
        weighted.extend(
            (
                RELATED_WEIGHT,
                ContextChunk(
                    key=f"related:{entry.path}",
                    kind="related",
                    score=0,
                    text=related_line(entry),
                    path=entry.path,
                ),
            )
            for entry in context.code
            if entry.relation != DIRECT
        )
    ordered = sorted(weighted, key=lambda item: -item[0])  # stable: equal weights keep order
    count = len(ordered)
    return [replace(chunk, score=count - place) for place, (_, chunk) in enumerate(ordered)]


def symbols_chunk(entry: CodeEntry) -> ContextChunk:
    """The source of the symbols the question names in one file, as one chunk."""
    return ContextChunk(
        key=f"symbol:{entry.path}",
        kind="symbol",
        score=0,
        text=f"SYMBOLS: {', '.join(entry.symbols)} in {entry.path}\n{entry.symbol_source}",
        path=entry.path,
        carries_source=True,
    )


def related_line(entry: CodeEntry) -> str:
    """``RELATED: path (dependency of via): names``, the compact form of a related file."""
    relation = f"{entry.relation} of {entry.via}" if entry.via else entry.relation
    names = f": {', '.join(entry.connects)}" if entry.connects else ""
    return f"RELATED: {entry.path} ({relation}){names}"


@dataclass(frozen=True, slots=True)
class _Measured:
    chunk: ContextChunk
    text: str
    tokens: int
    priority: float
    redactions: int
    kinds: tuple[str, ...]
    header: str | None = None  # the file header, redacted, written before the file's chunks


# A chunk this many times longer (in characters) than the whole budget (in tokens) cannot
# fit: it is judged by its length alone, without redacting or counting a megabyte.
HOPELESS_CHARS_PER_TOKEN = 32


def _measure_all(
    chunks: Sequence[ContextChunk], counter: TokenCounter, budget: int
) -> list[_Measured]:
    hopeless = max(budget, 1) * HOPELESS_CHARS_PER_TOKEN
    redactions: dict[int, Redaction] = {}

    def redacted_texts() -> Iterator[str]:
        # read as the counter goes: an exact counter encodes one text while the next is redacted
        for place, chunk in enumerate(chunks):
            if len(chunk.text) <= hopeless:
                # Redact before counting: the budget is spent on the text the model will see.
                redactions[place] = redaction = redact_text(chunk.text, path=chunk.path)
                yield redaction.text

    counted = counter.count_each(redacted_texts())
    if len(counted) != len(redactions):
        raise ValueError(f"{counter.name} gave {len(counted)} counts for {len(redactions)} texts")
    counts = iter(counted)
    measured: list[_Measured] = []
    for place, chunk in enumerate(chunks):
        redaction = redactions.get(place)
        if redaction is None:
            estimate = estimate_token_count(chunk.text)
            measured.append(_Measured(chunk, "", estimate, float(chunk.score) - estimate, 0, ()))
            continue
        priority = chunk_priority(chunk.kind, chunk.score, redaction.text)
        measured.append(
            _Measured(
                chunk=chunk,
                text=redaction.text,
                tokens=next(counts),
                priority=priority,
                redactions=redaction.count,
                kinds=redaction.kinds,
            )
        )
    return measured


def pack_chunks(
    chunks: Sequence[ContextChunk],
    *,
    budget: int = MAX_CONTEXT_TOKENS,
    counter: TokenCounter | None = None,
    in_order: bool = False,
) -> PackedContext:
    """Take chunks by priority while they fit ``budget`` tokens; skip repeated keys.

    Ties in priority keep the input order (the sort is stable), so the result is the same
    for the same input. A chunk that does not fit is skipped whole, and smaller chunks after
    it may still fill the remaining budget. ``tokens`` is the sum of the included chunks'
    counts; the blank lines that join them are not counted. With ``in_order`` a chunk's
    score is its priority, and a chunk is redacted and counted only when it is judged.
    """
    if budget < 0:
        raise ValueError(f"the token budget must not be negative (got {budget})")
    measure = counter if counter is not None else load_counter()
    if in_order:
        return _pack_in_order(chunks, budget, measure)
    measured = _measure_all(chunks, measure, budget)
    ranked = sorted(measured, key=lambda item: -item.priority)
    seen: set[str] = set()
    used = 0
    judged: list[PackedChunk] = []
    taken: list[_Measured] = []
    for item in ranked:
        if item.chunk.key in seen:
            status = DUPLICATE
        elif item.tokens > budget - used:
            status = OVER_BUDGET
        else:
            status = INCLUDED
            used += item.tokens
            taken.append(item)
        seen.add(item.chunk.key)
        judged.append(_judgement(item, status))
    return _assemble(taken, judged, used, budget, measure.name)


def _pack_in_order(
    chunks: Sequence[ContextChunk], budget: int, counter: TokenCounter
) -> PackedContext:
    """``pack_chunks`` with each chunk's score as its priority, each chunk redacted and
    counted only when it is judged: one whose text, as it stands, cannot count fewer
    tokens than are left (``TokenCounter.at_least``) is over budget without either.
    Most candidates come after the budget is spent, and this spares their redaction and
    counting; a secret redacted to fewer words might have let such a chunk in, but a
    chunk never goes in unredacted or uncounted."""
    hopeless = max(budget, 1) * HOPELESS_CHARS_PER_TOKEN
    seen: set[str] = set()
    headers: dict[str, tuple[Redaction, int]] = {}  # each file header, redacted and counted
    written: set[str] = set()  # the headers of files a chunk of which went in
    used = 0
    judged: list[PackedChunk] = []
    taken: list[_Measured] = []
    for chunk in sorted(chunks, key=lambda item: -item.score):  # stable: ties keep order
        if chunk.key in seen:
            judged.append(_unmeasured(chunk, 0, DUPLICATE))
            continue
        seen.add(chunk.key)
        left = budget - used
        header = chunk.file_header
        header_tokens = 0
        if header is not None:
            if header not in headers:
                redacted = redact_text(header, path=chunk.path)
                headers[header] = (redacted, counter.count(redacted.text))
            if header not in written:
                header_tokens = headers[header][1]  # the file's first chunk pays for it
        least = header_tokens + (
            estimate_token_count(chunk.text)
            if len(chunk.text) > hopeless
            else counter.at_least(chunk.text)
        )
        if least > left:
            judged.append(_unmeasured(chunk, least, OVER_BUDGET))
            continue
        redaction = redact_text(chunk.text, path=chunk.path)
        item = _Measured(
            chunk,
            redaction.text,
            header_tokens + counter.count(redaction.text),
            float(chunk.score),
            redaction.count,
            redaction.kinds,
            headers[header][0].text if header is not None else None,
        )
        status = INCLUDED if item.tokens <= left else OVER_BUDGET
        if status == INCLUDED:
            used += item.tokens
            taken.append(item)
            if header is not None:
                written.add(header)
        judged.append(_judgement(item, status))
    return _assemble(taken, judged, used, budget, counter.name)


def _unmeasured(chunk: ContextChunk, tokens: int, status: str) -> PackedChunk:
    """A chunk judged without redacting or counting it: ``tokens`` is the least it counts."""
    return PackedChunk(
        key=chunk.key,
        kind=chunk.kind,
        path=chunk.path,
        score=chunk.score,
        priority=float(chunk.score),
        tokens=tokens,
        status=status,
        redactions=0,
        carries_source=chunk.carries_source,
    )


def _judgement(item: _Measured, status: str) -> PackedChunk:
    return PackedChunk(
        key=item.chunk.key,
        kind=item.chunk.kind,
        path=item.chunk.path,
        score=item.chunk.score,
        priority=item.priority,
        tokens=item.tokens,
        status=status,
        redactions=item.redactions if status == INCLUDED else 0,
        carries_source=item.chunk.carries_source,
    )


def _assemble(
    taken: list[_Measured], judged: list[PackedChunk], used: int, budget: int, tokenizer: str
) -> PackedContext:
    ordered = sorted(taken, key=lambda item: _kind_rank(item.chunk.kind))  # stable: priority kept
    files = dict.fromkeys(item.chunk.path for item in ordered if item.chunk.path)
    return PackedContext(
        text=SEPARATOR.join(_written(ordered)),
        tokens=used,
        budget=budget,
        files=tuple(path for path in files if path),
        code_contexts=sum(1 for item in taken if item.chunk.kind == "code"),
        redactions=sum(item.redactions for item in taken),
        redaction_kinds=tuple(sorted({kind for item in taken for kind in item.kinds})),
        tokenizer=tokenizer,
        chunks=tuple(judged),
    )


def _written(ordered: Sequence[_Measured]) -> Iterator[str]:
    """The texts of ``ordered`` as the model reads them: the chunks under one file header
    together, where the file's first chunk stands, in line order."""
    # grouped by the header as written before redaction: two files whose paths redact alike
    # are still two files
    grouped: dict[str, list[_Measured]] = {}
    for item in ordered:
        if item.chunk.file_header is not None:
            grouped.setdefault(item.chunk.file_header, []).append(item)
    for item in ordered:
        if item.chunk.file_header is None or item.header is None:
            yield item.text
            continue
        group = grouped.pop(item.chunk.file_header, None)
        if group is not None:  # later chunks of the file were written with its first
            excerpts = sorted(group, key=lambda each: each.chunk.line)
            yield item.header + "\n" + "\n\n".join(each.text for each in excerpts)


def _kind_rank(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def pack_repository_context(
    sources: Sequence[Source],
    context: CodebaseContext | None,
    *,
    budget: int = MAX_CONTEXT_TOKENS,
    counter: TokenCounter | None = None,
    packing: str = SPEC_PACKING,
) -> PackedContext:
    """The repository context for the model: sources and codebase context within ``budget``.

    ``packing`` is ``spec`` (the original's priorities: score + kind bonus - size penalty)
    or ``evidence`` (retrieved sources and named symbols' source first, structure after, in
    compact form). ``counter`` defaults to the configured tokenizer. ``context`` may be None
    when codebase expansion was skipped.
    """
    if packing == EVIDENCE_PACKING:
        chunks = evidence_chunks(sources, context)
        return pack_chunks(chunks, budget=budget, counter=counter, in_order=True)
    return pack_chunks(context_chunks(sources, context), budget=budget, counter=counter)
