"""The PostgreSQL store: migrations, generations made visible whole, one publisher at a time
per repository, and clear errors for a bad URL, an unreachable server or a missing index."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from szrag.base.errors import ConfigError, DamagedIndexError, IndexStoreError
from szrag.index import build_index, load_index, refresh_index
from szrag.index.pg import PostgresIndex, publish, writer
from szrag.index.pg.schema import LOCK_CLASS, MIGRATIONS, REPOSITORY_TABLES, migrate
from szrag.rank.retrieve import retrieve


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "server").mkdir(parents=True)
    (root / "server/webhook.py").write_text(
        "def verify_signature(body, secret):\n    return hmac_compare(body, secret)\n"
    )
    (root / "README.md").write_text("# Deploy\n\nThe deploy webhook verifies each signature.\n")
    return root


def _rows(url: str, sql: str, *values: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, values).fetchall()


def test_migrations_are_applied_once_and_recorded(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        assert migrate(conn) == [name for name, _ in MIGRATIONS]
        assert migrate(conn) == []
    assert _rows(pg_url, "SELECT name FROM szrag_migrations ORDER BY name") == [
        (name,) for name, _ in MIGRATIONS
    ]


def test_a_store_of_a_newer_szrag_is_refused_unchanged(pg_url: str, repo: Path) -> None:
    with psycopg.connect(pg_url) as conn:
        migrate(conn)
        conn.execute("INSERT INTO szrag_migrations (name) VALUES ('9999_from_the_future')")
    with build_index(repo) as index, pytest.raises(IndexStoreError, match="newer szrag"):
        publish(index, pg_url, "repo")
    with pytest.raises(IndexStoreError, match="newer szrag"):
        PostgresIndex(pg_url, "repo")
    assert _rows(pg_url, "SELECT count(*) FROM szrag_repositories") == [(0,)]


def test_each_publish_is_a_new_generation_read_at_once(pg_url: str, repo: Path) -> None:
    with build_index(repo) as index:
        first = publish(index, pg_url, "repo")
        (repo / "server/extra.py").write_text("def zebra_crossing():\n    return 1\n")
        refresh_index(index)
        second = publish(index, pg_url, "repo")
    assert (first.generation, second.generation) == (1, 2)
    assert (first.files, second.files) == (2, 3)
    assert _rows(pg_url, "SELECT name, generation FROM szrag_repositories") == [("repo", 2)]
    assert _rows(pg_url, "SELECT generation FROM szrag_generations ORDER BY 1") == [(1,), (2,)]
    with PostgresIndex(pg_url, "repo") as stored:
        assert stored.generation() == "2"
        assert [source.path for source in retrieve("zebra crossing", index=stored)] == [
            "server/extra.py"
        ]


def test_a_reader_sees_one_generation_whole_until_its_snapshot_ends(
    pg_url: str, repo: Path
) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
        with PostgresIndex(pg_url, "repo") as stored:
            with stored.reading():
                before = stored.generation()
                lines = stored.lines("README.md")
                (repo / "server/extra.py").write_text("def zebra_crossing():\n    return 1\n")
                refresh_index(index)
                publish(index, pg_url, "repo")  # committed, and generation 1 deleted
                assert stored.generation() == before == "1"
                assert not stored.has_file("server/extra.py")
                assert stored.counts()["files"] == 2
                assert stored.lines("README.md") == lines
            assert stored.generation() == "2"
            assert stored.has_file("server/extra.py")


def test_a_publish_that_fails_leaves_the_previous_generation_served(
    pg_url: str, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")

        def broken(*args: object) -> None:
            raise psycopg.OperationalError("the server went away")

        monkeypatch.setattr(writer, "_replace", broken)  # once the files' rows are written
        (repo / "server/extra.py").write_text("def zebra_crossing():\n    return 1\n")
        refresh_index(index)
        with pytest.raises(IndexStoreError, match=r"publishing 'repo' .* failed"):
            publish(index, pg_url, "repo")
    assert _rows(pg_url, "SELECT generation FROM szrag_repositories") == [(1,)]
    assert _rows(pg_url, "SELECT path FROM szrag_files ORDER BY path") == [
        ("README.md",),
        ("server/webhook.py",),
    ]
    with PostgresIndex(pg_url, "repo") as stored:
        assert stored.counts()["files"] == 2


def test_two_publishers_of_one_repository_never_interleave(pg_url: str, repo: Path) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")  # the tables exist
        holder = psycopg.connect(pg_url)
        holder.execute("SELECT pg_advisory_xact_lock(%s, hashtext('repo'))", (LOCK_CLASS,))
        try:
            started = time.monotonic()
            with pytest.raises(
                IndexStoreError, match="another process is publishing repository 'repo'"
            ):
                publish(index, pg_url, "repo", lock_wait=0.3)
            assert time.monotonic() - started < 5
            assert publish(index, pg_url, "other", lock_wait=0.3).generation == 1
            done: list[int] = []

            def wait_and_publish() -> None:
                with load_index(repo) as own:  # an index is read by the thread that opened it
                    done.append(publish(own, pg_url, "repo").generation)

            waiting = threading.Thread(target=wait_and_publish)
            waiting.start()
            time.sleep(0.5)
            assert done == []  # it waits for the lock
        finally:
            holder.commit()
            holder.close()
        waiting.join(30)
        assert done == [2]


def test_repositories_of_one_store_are_apart(pg_url: str, repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "jobs.py").write_text("def nightly_backup():\n    return 'done'\n")
    with build_index(repo) as first, build_index(other) as second:
        publish(first, pg_url, "web")
        publish(second, pg_url, "jobs")
        publish(second, pg_url, "jobs")
    with PostgresIndex(pg_url, "web") as web, PostgresIndex(pg_url, "jobs") as jobs:
        assert (web.generation(), jobs.generation()) == ("1", "2")
        assert [entry.path for entry in web.file_entries()] == ["README.md", "server/webhook.py"]
        assert [entry.path for entry in jobs.file_entries()] == ["jobs.py"]
        assert retrieve("nightly backup", index=web) == []
        assert [source.path for source in retrieve("nightly backup", index=jobs)] == ["jobs.py"]


def test_publishers_of_two_repositories_at_once_both_commit(pg_url: str, repo: Path) -> None:
    # each publish analyses the shared tables at its end, in one order: neither waits on the
    # other for long, and they never deadlock
    with build_index(repo) as index:
        publish(index, pg_url, "warm")  # the tables exist
    generations: dict[str, list[int]] = {"one": [], "two": []}
    failures: list[BaseException] = []

    def publish_often(name: str) -> None:
        try:
            with load_index(repo) as own:
                for _ in range(6):
                    generations[name].append(publish(own, pg_url, name).generation)
        except BaseException as error:  # reported by the assertion below
            failures.append(error)

    threads = [threading.Thread(target=publish_often, args=(name,)) for name in generations]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failures
    assert generations == {"one": [1, 2, 3, 4, 5, 6], "two": [1, 2, 3, 4, 5, 6]}


def test_one_index_serves_many_threads(pg_url: str, repo: Path) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
        expected = retrieve("deploy webhook signature", index=index)
    with PostgresIndex(pg_url, "repo") as stored:
        found: list[object] = []

        def ask() -> None:
            for _ in range(5):
                found.append(retrieve("deploy webhook signature", index=stored))

        threads = [threading.Thread(target=ask) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert len(found) == 30 and all(result == expected for result in found)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://user@host/db", "is not a PostgreSQL URL"),
        ("postgresql://user:secret@[bad", "is not a valid URL"),
        ("postgresql://host/db?bogus=1", "is not a valid URL"),
    ],
)
def test_a_bad_url_is_a_configuration_error(url: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as raised:
        PostgresIndex(url, "repo")
    assert "secret" not in str(raised.value)


def test_an_unreachable_server_is_a_clear_error(repo: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://szrag:secret@127.0.0.1:{port}/nothing"
    started = time.monotonic()
    with pytest.raises(IndexStoreError, match="cannot be reached") as raised:
        PostgresIndex(url, "repo")
    assert "secret" not in str(raised.value) and ":***@" in str(raised.value)
    with build_index(repo) as index, pytest.raises(IndexStoreError, match="cannot be reached"):
        publish(index, url, "repo")
    assert time.monotonic() - started < 20


def test_a_missing_index_or_repository_is_named(pg_url: str, repo: Path) -> None:
    with pytest.raises(IndexStoreError, match="holds no szrag index yet"):
        PostgresIndex(pg_url, "repo")
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
        with pytest.raises(ConfigError, match="repository name"):
            publish(index, pg_url, "")
    with pytest.raises(IndexStoreError, match="no repository 'elsewhere' is published"):
        PostgresIndex(pg_url, "elsewhere")


def test_a_generation_of_another_index_schema_is_refused(pg_url: str, repo: Path) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
    with psycopg.connect(pg_url) as conn:
        conn.execute("UPDATE szrag_generations SET index_schema = index_schema - 1")
    with pytest.raises(IndexStoreError, match="publish it again"):
        PostgresIndex(pg_url, "repo")


def test_a_publish_leaves_the_planner_statistics_of_its_rows(pg_url: str, repo: Path) -> None:
    # without them a table not analysed yet was taken for a row or two, and a file's chunks
    # were read by a nested loop over every file (28 s a read over 9,000 files)
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
    read = ("szrag_files", "szrag_chunks", "szrag_chunk_texts", "szrag_chunk_terms", "szrag_names")
    analysed = _rows(
        pg_url,
        "SELECT DISTINCT tablename FROM pg_stats WHERE tablename = ANY(%s)",
        list(read),
    )
    assert sorted(name for (name,) in analysed) == sorted(read)
    assert set(read) <= set(REPOSITORY_TABLES)


def test_units_published_before_or_cut_another_way_are_cut_when_read(
    pg_url: str, repo: Path
) -> None:
    from szrag.rank.units import units_of

    with build_index(repo) as index:
        publish(index, pg_url, "repo")
        kept = index.stored_units("server/webhook.py")
        cut = units_of(index, "server/webhook.py", "code")
    assert kept and cut is not None and cut.units == kept
    changes = (
        "UPDATE szrag_meta SET value = '0' WHERE key = 'units_version'",  # cut another way
        "UPDATE szrag_files SET units = NULL",  # a generation published before units were
    )
    for change in changes:
        with psycopg.connect(pg_url) as conn:
            conn.execute(change)
        with PostgresIndex(pg_url, "repo") as stored:
            assert stored.stored_units("server/webhook.py") is None
            found = units_of(stored, "server/webhook.py", "code")  # cut from its lines
            assert found is not None and found.units == kept


def test_damaged_published_units_name_the_rebuild(pg_url: str, repo: Path) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
    with psycopg.connect(pg_url) as conn:
        conn.execute("UPDATE szrag_files SET units = '\\x789c00' WHERE path = 'server/webhook.py'")
    with PostgresIndex(pg_url, "repo") as stored:
        with pytest.raises(DamagedIndexError, match=r"units kept for server/webhook\.py"):
            stored.stored_units("server/webhook.py")
        assert stored.stored_units("README.md")


def test_a_store_that_breaks_while_read_is_an_index_error(pg_url: str, repo: Path) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
    with PostgresIndex(pg_url, "repo") as stored:
        with psycopg.connect(pg_url) as conn:
            conn.execute("DROP TABLE szrag_chunk_terms")
        with pytest.raises(IndexStoreError, match="could not be read"):
            retrieve("deploy webhook", index=stored)


# a publisher that stops, its transaction open, once the files' rows of the new generation
# are sent
_STALLED_PUBLISHER = """
import sys, time
from pathlib import Path
from szrag.index import load_index
from szrag.index.pg import publish, writer

def stall(*args):
    print("written", flush=True)
    time.sleep(600)

writer._replace = stall
with load_index(Path(sys.argv[1])) as index:
    publish(index, sys.argv[2], "repo")
"""


def test_a_publisher_killed_mid_write_leaves_the_previous_generation_served(
    pg_url: str, repo: Path
) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
        expected = retrieve("deploy webhook signature", index=index)
    (repo / "server/extra.py").write_text("def zebra_crossing():\n    return 1\n")
    publisher = subprocess.Popen(
        [sys.executable, "-c", _STALLED_PUBLISHER, str(repo), pg_url],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert publisher.stdout is not None
        assert publisher.stdout.readline().strip() == "written"
        with PostgresIndex(pg_url, "repo") as stored:
            assert stored.generation() == "1"  # the new rows are not visible
            with build_index(repo) as index, pytest.raises(IndexStoreError, match="another"):
                publish(index, pg_url, "repo", lock_wait=0.3)  # and the lock is held
            publisher.send_signal(signal.SIGKILL)
            publisher.wait(30)
            assert stored.generation() == "1"
            assert retrieve("deploy webhook signature", index=stored) == expected
            assert not stored.has_file("server/extra.py")
        assert ("server/extra.py",) not in _rows(pg_url, "SELECT path FROM szrag_files")
        with build_index(repo) as index:  # the lock went with the killed connection
            assert publish(index, pg_url, "repo", lock_wait=10).generation == 2
    finally:
        if publisher.poll() is None:
            publisher.kill()
            publisher.wait()
