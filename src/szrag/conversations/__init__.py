"""Conversation memory for every face: the store and its records (what earlier turns give a
new question is ``szrag.answer.history``, part of the pipeline).

A face (the CLI's ``--continue`` and ``chat``, the API's ``conversationId``, a Slack thread)
hands ``answer_question`` a conversation id; the answer pipeline reads the kept turns, searches
a follow-up with the questions it follows, gives the model the earlier turns as messages and
keeps the new turn. Callers who manage conversations themselves use the store::

    store = host.conversations                            # .rag/conversations.db
    thread = store.start("slack:T01:C0123:1712.0001", face="slack", owner="slack")   # started on first use
    answer = await answer_question_async(text, host, conversation_id=thread.id)
    store.turns(thread.id)                                # the kept turns, oldest first

Every store is a :class:`ConversationMemory` (``protocol.py``): the SQLite file of one
repository or of a service (``store.py``), or PostgreSQL tables shared by the replicas of a
service (``pg.py``); :func:`open_conversation_store` opens either from where it is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from szrag.conversations.model import (
    Conversation,
    ConversationLimits,
    Feedback,
    Rating,
    ShownSource,
    Turn,
    checked_id,
    new_id,
)
from szrag.conversations.protocol import AuditLine, AuditSink, ConversationMemory
from szrag.conversations.store import ConversationStore, store_path

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_conversation_store(
    location: Path | str,
    limits: ConversationLimits | None = None,
    *,
    clock: Callable[[], float] = time.time,
) -> ConversationMemory:
    """The conversation store at ``location``: a ``postgresql://`` URL (tables in that
    database, migrated on first use; ConversationStoreError when it cannot be reached), else
    the path of a SQLite file (opened when first used)."""
    if isinstance(location, str) and location.startswith(POSTGRES_SCHEMES):
        from szrag.conversations.pg import PostgresConversations  # psycopg only when asked

        return PostgresConversations(location, limits, clock=clock)
    return ConversationStore(location, limits, clock=clock)


__all__ = [
    "AuditLine",
    "AuditSink",
    "Conversation",
    "ConversationLimits",
    "ConversationMemory",
    "ConversationStore",
    "Feedback",
    "Rating",
    "ShownSource",
    "Turn",
    "checked_id",
    "new_id",
    "open_conversation_store",
    "store_path",
]
