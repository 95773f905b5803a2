"""Retrieval: the source chunks and images that answer a question.

The profile's ranker (``szrag.rank``) orders the files by their windows, one per file; in the
default profile the second stage (``szrag.rank.units``) then picks each file's best unit (a
function, a class, a section) and a second one scoring close, so a source cites the code's
own span; the ``slackzilla`` profile returns the ranker's windows as the original does. This
module turns them into sources with their text, and scores images by their paths.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from szrag.base.errors import IndexStoreError, QuestionError
from szrag.base.public import public_dict
from szrag.base.redact import redact, redact_for_display
from szrag.base.text import SOURCE_TYPES, path_tokens, tokens
from szrag.index import load_index
from szrag.index.protocol import IndexStore
from szrag.rank import Query, RankedChunk, kinds, ranker_named
from szrag.rank.model import named_lines
from szrag.rank.units import (
    FILE_UNITS,
    FileCut,
    ScoredUnit,
    chosen_units,
    cut_of,
    more_units,
    unit_text,
    units_of,
)
from szrag.rank.words import named_symbols, without_accents

DEFAULT_LIMIT = 8
DEFAULT_IMAGE_LIMIT = 6
MAX_SOURCE_LENGTH = 3500
IMAGE_TOKEN = 10
IMAGE_ALIAS = 6
IMAGE_ALIASES: tuple[tuple[str, str], ...] = (
    ("calculator", "calc"),
    ("calculation", "calc"),
    ("architecture", "arch"),
    ("diagram", "arch"),
    ("webhook", "hook"),
    ("dashboard", "dash"),
    ("github", "git"),
    ("workflows", "workflow"),
    ("workflow", "workflow"),
    ("github", "g"),
    ("actions", "act"),
)

_ALIASES_OF: dict[str, tuple[str, ...]] = {}
for _asked, _alias in IMAGE_ALIASES:
    _ALIASES_OF[_asked] = (*_ALIASES_OF.get(_asked, ()), _alias)


@dataclass(frozen=True, slots=True)
class Source:
    """A retrieved chunk: where it is, what it says and how well it matched."""

    path: str
    start: int
    end: int
    type: str
    heading: str | None
    text: str
    score: int

    def to_dict(self) -> dict[str, Any]:
        """The record as the original's consumers expect it."""
        return public_dict(self)

    def redacted(self) -> Source:
        """This source with the secrets in its text replaced, as callers and the model see it."""
        return replace(self, text=redact(self.text, path=self.path))

    def shown_locally(self) -> Source:
        """The source as a person at their own terminal sees it: redacted, but a test file's
        low-entropy fixture values shown, marked (``redact.redact_for_display``)."""
        return replace(self, text=redact_for_display(self.text, path=self.path))


@dataclass(frozen=True, slots=True)
class Image:
    """An image whose path matched the question."""

    path: str
    url: str
    score: int

    def to_dict(self) -> dict[str, Any]:
        """The record as ``{path, url, score}``."""
        return public_dict(self)


MAX_QUESTION_CHARS = 8000  # every face: the CLI, the API, Slack, MCP
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def require_question(question: str) -> str:
    """The question without surrounding space, any lone surrogate (text that is not valid
    Unicode, as a broken terminal paste gives) replaced by U+FFFD; an empty one is a
    QuestionError."""
    clean = _SURROGATES.sub("\ufffd", str(question or "")).strip()
    if not clean:
        raise QuestionError("the question is empty: ask something about the repository")
    if len(clean) > MAX_QUESTION_CHARS:
        raise QuestionError(
            f"the question is {len(clean)} characters long; ask in at most {MAX_QUESTION_CHARS}"
        )
    return clean


def retrieve(
    question: str,
    limit: int = DEFAULT_LIMIT,
    *,
    index: IndexStore | None = None,
    root: Path | str = ".",
    ranker: str | None = None,
) -> list[Source]:
    """The sources that best answer ``question``: ``limit`` files at most, best first, one
    unit each (two when they score close) or, in the ``slackzilla`` profile, one window.

    ``ranker`` overrides the profile's ranker: ``spec`` (the original's scorer) or ``bm25``.
    """
    clean = require_question(question)
    if index is None:
        with load_index(root) as opened:
            return retrieve(clean, limit, index=opened, ranker=ranker)
    chosen_ranker = ranker_named(ranker or index.config.profile.ranker)
    unreadable: tuple[type[Exception], ...] = (*index.read_errors, KeyError, ValueError)
    try:
        with index.reading():
            return _retrieve(index, clean, limit, chosen_ranker.name)
    except unreadable as error:
        raise IndexStoreError(
            f"the index at {index.location} could not be read ({error}); `szrag index --rebuild` replaces it"
        ) from error


def _retrieve(index: IndexStore, question: str, limit: int, ranker: str) -> list[Source]:
    query = Query.parse(question, index.config.extensions)
    chosen = ranker_named(ranker).rank(index, query, limit, fill=index.config.profile.fill)
    if index.config.profile.units:
        named = named_lines(index, query)
        found = _call_site_sources(index, question, limit)
        files = {source.path for source in found}
        for candidate in chosen:
            if len(files) >= limit:
                break
            if candidate.path not in files:
                files.add(candidate.path)
                lines = named.get(candidate.path, frozenset())
                found.extend(_unit_sources(index, question, candidate, lines))
        return found
    texts = index.chunk_texts([candidate.chunk_id for candidate in chosen])
    return [_window_source(candidate, texts[candidate.chunk_id]) for candidate in chosen]


# "where is X called / used?": the places that call X answer it, not X's own definition;
# asked in English or, accents taken off, in the other languages whose function words
# rank/function_words.txt holds ("wo wird X aufgerufen?", "ou X est-elle appelee ?")
_ASKS_FOR_USES = re.compile(
    r"\b(where|which|what|who)\b.{0,80}?\b(call|called|calls|use|used|uses|invoked|referenced)\b"
    r"|\b(callers|call sites|usages|uses|references)\s+(of|to)\b|\bwho calls\b"
    r"|\b(wo|wer)\b.{0,80}?\b(aufgerufen|verwendet|benutzt|genutzt|aufruft)\b"
    r"|\b(ou|qui)\b.{0,80}?\b(appelee?s?|utilisee?s?|invoquee?s?|appelle)\b"
    r"|\b(donde|quien)\b.{0,80}?\b(llamad[oa]s?|llama|usad[oa]s?|utilizad[oa]s?|invocad[oa]s?)\b"
    r"|\b(onde|quem)\b.{0,80}?\b(chamad[oa]s?|chama|usad[oa]s?|utilizad[oa]s?|invocad[oa]s?)\b"
    r"|\b(dove|chi)\b.{0,80}?\b(chiamat[aoie]|chiama|usat[aoie]|utilizzat[aoie]|invocat[aoie])\b"
    r"|\b(waar|wie)\b.{0,80}?\b(aangeroepen|gebruikt|aanroept)\b",
    re.IGNORECASE,
)  # asked as a question: "use `x` instead" in a commit subject asks nothing about uses
CALL_SITE_SCORE = 100


def _call_site_sources(index: IndexStore, question: str, limit: int) -> list[Source]:
    """For a question asking where a named function is called or used, the units holding
    its call sites: files with the most calls first, at most ``FILE_UNITS`` units each."""
    # a follow-up is searched with the questions it follows, one per line after it: the
    # follow-up itself must ask about uses, the name may come from what it follows
    asked = question.split("\n", 1)[0]
    named = named_symbols(question) if _ASKS_FOR_USES.search(without_accents(asked)) else set()
    calls: dict[str, list[int]] = {}
    for key in sorted(named):
        for path, line in index.named(key, "call"):
            calls.setdefault(path, []).append(line)
    ordered = sorted(calls, key=lambda path: (-len(calls[path]), path))[:limit]
    sources: list[Source] = []
    for path in ordered:
        stored = index.get_file(path)
        if stored is None:
            continue
        found = cut_of(index, path, stored.type)
        if found is None:
            continue
        holding = [
            unit
            for unit in found.units
            if any(unit.start <= line <= unit.end for line in calls[path])
        ]
        score = CALL_SITE_SCORE + len(calls[path])
        sources.extend(
            _unit_source(found, ScoredUnit(unit, 0.0), path, stored.type, score)
            for unit in holding[:FILE_UNITS]
        )
    return sources


def _window_source(candidate: RankedChunk, text: str) -> Source:
    return Source(
        path=candidate.path,
        start=candidate.start,
        end=candidate.end,
        type=candidate.type,
        heading=candidate.heading,
        text=text[:MAX_SOURCE_LENGTH],
        score=candidate.score,
    )


def _unit_sources(
    index: IndexStore, question: str, candidate: RankedChunk, lines: AbstractSet[int] = frozenset()
) -> list[Source]:
    """The chosen file's best unit (and a second one scoring close), by the second stage,
    the units holding ``lines`` (those the question names) first; the ranker's window where
    the index holds no lines of the file."""
    found = units_of(index, candidate.path, candidate.type)
    picked = chosen_units(found, question, candidate.windows, lines) if found else []
    if found is None or not picked:
        # a chunk without its text is a damaged index: the KeyError says so to the caller
        return [
            _window_source(candidate, index.chunk_texts([candidate.chunk_id])[candidate.chunk_id])
        ]
    return [
        _unit_source(found, item, candidate.path, candidate.type, candidate.score)
        for item in picked
    ]


def _unit_source(found: FileCut, item: ScoredUnit, path: str, kind: str, score: int) -> Source:
    return Source(
        path=path,
        start=item.unit.start,
        end=item.unit.end,
        type=kind,
        heading=item.unit.signature or item.unit.name,
        text=unit_text(found, item.unit)[:MAX_SOURCE_LENGTH],
        score=score,
    )


def source_notes(index: IndexStore, sources: Sequence[Source]) -> list[str]:
    """What was cut or could not be followed in ``sources``: a text cut at the source's
    character bound (a minified or generated file's long line), a code file where nothing
    parsed and windows stand in for its definitions."""
    notes: list[str] = []
    for source in sources:
        where = f"{source.path}:{source.start}-{source.end}"
        if len(source.text) >= MAX_SOURCE_LENGTH:
            longest = max(map(len, source.text.split("\n")), default=0)
            shape = f" (a line of {longest:,}+ characters)" if longest >= MAX_SOURCE_LENGTH else ""
            notes.append(f"{where}: its text is cut at {MAX_SOURCE_LENGTH:,} characters{shape}")
        if not index.config.profile.units:
            continue
        found = cut_of(index, source.path, source.type) if source.type in SOURCE_TYPES else None
        if found is not None and found.units and all(unit.kind == "window" for unit in found.units):
            notes.append(f"{where}: no definitions were parsed in this file; cut into windows")
    return list(dict.fromkeys(notes))


MORE_FILES = DEFAULT_LIMIT  # the files found whose further units a context may take
MORE_LINES = 400  # lines per file beyond those returned; the token budget decides the rest


def more_sources(
    index: IndexStore, question: str, sources: Sequence[Source], *, files: int = MORE_FILES
) -> list[Source]:
    """The next best units of the first ``files`` files among ``sources`` (those not
    returned already), in rounds: each file's next best, in the files' rank order, then
    each one's next; what a context with room to spare holds after the sources themselves,
    so a tight budget still reaches past the first file. A changelog or release notes give
    none unless the question asks about releases. Empty unless the profile answers with
    units."""
    if not index.config.profile.units:
        return []
    taken: dict[str, list[tuple[int, int]]] = {}
    for source in sources:
        taken.setdefault(source.path, []).append((source.start, source.end))
    queues: list[list[Source]] = []
    # a changelog names every change: beyond the sections that matched, its others are
    # about other changes (koa's History.md took half a context), unless releases are asked
    releases = kinds.asks_about_releases(question)
    for path in list(taken)[:files]:
        first = next(source for source in sources if source.path == path)
        if not releases and kinds.is_release_notes(path, first.type):
            continue
        found = units_of(index, path, first.type)
        if found is None:
            continue
        spare = more_units(found, question, taken[path], MORE_LINES)
        queues.append([_unit_source(found, item, path, first.type, first.score) for item in spare])
    return [
        queue[place]
        for place in range(max(map(len, queues), default=0))
        for queue in queues
        if place < len(queue)
    ]


def definition_units(
    index: IndexStore, path: str, spans: Sequence[tuple[int, int]], score: int
) -> list[Source]:
    """The units of the indexed file ``path`` that hold any of the lines ``spans``, in file
    order: definitions the question names, shown as the units the file is cut into, so a
    context that also holds the file's best units shows each line once. Empty unless the
    profile answers with units or when the index holds no lines of the file."""
    if not index.config.profile.units or not spans:
        return []
    stored = index.get_file(path)
    if stored is None:
        return []
    found = cut_of(index, path, stored.type)
    if found is None:
        return []
    return [
        _unit_source(found, ScoredUnit(unit, 0.0), path, stored.type, score)
        for unit in found.units
        if any(unit.start <= last and first <= unit.end for first, last in spans)
    ]


def image_score(question_tokens: frozenset[str], image_path: str) -> int:
    """+10 per question token in the image path, else +6 when an alias of it is."""
    in_path = path_tokens(image_path)
    score = 0
    for token in question_tokens:
        if token in in_path:
            score += IMAGE_TOKEN
        elif any(alias in in_path for alias in _ALIASES_OF.get(token, ())):
            score += IMAGE_ALIAS
    return score


def _images_by_token(index: IndexStore) -> dict[str, tuple[str, ...]]:
    """The image paths holding each path token, kept until the index changes."""

    def build() -> dict[str, tuple[str, ...]]:
        found: dict[str, list[str]] = {}
        for path in index.image_paths():
            for token in path_tokens(path):
                found.setdefault(token, []).append(path)
        return {token: tuple(paths) for token, paths in found.items()}

    return index.derived("images.by_token", build)


def retrieve_images(
    question: str,
    limit: int = DEFAULT_IMAGE_LIMIT,
    *,
    index: IndexStore | None = None,
    root: Path | str = ".",
) -> list[Image]:
    """Images whose path matches the question, best first (ties by path)."""
    clean = require_question(question)
    if index is None:
        with load_index(root) as opened:
            return retrieve_images(clean, limit, index=opened)
    question_tokens = frozenset(tokens(clean))
    by_token = _images_by_token(index)
    asked = {alias for token in question_tokens for alias in _ALIASES_OF.get(token, ())}
    # only an image holding a question token or an alias of one can score
    paths = {path for token in question_tokens | asked for path in by_token.get(token, ())}
    scored = [(image_score(question_tokens, path), path) for path in paths]
    ranked = sorted((item for item in scored if item[0] > 0), key=lambda item: (-item[0], item[1]))
    return [Image(path=path, url=f"/{path}", score=score) for score, path in ranked[:limit]]
