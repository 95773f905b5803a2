"""szrag: grounded answers about a code repository and the application running from it.

The names below are imported on first use (PEP 562), so a command that only retrieves does not
pay for the answer pipeline, the model client or the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from szrag.lazy import lazy_getattr
from szrag.version import __version__

if TYPE_CHECKING:
    from szrag.activity import Activity
    from szrag.answer import NamedCommand, Question
    from szrag.configuration import Config, load_config
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
    from szrag.host import Host, answer_question, answer_question_async, debug_question
    from szrag.index import Index, build_index, load_index, refresh_index
    from szrag.results import Answer, DebugReport, Outcome
    from szrag.retrieve import Image, Source, retrieve, retrieve_images

_HOMES = {
    "Activity": "szrag.activity",
    "answer_question": "szrag.host",
    "answer_question_async": "szrag.host",
    "debug_question": "szrag.host",
    "NamedCommand": "szrag.answer",
    "Question": "szrag.answer",
    "Config": "szrag.configuration",
    "load_config": "szrag.configuration",
    "ConversationStore": "szrag.conversations",
    "Feedback": "szrag.conversations",
    "Turn": "szrag.conversations",
    "CommandError": "szrag.errors",
    "ConfigError": "szrag.errors",
    "IndexStoreError": "szrag.errors",
    "PathError": "szrag.errors",
    "ProviderError": "szrag.errors",
    "QuestionError": "szrag.errors",
    "SzragError": "szrag.errors",
    "ToolError": "szrag.errors",
    "UnknownAnswer": "szrag.errors",
    "UnknownConversation": "szrag.errors",
    "give_feedback": "szrag.feedback",
    "Host": "szrag.host",
    "Index": "szrag.index",
    "build_index": "szrag.index",
    "load_index": "szrag.index",
    "refresh_index": "szrag.index",
    "Answer": "szrag.results",
    "DebugReport": "szrag.results",
    "Outcome": "szrag.results",
    "Image": "szrag.retrieve",
    "Source": "szrag.retrieve",
    "retrieve": "szrag.retrieve",
    "retrieve_images": "szrag.retrieve",
}


__getattr__ = lazy_getattr(__name__, _HOMES)


__all__ = [
    "Activity",
    "Answer",
    "CommandError",
    "Config",
    "ConfigError",
    "ConversationStore",
    "DebugReport",
    "Feedback",
    "Host",
    "Image",
    "Index",
    "IndexStoreError",
    "NamedCommand",
    "Outcome",
    "PathError",
    "ProviderError",
    "Question",
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
    "load_config",
    "load_index",
    "refresh_index",
    "retrieve",
    "retrieve_images",
]
