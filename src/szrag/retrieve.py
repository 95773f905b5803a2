"""Retrieval: the source chunks and images that answer a question.

The profile's ranker (``szrag.rank``) orders the chunks, one per file; this module turns them
into sources with their text, and scores images by their paths as the original does.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from szrag.errors import IndexStoreError, QuestionError
from szrag.index import Index, load_index
from szrag.rank import Query, ranker_named
from szrag.redact import redact, redact_for_display
from szrag.text import path_tokens, tokens

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
        return asdict(self)

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
        return asdict(self)


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
    index: Index | None = None,
    root: Path | str = ".",
    ranker: str | None = None,
) -> list[Source]:
    """The chunks that best answer ``question``: at most one per file, best first.

    ``ranker`` overrides the profile's ranker: ``spec`` (the original's scorer) or ``bm25``.
    """
    clean = require_question(question)
    if index is None:
        with load_index(root) as opened:
            return retrieve(clean, limit, index=opened, ranker=ranker)
    chosen_ranker = ranker_named(ranker or index.config.profile.ranker)
    try:
        with index.reading():
            return _retrieve(index, clean, limit, chosen_ranker.name)
    except (sqlite3.DatabaseError, KeyError, ValueError) as error:
        raise IndexStoreError(
            f"the index at {index.path} could not be read ({error}); `szrag index --rebuild` replaces it"
        ) from error


def _retrieve(index: Index, question: str, limit: int, ranker: str) -> list[Source]:
    query = Query.parse(question, index.config.extensions)
    chosen = ranker_named(ranker).rank(index, query, limit, fill=index.config.profile.fill)
    texts = index.chunk_texts([candidate.chunk_id for candidate in chosen])
    return [
        Source(
            path=candidate.path,
            start=candidate.start,
            end=candidate.end,
            type=candidate.type,
            heading=candidate.heading,
            text=texts[candidate.chunk_id][:MAX_SOURCE_LENGTH],
            score=candidate.score,
        )
        for candidate in chosen
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


def _images_by_token(index: Index) -> dict[str, tuple[str, ...]]:
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
    index: Index | None = None,
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
