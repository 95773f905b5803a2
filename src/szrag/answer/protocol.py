"""What the pipeline needs of the host that answers: its repository, provider settings,
runner, live tools, conversations and index (``szrag.service.host.Host`` is the one implementation;
the pipeline never builds one)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from szrag.base.settings import Settings
from szrag.commands import CommandRegistry, CommandRunner
from szrag.context.plan import ContextPlan
from szrag.conversations import ConversationMemory
from szrag.index.protocol import IndexStore
from szrag.runtime import BlockingRuntime, Runtime
from szrag.tools import ToolAdapter
from szrag.tools.adapter import ActivityCallback

if TYPE_CHECKING:
    import httpx


class AnswerHost(Protocol):
    """One repository's parts, as the pipeline reads them."""

    @property
    def root(self) -> Path: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def runner(self) -> CommandRunner: ...

    @property
    def registry(self) -> CommandRegistry: ...

    @property
    def live_tools(self) -> bool: ...

    @property
    def live(self) -> Runtime | BlockingRuntime | None: ...

    @property
    def conversations(self) -> ConversationMemory: ...

    @property
    def http_client(self) -> httpx.AsyncClient | None: ...

    def tools(
        self, *, privileged: bool = True, on_activity: ActivityCallback | None = None
    ) -> ToolAdapter: ...

    def plan(self, *, budget: int | None = None) -> ContextPlan: ...

    def opened_index(self) -> AbstractContextManager[IndexStore]: ...
