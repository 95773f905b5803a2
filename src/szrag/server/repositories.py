"""The repositories one server answers about, over the library's :class:`Service`: each
repository's answering service, images and index watcher, made when it is first asked about.

A question names its repository (``"repository"`` in ``POST /api/ask``) or is routed to the
repository of the best file of all (``Service.route``: every repository searched, their files
merged on one scale); a follow-up in a conversation goes to the
repository the conversation began in. An unknown name is a 404 ``unknown_repository`` before
anything runs.

A repository cloned from a URL has a :class:`~szrag.service.remotes.RemoteKeeper`, started
with the server (``start``): it clones in the background while the others answer, fetches on
the service's interval and on a verified push webhook (``server/webhooks.py``), and its
refresher is the face's watcher (no file watching: only a sync changes a clone). The
repository the page, the runtime reads and Slack use (``default``) is the first whose code
is on disk at start, else the first whose clone succeeds.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from urllib.parse import quote

import anyio
import httpx

from szrag.answer.elsewhere import MergedSource
from szrag.answer.results import Answer, ScopedAnswer
from szrag.base.errors import (
    RepositoryError,
    UnknownAnswer,
    UnknownConversation,
    UnknownRepository,
)
from szrag.base.public import public_timestamp
from szrag.index.protocol import IndexStore
from szrag.index.shared import SharedIndex
from szrag.runtime.git import read_git_head
from szrag.server.images import ImageCatalogue
from szrag.server.service import AskService
from szrag.server.settings import ServerSettings
from szrag.service.remotes import RemoteKeeper
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


def only_repository(name: str, repository: str | None) -> None:
    """Check that ``repository``, when given, names a single-repository server's one
    repository (``name``, its folder's); UnknownRepository otherwise."""
    if repository is not None and repository != name:
        raise UnknownRepository(f"no repository is called {repository!r} (known: {name})")


def scoped(answer: Answer, repository: str) -> ScopedAnswer:
    """``answer`` with the repository it is from, its images' links naming that repository
    (``/PATH?repository=NAME``), so each opens the right repository's file."""
    named = quote(repository, safe="")
    images = tuple(replace(image, url=f"{image.url}?repository={named}") for image in answer.images)
    return ScopedAnswer(replace(answer, images=images), repository)


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
        self.keepers = {
            spec.name: RemoteKeeper(
                service,
                spec.name,
                interval=service.plan.fetch_interval,
                debounce_ms=settings.watch_debounce_ms,
            )
            for spec in service.plan.repositories
            if spec.remote
        }
        first = service.plan.first_present()
        self.default = first.name if first is not None else self.names()[0]

    def names(self) -> list[str]:
        """The repositories' names, in the order configured."""
        return self.service.names()

    def start(self) -> None:
        """Start keeping the cloned repositories current (in the running event loop)."""
        for keeper in self.keepers.values():
            keeper.start()

    async def choose_default(self) -> str:
        """The repository the page, the runtime reads and Slack use: the first whose code is
        on disk, else the first whose clone succeeds (waited for); RepositoryError naming
        each failure when no repository can be served."""
        if self.service.plan.first_present() is not None:
            return self.default
        failures = []
        for name in self.names():
            keeper = self.keepers.get(name)
            if keeper is None:  # a folder that was there when the plan was read
                failures.append(f"{name}: its folder is gone")
                continue
            state = await keeper.settled()
            if state.state == "ready":
                self.default = name
                return name
            failures.append(f"{name}: {state.error}")
        raise RepositoryError("no repository of the service can be served: " + "; ".join(failures))

    async def face(self, name: str) -> RepositoryFace:
        """The face of repository ``name`` (UnknownRepository when there is none); its index
        is built or refreshed in a worker thread the first time."""
        self.service.spec(name)
        host = await anyio.to_thread.run_sync(self.service.host, name)
        async with self._lock:
            face = self._faces.get(name)
            if face is not None:
                return face
            index = self.service.index(name)
            face = RepositoryFace(
                name, AskService(host, http_client=self.http_client), ImageCatalogue(index)
            )
            keeper = self.keepers.get(name)
            if keeper is not None:  # refreshed after each fetch that moves it, not watched
                face.watcher = keeper.watcher()
            elif self.settings.watch and isinstance(index, SharedIndex):  # not a replica's store
                face.watcher = IndexWatcher(index, debounce_ms=self.settings.watch_debounce_ms)
                face.watcher.start()
            self._faces[name] = face
            return face

    async def named_or_default(self, name: str | None) -> RepositoryFace:
        """The face of repository ``name``, or of the first when no name is given (a
        file's lines and images: a path means something in one repository only)."""
        return await self.face(name if name is not None else self.default)

    def watcher_of(self, name: str) -> IndexWatcher | None:
        """The watcher of an opened repository (None when it has none, or is not open)."""
        face = self._faces.get(name)
        return face.watcher if face is not None else None

    async def route(self, question: str) -> tuple[RepositoryFace, tuple[MergedSource, ...]]:
        """The face of the repository a question without one goes to, and the other
        repositories' sources its answer is offered beside its own."""
        routed = await anyio.to_thread.run_sync(self.service.route, question)
        return await self.face(routed.repository), routed.elsewhere()

    async def of_conversation(self, conversation_id: str) -> RepositoryFace:
        """The face of the repository the conversation is about (one lookup in the service's
        store); UnknownConversation when it keeps none of that id."""
        name = await anyio.to_thread.run_sync(self.service.repository_of, conversation_id)
        if name is None:
            raise UnknownConversation(f"no repository keeps the conversation {conversation_id}")
        return await self.face(name)

    async def of_answer(self, answer_id: str) -> RepositoryFace:
        """The face of the repository a kept answer is about (feedback goes there);
        UnknownAnswer when the service keeps no answer of that id."""
        name = await anyio.to_thread.run_sync(self.service.repository_of_answer, answer_id)
        if name is None:
            raise UnknownAnswer(
                f"no answer {answer_id}: it was never given here, or it is no longer kept"
            )
        return await self.face(name)

    def states(self) -> list[RepositoryState]:
        """What each repository's state is now, in the order configured (a local folder
        that has vanished is ``failed`` saying so)."""
        self.service.check_folders()
        return [self.service.states[name] for name in self.names()]

    async def close(self) -> None:
        """Stop the keepers and watchers, then close every repository's index and store."""
        for keeper in self.keepers.values():
            await keeper.stop()  # its refresher too
        for face in list(self._faces.values()):
            if face.watcher is not None and face.name not in self.keepers:
                await face.watcher.stop()
        self._faces.clear()
        await anyio.to_thread.run_sync(self.service.close)
