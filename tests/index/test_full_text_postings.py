"""The SQLite store's in-memory postings score exactly as its FTS5 table does."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from szrag.index import Index, build_index, refresh_index
from szrag.index.postings import VIEW, ChunkPostings, memory_postings, warm_postings
from szrag.rank import bm25

WORDS = [
    "deploy",
    "webhook",
    "signature",
    "verify",
    "request",
    "router",
    "route",
    "parameter",
    "parse",
    "option",
    "command",
    "line",
    "index",
    "search",
    "builder",
    "redirect",
    "follow",
    "send",
    "collect",
    "module",
    "directory",
    "session",
    "token",
    "cache",
    "refresh",
    "error",
    "handler",
    "status",
    "metric",
    "log",
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Files of many lengths and mixes of words, some identical (so that scores tie)."""
    chooser = random.Random(7)
    for number in range(40):
        body = [
            " ".join(chooser.choices(WORDS, k=chooser.randint(3, 12)))
            for _ in range(chooser.randint(1, 130))
        ]
        functions = [
            f"def {chooser.choice(WORDS)}_{chooser.choice(WORDS)}():\n    pass" for _ in range(3)
        ]
        (tmp_path / f"pkg/{chooser.choice(WORDS)}{number}.py").parent.mkdir(exist_ok=True)
        (tmp_path / f"pkg/{chooser.choice(WORDS)}{number}.py").write_text(
            "\n".join(functions + [f"# {line}" for line in body]) + "\n"
        )
        (tmp_path / f"docs/{number}.md").parent.mkdir(exist_ok=True)
        (tmp_path / f"docs/{number}.md").write_text(
            f"# {chooser.choice(WORDS)}\n\n" + "\n".join(body)
        )
    for copy in range(3):  # the same text thrice: the same size and counts, tied scores
        (tmp_path / f"same/copy{copy}.txt").parent.mkdir(exist_ok=True)
        (tmp_path / f"same/copy{copy}.txt").write_text("deploy webhook signature\n" * 5)
    return tmp_path


def _sql(index: Index, phrases: list[str], limit: int) -> list[tuple[int, float]]:
    return index.conn.execute(
        "SELECT rowid, bm25(chunk_terms, ?, ?, ?, ?) AS rank FROM chunk_terms"
        " WHERE chunk_terms MATCH ? ORDER BY rank LIMIT ?",
        (*bm25.FIELD_WEIGHTS, " OR ".join(f'"{phrase}"' for phrase in phrases), limit),
    ).fetchall()


def test_memory_scores_equal_fts5_scores_to_the_last_bit(repo: Path) -> None:
    chooser = random.Random(11)
    with build_index(repo) as index:
        index.keep_in_memory()
        view = memory_postings(index, bm25.FIELD_WEIGHTS)
        assert view is not None
        tied = 0
        for _ in range(150):
            phrases = chooser.sample(WORDS, chooser.randint(1, 5))
            for limit in (3, 40, 400):
                expected = _sql(index, phrases, limit)
                assert view.best(index, phrases, limit) == expected, (phrases, limit)
                ranks = [rank for _, rank in expected]
                tied += len(set(ranks)) < len(ranks)
        assert tied  # ties were met, and broken as SQLite breaks them
        # repeated and inflected forms: each phrase counts as SQLite counts it
        for phrases in (["deploy", "deploy"], ["parsed", "parse", "parses"], ["nothing"]):
            assert view.best(index, phrases, 50) == _sql(index, phrases, 50)


@pytest.mark.parametrize("weights", [(4.0, 2.0, 5.0, 1.0), (1.5, 0.3, 2.25, 1.0), (3.0, 1.0)])
def test_any_column_weights_score_as_fts5_does(repo: Path, weights: tuple[float, ...]) -> None:
    # whole weights are summed by SQLite as it reads a term's postings, others one by one
    chooser = random.Random(3)
    with build_index(repo) as index:
        view = ChunkPostings(index.conn, index.generation(), weights)
        for _ in range(40):
            phrases = chooser.sample(WORDS, chooser.randint(1, 4))
            expected = index.conn.execute(
                f"SELECT rowid, bm25(chunk_terms, {', '.join(map(str, weights))}) AS rank"
                " FROM chunk_terms WHERE chunk_terms MATCH ? ORDER BY rank LIMIT 60",
                (" OR ".join(f'"{phrase}"' for phrase in phrases),),
            ).fetchall()
            assert view.best(index, phrases, 60) == expected, (phrases, weights)


def test_sizes_and_totals_are_the_full_text_tables(repo: Path) -> None:
    with build_index(repo) as index:
        view = ChunkPostings(index.conn, index.generation(), bm25.FIELD_WEIGHTS)
        chunks = index.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        assert view.rows == chunks
        assert view.average_size > 1


def test_a_phrase_of_several_tokens_is_left_to_sqlite(repo: Path) -> None:
    with build_index(repo) as index:
        index.keep_in_memory()
        view = memory_postings(index, bm25.FIELD_WEIGHTS)
        assert view is not None
        assert view.best(index, ["deploy", "web-hook"], 10) is None
        # and the ranker then asks SQLite, with the same result as without memory
        terms = bm25.Terms(
            ("deploy", "web-hook"), ("deploy", "web-hook"), ("deploy", "web-hook"), {}
        )
        search = bm25.full_text(index)
        assert bm25.best_chunks(search, terms) == _sql(index, ["deploy", "web-hook"], 400)


def test_the_cache_is_bounded_and_still_exact(repo: Path) -> None:
    with build_index(repo) as index:
        view = ChunkPostings(index.conn, index.generation(), bm25.FIELD_WEIGHTS, max_postings=60)
        for word in WORDS:
            assert view.best(index, [word, "deploy"], 30) == _sql(index, [word, "deploy"], 30)
            assert view._held <= 60 or len(view._terms) == 1
        assert len(view.held_tokens()) < len(WORDS)


def test_a_reader_on_another_generation_keeps_nothing(repo: Path) -> None:
    with build_index(repo) as index:
        view = ChunkPostings(index.conn, index.generation(), bm25.FIELD_WEIGHTS)
        (repo / "pkg/new.py").write_text("def deploy_webhook():\n    pass\n")
        refresh_index(index)
        assert view.postings(index, "deploy") is None
        assert view.cached("deploy") is None  # not remembered as a phrase that cannot score


def test_a_new_generation_reads_the_last_terms_again(repo: Path) -> None:
    with build_index(repo) as index:
        index.keep_in_memory()
        warm_postings(index, bm25.FIELD_WEIGHTS)
        first = index.derived(VIEW, lambda: None)
        assert isinstance(first, ChunkPostings)
        first.best(index, ["router", "redirect"], 10)
        (repo / "pkg/new.py").write_text("def router_redirect():\n    pass\n")
        refresh_index(index)
        warm_postings(index, bm25.FIELD_WEIGHTS)
        second = index.derived(VIEW, lambda: None)
        assert isinstance(second, ChunkPostings) and second is not first
        assert second.cached("router") is not None and second.cached("redirect") is not None
        assert second.best(index, ["router", "redirect"], 10) == _sql(
            index, ["router", "redirect"], 10
        )


def _view(index: Index) -> ChunkPostings:
    view = index.derived(VIEW, lambda: None)
    assert isinstance(view, ChunkPostings)
    return view


def _read_now(index: Index, view: ChunkPostings, phrase: str) -> tuple[list[int], list[float]]:
    found = view._read(index.conn, view.token(phrase))
    assert found is not None
    return found.positions.tolist(), found.weighted.tolist()


def test_a_new_generation_carries_the_last_terms_where_chunks_did_not_change(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chooser = random.Random(5)
    with build_index(repo) as index:
        index.keep_in_memory()
        warm_postings(index, bm25.FIELD_WEIGHTS)
        _view(index).best(index, WORDS, 10)
        for round_number in range(4):
            earlier = _view(index)
            edited = chooser.choice(sorted((repo / "pkg").glob("*.py")))
            edited.write_text(edited.read_text() + f"# deploy router {round_number} parse\n")
            (repo / f"pkg/added{round_number}.py").write_text(
                f"def router_{round_number}():\n    return 'deploy webhook parses'\n"
            )
            chooser.choice(sorted((repo / "docs").glob("*.md"))).unlink()
            (repo / "docs/moved.md").write_text(f"# session {round_number}\n\nsession token\n")
            refresh_index(index)
            # a carried term is never read from the full-text table again
            monkeypatch.setattr(ChunkPostings, "_read", _never_read)
            warm_postings(index, bm25.FIELD_WEIGHTS)
            monkeypatch.undo()
            view = _view(index)
            assert view is not earlier
            for word in WORDS:  # as read afresh: each chunk, each count, in order
                carried = view.cached(word)
                assert carried is not None, word
                assert (carried.positions.tolist(), carried.weighted.tolist()) == _read_now(
                    index, view, word
                )
            for phrases in (["router", "deploy"], ["session", "token"], ["parse"]):
                assert view.best(index, phrases, 40) == _sql(index, phrases, 40)


def _never_read(view: ChunkPostings, conn: sqlite3.Connection, phrase: str) -> None:
    raise AssertionError(f"{phrase!r} was read again")


def test_a_rebuilt_index_reads_its_terms_again(repo: Path) -> None:
    with build_index(repo) as index:
        index.keep_in_memory()
        warm_postings(index, bm25.FIELD_WEIGHTS)
        first = _view(index)
        first.best(index, ["router", "redirect"], 10)
        for path in sorted((repo / "pkg").glob("*.py"))[: len(WORDS)]:
            path.write_text(path.read_text() + "# router\n")  # most chunks written anew
        refresh_index(index)
        second = memory_postings(index, bm25.FIELD_WEIGHTS)
        assert second is not None and second is not first
        assert second.carry(index, first, ["router", "redirect"]) == ["router", "redirect"]
        warm_postings(index, bm25.FIELD_WEIGHTS)
        assert second.best(index, ["router", "redirect"], 10) == _sql(
            index, ["router", "redirect"], 10
        )


def test_one_shot_ranking_does_not_build_the_view(repo: Path) -> None:
    with build_index(repo) as index:
        assert memory_postings(index, bm25.FIELD_WEIGHTS) is None
        search = bm25.full_text(index)
        terms = bm25.terms_of(search, "deploy webhook")
        assert bm25.best_chunks(search, terms) == _sql(index, list(terms.selective), 400)
        assert VIEW not in index._derived.get(index.generation(), {})


def test_sizes_are_summed_from_every_row_of_the_size_table(repo: Path) -> None:
    from szrag.index.fts5 import varints
    from szrag.index.postings import _sizes

    with build_index(repo) as index:
        rows = index.conn.execute("SELECT id, sz FROM chunk_terms_docsize ORDER BY id").fetchall()
    small = [(chunk_id, blob) for chunk_id, blob in rows if max(blob) < 0x80]
    assert small and len(small) < len(rows)  # sizes of one byte each, and longer ones
    for chosen in (small, rows):
        ids, sizes = _sizes(chosen)
        assert ids.tolist() == [chunk_id for chunk_id, _ in chosen]
        assert sizes.tolist() == [float(sum(varints(blob))) for _, blob in chosen]
    assert _sizes([])[0].tolist() == []


def test_sizes_decoded_at_once_are_what_varints_reads() -> None:
    from szrag.index.fts5 import varints
    from szrag.index.postings import _sizes

    def encoded(value: int) -> bytes:
        groups = [value & 0x7F]
        while value := value >> 7:
            groups.append(0x80 | (value & 0x7F))
        return bytes(reversed(groups))

    chosen = random.Random(7)
    for _ in range(200):
        blobs = [
            b"".join(
                encoded(chosen.choice([chosen.randrange(128), chosen.randrange(1 << 21)]))
                for _ in range(chosen.randrange(1, 5))
            )
            for _ in range(chosen.randrange(1, 30))
        ]
        # a row of nine-byte varints, one ending mid-varint, one empty: read one by one
        blobs.append(chosen.choice([encoded(1 << 60), b"\x81", b"", encoded(300)]))
        _, sizes = _sizes(list(enumerate(blobs)))
        assert sizes.tolist() == [float(sum(varints(blob))) for blob in blobs]


def test_varints_read_as_sqlite_writes_them() -> None:
    from szrag.index.fts5 import varints as _varints

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(a, b)")
    conn.execute("INSERT INTO t VALUES (?, ?)", (" ".join(["x"] * 300), "y z"))
    (blob,) = conn.execute("SELECT sz FROM t_docsize").fetchone()
    assert _varints(blob) == [300, 2]


def test_frequencies_from_memory_equal_sqlite_counts(repo: Path) -> None:
    question = "how does the deploy webhook verify a parsed signature in the router"
    with build_index(repo) as index:
        expected = bm25.terms_of(bm25.full_text(index), question)
        index.keep_in_memory()
        view = memory_postings(index, bm25.FIELD_WEIGHTS)
        assert view is not None
        assert bm25.terms_of(bm25.full_text(index), question) == expected  # nothing read yet
        view.best(index, expected.selective, 10)
        assert all(view.frequency(term) is not None for term in expected.selective)
        assert bm25.terms_of(bm25.full_text(index), question) == expected


def test_the_chunk_count_from_memory_is_the_indexs_each_generation(repo: Path) -> None:
    with build_index(repo) as index:
        index.keep_in_memory()
        for turn in range(2):
            counted = int(index.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
            assert memory_postings(index, bm25.FIELD_WEIGHTS) is not None
            statements: list[str] = []
            index.conn.set_trace_callback(statements.append)
            try:
                assert bm25.full_text(index).chunk_count() == counted
            finally:
                index.conn.set_trace_callback(None)
            assert not [sql for sql in statements if "count(*)" in sql]  # the view knows
            (repo / f"added{turn}.md").write_text("# Added\n\n" + "a new line\n" * 150)
            refresh_index(index)
        counted = int(index.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        assert bm25.full_text(index).chunk_count() == counted


def test_chunk_rows_and_file_coverage_from_memory_equal_sqlite(repo: Path) -> None:
    with build_index(repo) as index:
        terms = bm25.terms_of(bm25.full_text(index), "deploy webhook signature router cache")
        paths = [path for (path,) in index.conn.execute("SELECT path FROM files")] + ["gone.py"]
        expected_coverage = bm25.file_coverage(index, terms, paths)
        ids = [chunk_id for (chunk_id,) in index.conn.execute("SELECT id FROM chunks")] + [10**9]
        expected_chunks = bm25.full_text(index).chunk_rows(ids)
        index.keep_in_memory()
        assert memory_postings(index, bm25.FIELD_WEIGHTS) is not None
        # kept deflated with the file rows, inflated as a string to test terms against
        assert isinstance(index.file_tokens(paths[:1])[paths[0]], str)
        assert bm25.file_coverage(index, terms, paths) == expected_coverage
        assert any(expected_coverage.values()) and expected_coverage["gone.py"] == 0.0
        assert bm25.full_text(index).chunk_rows(ids) == expected_chunks
        assert 10**9 not in expected_chunks


def test_a_damaged_size_table_is_a_damaged_index(repo: Path) -> None:
    from szrag.base.errors import DamagedIndexError

    with build_index(repo) as index:
        index.conn.execute("UPDATE chunk_terms_docsize SET sz = NULL WHERE id = 1")
        with pytest.raises(DamagedIndexError, match="rebuild"):
            ChunkPostings(index.conn, index.generation(), bm25.FIELD_WEIGHTS)


def test_a_server_scores_a_new_word_with_sqlite_and_reads_it_in_the_background(
    repo: Path,
) -> None:
    import time

    from szrag.index.shared import open_shared_index

    build_index(repo).close()
    with open_shared_index(repo) as index:
        index.keep_in_memory()
        view = memory_postings(index, bm25.FIELD_WEIGHTS)
        assert view is not None
        phrases = ["router", "redirect"]
        assert view.best(index, phrases, 10) is None  # SQLite answers this one
        deadline = time.monotonic() + 10
        while not all(view.cached(phrase) for phrase in phrases):
            assert time.monotonic() < deadline, "the postings were not read"
            time.sleep(0.01)
        with index.reading():
            assert view.best(index, phrases, 10) == _sql(index, phrases, 10)
        # the ranker's result is the same whichever path scored it
        search = bm25.full_text(index)
        terms = bm25.terms_of(search, "cache refresh handler")
        first = bm25.best_chunks(search, terms)
        deadline = time.monotonic() + 10
        while not all(view.cached(term) for term in terms.selective):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert bm25.best_chunks(search, terms) == first


def test_postings_read_apart_are_dropped_for_another_generation(repo: Path) -> None:
    with build_index(repo) as index:
        view = ChunkPostings(index.conn, "not this generation", bm25.FIELD_WEIGHTS)
        view._read_apart(index.path, ["router"])
        assert view.cached("router") is None and not view._pending


def test_postings_are_read_apart_from_a_path_with_uri_characters(tmp_path: Path) -> None:
    root = tmp_path / "a repo #1 ?x=%20"
    (root / "src").mkdir(parents=True)
    (root / "src/app.py").write_text("def route_handler():\n    return 'router'\n")
    with build_index(root) as index:
        view = ChunkPostings(index.conn, index.generation(), bm25.FIELD_WEIGHTS)
        view._read_apart(index.path, ["router"])
        found = view.cached("router")
        assert found is not None and found.size == 1


def test_a_server_reads_a_new_word_at_once_when_that_is_cheaper_than_sqlite(
    repo: Path,
) -> None:
    from szrag.index.postings import READ_COST
    from szrag.index.shared import open_shared_index

    (repo / "docs/rare.md").write_text("# zeppelin\n\nthe zeppelin deploy\n")
    build_index(repo).close()
    with open_shared_index(repo) as index:
        index.keep_in_memory()
        view = memory_postings(index, bm25.FIELD_WEIGHTS)
        assert view is not None
        with index.reading():
            terms = bm25.terms_of(bm25.full_text(index), "zeppelin deploy router")
        rare, common = "zeppelin", "deploy"
        assert READ_COST * terms.frequencies[rare] < terms.frequencies[common]
        with index.reading():
            assert view.postings(index, common) is not None  # read by an earlier question
            found = view.best(index, [common, rare], 10, terms.frequencies)
            assert found == _sql(index, [common, rare], 10)  # from memory, read at once
        assert view.cached(rare) is not None
        with index.reading():
            # a new word as common as the rest: SQLite scores, the word is read later
            other = next(term for term in terms.selective if view.cached(term) is None)
            even = {**terms.frequencies, other: terms.frequencies[common]}
            assert view.best(index, [common, other], 10, even) is None


def test_postings_are_kept_by_token_in_eight_bytes_an_entry(repo: Path) -> None:
    (repo / "docs/stems.md").write_text("# documents\n\nthe document documents documenting\n")
    with build_index(repo) as index:
        view = ChunkPostings(index.conn, index.generation(), bm25.FIELD_WEIGHTS)
        found = view.postings(index, "documents")
        assert found is not None and found.size >= 1
        assert view.cached("document") is found  # one token, one entry: read once
        assert found.positions.dtype == np.int32 and found.weighted.dtype == np.float32
        # two phrases of one token are two phrases to bm25, as to SQLite
        for phrases in (["documents", "document"], ["document", "deploy", "routes"]):
            assert view.best(index, phrases, 20) == _sql(index, phrases, 20)


def test_counts_a_float32_would_round_stay_float64() -> None:
    from szrag.index.postings import TermPostings

    whole = TermPostings.of(np.array([1, 5], dtype=np.int64), np.array([3.0, 17.0]))
    assert whole.weighted.dtype == np.float32 and whole.positions.dtype == np.int32
    fine = TermPostings.of(np.array([1], dtype=np.int64), np.array([0.1]))
    assert fine.weighted.dtype == np.float64 and fine.weighted[0] == 0.1


def test_a_server_reads_the_most_common_tokens_ahead_and_scores_new_words_from_memory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    import szrag.index.postings as postings
    from szrag.index.shared import open_shared_index

    build_index(repo).close()
    conn = sqlite3.connect(repo / ".rag/index.db")
    conn.execute("CREATE VIRTUAL TABLE temp.rows USING fts5vocab(main, chunk_terms, row)")
    rows = dict(conn.execute("SELECT term, doc FROM temp.rows").fetchall())
    conn.close()
    most = sorted(set(rows.values()), reverse=True)[1]  # the commonest are never searched
    ordered = sorted(
        ((token, chunks) for token, chunks in rows.items() if chunks <= most),
        key=lambda item: (-item[1], item[0]),
    )
    budget = ordered[0][1] + ordered[1][1]  # room for the first two, not the third
    monkeypatch.setattr(postings, "COMMON_MIN_CHUNKS", ordered[3][1])
    monkeypatch.setattr(postings, "COMMON_POSTINGS", budget)
    with open_shared_index(repo) as index:
        index.keep_in_memory()
        warm_postings(index, bm25.FIELD_WEIGHTS, most_chunks=most)
        view = _view(index)
        wanted = [ordered[0][0], ordered[1][0]]
        deadline = time.monotonic() + 10
        while view._pending or not all(view._terms.get(token) for token in wanted):
            assert time.monotonic() < deadline, "the common tokens were not read"
            time.sleep(0.01)
        assert set(view.held_tokens()) == set(wanted)  # not the commonest, nor the third
        # a question of those common words and a new rare one is scored from memory at once
        with index.reading():
            frequencies = {token: rows[token] for token in wanted}
            rare = ordered[-1][0]
            frequencies[rare] = rows[rare]
            phrases = [*wanted, rare]
            assert view.best(index, phrases, 10, frequencies) == _sql(index, phrases, 10)


def test_a_stopping_server_leaves_the_common_tokens_unread(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import szrag.index.postings as postings
    from szrag.index.shared import open_shared_index

    build_index(repo).close()
    monkeypatch.setattr(postings, "COMMON_MIN_CHUNKS", 1)  # every token is common here
    first_read = threading.Event()
    resume = threading.Event()
    read = postings.ChunkPostings._read

    def one_at_a_time(view: ChunkPostings, conn: sqlite3.Connection, token: str) -> object:
        first_read.set()
        assert resume.wait(10)
        return read(view, conn, token)

    monkeypatch.setattr(postings.ChunkPostings, "_read", one_at_a_time)
    with open_shared_index(repo) as index:
        index.keep_in_memory()
        warm_postings(index, bm25.FIELD_WEIGHTS, most_chunks=1e9)
        assert first_read.wait(10)  # the read-ahead holds its first token
        postings.stop_reads(index)
        resume.set()
        postings.settle_reads()
        view = _view(index)
        assert len(view.held_tokens()) == 1 and not view._pending  # the rest left unread

    # stopped before its views are warmed, a server reads nothing ahead at all
    asked: list[object] = []
    monkeypatch.setattr(ChunkPostings, "read_common_later", lambda view, *_: asked.append(view))
    with open_shared_index(repo) as index:
        postings.stop_reads(index)
        index.keep_in_memory()
        warm_postings(index, bm25.FIELD_WEIGHTS, most_chunks=1e9)
        assert asked == []


def test_an_edit_carries_the_common_tokens_instead_of_choosing_them_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[ChunkPostings] = []
    monkeypatch.setattr(ChunkPostings, "read_common_later", lambda view, *_: asked.append(view))
    with build_index(repo) as index:
        index.keep_in_memory()
        warm_postings(index, bm25.FIELD_WEIGHTS, most_chunks=1000)
        first = _view(index)
        first.best(index, ["router", "deploy"], 10)
        (repo / "pkg/new.py").write_text("def router_deploy():\n    pass\n")
        refresh_index(index)
        warm_postings(index, bm25.FIELD_WEIGHTS, most_chunks=1000)
        second = _view(index)
        assert second is not first and asked == [first]  # the first view chose them
        assert second.cached("router") is not None  # carried with the rest
