"""The pieces one running server holds, reachable from every route as ``app.state.szrag``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fastapi import Request

from szrag.server.images import ImageCatalogue
from szrag.server.ratelimit import RateLimiter
from szrag.server.service import AskService
from szrag.server.settings import ServerSettings
from szrag.service.watch import IndexWatcher

if TYPE_CHECKING:
    from szrag.server.repositories import RepositoryFaces
    from szrag.server.slack import SlackFace


@dataclass
class ServerState:
    """The service, limits, images, watcher and Slack app of one server."""

    settings: ServerSettings
    service: AskService
    images: ImageCatalogue
    ask_limiter: RateLimiter
    read_limiter: RateLimiter
    watcher: IndexWatcher | None = None
    slack: SlackFace | None = field(default=None)
    warming: asyncio.Task[None] | None = None  # the shared views being built at start-up
    # a service over several repositories (``service`` and ``images`` are then its first's)
    repositories: RepositoryFaces | None = None


def server_state(request: Request) -> ServerState:
    """The state of the server handling ``request``."""
    state = getattr(request.app.state, "szrag", None)
    if not isinstance(state, ServerState):
        raise RuntimeError("the szrag server has not started")
    return state
