"""What goes down the pipeline: a :class:`Question` as a face parsed it, and the
:class:`Admitted` question a host let in (its command's permit and its conversation, each
checked once)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from szrag.answer.elsewhere import MergedSource
from szrag.base.activity import OnActivity
from szrag.commands.model import Identity, Permit
from szrag.rank.retrieve import DEFAULT_LIMIT

if TYPE_CHECKING:
    from szrag.conversations import Conversation
    from szrag.llm.loop import OnToken

# The owner of every Slack thread's conversation: everyone in the thread continues it there; no
# API caller's identity is ever this, so a thread's id sent to POST /api/ask is unknown there.
SLACK_OWNER = "slack"
LOCAL_FACES = frozenset({"host", "cli"})  # a person at their own machine: any kept conversation


@dataclass(frozen=True, slots=True)
class NamedCommand:
    """A command the caller names explicitly (``commandId``), with its input."""

    id: str
    text: str = ""


@dataclass(frozen=True, slots=True)
class Listeners:
    """Who hears the answer as it is made: each activity as it happens, the model's text as it
    streams (``on_token(text, round)``)."""

    on_activity: OnActivity | None = None
    on_token: OnToken | None = None


@dataclass(frozen=True, slots=True)
class Question:
    """One question as a face asks it.

    ``face`` says where it came from (``host``: a library call, ``cli``, ``api``, ``slack``):
    the ask is audited under it and a named command runs for it under the host's policy.
    ``tools`` (default: the host's setting) offers the model the live tools, the admin-only
    ones when ``privileged``. ``conversation_id`` continues a kept conversation; ``remember``
    keeps the turn in a new one (owned by ``identity``, of ``face``) when no id is given.
    ``budget`` (tokens of repository context) wins over the configured one. ``elsewhere``:
    the sources of a service's other repositories offered beside this one's (a question
    asked of no repository, routed here)."""

    text: str
    with_ai: bool = True
    command: NamedCommand | None = None
    identity: Identity = field(default_factory=Identity.local)
    face: str = "host"
    tools: bool | None = None
    privileged: bool = True
    limit: int = DEFAULT_LIMIT
    budget: int | None = None
    conversation_id: str | None = None
    remember: bool = False
    listeners: Listeners = Listeners()
    elsewhere: tuple[MergedSource, ...] = ()

    @property
    def command_id(self) -> str | None:
        """The id of the command the question names, if it names one."""
        return self.command.id if self.command is not None else None

    @property
    def conversation_owner(self) -> str | None:
        """Who must own a continued conversation: nobody for a person at their own machine
        (a library call, the CLI), the Slack face in Slack, else the identity that asks."""
        if self.face in LOCAL_FACES:
            return None
        return SLACK_OWNER if self.face == "slack" else self.identity.user_id

    def heard_by(
        self, on_activity: OnActivity | None = None, on_token: OnToken | None = None
    ) -> Question:
        """This question with these listeners."""
        return replace(self, listeners=Listeners(on_activity, on_token))


@dataclass(frozen=True, slots=True)
class Admitted:
    """A question its host let in: the text checked (``require_question``), the permit of the
    command it names and the conversation it continues, each looked up once."""

    question: Question
    text: str
    permit: Permit | None = None
    conversation: Conversation | None = None

    def heard_by(
        self, on_activity: OnActivity | None = None, on_token: OnToken | None = None
    ) -> Admitted:
        """This admitted question with these listeners (a stream's, once it starts)."""
        return replace(self, question=self.question.heard_by(on_activity, on_token))
