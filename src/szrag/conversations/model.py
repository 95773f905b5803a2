"""The records of conversation memory and feedback, and the bounds of what is kept.

A :class:`Conversation` is a sequence of :class:`Turn` records: each answered question with the
answer's text, the sources it showed (paths and line ranges, never their text) and the commit
it was made from. :class:`Feedback` refers to one turn by its ``answer_id`` and copies what it
needs (question, sources, commit), so it outlives the turn.

Bounds (:class:`ConversationLimits`), strongest first: ``SZRAG_CONVERSATION_TURNS``,
``SZRAG_CONVERSATION_MAX_AGE_HOURS``, ``SZRAG_CONVERSATION_TOKENS``, then the repository's
``[conversations]`` table (``turns``, ``max_age_hours``, ``tokens``), then the defaults: the
last 10 turns of a conversation, for 7 days, and at most 4,000 tokens of them given to the
model.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from szrag.base.config import ConversationConfig
from szrag.base.env import number as env_number
from szrag.base.errors import ConversationError
from szrag.base.public import public, utc_timestamp

_TIMESTAMP = public(convert=utc_timestamp)

TURNS_SETTING = "SZRAG_CONVERSATION_TURNS"
AGE_SETTING = "SZRAG_CONVERSATION_MAX_AGE_HOURS"
TOKENS_SETTING = "SZRAG_CONVERSATION_TOKENS"
DEFAULT_TURNS = 10
DEFAULT_MAX_AGE_HOURS = 7 * 24.0
DEFAULT_TOKENS = 4000
MAX_CONVERSATIONS = 10_000  # a store keeps the conversations used last, this many at most
MAX_ID_CHARS = 200
_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._:@/+=-]{{0,{MAX_ID_CHARS - 1}}}")


def new_id() -> str:
    """A fresh random id (16 hexadecimal digits) for a conversation or an answer."""
    return secrets.token_hex(8)


def checked_id(value: object, what: str = "conversation") -> str:
    """``value`` as an id (letters, digits and ``._:@/+=-``, at most 200 characters, as a
    caller-chosen key such as ``slack:C0123:1712.0001`` is); ConversationError otherwise."""
    text = value.strip() if isinstance(value, str) else ""
    if not _ID.fullmatch(text):
        raise ConversationError(
            f"{what} id {str(value)[:60]!r} is not an id: letters, digits and ._:@/+=- "
            f"only, at most {MAX_ID_CHARS} characters"
        )
    return text


@dataclass(frozen=True, slots=True)
class ConversationLimits:
    """How much of a conversation is kept and how much of it a model request carries."""

    turns: int = DEFAULT_TURNS  # the last turns kept per conversation
    max_age_seconds: float = DEFAULT_MAX_AGE_HOURS * 3600  # older turns are forgotten
    tokens: int = DEFAULT_TOKENS  # earlier turns given to the model, oldest dropped first
    conversations: int = MAX_CONVERSATIONS

    @classmethod
    def of(
        cls, config: ConversationConfig | None = None, environ: Mapping[str, str] | None = None
    ) -> ConversationLimits:
        """The limits ``environ`` and the repository's ``[conversations]`` describe."""
        config = config or ConversationConfig()
        env = environ or {}
        turns = env_number(
            env, TURNS_SETTING, config.turns or DEFAULT_TURNS, positive=True, integer=True
        )
        hours = env_number(
            env, AGE_SETTING, config.max_age_hours or DEFAULT_MAX_AGE_HOURS, positive=True
        )
        tokens = env_number(env, TOKENS_SETTING, config.tokens or DEFAULT_TOKENS, integer=True)
        return cls(turns=int(turns), max_age_seconds=hours * 3600, tokens=int(tokens))

    @property
    def max_age_hours(self) -> float:
        """The age bound in hours, for messages."""
        return self.max_age_seconds / 3600


@dataclass(frozen=True, slots=True)
class ShownSource:
    """A source an answer showed: its file and lines (1-based, inclusive)."""

    path: str
    start: int
    end: int

    def __str__(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation: who started it from which face, and when it was last used."""

    id: str = field(metadata=public(name="conversationId"))
    face: str  # cli, api, slack, library...
    # the identity that started it; None: anyone who knows the id
    owner: str | None = field(metadata=public(hidden=True))
    started_at: float = field(metadata=_TIMESTAMP)  # epoch seconds
    updated_at: float = field(metadata=_TIMESTAMP)
    # the repository of a service it is about; empty where the store holds one repository
    repository: str = field(default="", metadata=public(omit_empty=True))


@dataclass(frozen=True, slots=True)
class Turn:
    """One answered question of a conversation, as it is kept."""

    answer_id: str
    conversation_id: str
    question: str  # as the model saw it: a secret the question held for a command withheld
    answer: str
    outcome: str  # szrag.answer.results.Outcome's value
    sources: tuple[ShownSource, ...]
    commit: str | None  # the running application's commit, else the checkout's HEAD
    asked_at: float = field(metadata=_TIMESTAMP)  # epoch seconds

    @property
    def model_answered(self) -> bool:
        """Whether a model wrote the answer (else it is a local answer: retrieval alone)."""
        return self.outcome == "answered"


class Rating(StrEnum):
    """What the asker thought of an answer."""

    UP = "up"
    DOWN = "down"


@dataclass(frozen=True, slots=True)
class Feedback:
    """Feedback on one answer, with what it was about copied from the turn."""

    answer_id: str
    conversation_id: str
    rating: Rating
    right_files: tuple[str, ...]  # "the right file was ...": indexed paths
    comment: str | None
    question: str
    sources: tuple[ShownSource, ...]
    cited_files: tuple[str, ...]  # the files of the sources the answer cites by path
    commit: str | None
    given_at: float = field(metadata=_TIMESTAMP)  # epoch seconds
    # the identity that gave it (one feedback per answer and identity)
    given_by: str = field(metadata=public(hidden=True))
    # the repository of a service the answer was about; empty where the store holds one
    repository: str = field(default="", metadata=public(omit_empty=True))

    @property
    def expected_files(self) -> tuple[str, ...]:
        """The files a question like this should retrieve: the right files when given, else
        (for ``up``) the cited files; nothing for a ``down`` without right files."""
        if self.right_files:
            return self.right_files
        return self.cited_files if self.rating is Rating.UP else ()
