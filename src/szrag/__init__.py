"""szrag: grounded answers about a code repository and the application running from it."""

from __future__ import annotations

from szrag.activity import Activity
from szrag.answer import answer_question, answer_question_async, debug_question
from szrag.errors import (
    CommandError,
    ConfigError,
    IndexStoreError,
    PathError,
    ProviderError,
    QuestionError,
    SzragError,
    ToolError,
)
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
    "DebugReport",
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
    "__version__",
    "answer_question",
    "answer_question_async",
    "build_index",
    "debug_question",
    "load_index",
    "refresh_index",
    "retrieve",
    "retrieve_images",
]
