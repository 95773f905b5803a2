"""szrag: grounded answers about a code repository and the application running from it.

The names below are imported on first use (PEP 562), so a command that only retrieves does not
pay for the answer pipeline, the model client or the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from szrag.base.lazy import lazy_getattr
from szrag.version import __version__

if TYPE_CHECKING:
    from szrag.answer import NamedCommand, Question
    from szrag.answer.results import Answer, DebugReport, Outcome
    from szrag.base.activity import Activity
    from szrag.base.errors import (
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
    from szrag.conversations import ConversationStore, Feedback, Turn
    from szrag.index import Index, build_index, load_index, refresh_index
    from szrag.rank.retrieve import Image, Source, retrieve, retrieve_images
    from szrag.service.configuration import Config, load_config
    from szrag.service.feedback import give_feedback
    from szrag.service.host import Host, answer_question, answer_question_async, debug_question

_HOMES = {
    "Activity": "szrag.base.activity",
    "answer_question": "szrag.service.host",
    "answer_question_async": "szrag.service.host",
    "debug_question": "szrag.service.host",
    "NamedCommand": "szrag.answer",
    "Question": "szrag.answer",
    "Config": "szrag.service.configuration",
    "load_config": "szrag.service.configuration",
    "ConversationStore": "szrag.conversations",
    "Feedback": "szrag.conversations",
    "Turn": "szrag.conversations",
    "CommandError": "szrag.base.errors",
    "ConfigError": "szrag.base.errors",
    "IndexStoreError": "szrag.base.errors",
    "PathError": "szrag.base.errors",
    "ProviderError": "szrag.base.errors",
    "QuestionError": "szrag.base.errors",
    "SzragError": "szrag.base.errors",
    "ToolError": "szrag.base.errors",
    "UnknownAnswer": "szrag.base.errors",
    "UnknownConversation": "szrag.base.errors",
    "give_feedback": "szrag.service.feedback",
    "Host": "szrag.service.host",
    "Index": "szrag.index",
    "build_index": "szrag.index",
    "load_index": "szrag.index",
    "refresh_index": "szrag.index",
    "Answer": "szrag.answer.results",
    "DebugReport": "szrag.answer.results",
    "Outcome": "szrag.answer.results",
    "Image": "szrag.rank.retrieve",
    "Source": "szrag.rank.retrieve",
    "retrieve": "szrag.rank.retrieve",
    "retrieve_images": "szrag.rank.retrieve",
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
