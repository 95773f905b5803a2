"""The repositories one server answers about, over the library's :class:`Service`: each
repository's answering service, images and index watcher, made when it is first asked about.

A question names its repository (``"repository"`` in ``POST /api/ask``) or is routed to the
repository whose best source scores highest; a follow-up in a conversation goes to the
repository the conversation began in. An unknown name is a 404 ``unknown_repository`` before
anything runs.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import anyio
import httpx

from szrag.base.errors import SzragError, UnknownConversation
from szrag.base.public import public_timestamp
from szrag.index.protocol import IndexStore
from szrag.index.shared import SharedIndex
from szrag.runtime.git import read_git_head
from szrag.server.images import ImageCatalogue
from szrag.server.service import AskService
from szrag.server.settings import ServerSettings
from szrag.service.repositories import RepositoryState
from szrag.service.service import Service
from szrag.service.watch import IndexWatcher

log = logging.getLogger("szrag.server")


def single_state(name: str, index: IndexStore) -> RepositoryState:
    """The state of a server's one repository (``GET /api/repositories`` of ``--root``)."""
    meta = index.meta()
    return RepositoryState(
        name,
        state="ready",
        files=index.counts()["files"],
        indexed_at=public_timestamp(meta.get("generated_at")),
        commit=head.commit if (head := read_git_head(index.root)) is not None else None,
        loaded=index.in_memory,
    )


@dataclass
class RepositoryFace:
    """What the server keeps of one repository it has opened."""

    name: str
    service: AskService
    images: ImageCatalogue
    watcher: IndexWatcher | None = None


class RepositoryFaces:
    """Every repository of a server's service by name, each made on first use."""

    def __init__(
        self,
        service: Service,
        settings: ServerSettings,
        *,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.service = service
        self.settings = settings
        self.http_client = http_client
        self._faces: dict[str, RepositoryFace] = {}
        self._lock = asyncio.Lock()

    def names(self) -> list[str]:
        """The repositories' names, in the order configured."""
        return self.service.names()

    @property
    def default(self) -> str:
        """The repository the runtime reads and the page start with: the first one."""
        return self.names()[0]

    async def face(self, name: str) -> RepositoryFace:
        """The face of repository ``name`` (UnknownRepository when there is none); its index
        is built or refreshed in a worker thread the first time."""
        self.service.spec(name)
        host = await anyio.to_thread.run_sync(self.service.host, name)
        async with self._lock:
            face = self._faces.get(name)
            if face is not None:
                return face
            index = self.service.shared_index(name)
            face = RepositoryFace(
                name, AskService(host, http_client=self.http_client), ImageCatalogue(index)
            )
            if self.settings.watch and isinstance(index, SharedIndex):  # not a replica's store
                face.watcher = IndexWatcher(index, debounce_ms=self.settings.watch_debounce_ms)
                face.watcher.start()
            self._faces[name] = face
            return face

    def watcher_of(self, name: str) -> IndexWatcher | None:
        """The watcher of an opened repository (None when it has none, or is not open)."""
        face = self._faces.get(name)
        return face.watcher if face is not None else None

    async def route(self, question: str) -> RepositoryFace:
        """The face of the repository a question without one goes to."""
        routed = await anyio.to_thread.run_sync(self.service.route, question)
        return await self.face(routed.repository)

    async def of_conversation(self, conversation_id: str) -> RepositoryFace:
        """The face of the repository whose store keeps this conversation (looked up in
        those opened so far, then in the others); UnknownConversation when none does."""
        names = self.service.opened() + [
            name for name in self.names() if name not in self.service.opened()
        ]
        for name in names:  # each store asked; a face is made for the one that keeps it
            try:
                host = await anyio.to_thread.run_sync(self.service.host, name)
            except SzragError as error:
                log.warning("conversations of %s not searched: %s", name, error.message)
                continue
            conversations = host.conversations
            try:
                await anyio.to_thread.run_sync(conversations.get, conversation_id)
            except UnknownConversation:
                continue
            except SzragError as error:  # one unreadable store does not hide the others
                log.warning("conversations of %s not searched: %s", name, error.message)
                continue
            return await self.face(name)
        raise UnknownConversation(f"no repository keeps the conversation {conversation_id}")

    def states(self) -> list[RepositoryState]:
        """What each repository's state is now, in the order configured."""
        return [self.service.states[name] for name in self.names()]

    async def close(self) -> None:
        """Stop the watchers, then close every repository's index and store."""
        for face in list(self._faces.values()):
            if face.watcher is not None:
                await face.watcher.stop()
        self._faces.clear()
        await anyio.to_thread.run_sync(self.service.close)
