"""The deployment's one indexer (``szrag index --store URL --repo NAME=PATH --watch``): each
change published as a new generation, one indexer per repository, and an indexer killed
(SIGKILL) in the middle of a publish leaving the last generation served and its repository
free for the next indexer. Every indexer here is a real process."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import szrag
from szrag.index.pg import PostgresIndex
from szrag.rank.retrieve import retrieve

SOURCE = str(Path(szrag.__file__).resolve().parents[1])  # this checkout's szrag, for a child

# an indexer whose second publish stops, its transaction open, once its files' rows are sent
_STALLING_INDEXER = """
import sys, time
from szrag.cli import main
from szrag.index.pg import writer

replace = writer._replace
calls = []

def replace_then_stall(*args):
    replace(*args)
    calls.append(None)
    if len(calls) == 3:  # a publish replaces two small tables once the files' rows are in
        print("stalled", flush=True)
        time.sleep(600)

writer._replace = replace_then_stall
main(sys.argv[1:])
"""


class Child:
    """A szrag process whose output is read line by line as it comes."""

    def __init__(self, *arguments: str) -> None:
        environment = {
            key: value for key, value in os.environ.items() if not key.startswith(("AI_", "SZRAG_"))
        }
        environment.update(PYTHONPATH=SOURCE, PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen(
            [sys.executable, *arguments],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def wait_for(self, text: str, timeout: float = 60) -> str:
        """The first line from now on holding ``text``; fails after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} in: {''.join(self.seen)}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)


@pytest.fixture
def children() -> Iterator[list[Child]]:
    made: list[Child] = []
    yield made
    for child in made:
        child.stop()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "web"
    (root / "server").mkdir(parents=True)
    (root / "server/webhook.py").write_text(
        "def verify_signature(body, secret):\n    return hmac_compare(body, secret)\n"
    )
    (root / "README.md").write_text("# Deploy\n\nThe deploy webhook verifies each signature.\n")
    return root


def indexer(children: list[Child], url: str, repo: Path, *, script: str | None = None) -> Child:
    arguments = ["index", "--store", url, "--repo", f"web={repo}", "--watch"]
    child = Child("-c", script, *arguments) if script else Child("-m", "szrag", *arguments)
    children.append(child)
    return child


def served(url: str) -> tuple[str, list[str]]:
    """The generation replicas read now, and what it finds for a zebra question."""
    with PostgresIndex(url, "web") as stored:
        found = retrieve("zebra crossing", index=stored)
        return stored.generation(), [source.path for source in found]


def test_the_indexer_publishes_each_change_and_is_the_only_one(
    pg_url: str, repo: Path, children: list[Child]
) -> None:
    first = indexer(children, pg_url, repo)
    assert "published web as generation 1" in first.wait_for("published")
    assert served(pg_url) == ("1", [])
    (repo / "server/zebra.py").write_text("def zebra_crossing():\n    return 'stripes'\n")
    assert "published web as generation 2" in first.wait_for("published")
    assert served(pg_url) == ("2", ["server/zebra.py"])
    # a second indexer of the same repository stops at once, saying why
    second = indexer(children, pg_url, repo)
    assert second.process.wait(60) == 1
    said = second.wait_for("another indexer")
    assert "repository 'web'" in said and "one indexer per repository" in said
    assert first.process.poll() is None  # the first goes on
    (repo / "server/zebra.py").unlink()
    assert "published web as generation 3" in first.wait_for("published")
    assert served(pg_url) == ("3", [])
    first.process.send_signal(signal.SIGTERM)  # stopped as a service manager stops it
    assert first.process.wait(30) == 0


def test_an_indexer_killed_mid_publish_leaves_the_last_generation_served(
    pg_url: str, repo: Path, children: list[Child]
) -> None:
    stalling = indexer(children, pg_url, repo, script=_STALLING_INDEXER)
    assert "published web as generation 1" in stalling.wait_for("published")
    (repo / "server/zebra.py").write_text("def zebra_crossing():\n    return 'stripes'\n")
    stalling.wait_for("stalled")  # every row of generation 2 sent, not committed
    assert served(pg_url) == ("1", [])
    stalling.process.send_signal(signal.SIGKILL)
    stalling.process.wait(30)
    assert served(pg_url) == ("1", [])  # nothing of the killed publish is seen
    # its locks went with its connection: the next indexer takes over and publishes at once
    following = indexer(children, pg_url, repo)
    assert "published web as generation 2" in following.wait_for("published")
    assert served(pg_url) == ("2", ["server/zebra.py"])


def test_an_indexer_whose_database_restarts_publishes_once_it_is_back(
    own_cluster: Any, repo: Path, children: list[Child]
) -> None:
    url = own_cluster.create_database()
    running = indexer(children, url, repo)
    assert "published web as generation 1" in running.wait_for("published")
    own_cluster.stop("fast")  # a restart: sessions ended, commits kept
    try:
        (repo / "server/zebra.py").write_text("def zebra_crossing():\n    return 'stripes'\n")
        assert "cannot be reached" in running.wait_for("index refresh failed")
    finally:
        own_cluster.start()
    # the refresh kept pending is published once the database is back, its lock taken again
    assert "published web as generation 2" in running.wait_for("published")
    assert served(url) == ("2", ["server/zebra.py"])
    assert running.process.poll() is None
