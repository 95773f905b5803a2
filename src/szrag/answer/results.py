"""The typed results of the library's two questions: :class:`Answer` (``answer_question``) and
:class:`DebugReport` (``debug_question``), with the records they hold.

A result says what happened in ``outcome``; its public JSON (the spec's shapes, camelCase) is
made by :func:`szrag.base.public.to_public`, the one serialisation boundary, from the record of the
outcome's shape (:meth:`Answer.public_view`):

* ``answered`` / ``model_failed``: ``{answer, responseRounds, sources, images, command,
  activities, trace, usage}`` (``model_failed`` adds ``error: {code, message}``);
* ``not_asked`` (the caller turned the model off): ``{answer, sources, images, command,
  activities, context}``;
* ``no_model`` (no provider key): ``{answer, sources, images, command, activities}``.

An answer kept in a conversation adds ``answerId`` (what feedback refers to) and
``conversationId`` (what a follow-up continues), whatever its outcome. An answer of a service
over several repositories to a question that named none adds ``otherSources`` when other
repositories' files were offered beside its own (``{repository, path, start, end, type,
heading, text, score, sharedScore}`` each).

Sources and code texts in a result are redacted already: a result is what a caller may show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from szrag.answer.elsewhere import MergedSource
from szrag.base.activity import Activity
from szrag.base.public import public, public_dict
from szrag.commands.model import Response
from szrag.context import CodebaseContext, PackedContext
from szrag.llm.usage import Usage
from szrag.rank.retrieve import Image, Source

__all__ = [
    "Answer",
    "CommandReport",
    "DebugReport",
    "InferredCommand",
    "LocalAnswer",
    "ModelAnswer",
    "ModelFailure",
    "Outcome",
    "Usage",
]


class Outcome(StrEnum):
    """How a question was answered."""

    ANSWERED = "answered"  # the model answered
    MODEL_FAILED = "model_failed"  # the model was asked and failed: a local answer says why
    NO_MODEL = "no_model"  # no provider key: the answer comes from retrieval alone
    NOT_ASKED = "not_asked"  # the caller turned the model off


@dataclass(frozen=True, slots=True)
class CommandReport:
    """The command run for a question: the spec's ``{id, command, responses}``, and
    ``error`` when it was refused or failed."""

    id: str
    command: str
    responses: tuple[Response, ...] = ()
    error: str | None = field(default=None, metadata=public(omit_none=True))


@dataclass(frozen=True, slots=True)
class ModelFailure:
    """Why the model did not answer: a stable code and a message fit to show."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer to one question and everything it was made from."""

    outcome: Outcome
    answer: str
    sources: tuple[Source, ...]
    images: tuple[Image, ...]
    command: CommandReport | None
    activities: tuple[Activity, ...]
    response_rounds: int = 0
    usage: Usage | None = None
    context: PackedContext | None = None  # the packed context, when the model was not asked
    error: ModelFailure | None = None
    running_commit: str | None = None  # the commit the running application was built from
    answer_id: str | None = None  # set when the answer is kept in a conversation
    conversation_id: str | None = None
    elsewhere: tuple[MergedSource, ...] = ()  # other repositories' sources, redacted

    @property
    def asked_model(self) -> bool:
        """Whether a model request was made."""
        return self.outcome in (Outcome.ANSWERED, Outcome.MODEL_FAILED)

    def public_view(self) -> ModelAnswer | LocalAnswer:
        """The record of the outcome's shape (see the module)."""
        if self.asked_model:
            return ModelAnswer(
                answer=self.answer,
                response_rounds=self.response_rounds,
                sources=self.sources,
                images=self.images,
                command=self.command,
                activities=self.activities,
                trace=self.activities,
                usage=self.usage or Usage(),
                error=self.error,
                running_commit=self.running_commit,
                answer_id=self.answer_id,
                conversation_id=self.conversation_id,
                other_sources=self.elsewhere,
            )
        return LocalAnswer(
            answer=self.answer,
            sources=self.sources,
            images=self.images,
            command=self.command,
            activities=self.activities,
            context=self.context if self.outcome is Outcome.NOT_ASKED else None,
            answer_id=self.answer_id,
            conversation_id=self.conversation_id,
            other_sources=self.elsewhere,
        )

    def to_dict(self) -> dict[str, Any]:
        """The public JSON in the shape of the outcome (see the module)."""
        return public_dict(self)


_OMIT_NONE = public(omit_none=True)
_OMIT_EMPTY = public(omit_empty=True)


@dataclass(frozen=True, slots=True)
class ModelAnswer:
    """An answer the model was asked for, as it is shown (``answered``, ``model_failed``)."""

    answer: str
    response_rounds: int
    sources: tuple[Source, ...]
    images: tuple[Image, ...]
    command: CommandReport | None
    activities: tuple[Activity, ...]
    trace: tuple[Activity, ...]  # a copy of the activities, as the spec has it
    usage: Usage
    error: ModelFailure | None = field(default=None, metadata=_OMIT_NONE)
    running_commit: str | None = field(default=None, metadata=_OMIT_NONE)
    answer_id: str | None = field(default=None, metadata=_OMIT_NONE)
    conversation_id: str | None = field(default=None, metadata=_OMIT_NONE)
    other_sources: tuple[MergedSource, ...] = field(default=(), metadata=_OMIT_EMPTY)


@dataclass(frozen=True, slots=True)
class LocalAnswer:
    """An answer made without a model, as it is shown (``no_model``, ``not_asked``: the
    latter with its packed context)."""

    answer: str
    sources: tuple[Source, ...]
    images: tuple[Image, ...]
    command: CommandReport | None
    activities: tuple[Activity, ...]
    context: PackedContext | None = field(default=None, metadata=_OMIT_NONE)
    answer_id: str | None = field(default=None, metadata=_OMIT_NONE)
    conversation_id: str | None = field(default=None, metadata=_OMIT_NONE)
    other_sources: tuple[MergedSource, ...] = field(default=(), metadata=_OMIT_EMPTY)


@dataclass(frozen=True, slots=True)
class InferredCommand:
    """The command a question asks for, as debug shows it (not run); ``text`` is None when
    it holds a secret."""

    id: str
    text: str | None


@dataclass(frozen=True, slots=True)
class DebugReport:
    """Everything the model would be given for a question, nothing run and no model asked."""

    question: str  # with any secret it carried withheld
    command: InferredCommand | None
    command_oriented: bool
    sources: tuple[Source, ...]
    images: tuple[Image, ...]
    codebase_context: CodebaseContext | None
    context: PackedContext
    activities: tuple[Activity, ...]
    notes: tuple[str, ...] = ()  # what was cut from the sources, and where nothing parsed

    def to_dict(self) -> dict[str, Any]:
        return public_dict(self)


@dataclass(frozen=True, slots=True)
class ScopedAnswer:
    """An answer of a service over several repositories, with the repository it is from."""

    answer: Answer = field(metadata=public(spread=True))
    repository: str
