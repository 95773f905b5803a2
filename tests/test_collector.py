"""The collector's automatic passes pause while long-lived views are built, and come back as
they were, however the blocks nest, overlap across threads or fail."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from szrag.base.collector import collections_paused
from szrag.index import load_index


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        if not was:
            gc.disable()


def test_a_block_pauses_the_collector_and_restores_it(collector_on: None) -> None:
    with collections_paused():
        assert not gc.isenabled()
        with collections_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block is still building
    assert gc.isenabled()
    with pytest.raises(ValueError), collections_paused():
        raise ValueError("a build that fails")
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off(collector_on: None) -> None:
    gc.disable()
    with collections_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_blocks_in_two_threads_restore_it_when_the_last_ends(collector_on: None) -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with collections_paused():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert entered.wait(10)
    with collections_paused():
        pass
    assert not gc.isenabled()  # the other thread's block is still under way
    release.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_view_is_built_with_the_collector_paused(collector_on: None, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def app():\n    return 1\n", "utf-8")
    with load_index(tmp_path) as index:
        seen = index.derived("test.view", gc.isenabled)
        assert seen is False
        assert gc.isenabled()
