"""The quick freshness proof (``collect.unchanged``): a tree whose every directory and file is
as the kept walk saw it is current without a walk; any change, and anything the walk could not
vouch for, sends the refresh to the full walk, which finds what changed.

Files get their change time (ctime) when written and no call sets it back, so the trees are
written once for the module and the racy window of a walk (two seconds) is waited out once:
only then can a walk vouch for their stats."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from szrag.base.config import DEFAULT, RepoConfig
from szrag.index import freshness, store
from szrag.index.build import answered_current, load_index, opened_current, refresh_index
from szrag.index.collect import _RACY_NS, WalkSnapshot, collect, unchanged
from szrag.index.freshness import check_aside
from szrag.index.handle import Index, RefreshReport

CONFIG = RepoConfig(profile=DEFAULT)
CORE = "src/pkg/core.py"
CORE_TEXT = "def core():\n    return 1\n"


def _write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _age_directories(root: Path) -> None:
    """Every directory last modified a minute ago (an entry added or removed since still
    changes its ctime, which the signature holds too)."""
    past = time.time() - 60
    for directory, folders, _ in os.walk(root):
        folders[:] = [name for name in folders if name != ".rag"]
        os.utime(directory, (past, past))


def _tree(root: Path) -> None:
    _write(root, "app.py", "import pkg.core\n")
    _write(root, CORE, CORE_TEXT)
    _write(root, "docs/guide.md", "# Guide\n\nHow to use it.\n")
    _write(root, "docs/logo.png", "png")
    _write(root, "big.py", "x = 1\n" * 400)  # left out as too large by the walk, by its stat
    _write(root, ".gitignore", "build/\n")
    _write(root, "build/out.py", "y = 2\n")


def _edit(root: Path) -> None:
    _write(root, CORE, CORE_TEXT + "\n\ndef more():\n    return 2\n")


def _edit_keeping_size_and_mtime(root: Path) -> None:
    path = root / CORE
    before = path.stat()
    path.write_text(CORE_TEXT.replace("1", "2"))  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _add(root: Path) -> None:
    _write(root, "src/pkg/new.py", "def new():\n    return 3\n")


def _delete(root: Path) -> None:
    (root / "docs/guide.md").unlink()


def _rename(root: Path) -> None:
    (root / "app.py").rename(root / "main.py")


def _shrink(root: Path) -> None:
    _write(root, "big.py", "x = 1\n")


SCENARIOS: dict[str, tuple[Callable[[Path], None], Callable[[RefreshReport], bool]]] = {
    "edit": (_edit, lambda report: report.changed == [CORE]),
    "edit keeping size and mtime": (
        _edit_keeping_size_and_mtime,
        lambda report: report.changed == [CORE],
    ),
    "add": (_add, lambda report: report.added == ["src/pkg/new.py"]),
    "delete": (_delete, lambda report: report.removed == ["docs/guide.md"]),
    "rename": (
        _rename,
        lambda report: report.added == ["main.py"] and report.removed == ["app.py"],
    ),
    "a file left out by its size shrinks": (_shrink, lambda report: report.added == ["big.py"]),
}
SMALL = RepoConfig(profile=DEFAULT, max_file_bytes=1000)


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tree per scenario and per test of its own, written and then left alone past the
    racy window."""
    made = {}
    others = [
        "untouched",
        "symlink",
        "aside forked",
        "aside in the caller",
        "answered",
        "command",
        "command ask",
        "opened",
    ]
    for name in [*SCENARIOS, *others]:
        root = tmp_path_factory.mktemp("tree")
        _tree(root)
        made[name] = root
    (made["symlink"] / "docs" / "link.md").symlink_to(made["symlink"] / "docs" / "guide.md")
    time.sleep(_RACY_NS / 1e9 + 0.2)  # no write from here on is within a walk's racy window
    return made


def _indexed(root: Path) -> None:
    """Built, its directories aged (the index's own folder changed the root) and refreshed,
    so the kept walk holds trusted listings."""
    load_index(root, config=SMALL).close()
    _age_directories(root)
    load_index(root, config=SMALL).close()


def test_an_untouched_tree_is_proven_current_and_stays_so(trees: dict[str, Path]) -> None:
    root = trees["untouched"]
    _indexed(root)
    index = load_index(root, config=SMALL)
    try:
        kept = store.read_walk(index.conn)
        assert kept is not None
        snapshot = WalkSnapshot.from_json(kept)
        assert snapshot is not None and unchanged(root, SMALL, snapshot)
        report = refresh_index(index)
        assert not report.changed_anything
        assert "big.py" in {skip.path for skip in report.skipped}  # as the walk left it out
        assert store.read_walk(index.conn) == kept
        # another configuration decides other files: not proven by this walk
        assert not unchanged(root, CONFIG, snapshot)
    finally:
        index.close()


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_kind_of_change_is_found(trees: dict[str, Path], scenario: str) -> None:
    root = trees[scenario]
    change, expected = SCENARIOS[scenario]
    _indexed(root)
    index = load_index(root, config=SMALL)
    try:
        before = WalkSnapshot.from_json(store.read_walk(index.conn) or "")
        assert before is not None and unchanged(root, SMALL, before)
        change(root)
        _age_directories(root)  # a directory's mtime set back still leaves its ctime
        assert not unchanged(root, SMALL, before)
        report = refresh_index(index)
        assert expected(report), report
        # the next refresh (proven or walked: a file written just now is not vouched for)
        # finds nothing more, and the index holds what a fresh walk finds
        assert not refresh_index(index).changed_anything
        fresh = collect(root, SMALL)
        assert sorted(entry.path for entry in index.file_entries()) == [
            item.path for item in fresh.files
        ]
    finally:
        index.close()


def test_a_file_written_within_the_racy_window_is_not_vouched_for(tmp_path: Path) -> None:
    _tree(tmp_path)  # written just now: a second write in the same clock tick could keep
    _age_directories(tmp_path)  # its size and times, so the walk vouches for none of them
    found = collect(tmp_path, CONFIG)
    assert found.snapshot is not None
    assert set(found.snapshot.listings["src/pkg/"].stats.split("/")) == {"-"}
    assert not unchanged(tmp_path, CONFIG, found.snapshot)
    index = load_index(tmp_path, config=CONFIG)
    try:
        _write(tmp_path, CORE, CORE_TEXT.replace("1", "2"))  # within the same second
        assert refresh_index(index).changed == [CORE]
    finally:
        index.close()


def test_a_listing_holding_a_symlink_is_walked(trees: dict[str, Path]) -> None:
    root = trees["symlink"]
    _indexed(root)
    index = load_index(root, config=SMALL)
    try:
        snapshot = WalkSnapshot.from_json(store.read_walk(index.conn) or "")
        assert snapshot is not None and not unchanged(root, SMALL, snapshot)
        assert "docs/link.md" in {entry.path for entry in index.file_entries()}
        (root / "docs/guide.md").write_text("# Guide\n\nChanged through the link.\n")
        assert sorted(refresh_index(index).changed) == ["docs/guide.md", "docs/link.md"]
    finally:
        index.close()


def test_a_snapshot_kept_before_stats_or_with_bad_stats(tmp_path: Path) -> None:
    old = '{"fingerprint": "x", "listings": {"": ["1:2:3", [], "t/a.py", []]}}'
    snapshot = WalkSnapshot.from_json(old)
    assert snapshot is not None and snapshot.listings[""].stats == ""
    assert not unchanged(tmp_path, CONFIG, snapshot)
    assert WalkSnapshot.from_json(old.replace("[]]", "[], [1, 2]]")) is None


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "in the caller"])
def test_the_proof_beside_a_question_confirms_only_a_current_tree(
    trees: dict[str, Path], forked: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(freshness, "_may_fork", lambda: forked)
    root = trees["aside forked" if forked else "aside in the caller"]
    _indexed(root)
    index = load_index(root, config=SMALL, refresh=False)
    try:
        with check_aside(index) as check:
            pass  # left by the block: waited for, and the child reaped
        assert check.confirmed()
        _edit(root)
        _age_directories(root)
        with check_aside(index) as check:
            assert not check.confirmed()
        assert refresh_index(index).changed == [CORE]
        index.conn.execute("DELETE FROM walk")  # no kept walk: nothing to prove it with
        with check_aside(index) as check:
            assert not check.confirmed()
    finally:
        index.close()


def test_a_proof_that_fails_in_the_child_is_no_proof(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    index = load_index(tmp_path, config=CONFIG, refresh=False)
    try:

        def broken(*_: object) -> bool:
            raise RuntimeError("the walk's rules could not be read")

        monkeypatch.setattr(freshness, "_may_fork", lambda: True)
        monkeypatch.setattr(freshness, "unchanged", broken)
        with check_aside(index) as check:
            assert not check.confirmed()  # the child says "unknown": a refresh decides
    finally:
        index.close()


def test_a_question_answered_beside_the_proof_is_asked_again_after_a_change(
    trees: dict[str, Path], tmp_path: Path
) -> None:
    root = trees["answered"]
    _indexed(root)
    asked: list[str] = []

    def core_lines(index: Index) -> list[str]:
        asked.append(index.generation())
        return index.lines(CORE)

    found, report = answered_current(root, core_lines, config=SMALL)
    assert found[:2] == CORE_TEXT.splitlines() and len(asked) == 1  # proven current: asked once
    assert not report.rebuilt
    _edit(root)
    _age_directories(root)
    found, report = answered_current(root, core_lines, config=SMALL)
    assert "def more():" in found and report.changed == [CORE]
    assert len(asked) == 3 and asked[1] != asked[2]  # asked again of the refreshed index
    # no index yet: built, then asked once
    _tree(tmp_path)
    found, report = answered_current(tmp_path, core_lines, config=CONFIG)
    assert report.rebuilt and found[:2] == CORE_TEXT.splitlines() and len(asked) == 4
    # files written just now: only a walk proves them, and it finds nothing to write, so
    # the answer given beside the proof stands
    found, report = answered_current(tmp_path, core_lines, config=CONFIG)
    assert not report.changed_anything and found[:2] == CORE_TEXT.splitlines()
    assert len(asked) == 5


def test_an_index_opened_beside_the_proof_is_current_and_the_work_meanwhile_done_once(
    trees: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = trees["opened"]
    _indexed(root)
    monkeypatch.setattr(freshness, "_may_fork", lambda: True)
    done: list[str] = []

    def meanwhile(index: Index) -> None:
        done.append(index.generation())

    index = opened_current(root, meanwhile, config=SMALL)
    try:  # proven current: the index as it was opened
        assert len(done) == 1 and index.generation() == done[0]
        assert not index.last_report.changed_anything
    finally:
        index.close()
    _edit(root)
    _age_directories(root)
    index = opened_current(root, meanwhile, config=SMALL)
    try:  # the proof failed: the index returned is refreshed and holds the edit
        assert len(done) == 2 and index.generation() != done[1]
        assert index.last_report.changed == [CORE]
        assert "def more():" in index.lines(CORE)
    finally:
        index.close()

    def failing(index: Index) -> None:
        raise RuntimeError("the work meanwhile failed")

    with pytest.raises(RuntimeError, match="meanwhile failed"):
        opened_current(root, failing, config=SMALL)
    index = load_index(root, config=SMALL)  # the failed open left no lock or child behind
    index.close()


def test_a_proof_not_wanted_any_more_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    index = load_index(tmp_path, config=CONFIG, refresh=False)
    statuses: list[int] = []

    def slow(*_: object) -> bool:
        time.sleep(60)
        return True

    def reap(child: int) -> None:
        statuses.append(os.waitpid(child, 0)[1])

    monkeypatch.setattr(freshness, "_may_fork", lambda: True)
    monkeypatch.setattr(freshness, "unchanged", slow)
    monkeypatch.setattr(freshness, "_reap", reap)
    try:
        with pytest.raises(RuntimeError), check_aside(index):
            raise RuntimeError("the search failed")
    finally:
        index.close()
    assert len(statuses) == 1 and os.WIFSIGNALED(statuses[0])  # killed, not waited out


INTERRUPTED_CHILD = """
import atexit, os, signal, sys
from pathlib import Path
from szrag.index import freshness
from szrag.index.build import load_index

root = Path(sys.argv[1])
forked = os.fork

def fork_then_interrupt():
    child = forked()
    if child == 0:  # a Ctrl-C reaching the child the moment it starts
        os.kill(os.getpid(), signal.SIGINT)
    return child

os.fork = fork_then_interrupt
freshness._may_fork = lambda: True
with load_index(root, refresh=False) as index:
    atexit.register(lambda: print(f"exit {os.getpid()}", flush=True))
    with freshness.check_aside(index) as check:
        pass
    print(f"confirmed {check.confirmed()} in {os.getpid()}", flush=True)
"""


def test_a_ctrl_c_reaching_the_child_never_runs_the_parents_code(tmp_path: Path) -> None:
    _tree(tmp_path)
    load_index(tmp_path).close()
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_CHILD, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    parent = done.stdout.split()[-1]
    # the child died of the signal before any Python code of the parent's could run in it
    assert done.stdout.splitlines() == [f"confirmed False in {parent}", f"exit {parent}"]


def test_a_generation_written_by_another_process_meanwhile_is_asked_again(
    tmp_path: Path,
) -> None:
    _tree(tmp_path)  # written just now: only a walk proves them, which writes nothing
    load_index(tmp_path, config=CONFIG).close()
    asked: list[str] = []

    def generation_then_another_writes(index: Index) -> str:
        seen = index.generation()
        asked.append(seen)
        if len(asked) == 1:  # another writer commits while the question is answered
            with sqlite3.connect(store.index_path(tmp_path)) as other:
                other.execute("UPDATE meta SET value = 'elsewhere' WHERE key = 'generation'")
        return seen

    found, report = answered_current(tmp_path, generation_then_another_writes, config=CONFIG)
    assert not report.changed_anything
    assert asked[1:] == ["elsewhere"] and found == "elsewhere"


def test_a_one_shot_command_sees_an_edit_its_kept_walk_could_vouch_against(
    trees: dict[str, Path],
) -> None:
    root = trees["command"]
    load_index(root).close()  # the command's own configuration
    _age_directories(root)
    load_index(root).close()
    question = ["refresh", "cache"]
    line = [sys.executable, "-m", "szrag", "retrieve", "--json", "--root", str(root), *question]
    first = subprocess.run(line, capture_output=True, text=True, check=True)
    assert "refresh_cache" not in first.stdout
    _write(root, CORE, CORE_TEXT + "\n\ndef refresh_cache():\n    return 'renewed'\n")
    _age_directories(root)
    time.sleep(_RACY_NS / 1e9 + 0.2)  # the edit is old enough for the walk to vouch for it
    again = subprocess.run(line, capture_output=True, text=True, check=True)
    assert "def refresh_cache():" in again.stdout


def test_a_keyless_answer_sees_an_edit_made_since_its_index_was_written(
    trees: dict[str, Path],
) -> None:
    # ``ask`` loads what it will need beside the proof; the proof failing, it answers from
    # the refreshed index
    root = trees["command ask"]
    load_index(root).close()
    _age_directories(root)
    load_index(root).close()
    line = [sys.executable, "-m", "szrag", "ask", "--no-ai", "--json", "--root", str(root)]
    first = subprocess.run([*line, "refresh", "cache"], capture_output=True, text=True, check=True)
    assert "refresh_cache" not in first.stdout
    _write(root, CORE, CORE_TEXT + "\n\ndef refresh_cache():\n    return 'renewed'\n")
    _age_directories(root)
    time.sleep(_RACY_NS / 1e9 + 0.2)  # the edit is old enough for the walk to vouch for it
    again = subprocess.run([*line, "refresh", "cache"], capture_output=True, text=True, check=True)
    assert "def refresh_cache():" in again.stdout
