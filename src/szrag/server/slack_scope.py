"""Which repository a Slack question is about, on a server of several repositories.

In order, the first that applies:

1. a thread the bot answers in keeps the repository its conversation began in (a follow-up
   never moves to another repository's store; an ``in:NAME`` word in it is dropped);
2. a word ``in:NAME`` in the question names the repository (the word is removed from the
   question; an unknown name is answered with the known ones, and nothing runs);
3. a channel listed in a repository's ``slack_channels`` is about that repository;
4. otherwise the question is routed, as ``POST /api/ask`` routes one naming none.

On a server of one repository (``--root``) every question is about it, as always: an
``in:`` word is left in the question's text, and answers do not name their repository.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from szrag.answer.elsewhere import MergedSource
from szrag.answer.question import Question
from szrag.base.errors import UnknownConversation
from szrag.server.repositories import RepositoryFaces
from szrag.server.service import AskService

# a word of its own ("login:admin" is not one); punctuation after the name is not part of it
IN_WORD = re.compile(
    r"(?<!\S)in:(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*?)[?!,;:.]*(?!\S)", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a Slack question is answered: the repository's service and, on a server of
    several repositories, its name (None on a server of one)."""

    service: AskService
    repository: str | None = None
    elsewhere: tuple[MergedSource, ...] = ()  # a routed question's other repositories' sources

    def asked(self, question: Question) -> Question:
        """``question`` as it is asked here (a routed one with the other sources beside)."""
        return (
            dataclasses.replace(question, elsewhere=self.elsewhere) if self.elsewhere else question
        )


@dataclass(frozen=True, slots=True)
class Scoping:
    """What the text of a Slack question says of its repository: the question without its
    ``in:NAME`` word, the name given (None: none), and whether the server holds it."""

    question: str
    named: str | None = None
    known: bool = True


def unknown_repository_text(named: str, known: list[str]) -> str:
    """The reply to an ``in:`` word naming no repository of the server."""
    listed = ", ".join(f"`{name}`" for name in known)
    return (
        f":grey_question: No repository is called `{named}`. Known: {listed}. "
        "Ask again with `in:NAME` naming one of them, or without it."
    )


class SlackScopes:
    """The repositories a server's Slack face answers about (see the module)."""

    def __init__(self, service: AskService, faces: RepositoryFaces | None) -> None:
        self.default = service
        self.faces = faces

    @property
    def several(self) -> bool:
        """Whether the server holds more than one repository."""
        return self.faces is not None and len(self.faces.names()) > 1

    def names(self) -> list[str]:
        """The repositories' names, in the order configured."""
        return self.faces.names() if self.faces is not None else [self.default.root.name]

    def read(self, text: str) -> Scoping:
        """The question ``text`` asks and the repository its ``in:NAME`` word names; the
        first such word counts, every one is removed. On a server of one repository the
        text is left as it is."""
        if self.faces is None:
            return Scoping(text)
        found = IN_WORD.search(text)
        if found is None:
            return Scoping(text)
        named = found.group("name")
        question = " ".join(IN_WORD.sub(" ", text).split())
        return Scoping(question, named, named in self.faces.names())

    async def scope(self, scoping: Scoping, channel: str, key: str | None) -> Scope:
        """Where a question is answered (the order of the module); ``key`` is the thread's
        conversation, when the question is asked in a thread."""
        faces = self.faces
        if faces is None:
            return Scope(self.default)
        if key is not None:
            thread = await self.of_thread(key)
            if thread is not None:
                return thread
        if scoping.named is not None:
            face = await faces.face(scoping.named)  # UnknownRepository for a bad name
        elif (spec := faces.service.plan.for_channel(channel)) is not None:
            face = await faces.face(spec.name)
        else:
            face, elsewhere = await faces.route(scoping.question)
            return Scope(face.service, face.name, elsewhere)
        return Scope(face.service, face.name)

    async def of_thread(self, key: str) -> Scope | None:
        """The repository whose store keeps the thread's conversation, if one does."""
        if self.faces is None:
            return None
        try:
            face = await self.faces.of_conversation(key)
        except UnknownConversation:
            return None
        return Scope(face.service, face.name)

    async def of_answer(self, answer_id: str) -> AskService:
        """The service of the repository that gave an answer (feedback on it is kept
        there); UnknownAnswer when no repository keeps it."""
        if self.faces is None:
            return self.default
        return (await self.faces.of_answer(answer_id)).service
