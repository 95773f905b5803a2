"""The runner: results, each kind of failure, timeouts that cancel, observers."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import pytest

from szrag.base.errors import CommandError, ContextClosed
from szrag.commands import (
    Allowlist,
    CommandContext,
    CommandFailed,
    CommandInputError,
    CommandNotAllowed,
    CommandOutcome,
    CommandRegistry,
    CommandRunner,
    CommandSpec,
    CommandTimeout,
    Identity,
    MissingHandler,
    NoResponse,
    UnknownCommand,
    builtin_registry,
    run_command,
)


@pytest.fixture
def registry() -> CommandRegistry:
    """The built-in commands, in a registry no other test shares."""
    return builtin_registry()


def _runner(registry: CommandRegistry, **kwargs: object) -> CommandRunner:
    return CommandRunner(registry=registry, **kwargs)  # type: ignore[arg-type]


async def test_result_has_the_spec_shape(registry: CommandRegistry) -> None:
    result = await _runner(registry).run("ping")
    assert result.to_dict() == {
        "id": "ping",
        "command": "/sz-ping",
        "responses": [{"text": "pong"}],
    }
    assert result.text == "pong"


async def test_slash_names_and_case_are_accepted(registry: CommandRegistry) -> None:
    for name in ("/sz-ping", "sz-ping", "PING", " /ping "):
        assert (await _runner(registry).run(name)).id == "ping"


async def test_unknown_command_suggests_close_ids(registry: CommandRegistry) -> None:
    with pytest.raises(UnknownCommand) as caught:
        await _runner(registry).run("pnig")
    assert "unknown command 'pnig'" in caught.value.message
    assert "ping" in caught.value.message
    assert caught.value.code == "unknown_command"


async def test_command_not_on_the_allowlist_is_refused(registry: CommandRegistry) -> None:
    runner = _runner(registry, allowlist=Allowlist.of(["ping"]))
    with pytest.raises(CommandNotAllowed) as caught:
        await runner.run("echo", "hi", source="inference")
    assert "not on the allowlist" in caught.value.message
    assert (await runner.run("ping", source="inference")).text == "pong"
    # a person who names the command runs it whatever the allowlist says
    assert (await runner.run("echo", "hi", source="cli")).text == "hi"


async def test_missing_handler(registry: CommandRegistry) -> None:
    registry.register(CommandSpec("deploy", "Deploy the app."))
    with pytest.raises(MissingHandler) as caught:
        await _runner(registry).run("deploy")
    assert "without a handler" in caught.value.message


async def test_handler_error_becomes_command_failed(registry: CommandRegistry) -> None:
    async def broken(context: CommandContext) -> None:
        raise ValueError("disk on fire")

    registry.register(CommandSpec("broken", "Fails.", broken))
    with pytest.raises(CommandFailed) as caught:
        await _runner(registry).run("broken")
    assert caught.value.message == "/sz-broken failed: ValueError: disk on fire"
    assert isinstance(caught.value.__cause__, ValueError)


async def test_no_response(registry: CommandRegistry) -> None:
    async def silent(context: CommandContext) -> None:
        return None

    registry.register(CommandSpec("silent", "Says nothing.", silent))
    with pytest.raises(NoResponse) as caught:
        await _runner(registry).run("silent")
    assert caught.value.message == "/sz-silent finished without a response"


async def test_timeout_cancels_an_async_handler(registry: CommandRegistry) -> None:
    observed: list[str] = []

    async def slow(context: CommandContext) -> None:
        context.respond("started")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            observed.append("cancelled")
            raise

    registry.register(CommandSpec("slow", "Sleeps.", slow))
    started = time.perf_counter()
    with pytest.raises(CommandTimeout) as caught:
        await _runner(registry).run("slow", timeout=0.1)
    assert time.perf_counter() - started < 2
    assert observed == ["cancelled"]
    assert "did not finish within 0.1 s" in caught.value.message


async def test_handler_that_swallows_cancellation_still_times_out(
    registry: CommandRegistry,
) -> None:
    async def stubborn(context: CommandContext) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(30)
        context.respond("too late")

    registry.register(CommandSpec("stubborn", "Ignores cancellation.", stubborn))
    with pytest.raises(CommandTimeout):
        await _runner(registry).run("stubborn", timeout=0.1)


async def test_spec_timeout_and_default_timeout(registry: CommandRegistry) -> None:
    async def slow(context: CommandContext) -> None:
        await asyncio.sleep(30)

    registry.register(CommandSpec("slow", "Sleeps.", slow, timeout=0.05))
    with pytest.raises(CommandTimeout):
        await _runner(registry, timeout=60).run("slow")


async def test_sync_handler_runs_in_a_thread(registry: CommandRegistry) -> None:
    loop_thread = threading.get_ident()

    def sync(context: CommandContext) -> None:
        context.respond("from a thread" if threading.get_ident() != loop_thread else "loop")

    registry.register(CommandSpec("sync", "Sync.", sync))
    assert (await _runner(registry).run("sync")).text == "from a thread"


async def test_sync_handler_past_its_time_cannot_respond_later(registry: CommandRegistry) -> None:
    release = threading.Event()
    late: list[BaseException] = []

    def blocking(context: CommandContext) -> None:
        release.wait(5)
        try:
            context.respond("late")
        except ContextClosed as error:
            late.append(error)

    registry.register(CommandSpec("blocking", "Blocks.", blocking))
    with pytest.raises(CommandTimeout):
        await _runner(registry).run("blocking", timeout=0.1)
    release.set()
    for _ in range(100):
        if late:
            break
        await asyncio.sleep(0.01)
    assert late and "after its run ended" in str(late[0])


async def test_blocks_are_kept_and_reduced_to_text(registry: CommandRegistry) -> None:
    async def rich(context: CommandContext) -> None:
        context.respond(
            blocks=[
                {"type": "section", "text": {"type": "mrkdwn", "text": "*Deploy* done"}},
                {"type": "context", "elements": [{"type": "plain_text", "text": "in 3 s"}]},
            ]
        )
        context.respond("second")

    registry.register(CommandSpec("rich", "Blocks.", rich))
    result = await _runner(registry).run("rich")
    first = result.to_dict()["responses"][0]
    assert first["text"] == "*Deploy* done\nin 3 s"
    assert first["blocks"][0]["type"] == "section"
    assert result.text == "*Deploy* done\nin 3 s\n\nsecond"


async def test_respond_needs_text_or_blocks(registry: CommandRegistry) -> None:
    async def empty(context: CommandContext) -> None:
        context.respond()

    registry.register(CommandSpec("empty", "Bad respond.", empty))
    with pytest.raises(CommandFailed, match="needs text or blocks"):
        await _runner(registry).run("empty")


async def test_overlong_input_is_refused(registry: CommandRegistry) -> None:
    with pytest.raises(CommandInputError, match="longer than 4000"):
        await _runner(registry).run("echo", "x" * 4001)


async def test_observers_see_every_outcome(registry: CommandRegistry) -> None:
    seen: list[CommandOutcome] = []

    def broken_observer(outcome: CommandOutcome) -> None:
        raise RuntimeError("observer bug")

    runner = _runner(registry, observers=[broken_observer, seen.append])
    who = Identity(user_id="U1", user_name="ada", channel_id="C1", team_id="T1")
    await runner.run("echo", "hello", who, source="tool")
    with pytest.raises(CommandError):
        await runner.run("nope", "", who)
    with pytest.raises(CommandError):
        await runner.run("echo", "", who)
    assert [(o.command_id, o.status) for o in seen] == [
        ("echo", "ok"),
        ("nope", "unknown_command"),
        ("echo", "bad_input"),
    ]
    assert seen[0].identity == who and seen[0].source == "tool" and seen[0].responses == 1
    assert seen[0].text == "hello" and seen[0].duration_ms >= 0
    assert seen[2].message.startswith("echo needs some text")


async def test_caller_cancellation_is_reported_and_propagates(registry: CommandRegistry) -> None:
    seen: list[CommandOutcome] = []

    async def slow(context: CommandContext) -> None:
        await asyncio.sleep(30)

    registry.register(CommandSpec("slow", "Sleeps.", slow))
    task = asyncio.create_task(_runner(registry, observers=[seen.append]).run("slow"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen[0].status == "cancelled"


async def test_run_command_function_uses_the_given_registry(registry: CommandRegistry) -> None:
    result = await run_command("calc", "6*7", registry=registry)
    assert result.text == "6*7 = 42"


async def test_identity_reaches_the_handler(registry: CommandRegistry) -> None:
    async def whoami(context: CommandContext) -> None:
        context.respond(f"{context.identity.user_name} in {context.identity.channel_id}")

    registry.register(CommandSpec("whoami", "Who am I.", whoami))
    who = Identity(user_id="U9", user_name="grace", channel_id="C7", team_id="T1")
    assert (await _runner(registry).run("whoami", "", who)).text == "grace in C7"


def test_local_identity_names_the_user() -> None:
    local = Identity.local()
    assert local.user_id.startswith("local:")
    assert local.channel_id == "cli"
    assert local.to_dict()["userName"] == local.user_name
