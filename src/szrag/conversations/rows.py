"""Kept records from database rows, as both conversation stores read them.

The columns are the same in both; only how a list is kept differs (SQLite: JSON text,
PostgreSQL: ``jsonb`` values already decoded), so each store passes its ``decode``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from szrag.conversations.model import Conversation, Feedback, Rating, ShownSource, Turn

Decode = Callable[[Any], Any]


def sources_value(sources: tuple[ShownSource, ...]) -> list[list[object]]:
    """Shown sources as the list a row keeps: ``[path, start, end]`` each."""
    return [[source.path, source.start, source.end] for source in sources]


def _sources(value: Any) -> tuple[ShownSource, ...]:
    return tuple(ShownSource(str(path), int(start), int(end)) for path, start, end in value)


def conversation_of(row: Mapping[str, Any]) -> Conversation:
    """The conversation a row of the conversations table holds."""
    return Conversation(
        id=row["id"],
        face=row["face"],
        owner=row["owner"],
        started_at=row["started_at"],
        updated_at=row["updated_at"],
        repository=row["repository"],
    )


def turn_of(row: Mapping[str, Any], decode: Decode) -> Turn:
    """The turn a row of the turns table holds."""
    return Turn(
        answer_id=row["answer_id"],
        conversation_id=row["conversation_id"],
        question=row["question"],
        answer=row["answer"],
        outcome=row["outcome"],
        sources=_sources(decode(row["sources"])),
        commit=row["commit_id"],
        asked_at=row["asked_at"],
    )


def feedback_of(row: Mapping[str, Any], decode: Decode) -> Feedback:
    """The feedback a row of the feedback table holds."""
    return Feedback(
        answer_id=row["answer_id"],
        conversation_id=row["conversation_id"],
        rating=Rating(row["rating"]),
        right_files=tuple(decode(row["right_files"])),
        comment=row["comment"],
        question=row["question"],
        sources=_sources(decode(row["sources"])),
        cited_files=tuple(decode(row["cited_files"])),
        commit=row["commit_id"],
        given_at=row["given_at"],
        given_by=row["given_by"],
        repository=row["repository"],
    )
