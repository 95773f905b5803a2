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
"""

from __future__ import annotations

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
from szrag.conversations.store import ConversationStore, store_path

__all__ = [
    "Conversation",
    "ConversationLimits",
    "ConversationStore",
    "Feedback",
    "Rating",
    "ShownSource",
    "Turn",
    "checked_id",
    "new_id",
    "store_path",
]
