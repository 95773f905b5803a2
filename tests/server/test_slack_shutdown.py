"""Closing the Slack face releases listeners waiting for answers; its threads are daemons."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from szrag.base.errors import ServerClosing
from szrag.index.shared import open_shared_index
from szrag.server import RateLimit, ServerSettings
from szrag.server.ratelimit import RateLimiter
from szrag.server.service import AskService
from szrag.server.slack import SlackFace
from szrag.server.threads import DaemonThreadPool
from szrag.service.audit import AuditLog
from szrag.service.host import Host


def face_for(root: Path, loop: asyncio.AbstractEventLoop) -> tuple[SlackFace, AskService]:
    index = open_shared_index(root)
    host = Host.from_env(root, {}, audit=AuditLog.disabled(), live_tools=False, index=index)
    service = AskService(host)
    settings = ServerSettings(slack_signing_secret="secret", watch=False)
    return SlackFace(service, settings, RateLimiter(RateLimit(0, 0)), loop), service


async def test_closing_releases_a_listener_waiting_for_an_answer(web_repo: Path) -> None:
    face, service = face_for(web_repo, asyncio.get_running_loop())
    cancelled = asyncio.Event()
    outcome: list[BaseException | None] = []

    async def slow_answer() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    def listener() -> None:
        try:
            face._on_loop(slow_answer())
            outcome.append(None)
        except Exception as error:
            outcome.append(error)

    thread = threading.Thread(target=listener, daemon=True)
    thread.start()
    await asyncio.sleep(0.2)  # the listener is now blocked on the answer
    started = time.monotonic()
    face.close()
    await asyncio.to_thread(thread.join, 5)
    await asyncio.wait_for(cancelled.wait(), 5)
    service.index.close()

    assert not thread.is_alive() and time.monotonic() - started < 2.0
    assert len(outcome) == 1 and isinstance(outcome[0], ServerClosing)


async def test_after_closing_nothing_new_is_sent_to_the_loop(web_repo: Path) -> None:
    face, service = face_for(web_repo, asyncio.get_running_loop())
    face.close()

    async def never() -> None:
        raise AssertionError("ran after close")

    with pytest.raises(ServerClosing):
        await asyncio.to_thread(face._on_loop, never())
    service.index.close()


def test_the_pool_runs_work_on_daemon_threads() -> None:
    pool = DaemonThreadPool(2, thread_name_prefix="test-pool")
    futures = [pool.submit(lambda: threading.current_thread().daemon) for _ in range(4)]

    assert [future.result(5) for future in futures] == [True] * 4
    pool.shutdown(wait=True)
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)


def test_shutting_down_can_cancel_queued_work() -> None:
    pool = DaemonThreadPool(1)
    gate = threading.Event()
    running = pool.submit(gate.wait, 5)
    queued = pool.submit(lambda: "late")
    deadline = time.monotonic() + 5
    while not running.running() and time.monotonic() < deadline:
        time.sleep(0.01)

    pool.shutdown(wait=False, cancel_futures=True)
    gate.set()

    assert running.result(5) is True and queued.cancelled()
