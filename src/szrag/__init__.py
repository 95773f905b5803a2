"""szrag: grounded answers about a code repository and the application running from it."""

from __future__ import annotations

from szrag.activity import Activity
from szrag.answer import answer_question, answer_question_async, debug_question
from szrag.conversations import ConversationStore, Feedback, Turn
from szrag.errors import (
    CommandError,
    ConfigError,
    IndexStoreError,
    PathError,
    ProviderError,
    QuestionError,
    SzragError,
    ToolError,
    UnknownAnswer,
    UnknownConversation,
)
from szrag.feedback import give_feedback
from szrag.host import Host
from szrag.index import Index, build_index, load_index, refresh_index
from szrag.results import Answer, DebugReport, Outcome
from szrag.retrieve import Image, Source, retrieve, retrieve_images
from szrag.version import __version__

__all__ = [
    "Activity",
    "Answer",
    "CommandError",
    "ConfigError",
    "ConversationStore",
    "DebugReport",
    "Feedback",
    "Host",
    "Image",
    "Index",
    "IndexStoreError",
    "Outcome",
    "PathError",
    "ProviderError",
    "QuestionError",
    "Source",
    "SzragError",
    "ToolError",
    "Turn",
    "UnknownAnswer",
    "UnknownConversation",
    "__version__",
    "answer_question",
    "answer_question_async",
    "build_index",
    "debug_question",
    "give_feedback",
    "load_index",
    "refresh_index",
    "retrieve",
    "retrieve_images",
]
