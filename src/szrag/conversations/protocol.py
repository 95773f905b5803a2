"""What the rest of szrag asks of a conversation store, whatever keeps it.

Two stores implement :class:`ConversationMemory`: :class:`~szrag.conversations.ConversationStore`
(SQLite: a repository's ``.rag/conversations.db``, or a service's file) and
:class:`~szrag.conversations.pg.PostgresConversations` (tables in a PostgreSQL database that
several replicas share). :func:`~szrag.conversations.open_conversation_store` opens either
from a path or a ``postgresql://`` URL.

One store may hold the conversations of several repositories (a service's): each
conversation, and the feedback on its answers, records the repository it is about, and
``for_repository`` gives the store as one repository sees it (the same database, that
repository's conversations only, pruned by its own limits). A store of one repository
(``--root``) records none: its repository is the empty name. ``repository_of`` tells which
repository a conversation is about in one lookup.

A store may also keep the audit log (``audit_sink``): the PostgreSQL store does, so replicas
write one log; a SQLite store leaves it to a file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from szrag.conversations.model import Conversation, ConversationLimits, Feedback, Turn


@dataclass(frozen=True, slots=True)
class AuditLine:
    """One line of the audit log as a store keeps it: its repository, event and JSON text."""

    repository: str  # empty: a store of one repository
    event: str  # ask, command
    text: str  # the entry as one JSON object, exactly as a file would hold it


class AuditSink(Protocol):
    """Where audit lines are appended and read back, oldest first."""

    def append(self, line: AuditLine) -> None:
        """Keep ``line`` after every line kept before (OSError or a store error on failure)."""
        ...

    def lines(self, limit: int | None = None) -> list[str]:
        """The JSON texts kept, oldest first (the last ``limit`` when given)."""
        ...


class ConversationMemory(Protocol):
    """Conversations, their last turns and the feedback on answers (see the module)."""

    limits: ConversationLimits
    clock: Callable[[], float]  # the store's notion of now, in epoch seconds

    @property
    def repository(self) -> str:
        """The repository this store is seen by ("" for a store of one repository)."""
        ...

    @property
    def location(self) -> str:
        """Where it is kept, as messages name it (a path, or a URL without its password)."""
        ...

    def for_repository(
        self, repository: str, limits: ConversationLimits | None = None
    ) -> ConversationMemory:
        """The same store as ``repository`` sees it, pruned by ``limits`` (default: these)."""
        ...

    def repository_of(self, conversation_id: str) -> str | None:
        """The repository a kept conversation is about (whoever asks), None when none is kept."""
        ...

    def repository_of_answer(self, answer_id: str) -> str | None:
        """The repository of the conversation a kept answer belongs to, None when none is kept."""
        ...

    def start(
        self,
        conversation_id: str | None = None,
        *,
        face: str = "library",
        owner: str | None = None,
    ) -> Conversation:
        """A new conversation (a random id), or the one of a caller-chosen id, started on
        first use; ConversationError when that id is another repository's."""
        ...

    def start_with(self, turn: Turn, *, face: str = "library", owner: str | None = None) -> Turn:
        """``start`` the conversation of ``turn`` and ``append`` the turn, in one transaction."""
        ...

    def get(self, conversation_id: str, *, owner: str | None = None) -> Conversation:
        """The kept conversation of this repository; UnknownConversation otherwise (or when
        ``owner`` is given and another identity owns it)."""
        ...

    def latest(self, face: str, *, owner: str | None = None) -> Conversation | None:
        """The conversation of ``face`` used last, when one is still kept."""
        ...

    def append(self, turn: Turn) -> Turn:
        """Keep ``turn`` in its conversation (which must be kept), then prune by the bounds."""
        ...

    def turns(self, conversation_id: str) -> tuple[Turn, ...]:
        """The kept turns of a conversation, oldest first (none for an unknown id)."""
        ...

    def turn(self, answer_id: str, *, owner: str | None = None) -> Turn:
        """The kept turn of ``answer_id``; UnknownAnswer when there is none."""
        ...

    def add_feedback(self, feedback: Feedback) -> Feedback:
        """Keep ``feedback`` (tagged with this repository); it replaces what the same identity
        said of the same answer."""
        ...

    def feedback(self) -> list[Feedback]:
        """Every feedback kept on this repository's answers, oldest first."""
        ...

    def audit_sink(self) -> AuditSink | None:
        """Where the audit log is kept beside the conversations (None: a file of its own)."""
        ...

    def close(self) -> None:
        """Let go of connections (a SQLite store opens one again when next used)."""
        ...
