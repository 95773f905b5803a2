"""A publish after a refresh writes the rows of the files that changed, not every row, and
leaves the store holding exactly what a whole publish of the same index would."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from szrag.index import build_index, load_index, refresh_index
from szrag.index.pg import PostgresIndex, publish, writer
from szrag.index.pg.schema import MIGRATIONS, REPOSITORY_TABLES, migrate
from szrag.index.pg.search import PostgresFullText
from szrag.rank.retrieve import retrieve

QUESTIONS = ("deploy webhook signature", "zebra crossing", "guide install steps", "helper")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "server").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "server/webhook.py").write_text(
        "from server.helpers import hmac_compare\n\n\n"
        "def verify_signature(body, secret):\n    return hmac_compare(body, secret)\n"
    )
    (root / "server/helpers.py").write_text(
        "import hmac\n\n\ndef hmac_compare(left, right):\n"
        "    return hmac.compare_digest(left, right)\n"
    )
    (root / "server/old.py").write_text("def retired_helper():\n    return 'retired'\n")
    (root / "docs/guide.md").write_text("# Guide\n\n## Install\n\nThe install steps.\n")
    (root / "README.md").write_text("# Deploy\n\nThe deploy webhook verifies each signature.\n")
    (root / "docs/flow.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    for number in range(6):  # files no change touches
        (root / f"server/model{number}.py").write_text(
            f"class Model{number}:\n    def save(self):\n        return {number}\n"
        )
    return root


def _change(root: Path) -> None:
    """One file edited, one added, one removed, an image changed and an import added."""
    (root / "server/webhook.py").write_text(
        "from server.helpers import hmac_compare\nfrom server.extra import zebra_crossing\n\n\n"
        "def verify_signature(body, secret):\n"
        "    zebra_crossing()\n    return hmac_compare(body, secret)\n"
    )
    (root / "server/extra.py").write_text("def zebra_crossing():\n    return 'zebra'\n")
    (root / "server/old.py").unlink()
    (root / "docs/flow.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(255, -1, -1)))


def _stored_rows(url: str, repository: str) -> dict[str, list[str]]:
    """Every row the store holds for ``repository``, table by table, in one order."""
    found: dict[str, list[str]] = {}
    with psycopg.connect(url) as conn:
        for table in REPOSITORY_TABLES:
            rows = conn.execute(f"SELECT * FROM {table} WHERE repository = %s", (repository,))
            found[table] = sorted(repr(row[1:]) for row in rows)
    return found


def _xmin(url: str, path: str) -> str:
    """The transaction that wrote the file row of ``path`` (a row written again has a new one)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT xmin::text FROM szrag_files WHERE repository = 'repo' AND path = %s", (path,)
        ).fetchone()
    assert row is not None
    return str(row[0])


def test_a_publish_after_a_refresh_writes_what_changed_and_equals_a_whole_one(
    pg_url: str, repo: Path
) -> None:
    with build_index(repo) as index:
        first = publish(index, pg_url, "repo")
        kept = _xmin(pg_url, "docs/guide.md")
        _change(repo)
        refresh_index(index)
        second = publish(index, pg_url, "repo")
        whole = publish(index, pg_url, "whole")  # a repository new to the store
        expected = {question: retrieve(question, index=index) for question in QUESTIONS}
    assert first.rewritten is None and whole.rewritten is None  # every row written
    assert second.rewritten == 2  # server/webhook.py and server/extra.py
    assert (second.generation, second.files) == (2, 11)
    assert _xmin(pg_url, "docs/guide.md") == kept  # an unchanged file's row is the same row
    assert _stored_rows(pg_url, "repo") == _stored_rows(pg_url, "whole")
    with PostgresIndex(pg_url, "repo") as stored:
        assert not stored.has_file("server/old.py")
        assert stored.image_data("docs/flow.png") == (repo / "docs/flow.png").read_bytes()
        assert stored.dependencies("server/webhook.py") == [
            "server/extra.py",
            "server/helpers.py",
        ]
        for question, sources in expected.items():
            assert retrieve(question, index=stored) == sources, question


def test_publishes_of_an_index_refreshed_many_times_stay_equal_to_a_whole_one(
    pg_url: str, repo: Path
) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
        for turn in range(4):  # the same file written again and again, a file coming and going
            (repo / "server/helpers.py").write_text(
                f"def hmac_compare(left, right):\n    return left == right  # turn {turn}\n"
            )
            if turn % 2:
                (repo / f"docs/note{turn}.md").write_text(f"# Note {turn}\n\nzebra {turn}\n")
            else:
                for note in repo.glob("docs/note*.md"):
                    note.unlink()
            refresh_index(index)
            assert publish(index, pg_url, "repo").rewritten in (1, 2)
        publish(index, pg_url, "whole")
    assert _stored_rows(pg_url, "repo") == _stored_rows(pg_url, "whole")


def test_an_unchanged_index_publishes_a_generation_and_no_file(pg_url: str, repo: Path) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
        kept = _xmin(pg_url, "server/webhook.py")
        again = publish(index, pg_url, "repo")
    assert (again.generation, again.rewritten) == (2, 0)
    assert _xmin(pg_url, "server/webhook.py") == kept


def test_an_index_built_again_or_mostly_changed_is_published_whole(pg_url: str, repo: Path) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
    before = _xmin(pg_url, "docs/guide.md")
    with build_index(repo) as index:  # built again: another index, whatever it holds
        assert publish(index, pg_url, "repo").rewritten is None
    assert _xmin(pg_url, "docs/guide.md") != before
    for path in repo.glob("server/*.py"):
        path.write_text(path.read_text() + "\n# changed\n")
    with load_index(repo) as index:  # nine of eleven files changed: cheaper to write them all
        assert publish(index, pg_url, "repo").rewritten is None
        publish(index, pg_url, "whole")
    assert _stored_rows(pg_url, "repo") == _stored_rows(pg_url, "whole")


def test_a_store_of_the_earlier_layout_keeps_each_repositorys_current_rows(pg_url: str) -> None:
    earlier = [name for name, _ in MIGRATIONS][:5]
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            "CREATE TABLE szrag_migrations ("
            " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for name, statements in MIGRATIONS[:5]:
            conn.execute(statements)
            conn.execute("INSERT INTO szrag_migrations (name) VALUES (%s)", (name,))
        conn.execute(
            "INSERT INTO szrag_repositories (name, generation, published_at)"
            " VALUES ('repo', 2, now())"
        )
        file_row = "(%s, %s, 1, %s, 1, 1, 1, 1, 'sha', 'code', '\\x00', 0)"
        conn.execute(
            "INSERT INTO szrag_files (repository, generation, id, path, size, mtime_ns, ctime_ns,"
            f" inode, sha256, type, tokens, decode_errors) VALUES {file_row}, {file_row}",
            ("repo", 1, "stale.py", "repo", 2, "current.py"),
        )
        assert migrate(conn) == [name for name, _ in MIGRATIONS if name not in earlier]
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_name = 'szrag_files' AND column_name = 'generation'"
        ).fetchall()
        rows = conn.execute("SELECT repository, id, path FROM szrag_files").fetchall()
        with pytest.raises(psycopg.errors.UniqueViolation):  # keyed by repository and id
            conn.execute(
                "INSERT INTO szrag_files (repository, id, path, size, mtime_ns, ctime_ns,"
                " inode, sha256, type, tokens, decode_errors)"
                " VALUES ('repo', 1, 'other.py', 1, 1, 1, 1, 'sha', 'code', '\\x00', 0)"
            )
    assert columns == []
    assert rows == [("repo", 1, "current.py")]


def test_differences_in_the_chunks_a_tsvector_cannot_hold_match_a_whole_publish(
    pg_url: str, tmp_path: Path, hard_tree: Callable[[Path], Path]
) -> None:
    root = hard_tree(tmp_path / "tree")
    with build_index(root) as index:
        publish(index, pg_url, "repo")
        (root / "data/long_token.txt").unlink()  # its digest leaves the vocabulary
        (root / "data/other_token.txt").write_text(f"token {'d00f' * 600}\n")
        (root / "data/long.txt").write_text(  # still too long for its positions
            "\n".join(" ".join(f"word{n} gauge" for n in range(300)) for _ in range(60)) + "\n"
        )
        (root / "docs/unicode.md").write_text("# Café\n\nnaïve straße 東京 deploy again\n")
        refresh_index(index)
        assert publish(index, pg_url, "repo").rewritten == 3
        publish(index, pg_url, "whole")
    assert _stored_rows(pg_url, "repo") == _stored_rows(pg_url, "whole")
    with psycopg.connect(pg_url) as conn:
        digests = conn.execute(
            "SELECT count(*) FROM szrag_vocabulary WHERE repository = 'repo' AND term LIKE '~%'"
        ).fetchone()
    assert digests == (1,)


def test_an_image_whose_bytes_change_under_the_same_size_and_time_is_published_again(
    pg_url: str, repo: Path
) -> None:
    image = repo / "docs/flow.png"
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
        before = image.stat()
        image.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(255, -1, -1)))  # same length
        os.utime(image, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `cp -p` keeps it
        refresh_index(index)
        assert publish(index, pg_url, "repo").rewritten == 0
        publish(index, pg_url, "whole")
    assert _stored_rows(pg_url, "repo") == _stored_rows(pg_url, "whole")
    with PostgresIndex(pg_url, "repo") as stored:
        assert stored.image_data("docs/flow.png") == image.read_bytes()


def _replica_answers(stored: PostgresIndex) -> dict[str, Any]:
    """What a replica's views give: sources, symbols, file rows and definitions."""
    from szrag.structure.queries import find_symbols

    return {
        "sources": {question: retrieve(question, index=stored) for question in QUESTIONS},
        "symbols": [find_symbols(name, stored) for name in ("zebra", "hmac_compare", "save")],
        "files": stored.files_by_path(),
        "definitions": stored.definitions(),
        "best": stored.full_text((4.0, 2.0, 5.0, 1.0)).best(["zebra", "hmac", "save"], 50, {}),
    }


def test_a_replica_carries_its_views_over_the_files_a_publish_rewrote(
    pg_url: str, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with build_index(repo) as index:
        publish(index, pg_url, "repo")
        stored = PostgresIndex(pg_url, "repo")
        stored.keep_in_memory(True)
        _replica_answers(stored)  # every view built, the postings of the words kept
        _change(repo)
        refresh_index(index)
        publish(index, pg_url, "repo")
        (repo / "server/helpers.py").write_text("def hmac_compare(a, b):\n    return a == b\n")
        refresh_index(index)
        publish(index, pg_url, "repo")  # two publishes since the views were built

        whole_reads: list[str] = []
        every_file = stored.files
        postings = PostgresFullText._postings

        def files() -> list[Any]:
            whole_reads.append("files")
            return every_file()

        def postings_of(search: PostgresFullText, name: str) -> Any:
            whole_reads.append(name)
            return postings(search, name)

        monkeypatch.setattr(stored, "files", files)
        monkeypatch.setattr(PostgresFullText, "_postings", postings_of)
        carried = _replica_answers(stored)
        # the file rows and the words' postings were carried, not read again
        assert not {"files", "zebra", "hmac", "save"} & set(whole_reads)
        assert stored.changes_since(1) is not None
        with PostgresIndex(pg_url, "repo") as fresh:
            fresh.keep_in_memory(True)
            assert carried == _replica_answers(fresh)
        with PostgresIndex(pg_url, "repo") as cold:  # nothing kept: every read from the store
            assert carried["best"] == _replica_answers(cold)["best"]
        assert carried["sources"] == {
            question: retrieve(question, index=index) for question in QUESTIONS
        }
        stored.close()


def test_views_are_built_again_after_a_whole_publish_or_past_the_kept_records(
    pg_url: str, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer, "KEPT_GENERATIONS", 2)
    with build_index(repo) as index:
        for _ in range(4):
            publish(index, pg_url, "repo")
        with PostgresIndex(pg_url, "repo") as stored:
            assert stored.changes_since(3) is not None  # generation 4's record, kept
            assert stored.changes_since(1) is None  # generation 2's record is gone
    with psycopg.connect(pg_url) as conn:
        kept = conn.execute("SELECT generation FROM szrag_generations ORDER BY 1").fetchall()
    assert kept == [(3,), (4,)]
    with build_index(repo) as index:  # built again: every row written, nothing to carry over
        publish(index, pg_url, "repo")
    with PostgresIndex(pg_url, "repo") as stored:
        assert stored.changes_since(4) is None
