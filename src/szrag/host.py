"""The host: everything one repository's answers are made with, wired once.

A face builds one host from a root and an environment mapping and hands it to every library
call; nothing below it reads the process environment::

    host = Host.from_env(root, os.environ)            # the CLI and the server
    result = await answer_question_async("how is the index refreshed?", host)

It owns the repository configuration, the provider settings, the command policy (registry and
allowlist), the audit log, the conversation store (``.rag/conversations.db``, with the
configured bounds), the runtime the live tools read, the one command runner (reporting to the
audit log and the runtime's metrics) and the tool adapters built over that runner. An
index given to the host (the server's shared one) is used as is; without one, each call opens
the repository's index for itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from szrag.audit import AuditLog
from szrag.commands import Allowlist, CommandRegistry, CommandRunner, default_registry
from szrag.commands.policy import CommandPolicy
from szrag.config import RepoConfig, load_repo_config
from szrag.context.plan import ContextPlan
from szrag.conversations import ConversationLimits, ConversationStore
from szrag.index import Index, load_index
from szrag.runtime import ProcessRuntime, Runtime
from szrag.runtime.sources import ApplicationRuntime, RuntimeSources
from szrag.settings import Settings, live_tools_enabled
from szrag.tools import ToolAdapter
from szrag.tools.adapter import ActivityCallback


@dataclass(frozen=True)
class Host:
    """One repository's configuration, settings, commands, audit log, runtime and tools."""

    root: Path
    environ: Mapping[str, str]
    config: RepoConfig
    settings: Settings
    policy: CommandPolicy
    audit: AuditLog
    runtime: ProcessRuntime
    runner: CommandRunner
    live_tools: bool
    index: Index | None = None
    # what the live tools read: the running application's sources when configured
    # ([runtime], SZRAG_RUNTIME_URL, SZRAG_LOG_FILES), else this process (``runtime``)
    live: Runtime | None = None
    # conversations, their turns and feedback (default: the repository's, with the bounds
    # of its [conversations] table and SZRAG_CONVERSATION_*)
    conversation_store: ConversationStore | None = None
    _adapter: ToolAdapter = field(init=False, repr=False, compare=False)
    _conversations: ConversationStore = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        live = self.live if self.live is not None else self.runtime
        adapter = ToolAdapter(self.runner, live, self.root, privileged=True)
        object.__setattr__(self, "_adapter", adapter)
        store = self.conversation_store or ConversationStore.for_root(
            self.root, ConversationLimits.of(self.config.conversations, self.environ)
        )
        object.__setattr__(self, "_conversations", store)

    @classmethod
    def from_env(
        cls,
        root: Path | str = ".",
        environ: Mapping[str, str] | None = None,
        *,
        settings: Settings | None = None,
        registry: CommandRegistry | None = None,
        allowlist: Allowlist | None = None,
        audit: AuditLog | None = None,
        runtime: ProcessRuntime | None = None,
        live_tools: bool | None = None,
        index: Index | None = None,
        conversations: ConversationStore | None = None,
    ) -> Host:
        """The host of the repository at ``root`` as ``environ`` describes it (no mapping: the
        defaults, as if no variable were set); each part given wins over the environment.

        ``environ`` is copied: later changes to the caller's mapping do not reach the host.
        Bad settings raise ConfigError here, before anything runs (the conversation store is
        opened when first used)."""
        environ = MappingProxyType(dict(environ or {}))
        root = Path(root)
        config = index.config if index is not None else load_repo_config(root.resolve())
        runtime = runtime or ProcessRuntime(root, environ=environ)
        audit = audit or AuditLog.for_root(root, environ)
        policy = CommandPolicy(
            registry or default_registry(), allowlist or Allowlist.from_env(environ)
        )
        runner = CommandRunner(
            policy,
            observers=[audit.record_command, runtime.record_command],
            root=root,
            runtime=runtime,
        )
        sources = RuntimeSources.of(config.runtime, environ)
        live = ApplicationRuntime(runtime, sources, root) if sources.configured else None
        offer_tools = live_tools
        if offer_tools is None:
            offer_tools = live_tools_enabled(environ, repository=config.tools)
        return cls(
            root=root,
            environ=environ,
            config=config,
            settings=settings or Settings.from_env(environ),
            policy=policy,
            audit=audit,
            runtime=runtime,
            runner=runner,
            live_tools=offer_tools,
            index=index,
            live=live,
            conversation_store=conversations
            or ConversationStore.for_root(
                root, ConversationLimits.of(config.conversations, environ)
            ),
        )

    @property
    def conversations(self) -> ConversationStore:
        """Conversations, their kept turns and the feedback on answers."""
        return self._conversations

    @property
    def registry(self) -> CommandRegistry:
        """The commands this host runs."""
        return self.policy.registry

    def replace(self, **changes: object) -> Host:
        """This host with some parts changed (``settings``, ``index``, ``live_tools``...)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def tools(
        self, *, privileged: bool = True, on_activity: ActivityCallback | None = None
    ) -> ToolAdapter:
        """The live tools over this host's runner: admin tools only when ``privileged`` (a
        person at this machine is; a server decides per caller)."""
        adapter = self._adapter.with_privilege(privileged)
        adapter.on_activity = on_activity
        return adapter

    def plan(self, config: RepoConfig | None = None, *, budget: int | None = None) -> ContextPlan:
        """The context plan (budget, tokenizer, window) of ``config`` (default: the host's)
        and this host's environment; ``budget`` wins when given."""
        return ContextPlan.of(config or self.config, self.environ, budget=budget)

    @contextlib.contextmanager
    def opened_index(self) -> Iterator[Index]:
        """The host's index (left open), or the repository's opened for this call."""
        if self.index is not None:
            yield self.index
            return
        with load_index(self.root) as opened:
            yield opened
