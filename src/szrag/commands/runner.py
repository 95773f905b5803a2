"""Running a command: look it up, check the allowlist, call the handler under a timeout,
collect its responses, and tell observers (audit log, metrics) how it went.

Async handlers are cancelled when the time is up and see ``CancelledError`` at their current
``await``; a subprocess started with ``run_process`` is killed with them. A sync handler runs
in a worker thread, which Python cannot interrupt: the runner stops waiting for it and any
later ``respond()`` raises, so nothing it says after the deadline is used.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from szrag.base.errors import CommandError
from szrag.commands.allowlist import Allowlist
from szrag.commands.errors import (
    CommandFailed,
    CommandInputError,
    CommandTimeout,
    NoResponse,
    error_code,
)
from szrag.commands.model import (
    Asker,
    CommandContext,
    CommandOutcome,
    CommandResult,
    CommandSpec,
    Handler,
    Identity,
    Permit,
    Response,
)
from szrag.commands.policy import CommandPolicy
from szrag.commands.registry import CommandRegistry, default_registry, normalise_command_id
from szrag.runtime import BlockingRuntime, Runtime, as_runtime

log = logging.getLogger("szrag.commands")

DEFAULT_TIMEOUT = 10.0
MAX_TEXT_CHARS = 4000

Observer = Callable[[CommandOutcome], None]
"""Told about every execution, successful or not (audit log, metrics)."""


def _is_async(handler: Handler) -> bool:
    """True for coroutine functions and objects whose ``__call__`` is one."""
    call = type(handler).__call__ if not inspect.isfunction(handler) else None
    return inspect.iscoroutinefunction(handler) or (
        call is not None and inspect.iscoroutinefunction(call)
    )


async def _call(handler: Handler, context: CommandContext) -> None:
    if _is_async(handler):
        await handler(context)  # type: ignore[misc]
        return
    result = await asyncio.to_thread(handler, context)
    if result is not None:  # a plain function that handed back a coroutine to run
        await result


class CommandRunner:
    """Runs commands under one :class:`CommandPolicy`, reporting every outcome (refusals
    included) to observers.

    ``registry`` and ``allowlist`` are shorthand for ``CommandPolicy(registry, allowlist)``.
    """

    def __init__(
        self,
        policy: CommandPolicy | None = None,
        *,
        registry: CommandRegistry | None = None,
        allowlist: Allowlist | None = None,
        observers: Sequence[Observer] = (),
        timeout: float = DEFAULT_TIMEOUT,
        root: Path | str = ".",
        runtime: Runtime | BlockingRuntime | None = None,
    ) -> None:
        if policy is None:
            policy = CommandPolicy(registry or default_registry(), allowlist or Allowlist())
        self.policy = policy
        self.observers = tuple(observers)
        self.timeout = timeout
        self.root = Path(root)
        # what commands read (``/sz-release``), a Runtime from here on
        self.runtime = as_runtime(runtime) if runtime is not None else None
        self.asker: Asker | None = None  # bound by the host that owns this runner

    def answer_questions_with(self, asker: Asker) -> None:
        """Let commands that ask a question (``/sz-ask``) ask it through ``asker``."""
        self.asker = asker

    @property
    def registry(self) -> CommandRegistry:
        """The commands this runner knows."""
        return self.policy.registry

    def resolve(self, command_id: str, source: str = "host") -> CommandSpec:
        """The command that would run for ``source``, or the reason it cannot (nothing is
        reported; :meth:`check` reports refusals)."""
        return self.policy.check(command_id, source)

    def check(self, command_id: str, identity: Identity, *, source: str) -> CommandSpec:
        """The command that would run for ``identity`` from ``source``; a refusal raises
        CommandError and is reported to the observers like any other outcome."""
        try:
            return self.policy.check(command_id, source)
        except CommandError as error:
            spec = self.registry.get(command_id)
            self._notify(
                CommandOutcome(
                    command_id=spec.id if spec else normalise_command_id(command_id),
                    text="",
                    identity=identity,
                    source=source,
                    status=error_code(error),
                    duration_ms=0.0,
                    message=error.message,
                    sensitive=bool(spec and spec.sensitive),
                    error=error,
                )
            )
            raise

    def admit(self, command_id: str, identity: Identity, *, source: str) -> Permit:
        """:meth:`check` once, kept as a permit that :meth:`run` takes without checking again."""
        return Permit(self.check(command_id, identity, source=source), source)

    async def run(
        self,
        command: str | Permit,
        text: str = "",
        identity: Identity | None = None,
        *,
        source: str = "host",
        timeout: float | None = None,
    ) -> CommandResult:
        """Run one command and return its responses; failures raise CommandError subclasses.

        ``command`` is an id, checked against the policy for ``source``, or a :class:`Permit`
        the policy already gave (its source is the one recorded)."""
        started = time.perf_counter()
        permit = command if isinstance(command, Permit) else None
        command_id = permit.spec.id if permit is not None else str(command)
        source = permit.source if permit is not None else source
        identity = identity or Identity.local()
        text = (text or "").strip()
        spec: CommandSpec | None = None
        responses: tuple[Response, ...] = ()
        status, message = "ok", ""
        failure: BaseException | None = None
        try:
            if len(text) > MAX_TEXT_CHARS:
                raise CommandInputError(f"command input is longer than {MAX_TEXT_CHARS} characters")
            spec = permit.spec if permit is not None else self.resolve(command_id, source)
            limit = timeout if timeout is not None else spec.timeout or self.timeout
            responses = await self._execute(spec, text, identity, limit)
            if not responses:
                raise NoResponse(f"{spec.name} finished without a response")
            return CommandResult(id=spec.id, command=spec.name, responses=responses)
        except CommandError as error:
            status, message, failure = error_code(error), error.message, error
            raise
        except asyncio.CancelledError:
            status, message = "cancelled", "the caller cancelled the command"
            raise
        finally:
            outcome = CommandOutcome(
                command_id=spec.id if spec else normalise_command_id(command_id),
                text=text,
                identity=identity,
                source=source,
                status=status,
                duration_ms=(time.perf_counter() - started) * 1000,
                responses=len(responses),
                message=message,
                sensitive=bool(spec and spec.sensitive),
                error=failure,
            )
            self._notify(outcome)

    async def _execute(
        self, spec: CommandSpec, text: str, identity: Identity, limit: float
    ) -> tuple[Response, ...]:
        assert spec.handler is not None
        context = CommandContext(
            spec,
            text,
            identity,
            self.registry,
            root=self.root,
            runtime=self.runtime,
            ask=self.asker,
        )
        try:
            async with asyncio.timeout(limit) as scope:
                await _call(spec.handler, context)
        except TimeoutError as error:
            if scope.expired():
                raise CommandTimeout(
                    f"{spec.name} did not finish within {limit:g} s and was cancelled"
                ) from None
            raise CommandFailed(f"{spec.name} failed: timed out inside the handler") from error
        except CommandError:
            raise
        except Exception as error:
            raise CommandFailed(f"{spec.name} failed: {type(error).__name__}: {error}") from error
        finally:
            responses = context.close()
        if scope.expired():  # the handler swallowed its cancellation
            raise CommandTimeout(f"{spec.name} did not finish within {limit:g} s and was cancelled")
        return responses

    def _notify(self, outcome: CommandOutcome) -> None:
        for observer in self.observers:
            try:
                observer(outcome)
            except Exception:
                log.exception("command observer %r failed", observer)


async def run_command(
    command_id: str,
    text: str = "",
    identity: Identity | None = None,
    *,
    registry: CommandRegistry | None = None,
    allowlist: Allowlist | None = None,
    observers: Sequence[Observer] = (),
    timeout: float | None = None,
    source: str = "host",
    root: Path | str = ".",
    runtime: Runtime | BlockingRuntime | None = None,
) -> CommandResult:
    """Run a command of ``registry`` (default: built-ins and plugins) with ``identity``."""
    runner = CommandRunner(
        registry=registry,
        allowlist=allowlist,
        observers=observers,
        root=Path(root),
        runtime=runtime,
    )
    return await runner.run(command_id, text, identity, source=source, timeout=timeout)
