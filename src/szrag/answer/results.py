"""The typed results of the library's two questions: :class:`Answer` (``answer_question``) and
:class:`DebugReport` (``debug_question``), with the records they hold.

A result says what happened in ``outcome``; ``to_dict()`` writes the public JSON (the spec's
shapes, camelCase) through :mod:`szrag.base.public`, the one serialisation boundary:

* ``answered`` / ``model_failed``: ``{answer, responseRounds, sources, images, command,
  activities, trace, usage}`` (``model_failed`` adds ``error: {code, message}``);
* ``not_asked`` (the caller turned the model off): ``{answer, sources, images, command,
  activities, context}``;
* ``no_model`` (no provider key): ``{answer, sources, images, command, activities}``.

An answer kept in a conversation adds ``answerId`` (what feedback refers to) and
``conversationId`` (what a follow-up continues), whatever its outcome.

Sources and code texts in a result are redacted already: a result is what a caller may show.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from szrag.base.activity import Activity
from szrag.base.public import public
from szrag.commands.model import Response
from szrag.context import CodebaseContext, PackedContext
from szrag.llm.loop import Usage
from szrag.rank.retrieve import Image, Source

__all__ = [
    "Answer",
    "CommandReport",
    "DebugReport",
    "InferredCommand",
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
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "id": self.id,
            "command": self.command,
            "responses": [response.to_dict() for response in self.responses],
        }
        if self.error is not None:
            record["error"] = self.error
        return record


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

    @property
    def asked_model(self) -> bool:
        """Whether a model request was made."""
        return self.outcome in (Outcome.ANSWERED, Outcome.MODEL_FAILED)

    def to_dict(self) -> dict[str, Any]:
        """The public JSON in the shape of the outcome (see the module)."""
        record = self._outcome_dict()
        if self.answer_id is not None:
            record["answerId"] = self.answer_id
        if self.conversation_id is not None:
            record["conversationId"] = self.conversation_id
        return record

    def _outcome_dict(self) -> dict[str, Any]:
        activities = [activity.to_dict() for activity in self.activities]
        evidence = {
            "sources": public(self.sources),
            "images": public(self.images),
            "command": self.command.to_dict() if self.command else None,
        }
        if self.asked_model:
            record = {
                "answer": self.answer,
                "responseRounds": self.response_rounds,
                **evidence,
                "activities": activities,
                "trace": list(activities),
                "usage": (self.usage or Usage()).to_dict(),
            }
            if self.error is not None:
                record["error"] = public(self.error)
            if self.running_commit is not None:
                record["runningCommit"] = self.running_commit
            return record
        record = {"answer": self.answer, **evidence, "activities": activities}
        if self.outcome is Outcome.NOT_ASKED and self.context is not None:
            record["context"] = self.context.to_dict()
        return record


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
        return {
            "question": self.question,
            "command": public(self.command),
            "commandOriented": self.command_oriented,
            "sources": public(self.sources),
            "images": public(self.images),
            "codebaseContext": (
                self.codebase_context.to_dict() if self.codebase_context is not None else None
            ),
            "context": self.context.to_dict(),
            "activities": [activity.to_dict() for activity in self.activities],
            "notes": list(self.notes),
        }
