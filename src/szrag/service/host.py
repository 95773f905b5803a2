"""The host: everything one repository's answers are made with, wired once, and the one
door a question goes through.

A face reads its configuration once (the repository file and the environment mapping, into
one ``Config``) and builds one host from it; nothing below it reads the process environment,
and nothing reads the mapping again::

    host = Host.of(load_config(root, os.environ))     # the CLI, the server and MCP
    result = await host.ask(Question("how is the index refreshed?", face="cli"))

``Host.from_env(root, environ)`` does both at once (tests and library callers).

``ask`` admits the question once (the named command's permit under the policy, the
conversation it continues and its owner), answers it through the pipeline (``szrag.answer``)
and records the ask in the audit log whatever happens; a face that must refuse before it
starts streaming calls ``admit`` first and asks with what it returns. The host's runner asks
its questions (``/sz-ask``) through the same door.

It owns the configuration (repository file, provider settings, context plan, allowlist ...),
the command policy (registry and allowlist), the audit log, the conversation store
(``.rag/conversations.db``, with the configured bounds), the runtime the live tools read, the
one command runner (reporting to the audit log and the runtime's metrics) and the tool
adapters built over that runner. An index given to the host (the server's shared one) is used
as is; without one, each call opens the repository's index for itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from szrag.answer.question import Admitted, Question
from szrag.base.config import RepoConfig
from szrag.base.errors import SzragError
from szrag.base.settings import Settings
from szrag.commands import Allowlist, CommandRegistry, CommandRunner, Identity, default_registry
from szrag.commands.policy import CommandPolicy
from szrag.context.plan import ContextPlan
from szrag.conversations import ConversationMemory, ConversationStore
from szrag.index import Index, load_index
from szrag.index.protocol import IndexStore
from szrag.index.shared import SharedIndex
from szrag.runtime import BlockingRuntime, ProcessRuntime, Runtime
from szrag.runtime.sources import ApplicationRuntime
from szrag.service.audit import AuditLog
from szrag.service.configuration import Config, load_config
from szrag.tools import ToolAdapter
from szrag.tools.adapter import ActivityCallback

if TYPE_CHECKING:
    import httpx

    from szrag.answer.results import Answer, DebugReport

T = TypeVar("T")


@dataclass(frozen=True)
class Host:
    """One repository's configuration, commands, audit log, runtime and tools."""

    # the repository file and the environment, read once (``szrag.service.configuration``)
    config: Config
    policy: CommandPolicy
    audit: AuditLog
    runtime: ProcessRuntime
    runner: CommandRunner
    index: IndexStore | None = None
    # what the live tools read: the running application's sources when configured
    # ([runtime], SZRAG_RUNTIME_URL, SZRAG_LOG_FILES), else this process (``runtime``)
    live: Runtime | BlockingRuntime | None = None
    # conversations, their turns and feedback (default: the repository's, with the
    # configured bounds; a service's store as this repository sees it)
    conversation_store: ConversationMemory | None = None
    # the client model requests go through (a server's, kept open); None: one per answer
    http_client: httpx.AsyncClient | None = field(default=None, compare=False, repr=False)
    _adapter: ToolAdapter = field(init=False, repr=False, compare=False)
    _conversations: ConversationMemory = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        live = self.live if self.live is not None else self.runtime
        adapter = ToolAdapter(
            self.runner,
            live,
            self.root,
            privileged=True,
            index=self.index,
            code_tools=self.config.repository.profile.code_tools,
        )
        object.__setattr__(self, "_adapter", adapter)
        store = self.conversation_store or ConversationStore.for_root(
            self.root, self.config.conversations
        )
        object.__setattr__(self, "_conversations", store)
        self.runner.answer_questions_with(self._answer_for_command)

    @classmethod
    def of(
        cls,
        config: Config,
        *,
        registry: CommandRegistry | None = None,
        audit: AuditLog | None = None,
        runtime: ProcessRuntime | None = None,
        index: IndexStore | None = None,
        conversations: ConversationMemory | None = None,
    ) -> Host:
        """The host ``config`` describes, its parts wired once; each part given wins (the
        conversation store is opened when first used). Given a store that keeps the audit
        log (PostgreSQL's) and no audit log, the asks are audited there unless the
        configuration turns auditing off."""
        root = config.root
        runtime = runtime or ProcessRuntime(
            root, log_file=config.log_file, deployment=config.deployment
        )
        # the status reads the store answered from; a one-shot's Index is bound to its
        # thread (the status is read in a worker thread), so it reads its file itself
        if index is not None and (isinstance(index, SharedIndex) or not isinstance(index, Index)):
            runtime.serves(index)
        store = conversations or ConversationStore.for_root(root, config.conversations)
        audit = audit or AuditLog.beside(store, config.audit_log)
        policy = CommandPolicy(registry or default_registry(), config.allowlist)
        runner = CommandRunner(
            policy,
            observers=[audit.record_command, runtime.record_command],
            root=root,
            runtime=runtime,
        )
        sources = config.runtime
        live = ApplicationRuntime(runtime, sources, root) if sources.configured else None
        return cls(
            config=config,
            policy=policy,
            audit=audit,
            runtime=runtime,
            runner=runner,
            index=index,
            live=live,
            conversation_store=store,
        )

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
        index: IndexStore | None = None,
        conversations: ConversationMemory | None = None,
    ) -> Host:
        """The host of the repository at ``root`` as ``environ`` describes it (no mapping: the
        defaults, as if no variable were set): :func:`load_config` once (with ``index``'s
        repository configuration when given), then :meth:`of`; each part given wins over the
        environment.

        Bad settings raise ConfigError here, before anything runs."""
        config = with_parts(
            load_config(root, environ, repository=index.config if index is not None else None),
            settings=settings,
            allowlist=allowlist,
            live_tools=live_tools,
        )
        return cls.of(
            config,
            registry=registry,
            audit=audit,
            runtime=runtime,
            index=index,
            conversations=conversations,
        )

    @property
    def root(self) -> Path:
        """The repository's root."""
        return self.config.root

    @property
    def repository(self) -> RepoConfig:
        """The repository file's configuration (profile, ignores, [runtime] ...)."""
        return self.config.repository

    @property
    def settings(self) -> Settings:
        """The model provider's settings."""
        return self.config.settings

    @property
    def live_tools(self) -> bool:
        """Whether the model is offered the live tools."""
        return self.config.live_tools

    @property
    def conversations(self) -> ConversationMemory:
        """Conversations, their kept turns and the feedback on answers."""
        return self._conversations

    @property
    def registry(self) -> CommandRegistry:
        """The commands this host runs."""
        return self.policy.registry

    def replace(self, **changes: object) -> Host:
        """This host with some parts changed (``index``, ``http_client``...; ``settings`` and
        ``live_tools`` change its configuration)."""
        parts = {name: changes.pop(name) for name in ("settings", "live_tools") if name in changes}
        if parts:
            changes["config"] = self.config.replace(**parts)
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def tools(
        self, *, privileged: bool = True, on_activity: ActivityCallback | None = None
    ) -> ToolAdapter:
        """The live tools over this host's runner: admin tools only when ``privileged`` (a
        person at this machine is; a server decides per caller)."""
        adapter = self._adapter.with_privilege(privileged)
        adapter.on_activity = on_activity
        return adapter

    def plan(self, *, budget: int | None = None) -> ContextPlan:
        """The configured context plan (budget, tokenizer, window), read once with the rest
        of the configuration; ``budget`` (a question's) wins when given."""
        return self.config.plan.budgeted(budget)

    @contextlib.contextmanager
    def opened_index(self) -> Iterator[IndexStore]:
        """The host's index (left open), or the repository's opened for this call."""
        if self.index is not None:
            yield self.index
            return
        with load_index(self.root) as opened:
            yield opened

    async def admit(self, question: Question) -> Admitted:
        """``question`` let in, or the reason it may not be: an empty or overlong question
        (QuestionError), a named command that is unknown or not allowed for its face
        (CommandError, reported to the runner's observers), a conversation that is not kept
        or not the asker's (UnknownConversation). A refusal is audited as an ask that failed."""
        started = time.perf_counter()
        try:
            return await self._admission(question)
        except Exception as error:
            self._audit(question, started, _outcome_of(error))
            raise

    async def ask(self, question: Question | Admitted) -> Answer:
        """The answer to ``question`` (admitted first unless it already is), audited under
        its face whatever happens."""
        from szrag.answer.pipeline import answer  # the pipeline loads with the first question

        asked = question.question if isinstance(question, Admitted) else question
        started = time.perf_counter()
        outcome = ("ok", "")
        try:
            admitted = (
                question if isinstance(question, Admitted) else await self._admission(question)
            )
            return await answer(admitted, self)
        except asyncio.CancelledError:
            outcome = ("cancelled", "the caller went away")
            raise
        except Exception as error:
            outcome = _outcome_of(error)
            raise
        finally:
            self._audit(asked, started, outcome)

    async def debug(self, question: Question) -> DebugReport:
        """Everything the model would be given for ``question``, without running a command or
        calling a model (nothing is audited or kept)."""
        from szrag.answer.pipeline import debug

        return await debug(question, self)

    async def _admission(self, question: Question) -> Admitted:
        from szrag.rank.retrieve import require_question

        text = require_question(question.text)
        permit = None
        if question.command is not None:
            permit = self.runner.admit(question.command.id, question.identity, source=question.face)
        conversation = None
        if question.conversation_id is not None:
            conversation = await asyncio.to_thread(
                self.conversations.get,
                question.conversation_id,
                owner=question.conversation_owner,
            )
        return Admitted(question, text, permit, conversation)

    def _audit(self, question: Question, started: float, outcome: tuple[str, str]) -> None:
        from szrag.answer.command import withheld_question
        from szrag.rank.retrieve import MAX_QUESTION_CHARS

        named = question.command
        shown = withheld_question(
            str(question.text or ""),
            self.registry,
            command_id=named.id if named else None,
            command_text=named.text if named else None,
        )
        self.audit.record_ask(
            question.identity,
            shown[:MAX_QUESTION_CHARS],
            outcome=outcome[0],
            duration_ms=(time.perf_counter() - started) * 1000,
            source=question.face,
            message=outcome[1],
        )

    async def _answer_for_command(self, text: str, identity: Identity) -> str:
        """A question a command asks (``/sz-ask``), answered by this host with the model."""
        return (await self.ask(Question(text, identity=identity))).answer


def with_parts(
    config: Config,
    *,
    settings: Settings | None = None,
    allowlist: Allowlist | None = None,
    live_tools: bool | None = None,
) -> Config:
    """``config`` with the parts a face or a caller gives instead of what was read (a
    ``--model``, ``--no-tools``, a test's settings)."""
    given = {"settings": settings, "allowlist": allowlist, "live_tools": live_tools}
    return config.replace(**{name: part for name, part in given.items() if part is not None})


def _outcome_of(error: BaseException) -> tuple[str, str]:
    """The audit outcome of a failed ask and what it says."""
    if isinstance(error, SzragError):
        return "failed", error.message
    return "error", f"{type(error).__name__}: {error}"


def as_host(host: Host | Path | str) -> Host:
    """``host``, or the host of the repository at that path with the default settings (no
    environment is read: a caller who wants AI_API_KEY and friends builds
    ``Host.from_env(root, os.environ)``)."""
    return host if isinstance(host, Host) else Host.from_env(host)


async def answer_question_async(question: Question | str, host: Host | Path | str = ".") -> Answer:
    """The answer to ``question`` (a bare text: asked as a library call) from ``host`` (a
    path: that repository's host with the default settings)."""
    asked = question if isinstance(question, Question) else Question(question)
    return await as_host(host).ask(asked)


def answer_question(question: Question | str, host: Host | Path | str = ".") -> Answer:
    """The synchronous face of :func:`answer_question_async` (same arguments, same result)."""
    return run_sync(lambda: answer_question_async(question, host))


async def debug_question_async(
    question: Question | str, host: Host | Path | str = "."
) -> DebugReport:
    """What the model would be given for ``question`` (see :meth:`Host.debug`)."""
    asked = question if isinstance(question, Question) else Question(question)
    return await as_host(host).debug(asked)


def debug_question(question: Question | str, host: Host | Path | str = ".") -> DebugReport:
    """The synchronous face of :func:`debug_question_async`."""
    return run_sync(lambda: debug_question_async(question, host))


def run_sync(start: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``start()`` makes to completion; refused inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(start())
    raise RuntimeError(
        "the synchronous szrag API cannot run inside a running event loop; "
        "await the *_async function instead"
    )
