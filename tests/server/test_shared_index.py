"""One index read from many threads and tasks while the watcher's thread refreshes it."""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from szrag.base.errors import IndexStoreError
from szrag.index import refresh_index
from szrag.index.shared import SharedIndex, open_shared_index
from szrag.rank.retrieve import retrieve, retrieve_images


def test_each_thread_reads_through_its_own_connection(web_repo: Path) -> None:
    with open_shared_index(web_repo) as index:
        assert isinstance(index, SharedIndex)
        main = index.conn
        other = ThreadPoolExecutor(1).submit(lambda: index.conn).result()

        assert main is index.conn and other is not main
        assert index.connection_count == 2


async def test_a_task_reads_one_snapshot_from_start_to_end(web_repo: Path) -> None:
    with open_shared_index(web_repo) as index:
        refreshed = asyncio.Event()

        async def question() -> tuple[int, int]:
            before = len(index.files())
            await refreshed.wait()  # the watcher refreshes while this question is open
            return before, len(index.files())

        task = asyncio.create_task(question())
        await asyncio.sleep(0)
        (web_repo / "docs" / "late.md").write_text("# Late\n")
        await asyncio.to_thread(refresh_index, index)
        refreshed.set()
        before, after = await task

        assert before == after == 3
        assert await asyncio.create_task(asyncio.to_thread(lambda: len(index.files()))) == 4
        assert await asyncio.create_task(_count(index)) == 4
        await asyncio.sleep(0)  # done callbacks run in the next loop step
        assert index.active_snapshots == 0


async def _count(index: SharedIndex) -> int:
    return len(index.files())


async def test_task_connections_are_pooled(web_repo: Path) -> None:
    with open_shared_index(web_repo) as index:
        for _ in range(20):
            await asyncio.gather(*(asyncio.create_task(_count(index)) for _ in range(3)))
            await asyncio.sleep(0)

        assert index.connection_count <= 3
        assert index.active_snapshots == 0


async def test_questions_on_the_loop_never_see_half_a_refresh(
    web_repo: Path, keep_in_memory: bool
) -> None:
    stop = threading.Event()
    with open_shared_index(web_repo) as index:
        index.keep_in_memory(keep_in_memory)

        def write() -> None:
            for number in range(12):
                if stop.is_set():
                    return
                (web_repo / f"docs/note{number}.md").write_text(
                    f"# Note {number}\n\ngateway bucket\n"
                )
                refresh_index(index)
            stop.set()

        async def question() -> None:
            sources = retrieve("gateway token bucket", index=index)
            await asyncio.sleep(0)  # other questions run here; this one keeps its snapshot
            images = retrieve_images("architecture diagram", index=index)
            assert sources and all(source.text for source in sources) and images

        async def read() -> int:
            answered = 0
            while not stop.is_set():
                await asyncio.create_task(question())
                answered += 1
            return answered

        writer = asyncio.get_running_loop().run_in_executor(None, write)
        try:
            counts = await asyncio.gather(*(read() for _ in range(4)))
        finally:
            stop.set()
            await writer  # the index must not close under the writer's feet

        assert all(count > 0 for count in counts)
        assert len(index.files()) == 3 + 12


def test_a_closed_index_refuses_every_thread(web_repo: Path) -> None:
    index = open_shared_index(web_repo)
    ThreadPoolExecutor(1).submit(index.counts).result()
    index.close()

    with pytest.raises(IndexStoreError, match="closed"):
        index.counts()
    with pytest.raises(IndexStoreError):
        ThreadPoolExecutor(1).submit(index.counts).result()


def test_the_connection_cannot_be_replaced(web_repo: Path) -> None:
    with open_shared_index(web_repo) as index, pytest.raises(AttributeError):
        index.conn = index.conn


@pytest.fixture(params=[False, True], ids=["sqlite", "memory"])
def keep_in_memory(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def open_index_files(index: SharedIndex) -> int:
    """How many of this process's file descriptors point at the index database."""
    fds = Path("/proc/self/fd")
    target = str(index.path)
    count = 0
    for fd in fds.iterdir():
        try:
            if os.readlink(fd) == target:
                count += 1
        except OSError:
            continue
    return count


def test_threads_that_come_and_go_do_not_leave_connections_open(web_repo: Path) -> None:
    with open_shared_index(web_repo) as index:
        index.conn.execute("SELECT 1")
        counts = []
        for _ in range(15):  # bursts of short-lived worker threads, as anyio's idle out
            workers = [
                threading.Thread(target=lambda: retrieve("gateway", index=index)) for _ in range(10)
            ]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            counts.append(index.connection_count)
        files = open_index_files(index)

    # a burst's connections are closed as the next burst opens its own: the count stays
    # bounded by the threads alive at once instead of growing by ten a burst
    assert max(counts) <= 1 + 10 + 10
    assert files <= 2 * (1 + 10 + 10)
