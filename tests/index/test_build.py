from __future__ import annotations

import contextlib
import multiprocessing
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from szrag.base.errors import IndexStoreError
from szrag.index import build_index, load_index, refresh_index, store
from szrag.index.build import _is_damage, answered_current, prepare_file
from szrag.index.collect import Skip
from szrag.index.handle import Index
from szrag.index.store import unpack


def _write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_build_stores_files_chunks_tokens_and_metadata(retrieval_repo: Path) -> None:
    with build_index(retrieval_repo) as index:
        report = index.last_report
        assert report.rebuilt and report.files == 10 and report.images == 5
        meta = index.meta()
        assert meta["schema_version"] == str(store.SCHEMA_VERSION)
        assert meta["application"] == "szrag" and meta["complete"] == "1"
        assert meta["profile"] == "default"
        mode = index.conn.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
        webhook = index.get_file("server/webhook.js")
        assert webhook is not None
        assert webhook.type == "javascript"
        assert webhook.size == (retrieval_repo / "server/webhook.js").stat().st_size
        assert len(webhook.sha256) == 64
        assert {"verify", "github", "signature", "server", "webhook"} <= webhook.tokens
        chunks = index.chunks("server/webhook.js")
        assert [(chunk.start, chunk.end) for chunk in chunks] == [(1, 25)]
        assert chunks[0].text.startswith('const crypto = require("crypto")')
        docs = index.chunks("docs/architecture.md")
        assert docs[0].heading == "Architecture"
    assert (retrieval_repo / ".rag" / "index.db").is_file()


def test_binary_huge_unreadable_and_non_utf8_files(tmp_path: Path) -> None:
    _write(tmp_path, "ok.md", "# fine\n")
    (tmp_path / "blob.js").write_bytes(b"var a = 1;\x00\x01\x02")
    (tmp_path / "latin.md").write_bytes("caf\u00e9 cr\u00e8me".encode("latin-1"))
    (tmp_path / "big.md").write_text("x" * (1024 * 1024 + 1))
    with build_index(tmp_path) as index:
        report = index.last_report
        reasons = {skip.path: skip.reason for skip in index.skipped()}
        assert reasons["blob.js"] == "binary (contains NUL bytes)"
        assert reasons["big.md"].startswith("too large")
        assert [path for path in report.added] == ["latin.md", "ok.md"]
        assert any("latin.md: not valid UTF-8" in warning for warning in report.warnings)
        text = index.chunks("latin.md")[0].text
        assert text == "caf\ufffd cr\ufffdme"
    unreadable = prepare_file("dir.md", tmp_path, 1024)
    assert isinstance(unreadable, Skip) and unreadable.reason.startswith("unreadable")
    vanished = prepare_file("gone.md", tmp_path / "gone.md", 1024)
    assert vanished == Skip("gone.md", "vanished while indexing")


def test_binary_data_without_nul_bytes_is_skipped_as_binary(tmp_path: Path) -> None:
    import random

    noise = bytes(random.Random(35).randrange(1, 256) for _ in range(30_000))
    (tmp_path / "bundle.js").write_bytes(noise)
    # Latin-1 prose and UTF-8 text with a stray byte are still text
    (tmp_path / "latin.md").write_bytes(("Le caf\u00e9 cr\u00e8me. " * 200).encode("latin-1"))
    (tmp_path / "stray.md").write_bytes(b"# Notes\n" + b"plain text " * 300 + b"\xff\n")
    with build_index(tmp_path) as index:
        reasons = {skip.path: skip.reason for skip in index.skipped()}
        paths = [record.path for record in index.files()]
    assert reasons == {"bundle.js": "binary (mostly bytes that are not text)"}
    assert paths == ["latin.md", "stray.md"]


def test_refresh_rereads_only_what_changed(retrieval_repo: Path) -> None:
    build_index(retrieval_repo).close()
    with load_index(retrieval_repo) as index:
        assert not index.last_report.changed_anything
        generation = index.generation()
        before = {chunk.id for chunk in index.chunks("server/auth.js")}

        _write(retrieval_repo, "server/scheduler.js", "function changed() {}\n")
        _write(retrieval_repo, "docs/new.md", "# New\n")
        (retrieval_repo / "config/pagebot.conf").unlink()
        report = refresh_index(index)
        assert report.changed == ["server/scheduler.js"]
        assert report.added == ["docs/new.md"]
        assert report.removed == ["config/pagebot.conf"]
        assert index.generation() != generation
        assert {chunk.id for chunk in index.chunks("server/auth.js")} == before
        assert index.chunks("server/scheduler.js")[0].text == "function changed() {}\n"

        generation = index.generation()
        again = refresh_index(index)
        assert not again.changed_anything and index.generation() == generation


def test_edit_keeping_size_and_mtime_is_detected(retrieval_repo: Path) -> None:
    target = retrieval_repo / "server/auth.js"
    with build_index(retrieval_repo) as index:
        stat = target.stat()
        original = target.read_text()
        edited = original.replace("FIVE_MINUTES", "FIVE_MINUTEZ")
        assert len(edited) == len(original)
        target.write_text(edited)
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert (
            target.stat().st_size == stat.st_size and target.stat().st_mtime_ns == stat.st_mtime_ns
        )
        report = refresh_index(index)
        assert report.changed == ["server/auth.js"]
        assert "FIVE_MINUTEZ" in index.chunks("server/auth.js")[0].text


def test_touch_without_change_updates_stat_but_does_not_reparse(retrieval_repo: Path) -> None:
    target = retrieval_repo / "server/auth.js"
    with build_index(retrieval_repo) as index:
        chunk_ids = [chunk.id for chunk in index.chunks("server/auth.js")]
        os.utime(target, ns=(1_000_000_000, 2_000_000_000))
        report = refresh_index(index)
        assert report.touched == ["server/auth.js"] and not report.changed
        assert [chunk.id for chunk in index.chunks("server/auth.js")] == chunk_ids
        stored = index.get_file("server/auth.js")
        assert stored is not None and stored.mtime_ns == 2_000_000_000
        assert not refresh_index(index).changed_anything


def test_verify_hashes_everything_and_finds_nothing_new(retrieval_repo: Path) -> None:
    with build_index(retrieval_repo) as index:
        report = refresh_index(index, verify=True)
        assert not report.changed and not report.added and not report.removed


def test_corrupt_index_is_set_aside_and_rebuilt(retrieval_repo: Path) -> None:
    database = store.index_path(retrieval_repo)
    database.parent.mkdir(parents=True)
    database.write_bytes(b"this is not a database" * 100)
    with load_index(retrieval_repo) as index:
        assert index.last_report.rebuilt
        assert any("unreadable" in warning for warning in index.last_report.warnings)
        assert index.counts()["files"] == 10
    kept = [path.name for path in database.parent.iterdir() if ".corrupt-" in path.name]
    assert len(kept) == 1


def test_foreign_database_is_kept_aside_not_overwritten(retrieval_repo: Path) -> None:
    database = store.index_path(retrieval_repo)
    database.parent.mkdir(parents=True)
    foreign = sqlite3.connect(database)
    foreign.execute("CREATE TABLE notes (body TEXT)")
    foreign.execute("INSERT INTO notes VALUES ('precious')")
    foreign.commit()
    foreign.close()
    with load_index(retrieval_repo) as index:
        assert index.last_report.rebuilt
        assert any("not a szrag index" in warning for warning in index.last_report.warnings)
    aside = next(
        path for path in database.parent.iterdir() if ".foreign-" in path.name and path.suffix != ""
    )
    rows = sqlite3.connect(aside).execute("SELECT body FROM notes").fetchall()
    assert rows == [("precious",)]


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("schema_version", "0", "schema version 0"),
        ("units_version", "0", "units cut by version 0"),  # files are cut another way now
        ("complete", "0", "an interrupted build"),
    ],
)
def test_older_or_interrupted_index_is_rebuilt(
    retrieval_repo: Path, key: str, value: str, reason: str
) -> None:
    with build_index(retrieval_repo) as index:
        index.conn.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
    with load_index(retrieval_repo) as index:
        assert index.last_report.rebuilt
        assert (index.last_report.reason or "").startswith(reason)
        assert index.meta()[key] != value


def test_reader_never_sees_a_half_written_refresh(retrieval_repo: Path) -> None:
    build_index(retrieval_repo).close()
    reader = store.connect(store.index_path(retrieval_repo))
    reader.execute("BEGIN")
    before = reader.execute("SELECT count(*) FROM chunks").fetchone()[0]
    for number in range(30):
        _write(retrieval_repo, f"docs/extra{number}.md", f"# Extra {number}\n")
    with load_index(retrieval_repo) as writer:
        assert len(writer.last_report.added) == 30
    # the reader's snapshot is unchanged until its transaction ends
    assert reader.execute("SELECT count(*) FROM chunks").fetchone()[0] == before
    reader.execute("COMMIT")
    assert reader.execute("SELECT count(*) FROM chunks").fetchone()[0] == before + 30
    reader.close()


def _refresh_in_process(root: str) -> tuple[int, int]:
    with load_index(root) as index:
        return index.counts()["files"], index.counts()["chunks"]


def test_two_openers_of_a_new_index_never_set_it_aside(tmp_path: Path) -> None:
    # SQLite reports another connection's lock at once for the switch to WAL: a new index
    # opened by two processes together was taken for a corrupt one, moved aside and rebuilt,
    # about once in four (here, 100 tries)
    import threading

    from szrag.index.build import _connect_usable

    found: list[object] = []
    for attempt in range(100):
        path = tmp_path / f"index{attempt}.db"
        barrier = threading.Barrier(2)

        def open_index(path: Path, barrier: threading.Barrier) -> None:
            barrier.wait()
            try:
                conn, warnings, read_only = _connect_usable(path)
                conn.close()
                found.extend([*warnings, *(["read-only"] if read_only else [])])
            except BaseException as error:  # reported below, not lost in the thread
                found.append(error)

        threads = [threading.Thread(target=open_index, args=(path, barrier)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert found == []
    assert not [path for path in tmp_path.iterdir() if ".corrupt-" in path.name]


def test_a_busy_database_is_never_taken_for_a_damaged_one(tmp_path: Path) -> None:
    from szrag.base.sqlite import is_busy

    path = tmp_path / "held.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        other = sqlite3.connect(path, timeout=0)
        with pytest.raises(sqlite3.OperationalError) as raised:
            other.execute("SELECT count(*) FROM t").fetchone()
        other.close()
    finally:
        holder.execute("COMMIT")
        holder.close()
    assert is_busy(raised.value)
    assert not is_busy(sqlite3.DatabaseError("file is not a database"))
    assert not is_busy(ValueError("database is locked"))
    # an index held past the busy timeout is said to be held, not judged unreadable (which
    # rebuilds it)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        other = sqlite3.connect(path, timeout=0)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            store.check(other)
        # an extended busy code (a WAL being recovered) is no damage either: the quick check
        # of a held file would fail and set it aside
        recovering = sqlite3.OperationalError("database is locked")
        recovering.sqlite_errorcode = 261  # SQLITE_BUSY_RECOVERY
        assert not _is_damage(recovering, other)
        other.close()
    finally:
        holder.execute("COMMIT")
        holder.close()
    other = sqlite3.connect(path)
    assert store.check(other) == "not a szrag index"  # readable again: judged as it is
    other.close()


def test_two_processes_refreshing_at_once_do_not_corrupt(retrieval_repo: Path) -> None:
    build_index(retrieval_repo).close()
    for number in range(60):
        _write(retrieval_repo, f"notes/n{number}.md", "\n".join(f"line {i}" for i in range(100)))
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        results = pool.map(_refresh_in_process, [str(retrieval_repo)] * 2)
    assert results[0] == results[1] == (70, 10 + 60 * 3)
    conn = store.connect(store.index_path(retrieval_repo))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    duplicates = conn.execute(
        "SELECT count(*) FROM (SELECT file_id, seq FROM chunks GROUP BY file_id, seq HAVING count(*) > 1)"
    ).fetchone()[0]
    assert duplicates == 0
    conn.close()


def test_reading_keeps_one_snapshot_while_another_connection_refreshes(
    retrieval_repo: Path,
) -> None:
    from szrag.rank.retrieve import retrieve

    with build_index(retrieval_repo) as reader, load_index(retrieval_repo, refresh=False) as writer:
        with reader.reading():
            before = retrieve("pageOnCall listPages", index=reader)
            (retrieval_repo / "server/scheduler.js").write_text("function nothingHere() {}\n")
            assert refresh_index(writer).changed == ["server/scheduler.js"]
            # the refresh is committed, yet this snapshot still sees the old chunks and texts
            assert retrieve("pageOnCall listPages", index=reader) == before
            assert reader.chunks("server/scheduler.js")[0].text.startswith("const pages")
        assert "server/scheduler.js" not in [
            s.path for s in retrieve("pageOnCall listPages", index=reader)
        ]


def test_a_writer_committing_between_the_check_and_the_lock_is_not_overwritten(
    retrieval_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stats a refresh compares before taking the write lock are used under it only if
    no other connection committed in between."""
    from szrag.index import build as build_module

    build_index(retrieval_repo).close()
    _write(retrieval_repo, "notes/new.md", "# New\n\nwritten while another refresh looked\n")
    (retrieval_repo / "server/scheduler.js").write_text("function changedHere() {}\n")
    original = build_module._stale_stats
    interjected: list[bool] = []

    def overtaken(conn: sqlite3.Connection, collection: Any) -> Any:
        found = original(conn, collection)
        if not interjected:  # the other connection's own refresh goes straight through
            interjected.append(True)
            with load_index(retrieval_repo, refresh=False) as other:
                other_report = refresh_index(other)
            assert other_report.added == ["notes/new.md"]
            assert other_report.changed == ["server/scheduler.js"]
        return found

    with load_index(retrieval_repo, refresh=False) as index:
        monkeypatch.setattr(build_module, "_stale_stats", overtaken)
        report = refresh_index(index)
        assert report.added == [] and report.changed == [] and not report.warnings
        paths = [row[0] for row in index.conn.execute("SELECT path FROM files")]
    assert paths.count("notes/new.md") == 1
    with load_index(retrieval_repo) as index:
        assert not refresh_index(index).changed_anything
        assert "changedHere" in index.chunks("server/scheduler.js")[0].text


def _damage(database: Path) -> None:
    """Overwrite pages in the middle of the file, as a failing disk or a bad copy would."""
    data = bytearray(database.read_bytes())
    assert len(data) > 12 * 4096
    for page in range(3, len(data) // 4096 - 1, 2):
        data[page * 4096 + 100 : page * 4096 + 600] = b"\xa5" * 500
    database.write_bytes(bytes(data))


def _damaged_index(root: Path) -> Path:
    """The index of ``root`` (made large enough to have middle pages), then damaged."""
    for number in range(40):
        (root / f"docs/page{number}.md").write_text(f"# Page {number}\n" + "words " * 400)
    build_index(root).close()
    database = store.index_path(root)
    for side in ("-wal", "-shm"):
        database.with_name(database.name + side).unlink(missing_ok=True)
    _damage(database)
    return database


@pytest.mark.parametrize("rebuild", [False, True])
def test_damaged_pages_are_set_aside_and_rebuilt(retrieval_repo: Path, rebuild: bool) -> None:
    database = _damaged_index(retrieval_repo)
    opened = build_index(retrieval_repo) if rebuild else load_index(retrieval_repo)
    with opened as index:
        assert index.counts()["files"] == 50
        assert any("damaged" in warning for warning in index.last_report.warnings)
        assert index.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert any(".corrupt-" in path.name for path in database.parent.iterdir())


def test_a_one_shot_question_on_a_damaged_index_is_answered_from_the_rebuilt_one(
    retrieval_repo: Path,
) -> None:
    from szrag.rank.retrieve import retrieve

    database = _damaged_index(retrieval_repo)
    found, report = answered_current(
        retrieval_repo, lambda index: retrieve("page words", 3, index=index)
    )
    assert "docs/page0.md" in [source.path for source in found]
    assert any("damaged" in warning for warning in report.warnings), report.warnings
    assert any(".corrupt-" in path.name for path in database.parent.iterdir())


def test_an_index_unreadable_as_it_is_is_opened_as_a_load_opens_it(retrieval_repo: Path) -> None:
    build_index(retrieval_repo).close()
    calls: list[bool] = []

    def unreadable_once(index: Index) -> int:
        calls.append(True)
        if len(calls) == 1:
            raise IndexStoreError("a page could not be read")
        return index.counts()["files"]

    found, _ = answered_current(retrieval_repo, unreadable_once)
    assert found > 0 and len(calls) == 2


def test_a_threaded_process_builds_with_spawned_workers(tmp_path: Path) -> None:
    import threading

    from szrag.index import build as build_module

    for number in range(build_module.PARALLEL_THRESHOLD + 10):
        _write(tmp_path, f"notes/n{number}.md", f"# Note {number}\nbody {number}\n")
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        assert build_module._pool_context().get_start_method() == "spawn"
        with build_index(tmp_path) as index:
            assert index.counts()["files"] == build_module.PARALLEL_THRESHOLD + 10
    finally:
        stop.set()
        worker.join()


def test_derived_views_survive_a_reader_on_the_previous_generation(retrieval_repo: Path) -> None:
    with build_index(retrieval_repo) as index, load_index(retrieval_repo, refresh=False) as other:
        computed: list[str] = []

        def view() -> str:
            computed.append(index.generation())
            return index.generation()

        with index.reading():
            old = index.derived("view", view)
            (retrieval_repo / "docs/new.md").write_text("# New\n")
            refresh_index(other)
            assert index.derived("view", view) == old  # the snapshot still sees the old one
        new = index.derived("view", view)
        with index.reading():
            assert index.derived("view", view) == new
        assert new != old and len(computed) == 2


def test_a_new_index_in_a_git_repository_is_kept_out_of_git(tmp_path: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    tracked = tmp_path / ".gitignore"
    tracked.write_text("*.log\n")
    with build_index(tmp_path) as index:
        assert index.last_report.notes == [
            "added /.rag/ to .git/info/exclude so git ignores the index"
        ]
    status = subprocess.run(
        ["git", "-C", str(tmp_path), "status", "--porcelain"], capture_output=True, text=True
    ).stdout
    assert ".rag" not in status and tracked.read_text() == "*.log\n"  # no tracked file edited
    with build_index(tmp_path) as again:  # said once: the line is there now
        assert again.last_report.notes == []
    exclude = (tmp_path / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.rag/") == 1


def test_an_index_in_a_subfolder_or_a_linked_work_tree_is_kept_out_of_git(tmp_path: Path) -> None:
    import subprocess

    repo, linked = tmp_path / "repo", tmp_path / "linked"
    repo.mkdir()

    def git(*args: str, cwd: Path = repo) -> str:
        command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.test", *args]
        return subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    _write(repo, "sub/app.py", "def main():\n    return 1\n")
    git("add", "-A")
    git("commit", "-qm", "first")
    with build_index(repo / "sub") as index:
        report = index.last_report
    assert report.notes == ["added /sub/.rag/ to .git/info/exclude so git ignores the index"]
    assert not [warning for warning in report.warnings if "version control" in warning]
    assert ".rag" not in git("status", "--porcelain", "--untracked-files=all")

    git("worktree", "add", "-q", str(linked))
    with build_index(linked) as index:
        note = index.last_report.notes
    assert note == [
        f"added /.rag/ to {(repo / '.git').resolve()}/info/exclude so git ignores the index"
    ]
    assert ".rag" not in git("status", "--porcelain", "--untracked-files=all", cwd=linked)


def test_a_virtualenv_is_left_out_whatever_it_is_called_and_svg_is_an_image(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    odd = tmp_path / "selenv" / "lib" / "site.py"
    odd.parent.mkdir(parents=True)
    odd.write_text("def site():\n    return 2\n")
    (tmp_path / "selenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "logo.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    with build_index(tmp_path) as index:
        assert [entry.path for entry in index.file_entries()] == ["app.py"]
        assert index.image_paths() == ["logo.svg"]
    with build_index(tmp_path, profile="slackzilla") as spec:
        assert spec.image_paths() == []  # the original's image types, exactly


def test_szrag_index_without_rebuild_heals_a_damaged_index(retrieval_repo: Path) -> None:
    from click.testing import CliRunner

    from szrag.cli import main

    database = _damaged_index(retrieval_repo)

    result = CliRunner().invoke(main, ["index", "--root", str(retrieval_repo)])

    assert result.exit_code == 0, result.output
    assert "damaged" in result.output and "rebuilt" in result.output
    assert any(".corrupt-" in path.name for path in database.parent.iterdir())


def test_a_file_replaced_by_a_fifo_is_skipped_not_waited_for(tmp_path: Path) -> None:
    from szrag.index.build import prepare_file

    fifo = tmp_path / "notes.md"
    os.mkfifo(fifo)  # nobody ever writes to it: a blocking open would wait forever

    skipped = prepare_file("notes.md", fifo, 1_000_000)

    assert getattr(skipped, "reason", "").startswith("not a regular file")


def test_a_file_left_out_after_reading_is_not_read_again_until_it_changes(
    retrieval_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from szrag.index import build as build_module

    blob = retrieval_repo / "assets" / "logo.js"
    blob.parent.mkdir(exist_ok=True)
    blob.write_bytes(b"\x00\x01binary" * 1000)
    build_index(retrieval_repo).close()
    reads: list[Path] = []
    original = build_module.read_source

    def counting(absolute: Path, max_bytes: int) -> Any:
        reads.append(absolute)
        return original(absolute, max_bytes)

    monkeypatch.setattr(build_module, "read_source", counting)
    with load_index(retrieval_repo) as index:
        first = refresh_index(index)
        assert reads == [] and not first.changed_anything
        assert ("assets/logo.js", "binary (contains NUL bytes)") in [
            (skip.path, skip.reason) for skip in index.skipped()
        ]
        blob.write_bytes(b"\x00\x02binary, changed" * 1000)
        refresh_index(index)
        assert reads == [blob]
        reads.clear()
        again = refresh_index(index)
        assert reads == [] and "assets/logo.js" in [skip.path for skip in again.skipped]


def test_a_question_does_not_wait_long_for_another_writer(retrieval_repo: Path) -> None:
    import sqlite3
    import time

    from szrag.rank.retrieve import retrieve

    build_index(retrieval_repo).close()
    (retrieval_repo / "docs" / "late.md").write_text("# Late\nwombat notes\n")
    writer = sqlite3.connect(store.index_path(retrieval_repo), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process, busy writing
    try:
        started = time.monotonic()
        with load_index(retrieval_repo, lock_wait=0.3) as index:
            waited = time.monotonic() - started
            warnings = index.last_report.warnings
            found = retrieve("pageOnCall", index=index)
    finally:
        writer.execute("ROLLBACK")
        writer.close()

    assert waited < 10 and found
    assert any("answering from the index as it is" in warning for warning in warnings)


def test_parse_workers_die_with_a_killed_indexer(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    body = "".join(f"def function_{n}(value):\n    return value * {n}\n\n" for n in range(400))
    for number in range(900):
        _write(tmp_path, f"pkg/module_{number}.py", body)
    indexer = subprocess.Popen(
        [sys.executable, "-m", "szrag.cli", "index", "--root", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    children_file = Path(f"/proc/{indexer.pid}/task/{indexer.pid}/children")
    workers: list[int] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not workers and indexer.poll() is None:
        with contextlib.suppress(OSError):
            workers = [int(pid) for pid in children_file.read_text().split()]
        time.sleep(0.02)
    if not workers:
        indexer.kill()
        pytest.skip("the indexer finished before its workers could be seen")
    os.kill(indexer.pid, signal.SIGKILL)
    indexer.wait()

    deadline = time.monotonic() + 10
    alive = workers
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in workers if Path(f"/proc/{pid}").exists() and _running(pid)]
        time.sleep(0.05)
    assert alive == []


def _running(pid: int) -> bool:
    """False for a process that has exited (a zombie waiting to be reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_file_over_the_parse_limit_keeps_its_text_without_structure(tmp_path: Path) -> None:
    from szrag.index import build as build_module

    body = "".join(f"function f{n}(a) {{ return a * {n}; }}\n" for n in range(80_000))
    assert len(body) > build_module.MAX_ANALYSED_BYTES
    _write(tmp_path, "huge.js", body)
    _write(tmp_path, "small.js", "function tiny(a) { return a; }\n")

    prepared = build_module.prepare_file("huge.js", tmp_path / "huge.js", 10**8)
    small = build_module.prepare_file("small.js", tmp_path / "small.js", 10**8)

    assert isinstance(prepared, build_module.PreparedFile) and prepared.rows.code is None
    assert any("f79999" in unpack(chunk[5]) for chunk in prepared.rows.chunks)
    assert isinstance(small, build_module.PreparedFile) and small.rows.code is not None


def test_a_damaged_packed_text_is_a_clear_error_not_a_traceback(retrieval_repo: Path) -> None:
    from click.testing import CliRunner

    from szrag.base.errors import DamagedIndexError
    from szrag.cli import main
    from szrag.rank.retrieve import retrieve

    with build_index(retrieval_repo) as index:
        index.conn.execute("UPDATE chunk_texts SET text = x'00112233'")
        with pytest.raises(DamagedIndexError, match="packed text in the index is damaged"):
            retrieve("webhook signature", index=index)
    done = CliRunner().invoke(main, ["retrieve", "--root", str(retrieval_repo), "webhook"])
    assert done.exit_code != 0 and "Traceback" not in done.output
    assert "szrag index --rebuild" in done.output
    with build_index(retrieval_repo) as rebuilt:  # and a rebuild replaces it
        assert retrieve("webhook signature", index=rebuilt)


def test_a_name_that_is_not_utf8_is_skipped_with_a_reason(tmp_path: Path) -> None:
    _write(tmp_path, "src/good.py", "def fine():\n    return 1\n")
    root = os.fsencode(tmp_path)
    with open(root + b"/src/bad_\xff\xfe.py", "w") as handle:
        handle.write("def hidden():\n    return 2\n")
    os.mkdir(root + b"/dir_\xff")
    with open(root + b"/dir_\xff/inside.py", "w") as handle:
        handle.write("x = 1\n")
    with build_index(tmp_path) as index:
        reasons = {skip.path: skip.reason for skip in index.skipped()}
        assert [record.path for record in index.files()] == ["src/good.py"]
    assert reasons == {
        "dir_\\xff": "name is not valid UTF-8",
        "src/bad_\\xff\\xfe.py": "name is not valid UTF-8",
    }
    with open(root + b"/src/worse_\xfe.md", "w") as handle:
        handle.write("# worse\n")
    _write(tmp_path, "src/later.py", "y = 2\n")
    with load_index(tmp_path) as index:
        refresh_index(index)
        assert [record.path for record in index.files()] == ["src/good.py", "src/later.py"]
        assert "src/worse_\\xfe.md" in {skip.path for skip in index.skipped()}
