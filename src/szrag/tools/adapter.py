"""The live-tool adapter: what happens between a model's tool call and the JSON it reads back.

For each call: parse the arguments (a JSON string or a dict), reject unknown tools and
arguments that break the tool's schema, run the tool under the time limit (async work is
cancelled, a command's subprocess killed), sanitise the result, cap it at
``max_output_bytes`` (an oversized result becomes a truncation object that is itself valid
JSON), report an activity, and return a ``ToolResult``. Tool-level failures never raise:
they come back as ``ok=False`` with ``{"error": {"type", "message"}}`` for the model to read.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from szrag.base.errors import CommandError, PathError, QuestionError, SzragError, ToolError
from szrag.base.public import public, public_dict, rounded
from szrag.commands.allowlist import Allowlist
from szrag.commands.errors import UnknownCommand, error_code
from szrag.commands.model import CommandResult, CommandSpec, Identity, WithheldOutput
from szrag.commands.policy import CommandPolicy
from szrag.commands.registry import CommandRegistry
from szrag.commands.runner import CommandRunner, Observer
from szrag.runtime import BlockingRuntime, Runtime, as_runtime
from szrag.runtime.indexinfo import read_routes, routes_of
from szrag.tools.definitions import (
    CODE_TOOL,
    COMMAND_TOOL,
    MAX_ERROR_ENTRIES,
    MAX_LOG_ENTRIES,
    MAX_OUTPUT_BYTES,
    MAX_ROUTES,
    TOOL_TIMEOUT_MS,
    TOOLS,
    TOOLS_BY_NAME,
    ToolDefinition,
)
from szrag.tools.sanitise import REDACTED, sanitise, sanitise_text
from szrag.tools.schema import validate

if TYPE_CHECKING:
    from szrag.commands.model import CommandOutcome
    from szrag.index.protocol import IndexStore
    from szrag.runtime import Runtime

log = logging.getLogger("szrag.tools")

ActivityCallback = Callable[["ToolEvent"], None]
# Extra time a runCommand call gets beyond the command's own limit, so the command's timeout
# (which the audit log and metrics record) fires before the adapter's safety net.
_COMMAND_GRACE = 0.5


_MILLISECONDS = public(convert=rounded(3))
_OMIT_NONE = public(omit_none=True)


@dataclass(frozen=True)
class ToolResult:
    """One tool call's outcome: the value, the JSON text the model reads, and timing."""

    name: str
    ok: bool
    content: Any  # the sanitised value, as JSON-ready data
    text: str = field(metadata=public(hidden=True))
    duration_ms: float = field(metadata=_MILLISECONDS)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """What a failed call reports: the failure's label and message."""

    type: str
    message: str


@dataclass(frozen=True, slots=True)
class FailedCall:
    """A failed call's result, as the model reads it."""

    error: ToolFailure


@dataclass(frozen=True, slots=True)
class ToolEvent:
    """One finished tool call, as the adapter reports it to ``on_activity``: the tool and its
    endpoint, the status (completed, failed, timeout), the time taken, the arguments as shown
    (sanitised) and, for a failure, what went wrong."""

    stage: str = field(init=False, default="tool")
    kind: str = field(metadata=public(name="type"))  # api_request or command_tool
    tool: str
    endpoint: str | None
    status: str
    duration_ms: float = field(metadata=_MILLISECONDS)
    arguments: Any
    message: str
    error: ToolFailure | None = field(default=None, metadata=_OMIT_NONE)

    def details(self) -> dict[str, Any]:
        """The event as an activity's metadata: everything but the stage and the message."""
        found: dict[str, Any] = {
            "type": self.kind,
            "tool": self.tool,
            "endpoint": self.endpoint,
            "status": self.status,
            "duration_ms": round(self.duration_ms, 3),
            "arguments": self.arguments,
        }
        if self.error is not None:
            found["error"] = self.error
        return found


@dataclass(frozen=True, slots=True)
class ListedCommand:
    """A command as ``getCommands`` lists it: its metadata and whether runCommand may run it."""

    spec: CommandSpec = field(metadata=public(spread=True))
    runnable: bool


@dataclass(frozen=True, slots=True)
class CommandFound:
    """``getCommands`` with an ``id``: that command."""

    command: ListedCommand


@dataclass(frozen=True, slots=True)
class CommandIds:
    """``getCommands`` without arguments: every command's id."""

    commands: list[str]


@dataclass(frozen=True, slots=True)
class CommandsFound:
    """``getCommands`` with filters: the commands matching all of them."""

    commands: tuple[ListedCommand, ...]
    count: int


@dataclass(frozen=True, slots=True)
class RoutesFound:
    """``getRoutes``: the matching routes (``{method, route, path, line, handler}``, as the
    index lists them), the first ``limit`` of ``count``."""

    routes: list[dict[str, Any]]
    count: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class Truncated:
    """A result over the size limit: a message, the original size and a preview (the start
    of the result's JSON text)."""

    truncated: bool = field(init=False, default=True)
    original_bytes: int
    message: str | None = field(default=None, metadata=_OMIT_NONE)
    preview: str | None = field(default=None, metadata=_OMIT_NONE)

    public_order: ClassVar[tuple[str, ...]] = ("truncated", "message", "original_bytes")


class _Failure(Exception):
    """A tool-level failure with the label the model and the activity see."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def fit_output(value: Any, max_bytes: int) -> tuple[Any, str]:
    """``value`` and its JSON text, or a truncation object when the text is over ``max_bytes``.

    The truncation object carries a message, the original size and a preview (the start of
    the JSON text as a string), and its own serialisation never exceeds ``max_bytes``.
    """
    text = _json(value)
    size = _size(text)
    if size <= max_bytes:
        return value, text
    message = (
        f"The result was {size} bytes, over the {max_bytes}-byte limit. The preview is the "
        "start of its JSON text; ask again with filters or a lower limit for the rest."
    )
    room = max_bytes - _size(_json(public_dict(Truncated(size, message, ""))))
    low, high = 0, min(len(text), max(room, 0))
    while low < high:  # the longest prefix whose escaped form fits
        middle = (low + high + 1) // 2
        if _size(_json(text[:middle])) - 2 <= room:
            low = middle
        else:
            high = middle - 1
    envelope = public_dict(Truncated(size, message, text[:low]))
    rendered = _json(envelope)
    if _size(rendered) > max_bytes:  # a limit too small even for the envelope
        envelope = public_dict(Truncated(size))
        rendered = _json(envelope)
    return envelope, rendered


# getCommands' field filters: the public names of a command's searched fields
_FILTERED = ("name", "description", "category", "usageHint")


def _matches(spec: CommandSpec, filters: dict[str, str]) -> bool:
    shown = public_dict(spec)
    fields = {key: str(shown[key]) for key in _FILTERED}
    for key, wanted in filters.items():
        needle = wanted.lower()
        haystack = " ".join([spec.id, *fields.values()]) if key == "text" else fields[key]
        if needle not in haystack.lower():
            return False
    return True


class CommandAudit(Protocol):
    """Where finished commands are recorded (``szrag.service.audit.AuditLog``, which itself uses this
    package's sanitiser: the adapter names only the method it calls)."""

    def record_command(self, outcome: CommandOutcome) -> None: ...


class ToolAdapter:
    """Runs the eight live tools for a model, and the code tools where they are offered:
    validation, timeout, sanitising, size cap."""

    def __init__(
        self,
        runner: CommandRunner,
        runtime: Runtime | BlockingRuntime,
        index_root: Path | str,
        *,
        on_activity: ActivityCallback | None = None,
        timeout: float = TOOL_TIMEOUT_MS / 1000,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
        privileged: bool = True,
        index: IndexStore | None = None,
        code_tools: bool = False,
    ) -> None:
        self.runner = runner  # its policy decides what runCommand runs; it reports refusals
        self.runtime = runtime  # what it reads, and what counts the tool calls
        self.reads = as_runtime(runtime)
        self.index_root = Path(index_root)
        self.index = index  # the store answered from (a replica's); else the file at the root
        self.on_activity = on_activity
        self.timeout = timeout
        self.max_output_bytes = max_output_bytes
        # Whether admin-only tools are offered and run (a person at this machine: yes; a
        # server decides per caller, see with_privilege).
        self.privileged = privileged
        # the code tools beside the live ones (the default profile; the original offers the
        # live tools alone)
        self.code_tools = code_tools
        reads = self.reads
        self._handlers: dict[str, Callable[[dict[str, Any], Identity], Awaitable[Any]]] = {
            "getStatus": lambda args, who: reads.status(),
            "getCommands": self._get_commands,
            "getReleaseInfo": lambda args, who: reads.release_info(args.get("version")),
            "runCommand": self._run_command,
            "getLogs": lambda args, who: reads.logs(
                args.get("limit", MAX_LOG_ENTRIES), args.get("level"), args.get("since") or None
            ),
            "getErrors": lambda args, who: reads.errors(
                args.get("limit", MAX_ERROR_ENTRIES), bool(args.get("includeStack"))
            ),
            "getMetrics": lambda args, who: reads.metrics(args.get("name"), args.get("label")),
            "getRoutes": self._get_routes,
        }

    @classmethod
    def of(
        cls,
        registry: CommandRegistry,
        runtime: Runtime | BlockingRuntime,
        index_root: Path | str,
        allowlist: Allowlist,
        audit: CommandAudit,
        **options: Any,
    ) -> ToolAdapter:
        """An adapter with a runner of its own (tests, and callers without a host)."""
        observers: list[Observer] = [audit.record_command]
        record = getattr(runtime, "record_command", None)
        if callable(record):
            observers.append(record)
        runner = CommandRunner(
            CommandPolicy(registry, allowlist),
            observers=observers,
            root=index_root,
            runtime=runtime,
        )
        return cls(runner, runtime, index_root, **options)

    @property
    def registry(self) -> CommandRegistry:
        """The commands the runCommand and getCommands tools see."""
        return self.runner.registry

    def with_privilege(self, privileged: bool) -> ToolAdapter:
        """This adapter for a caller of another privilege (a shallow copy: runner, registry and
        callbacks are shared)."""
        other = copy.copy(self)
        other.privileged = privileged
        return other

    def with_code_tools(self, offered: bool) -> ToolAdapter:
        """This adapter offering the code tools or not (a shallow copy, as ``with_privilege``)."""
        other = copy.copy(self)
        other.code_tools = offered
        return other

    @property
    def _tools(self) -> tuple[ToolDefinition, ...]:
        """The tools offered: the live ones, then the code tools where they are."""
        if not self.code_tools:
            return TOOLS
        from szrag.tools.code import CODE_TOOLS

        return (*TOOLS, *CODE_TOOLS)

    def _tool_named(self, name: str) -> ToolDefinition | None:
        found = TOOLS_BY_NAME.get(name)
        if found is None and self.code_tools:
            from szrag.tools.code import CODE_TOOLS_BY_NAME

            found = CODE_TOOLS_BY_NAME.get(name)
        return found

    def definitions(self, *, privileged: bool | None = None) -> list[dict[str, Any]]:
        """The tools in the OpenAI function-tool form (admin tools only when privileged;
        ``privileged`` defaults to the adapter's own)."""
        allowed = self.privileged if privileged is None else privileged
        return [tool.to_openai() for tool in self._tools if allowed or not tool.admin]

    async def call(
        self,
        name: str,
        arguments: str | dict[str, Any] | None = None,
        *,
        identity: Identity | None = None,
        privileged: bool | None = None,
    ) -> ToolResult:
        """Run one tool call; failures come back as ``ok=False``, never as exceptions.

        An admin tool is refused unless ``privileged`` (default: the adapter's own) is true.
        """
        started = time.perf_counter()
        tool = self._tool_named(name)
        args: dict[str, Any] = {}
        allowed = self.privileged if privileged is None else privileged
        try:
            if tool is None:
                available = [item.name for item in self._tools if allowed or not item.admin]
                raise _Failure(
                    "unknown_tool",
                    f"unknown tool {name[:64]!r}; available: {', '.join(available)}",
                )
            if tool.admin and not allowed:
                raise _Failure("forbidden", f"{tool.name} is only available to administrators")
            args = self._parse_arguments(arguments)
            problems = validate(tool.parameters, args)
            if problems:
                raise _Failure("invalid_arguments", "; ".join(problems))
            content = await self._run(tool, args, identity or Identity.local())
        except _Failure as failure:
            return self._finish(tool, name, args, started, failure=failure)
        except Exception as error:  # a handler bug: reported to the model, kept for getErrors
            log.error("tool %s failed", name, exc_info=error)
            internal = _Failure("internal_error", f"{type(error).__name__}: {error}")
            return self._finish(tool, name, args, started, failure=internal)
        return self._finish(tool, name, args, started, content=content)

    # Steps -----------------------------------------------------------------------------

    @staticmethod
    def _parse_arguments(arguments: str | dict[str, Any] | None) -> dict[str, Any]:
        if arguments is None:
            return {}
        if isinstance(arguments, str):
            if not arguments.strip():
                return {}
            try:
                arguments = json.loads(arguments)
            except ValueError as error:
                raise _Failure("invalid_json", f"arguments are not valid JSON: {error}") from None
        if not isinstance(arguments, dict):
            raise _Failure(
                "invalid_arguments",
                f"arguments must be a JSON object, not {type(arguments).__name__}",
            )
        return arguments

    async def _run(self, tool: ToolDefinition, args: dict[str, Any], identity: Identity) -> Any:
        limit = self.timeout + (_COMMAND_GRACE if tool.kind == COMMAND_TOOL else 0.0)
        try:
            async with asyncio.timeout(limit) as scope:
                if tool.kind == CODE_TOOL:  # in a thread, so that the time limit holds
                    return await asyncio.to_thread(self._read_code_tool, tool.name, args)
                return await self._handlers[tool.name](args, identity)
        except TimeoutError:
            if not scope.expired():  # raised inside the handler: a failure like any other
                raise
            raise _Failure(
                "timeout", f"{tool.name} did not finish within {self.timeout:g} s and was cancelled"
            ) from None
        except CommandError as error:
            raise _Failure(error_code(error), error.message) from None
        except PathError as error:  # a code tool's file the index does not hold
            raise _Failure("not_found", error.message) from None
        except QuestionError as error:  # arguments the schema cannot rule out
            raise _Failure("invalid_arguments", error.message) from None
        except SzragError as error:
            raise _Failure("unavailable", error.message) from None

    def label_of(self, name: str) -> str | None:
        """How the model is told what a tool's result is: the code tools' label, or None for
        a live tool (the tool loop's live-data label)."""
        tool = self._tool_named(name)
        if tool is not None and tool.kind == CODE_TOOL:
            from szrag.tools.code import CODE_LABEL

            return CODE_LABEL
        return None

    def _read_code_tool(self, name: str, args: dict[str, Any]) -> Any:
        """A code tool's runner over the index answered from, or, when that one is bound to
        the thread that opened it (a one-shot command's), the same index file opened here."""
        from szrag.tools.code import RUNNERS

        if self.index is not None and self.index.reads_from_any_thread:
            return RUNNERS[name](self.index, args)
        from szrag.index import load_index

        root = self.index.root if self.index is not None else self.index_root
        with load_index(root, refresh=False) as index:
            return RUNNERS[name](index, args)

    def _finish(
        self,
        tool: ToolDefinition | None,
        name: str,
        args: dict[str, Any],
        started: float,
        *,
        content: Any = None,
        failure: _Failure | None = None,
    ) -> ToolResult:
        if failure is not None:
            content = FailedCall(ToolFailure(failure.kind, failure.message))
        safe, text = fit_output(sanitise(content), self.max_output_bytes)
        duration = (time.perf_counter() - started) * 1000
        status = (
            "completed" if failure is None else "timeout" if failure.kind == "timeout" else "failed"
        )
        self._report(tool, name, args, status, duration, failure)
        error = sanitise_text(failure.message) if failure is not None else None
        return ToolResult(name, failure is None, safe, text, duration, error)

    def _report(
        self,
        tool: ToolDefinition | None,
        name: str,
        args: dict[str, Any],
        status: str,
        duration_ms: float,
        failure: _Failure | None,
    ) -> None:
        record = getattr(self.runtime, "record_tool", None)
        if callable(record):
            try:
                record(name, status, duration_ms)
            except Exception:
                log.exception("recording tool metrics failed")
        if self.on_activity is None:
            return
        endpoint = tool.endpoint if tool else None
        shown_args = self._shown_arguments(tool, args)
        message = f"{name} {status} in {duration_ms:.0f} ms"
        if failure is not None:
            message = f"{name} {status}: {sanitise_text(failure.message, 300)}"
        event = ToolEvent(
            kind=tool.kind if tool else "api_request",
            tool=name,
            endpoint=endpoint,
            status=status,
            duration_ms=duration_ms,
            arguments=shown_args,
            message=message,
            error=(
                ToolFailure(failure.kind, sanitise_text(failure.message, 300))
                if failure is not None
                else None
            ),
        )
        try:
            self.on_activity(event)
        except Exception:
            log.exception("the activity callback failed")

    def _shown_arguments(self, tool: ToolDefinition | None, args: dict[str, Any]) -> Any:
        """Arguments as activities show them: sanitised, a sensitive command's input hidden."""
        if (
            tool is not None
            and tool.kind == COMMAND_TOOL
            and isinstance(args.get("commandId"), str)
        ):
            spec = self.registry.get(args["commandId"])
            if spec is not None and spec.sensitive and args.get("text"):
                args = {**args, "text": REDACTED}
        return sanitise(args)

    # Tools -----------------------------------------------------------------------------

    def _runnable(self, spec: CommandSpec) -> bool:
        return self.runner.policy.runnable(spec, "tool")

    async def _get_commands(
        self, args: dict[str, Any], identity: Identity
    ) -> CommandFound | CommandIds | CommandsFound:
        if "id" in args:
            spec = self.registry.get(args["id"])
            if spec is None or spec.id != args["id"].strip().lower():
                hint = self.registry.suggestions(args["id"])
                suffix = f"; did you mean {', '.join(hint)}?" if hint else ""
                raise UnknownCommand(f"no command with id {args['id']!r}{suffix}")
            return CommandFound(ListedCommand(spec, self._runnable(spec)))
        filters = {key: value for key, value in args.items() if isinstance(value, str)}
        if not filters:
            return CommandIds(self.registry.ids())
        found = tuple(
            ListedCommand(spec, self._runnable(spec))
            for spec in self.registry.specs()
            if _matches(spec, filters)
        )
        return CommandsFound(found, len(found))

    async def _run_command(
        self, args: dict[str, Any], identity: Identity
    ) -> CommandResult | WithheldOutput:
        result = await self.runner.run(
            str(args["commandId"]),
            args.get("text", ""),
            identity,
            source="tool",
            timeout=self.timeout,
        )
        if self.runner.policy.output_is_secret(result.id):
            # the output is a secret (a digest, a fresh token): the model learns only that it ran
            return WithheldOutput(
                result.id,
                result.command,
                (),
                "the output is secret and is not shown to you; tell the user to run "
                f"{result.command} themselves to see it",
            )
        return result

    async def _get_routes(self, args: dict[str, Any], identity: Identity) -> RoutesFound:
        try:
            if self.index is not None:
                routes = await asyncio.to_thread(routes_of, self.index)
            else:
                routes = await asyncio.to_thread(read_routes, self.index_root)
        except SzragError as error:
            raise ToolError(error.message) from error
        method = args.get("method", "").strip().upper()
        fragment = args.get("route", "").strip().lower()
        matching = [
            route
            for route in routes
            if (not method or route["method"] in (method, "ANY", "USE", "ALL"))
            and fragment in route["route"].lower()
        ]
        limit = args.get("limit", MAX_ROUTES)
        return RoutesFound(matching[:limit], len(matching), len(matching) > limit)
