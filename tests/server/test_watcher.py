"""The file watcher keeps the index fresh while the server runs."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from szrag.code.model import SymbolMatches
from szrag.code.symbol_table import SymbolTable
from szrag.index import Index, RefreshReport, refresh_index
from szrag.index.postings import memory_postings
from szrag.index.shared import open_shared_index
from szrag.rank.bm25 import FIELD_WEIGHTS
from szrag.rank.retrieve import retrieve
from szrag.server.settings import RateLimit
from szrag.service.watch import IndexWatcher, changed_count, start_warming, warm_views
from szrag.structure.queries import _RouteLookup, find_symbols

StartServer = Callable[..., str]


IMAGE = "docs/diagrams/architecture-diagram.png"


def poll(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def sources_for(client: httpx.Client, question: str) -> list[str]:
    reply = client.post("/api/ask", json={"question": question, "withAi": False}).json()
    assert "data" in reply, reply
    data = reply["data"]
    return [source["path"] for source in data["sources"]]


def test_edits_new_files_and_images_reach_the_index_without_a_restart(
    start_server: StartServer, web_repo: Path
) -> None:
    base = start_server(watch=True, watch_debounce_ms=100)
    with httpx.Client(base_url=base) as client:
        assert "docs/zeppelin.md" not in sources_for(client, "zeppelin hangar")
        (web_repo / "docs" / "zeppelin.md").write_text(
            "# Zeppelin hangar\n\nThe zeppelin hangar.\n"
        )
        poll(lambda: "docs/zeppelin.md" in sources_for(client, "zeppelin hangar"))

        (web_repo / "docs" / "diagrams" / "hangar.png").write_bytes((web_repo / IMAGE).read_bytes())
        poll(lambda: client.get("/docs/diagrams/hangar.png").status_code == 200)

        (web_repo / "docs" / "zeppelin.md").unlink()
        poll(lambda: "docs/zeppelin.md" not in sources_for(client, "zeppelin hangar"))
        poll(lambda: client.get("/api/status").json()["data"]["views"] == "ready")
        status = client.get("/api/status").json()["data"]["watcher"]

    assert status["running"] is True and status["mode"] == "watch"
    assert status["refreshes"] >= 3 and status["lastError"] is None


def test_a_name_watchfiles_cannot_decode_does_not_stop_the_watcher(
    start_server: StartServer, web_repo: Path
) -> None:
    base = start_server(watch=True, watch_debounce_ms=50, ask_rate=RateLimit(0, 0))
    with httpx.Client(base_url=base) as client:
        poll(lambda: client.get("/api/status").json()["data"]["watcher"]["running"])
        with open(os.fsencode(web_repo) + b"/docs/bad_\xff\xfe.md", "w") as handle:
            handle.write("# Hidden\n")

        def failures() -> int:
            watcher = client.get("/api/status").json()["data"]["watcher"]
            return int(watcher["watchFailures"])

        poll(failures)
        (web_repo / "docs" / "wombat.md").write_text("# Wombat burrow\n\nThe wombat burrow.\n")
        poll(lambda: "docs/wombat.md" in sources_for(client, "wombat burrow"))
        status = client.get("/api/status").json()["data"]

    watcher = status["watcher"]
    assert watcher["running"] is True and watcher["mode"] == "watch"
    assert "Unable to decode path" in watcher["lastWatchError"]
    assert status["index"]["skipped"] >= 1


async def test_a_watcher_failing_again_and_again_falls_back_to_polling(web_repo: Path) -> None:
    attempts: list[int] = []

    async def failing(root: Path, debounce_ms: int, stop: anyio.Event) -> AsyncIterator[object]:
        attempts.append(debounce_ms)
        raise ExceptionGroup("unhandled errors in a TaskGroup", [RuntimeError("boom")])
        yield set()  # an async generator, as watchfiles' awatch is

    with open_shared_index(web_repo) as index:
        watcher = IndexWatcher(
            index, watcher=failing, restart_limit=3, fallback_interval=60.0, warmer=None
        )
        watcher.start()
        for _ in range(200):
            if watcher.state.mode == "poll":
                break
            await asyncio.sleep(0.01)
        state = watcher.state
        await watcher.stop()

    assert len(attempts) == 3 and state.mode == "poll" and state.running
    assert state.watch_failures == 3 and state.last_watch_error == "RuntimeError: boom"
    assert state.refreshes == 2  # after each failure but the last, the missed changes


def test_the_index_directory_does_not_trigger_refreshes(
    start_server: StartServer, web_repo: Path
) -> None:
    base = start_server(watch=True, watch_debounce_ms=50)
    with httpx.Client(base_url=base) as client:
        poll(lambda: client.get("/api/status").json()["data"]["watcher"]["running"])
        before = client.get("/api/status").json()["data"]["watcher"]["refreshes"]
        for _ in range(3):  # each ask appends to .rag/audit.log
            client.post("/api/ask", json={"question": "gateway", "withAi": False})
        (web_repo / ".rag" / "scratch.txt").write_text("not part of the repository")
        # a change to the repository itself: once it is searchable, the writes before it
        # have been seen too
        (web_repo / "docs" / "barrier.md").write_text("# Quokka barrier\n")
        poll(lambda: "docs/barrier.md" in sources_for(client, "quokka barrier"))

        def refreshes() -> int:
            return int(client.get("/api/status").json()["data"]["watcher"]["refreshes"])

        # the refresh is counted once its views are warm, a moment after it is searchable
        poll(lambda: refreshes() > before)
        after = refreshes()

    assert after == before + 1


async def test_a_failing_refresh_is_kept_in_the_state(web_repo: Path) -> None:
    def broken(index: Index) -> RefreshReport:
        raise OSError("disk on fire")

    with open_shared_index(web_repo) as index:
        watcher = IndexWatcher(index, refresher=broken)
        assert await watcher.refresh() is None
        await watcher.stop()

    assert watcher.state.last_error == "disk on fire"
    assert watcher.state.refreshes == 0 and watcher.state.running is False


async def test_a_refresh_reports_what_changed(web_repo: Path) -> None:
    with open_shared_index(web_repo) as index:
        watcher = IndexWatcher(index)
        (web_repo / "notes.md").write_text("# Notes\n")
        report = await watcher.refresh()
        await watcher.stop()

    assert report is not None and report.added == ["notes.md"]
    assert changed_count(report) == 1
    assert watcher.state.refreshes == 1 and watcher.state.last_changed == 1


@pytest.mark.parametrize("debounce", [0, -5])
def test_the_debounce_is_at_least_a_millisecond(web_repo: Path, debounce: int) -> None:
    with open_shared_index(web_repo) as index:
        assert IndexWatcher(index, debounce_ms=debounce).debounce_ms == 1


async def test_stopping_does_not_wait_forever_for_a_stuck_refresh(web_repo: Path) -> None:
    entered, release = threading.Event(), threading.Event()

    def stuck(index: Index) -> RefreshReport:
        entered.set()
        release.wait(30)
        raise OSError("released")

    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    with open_shared_index(web_repo) as index:
        watcher = IndexWatcher(index, refresher=stuck, stop_timeout=0.3)
        refreshing = asyncio.create_task(watcher.refresh())
        ticker = asyncio.create_task(tick())
        await asyncio.to_thread(entered.wait, 5)
        started, before = time.monotonic(), ticks
        await watcher.stop()
        elapsed, during = time.monotonic() - started, ticks - before
        release.set()
        assert await refreshing is None  # the refresh still ends, with its failure kept
        ticker.cancel()

    assert 0.25 <= elapsed < 2.0
    assert during >= 5, "the event loop was blocked while stopping"
    assert watcher.state.running is False


async def test_a_refresh_warms_the_shared_views_off_the_event_loop(web_repo: Path) -> None:
    warmed_in: list[str] = []

    def warmer(index: Index) -> None:
        warm_views(index)
        warmed_in.append(threading.current_thread().name)

    def not_cached() -> object:
        raise AssertionError("the view was built by the question, not by the refresh")

    with open_shared_index(web_repo) as index:
        watcher = IndexWatcher(index, warmer=warmer)
        (web_repo / "notes.md").write_text("# Notes\n")
        await watcher.refresh()

        # the route view of the new generation, for an index not kept in memory (its symbols
        # and code files are read by their words, its files one by one)
        async def first_question_view() -> object:
            return index.derived("code.routes.lookup", not_cached)

        routes = await asyncio.create_task(first_question_view())
        await watcher.stop()

    assert warmed_in and warmed_in[0].startswith("szrag-refresh")
    assert isinstance(routes, _RouteLookup)
    assert "src/gateway.js" in {path for path, _, _ in routes.routes}


async def test_a_face_reads_from_the_store_until_its_first_views_are_built(
    web_repo: Path,
) -> None:
    def not_cached() -> object:
        raise AssertionError("the view was built by the question, not by the warm-up")

    with open_shared_index(web_repo) as index:
        assert not index.in_memory
        with index.warming():  # the warming thread keeps views; the others read the store
            inside = index.in_memory
            elsewhere = await asyncio.to_thread(lambda: index.in_memory)
        assert (inside, elsewhere, index.in_memory) == (True, False, False)
        from_the_store = find_symbols("how are tokens taken?", index)
        assert from_the_store and not index.carried("code.symbols.table", None)

        await start_warming(index)
        assert index.in_memory
        table = index.derived("code.symbols.table", not_cached)
        assert isinstance(table, SymbolTable)
        assert list(find_symbols("how are tokens taken?", index)) == list(from_the_store)


def test_a_warm_up_builds_its_views_between_questions(web_repo: Path) -> None:
    order: list[str] = []
    entered, release = threading.Event(), threading.Event()

    def question() -> None:
        with index.reading():
            entered.set()
            release.wait(10)

    def warm() -> None:
        with index.warming():
            index.derived("test.view", lambda: order.append("built"))
            # a view another view's build asks for is not held back: a question may wait on it
            index.derived("test.outer", lambda: index.derived("test.inner", lambda: 1))

    with open_shared_index(web_repo) as index:
        asking = threading.Thread(target=question)
        asking.start()
        assert entered.wait(10)
        warming = threading.Thread(target=warm)
        warming.start()
        time.sleep(0.3)
        order.append("answered")
        release.set()
        asking.join(10)
        warming.join(10)
        assert index.derived("test.inner", lambda: 2) == 1
    assert order == ["answered", "built"]


async def test_the_words_of_a_faces_first_questions_are_read_with_its_views(
    web_repo: Path,
) -> None:
    with open_shared_index(web_repo) as index:
        assert retrieve("rate limit buckets", index=index)  # before the views: from the store
        await start_warming(index)
        view = memory_postings(index, FIELD_WEIGHTS)
        assert view is not None
        assert all(view.cached(phrase) for phrase in ("rate", "limit", "buckets"))


def test_a_question_during_the_warm_up_uses_the_views_built_already(web_repo: Path) -> None:
    question = "how are tokens taken?"
    with open_shared_index(web_repo) as index:
        from_the_store = find_symbols(question, index)
        assert type(from_the_store) is SymbolMatches and from_the_store
        with index.warming():  # the warm-up builds the symbol table
            find_symbols(question, index)
        assert not index.in_memory and isinstance(index.built("code.symbols.table"), SymbolTable)
        from_the_table = find_symbols(question, index)
        assert type(from_the_table) is not SymbolMatches
        assert list(from_the_table) == list(from_the_store)


async def test_a_face_whose_warm_up_fails_still_keeps_its_views(
    web_repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with open_shared_index(web_repo) as index:
        index.route_rows = broken_reads  # type: ignore[method-assign]
        await start_warming(index)
        assert index.in_memory  # the first question builds them and says why it cannot
    assert "could not prepare the index views: no routes today" in caplog.text


async def test_a_face_prepares_what_answers_load_before_its_views(
    web_repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    order: list[str] = []

    def prepare() -> None:
        order.append(f"prepared, views kept: {index.in_memory}")

    with open_shared_index(web_repo) as index:
        await start_warming(index, prepare=prepare)
        assert order == ["prepared, views kept: False"] and index.in_memory

    def broken() -> None:
        raise RuntimeError("no tokenizer today")

    with open_shared_index(web_repo) as index:
        await start_warming(index, prepare=broken)
        assert isinstance(index.built("code.symbols.table"), SymbolTable)  # views built anyway
    assert "could not prepare for answers: no tokenizer today" in caplog.text


def broken_reads() -> list[tuple[str, str]]:
    raise OSError("no routes today")


async def test_a_failing_warm_up_does_not_fail_the_refresh(web_repo: Path) -> None:
    def broken(index: Index) -> None:
        raise RuntimeError("no views today")

    with open_shared_index(web_repo) as index:
        watcher = IndexWatcher(index, warmer=broken)
        report = await watcher.refresh()
        await watcher.stop()

    assert report is not None and watcher.state.last_error is None


async def test_a_refresh_that_finds_the_database_damaged_rebuilds_it(web_repo: Path) -> None:
    from szrag.base.errors import DamagedIndexError
    from szrag.index import refresh_index

    calls: list[str] = []

    def damaged_once(index: Index) -> RefreshReport:
        calls.append("refresh")
        if len(calls) == 1:
            raise DamagedIndexError("database disk image is malformed")
        return refresh_index(index)

    with open_shared_index(web_repo) as index:
        watcher = IndexWatcher(index, refresher=damaged_once)
        report = await watcher.refresh()
        await watcher.stop()
        heals, health = index.heals, index.health
        found = retrieve("gateway", index=index)

    assert report is not None and calls == ["refresh", "refresh"]
    assert heals == 1 and health == "ok" and found
    assert watcher.state.last_error is None
    assert any(".corrupt-" in path.name for path in (web_repo / ".rag").iterdir())


def test_warmed_views_are_kept_out_of_collections_and_freed_when_dropped(web_repo: Path) -> None:
    import gc
    import weakref

    from szrag.index.postings import VIEW

    def built_already() -> object:
        raise AssertionError("the view was not built by warming")

    with open_shared_index(web_repo) as index:
        index.keep_in_memory()
        warm_views(index)
        symbols = index.derived("code.symbols.table", built_already)
        postings = index.derived(VIEW, built_already)
        # frozen: a collection no longer walks them (nor anything they hold)
        assert not any(item is symbols for item in gc.get_objects())
        assert not any(item is postings for item in gc.get_objects())
        assert gc.get_freeze_count() > 0
        first = weakref.ref(postings)
        del symbols, postings
        for number in range(3):  # generations beyond the two kept are dropped
            (web_repo / f"notes{number}.md").write_text(f"# Notes {number}\n")
            refresh_index(index)
            warm_views(index)
        assert first() is None  # reference counting still frees a frozen view


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_freeze_between_full_passes_collects_only_what_is_not_frozen() -> None:
    import gc
    import weakref

    from szrag.service.watch import keep_out_of_collections

    keep_out_of_collections(full=True)
    frozen = _Cycle()
    keep_out_of_collections(full=False)  # ``frozen`` survives this one and is frozen by it
    held = weakref.ref(frozen)
    young = _Cycle()
    fresh = weakref.ref(young)
    del frozen, young
    keep_out_of_collections(full=False)
    assert fresh() is None  # garbage made since the last freeze is collected
    assert held() is not None  # a frozen cycle waits for the next full pass
    keep_out_of_collections(full=True)
    assert held() is None
    assert gc.get_freeze_count() > 0


def test_a_server_builds_the_shared_views_before_its_first_question(web_repo: Path) -> None:
    from szrag.base.settings import Settings
    from szrag.server import ServerSettings, create_app
    from szrag.server.testing import serve_asgi

    app = create_app(web_repo, settings=ServerSettings(watch=False), answer_settings=Settings())
    with serve_asgi(app) as base, httpx.Client(base_url=base) as client:
        assert client.get("/healthz").status_code == 200
        index = app.state.szrag.service.index
        deadline = time.monotonic() + 20
        built: object = None
        while built is None and time.monotonic() < deadline:
            # looked at without building it (``derived`` would build it here)
            built = index._derived.get(index.generation(), {}).get("code.symbols.table")
            time.sleep(0.05)
    assert isinstance(built, SymbolTable) and "src/gateway.js" in built.files
