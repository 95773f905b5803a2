"""An index kept in memory reads chunks, edges and files as SQLite gives them."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from szrag.context import build_codebase_context
from szrag.index import Index, build_index, load_index, refresh_index, store
from szrag.index.memory import ChunkMemory, TokenMemory
from szrag.rank.retrieve import retrieve
from szrag.structure.context import get_code_context

CopyFixture = Callable[[str], Path]


def _every_read(index: Index) -> list[object]:
    """Chunks (whole files and line ranges), chunk texts, edges, file checks and structure
    text of every indexed file, in one list to compare."""
    reads: list[object] = []
    with index.reading():
        for entry in index.file_entries():
            path = entry.path
            chunks = index.chunks(path)
            reads.append(chunks)
            reads.append(index.chunks(path, [(5, 9), (70, 75), (30, 20), (1, 1)]))
            reads.append(index.chunk_texts([chunk.id for chunk in chunks] + [10**9]))
            reads.append((index.dependencies(path), index.dependants(path)))
            reads.append((index.has_file(path), index.has_file(path + ".missing")))
            reads.append(get_code_context(path, index))
            reads.append(index.file_tokens([path, path + ".missing"]))
            reads.append(entry.path_tokens)
    return reads


def test_memory_reads_what_sqlite_reads(copy_fixture: CopyFixture) -> None:
    with build_index(copy_fixture("express_app")) as index:
        from_sqlite = _every_read(index)
        index.keep_in_memory()
        first, again = _every_read(index), _every_read(index)
    assert first == from_sqlite and again == from_sqlite
    assert any(reads for reads in from_sqlite[3::6] if reads != ([], []))  # edges were read


def test_memory_follows_a_refresh(copy_fixture: CopyFixture) -> None:
    root = copy_fixture("express_app")
    with build_index(root) as index:
        index.keep_in_memory()
        before = index.chunks("server/lib/logger.js")
        assert "server/lib/audit.js" not in index.dependants("server/lib/logger.js")
    logger = root / "server" / "lib" / "logger.js"
    logger.write_text(logger.read_text() + "\n// one more line\n")
    (root / "server" / "lib" / "audit.js").write_text('const logger = require("./logger");\n')
    with load_index(root) as index:
        index.keep_in_memory()
        after = index.chunks("server/lib/logger.js")
        assert after != before and after[-1].text.endswith("// one more line\n")
        assert "server/lib/audit.js" in index.dependants("server/lib/logger.js")
        assert index.has_file("server/lib/audit.js")


def test_chunk_texts_kept_are_bounded(copy_fixture: CopyFixture) -> None:
    with build_index(copy_fixture("express_app")) as index:
        ids = [chunk.id for entry in index.file_entries() for chunk in index.chunks(entry.path)]
        expected = store.chunk_texts(index.conn, ids)
        memory = ChunkMemory(max_chars=2000)
        assert memory.texts(index.conn, ids) == expected
        assert memory.texts(index.conn, ids[:3]) == {key: expected[key] for key in ids[:3]}
        assert 0 < memory._chars <= 2000 and len(memory._texts) < len(ids)


def test_a_whole_file_read_for_its_cut_keeps_no_chunk_text(copy_fixture: CopyFixture) -> None:
    # the cut keeps the file's text; its windows (each line in one and a half of them) are
    # not kept a second time, while the lines of a range still are
    from szrag.rank.units import cut_of, kept_lines

    with build_index(copy_fixture("express_app")) as index:
        path = max(index.file_entries(), key=lambda entry: entry.id).path
        with index.reading():
            whole = store.file_chunks(index.conn, path, None)
        expected = "\n".join(chunk.text for chunk in whole[:1])
        index.keep_in_memory()
        memory = index._chunk_memory()
        assert kept_lines(index, path, 1, 3) is None  # not cut yet: nothing to read it from
        lines = index.lines(path)
        assert lines[: len(expected.split("\n"))] == expected.split("\n")
        assert memory._chars == 0  # read, not kept
        assert index.lines(path, 2, 4) == lines[1:4] and memory._chars > 0
        cut = cut_of(index, path, "javascript")
        assert cut is not None
        for first, last in [(1, 3), (2, 2), (len(lines) - 1, len(lines) + 5), (9, 4), (0, 2)]:
            assert kept_lines(index, path, first, last) == index.lines(path, first, last)


def test_file_tokens_kept_are_bounded_and_as_stored(copy_fixture: CopyFixture) -> None:
    with build_index(copy_fixture("express_app")) as index:
        paths = [entry.path for entry in index.file_entries()]
        expected = store.file_tokens(index.conn, paths)
        files = {file.path: file for file in index.files()}
        memory = TokenMemory(max_chars=300)
        assert memory.joined(files, [*paths, "gone.js"]) == expected
        again = memory.joined(files, paths[::-1])
        assert list(again) == paths[::-1] and again == expected  # in the order asked
        assert 0 < memory._chars <= 300 and len(memory._joined) < len(paths)


def _from_records(index: Index) -> tuple[object, ...]:
    """What the definitions, routes and environment reads are made from every record."""
    from szrag.code.model import CodeRecord

    records = [(path, CodeRecord.from_dict(code)) for path, code in index.code_records()]
    definitions = [(path, item) for path, record in records for item in record.functions]
    routes = [(path, code["routes"]) for path, code in index.code_records() if code.get("routes")]
    reads = [
        (path, item.name, item.line)
        for path, record in records
        for item in record.environment_variables
    ]
    return definitions, routes, reads


def test_definitions_routes_and_environment_reads_are_the_records_own_through_refreshes(
    copy_fixture: CopyFixture,
) -> None:
    root = copy_fixture("express_app")
    with build_index(root) as index:

        def stored() -> tuple[object, ...]:
            routes = [(path, json.loads(found)) for path, found in index.route_rows()]
            return index.definitions(), routes, index.environment_reads()

        first = stored()
        assert all(first) and first == _from_records(index)
        server = root / "server" / "index.js"
        server.write_text(
            server.read_text() + "\nfunction addedLater() {\n  return process.env.ADDED_LATER;\n}\n"
        )
        (root / "server" / "extra.js").write_text("function extra() {}\nmodule.exports = extra;\n")
        refresh_index(index)
        second = stored()
        assert second == _from_records(index) and second != first
        names = {(path, item.name) for path, item in index.definitions()}
        assert {("server/index.js", "addedLater"), ("server/extra.js", "extra")} <= names
        assert ("server/index.js", "ADDED_LATER") in {
            read[:2] for read in index.environment_reads()
        }
        (root / "server" / "extra.js").unlink()
        refresh_index(index)
        assert stored() == _from_records(index)
        assert "server/extra.js" not in {path for path, _ in index.definitions()}


def test_environment_reads_keep_the_order_of_the_source(copy_fixture: CopyFixture) -> None:
    with build_index(copy_fixture("languages")) as index:
        reads = index.environment_reads()
        assert reads == _from_records(index)[2] and reads  # one file's, then the next's
        one_line = [
            name for path, name, line in reads if path == "javascript/environment.js" and line == 5
        ]
        assert one_line == ["DEPLOY_BRANCH", "ADMIN_TOKEN", "LOG_LEVEL"]  # as written


def test_a_damaged_environment_or_route_value_is_named_damage(copy_fixture: CopyFixture) -> None:
    from szrag.base.errors import DamagedIndexError
    from szrag.structure.queries import routes_by_path

    with build_index(copy_fixture("express_app")) as index:
        with index.conn:
            index.conn.execute(
                "UPDATE files SET environment = '[[\"PORT\"' WHERE environment IS NOT NULL"
            )
            index.conn.execute("UPDATE files SET routes = '{' WHERE routes IS NOT NULL")
        with pytest.raises(DamagedIndexError, match="szrag index --rebuild"):
            index.environment_reads()
        with pytest.raises(DamagedIndexError, match="szrag index --rebuild"):
            routes_by_path(index)


def test_records_are_decoded_when_read_and_kept_by_content(copy_fixture: CopyFixture) -> None:
    from szrag.code.model import CodeRecord
    from szrag.index.records import records_by_path

    with build_index(copy_fixture("express_app")) as index:
        expected = {path: CodeRecord.from_dict(code) for path, code in index.code_records()}
        records = records_by_path(index)
        path = next(iter(expected))
        assert records[path] == expected[path]
        assert records_by_path(index)[path] is records[path]  # decoded once
        assert records.get("no/such/file.js") is None
        assert dict(records.items()) == expected and len(records) == len(expected)


def test_a_file_row_decodes_its_tokens_and_record_as_stored(copy_fixture: CopyFixture) -> None:
    with build_index(copy_fixture("express_app")) as index:
        files = index.files()
        joined = store.file_tokens(index.conn, [file.path for file in files])
        records = dict(index.code_records())
        assert any(file.code for file in files)
        for file in files:
            assert file.tokens == frozenset(joined[file.path].split())
            assert file.joined_tokens == joined[file.path]
            assert file.code == records.get(file.path)
            assert file.code is None or file.code is not file.code  # none shared between readers
            assert "packed" not in repr(file)


def test_a_snapshot_reads_its_generation_once(copy_fixture: CopyFixture) -> None:
    root = copy_fixture("express_app")
    with build_index(root) as index:
        other = sqlite3.connect(index.path)
        statements: list[str] = []
        with index.reading():
            index.conn.set_trace_callback(statements.append)
            seen = index.generation()
            assert [index.generation() for _ in range(3)] == [seen] * 3
            assert sum("generation" in statement for statement in statements) == 1
            with other:  # another writer commits while the snapshot is held
                other.execute("UPDATE meta SET value = 'next' WHERE key = 'generation'")
            assert index.generation() == seen
        assert index.generation() == "next"
        index.conn.set_trace_callback(None)
        other.close()


def test_a_closed_index_kept_in_memory_is_freed_by_reference_counting(
    copy_fixture: CopyFixture,
) -> None:
    import gc
    import weakref

    gc.disable()  # no collection may break a cycle for us
    try:
        with build_index(copy_fixture("express_app")) as index:
            index.keep_in_memory()
            for entry in index.file_entries():
                get_code_context(entry.path, index)
            index.chunks(entry.path)
            index.dependants(entry.path)
            question = "how is the webhook signature verified?"
            build_codebase_context(question, index, retrieve(question, index=index))
            held = weakref.ref(index)
        del index
        assert held() is None
    finally:
        gc.enable()


def _views(index: Index) -> tuple[object, ...]:
    """The per-generation views a long-running face keeps, as plain values to compare."""
    from szrag.index.records import records_by_path

    with index.reading():
        return (
            index.files(),
            list(index.files_by_path().items()),
            index.file_entries(),
            index.definitions(),
            list(records_by_path(index).items()),
            build_codebase_context("how does the logger write audit entries", index),
        )


def test_views_carried_across_refreshes_are_the_views_built_afresh(
    copy_fixture: CopyFixture,
) -> None:
    from szrag.index.shared import open_shared_index

    root = copy_fixture("express_app")
    build_index(root).close()
    with open_shared_index(root) as kept:
        kept.keep_in_memory()
        before = {file.path: file for file in kept.files()}
        _views(kept)
        logger = root / "server" / "lib" / "logger.js"
        logger.write_text(logger.read_text() + "\nfunction rotate() { return 1; }\n")  # changed
        (root / "server" / "lib" / "audit.js").write_text(  # added
            'const logger = require("./logger");\nfunction audit() { logger.log("x"); }\n'
        )
        removed = next(path for path in (root / "server").rglob("*.js") if path != logger)
        removed.unlink()
        touched = next(path for path in root.rglob("*.js") if path not in (logger, removed))
        touched.write_bytes(touched.read_bytes())  # a new stat, the same bytes
        os.utime(touched, ns=(1, 1))
        report = refresh_index(kept)
        assert report.changed and report.added and report.removed and report.touched
        carried = _views(kept)
        kept_files = kept.files()
        with open_shared_index(root) as afresh:
            afresh.keep_in_memory()
            built = _views(afresh)
    assert carried == built
    # what did not change is not decoded again: the very objects of the generation before
    rewritten = {*report.changed, *report.added, *report.touched}
    files = {file.path: file for file in kept_files}
    assert all(files[path] is before[path] for path in files if path not in rewritten)
    (touched_path,) = report.touched
    assert files[touched_path] is not before[touched_path]
    assert files[touched_path].packed_tokens is before[touched_path].packed_tokens
    assert files[touched_path].packed_code is before[touched_path].packed_code
    assert files[touched_path].mtime_ns == 1


def test_a_view_asked_for_by_two_threads_at_once_is_built_once(copy_fixture: CopyFixture) -> None:
    import threading
    import time

    from szrag.index.shared import open_shared_index

    root = copy_fixture("express_app")
    build_index(root).close()
    with open_shared_index(root) as index:
        building, release = threading.Event(), threading.Event()
        calls: list[str] = []
        results: list[object] = []

        def compute() -> object:
            calls.append(threading.current_thread().name)
            building.set()
            release.wait(10)
            return object()

        def ask() -> None:
            results.append(index.derived("test.view", compute))

        first = threading.Thread(target=ask, name="first")
        first.start()
        assert building.wait(10)
        second = threading.Thread(target=ask, name="second")
        second.start()
        time.sleep(0.2)
        assert second.is_alive() and calls == ["first"]  # waiting for the first build
        release.set()
        first.join(10)
        second.join(10)
        assert calls == ["first"] and len(results) == 2 and results[0] is results[1]

        def failing() -> object:
            raise RuntimeError("no view")

        with contextlib.suppress(RuntimeError):
            index.derived("test.failing", failing)
        assert index.derived("test.failing", object) is not None  # a failed build is retried


def test_definitions_kept_in_memory_share_their_texts_and_equal_a_one_shots(
    copy_fixture: CopyFixture,
) -> None:
    from szrag.index.shared import open_shared_index

    root = copy_fixture("express_app")
    with build_index(root) as index:
        one_shot = index.definitions()
    with open_shared_index(root) as kept:
        kept.keep_in_memory()
        with kept.reading():
            definitions = kept.definitions()
    assert definitions == one_shot
    kinds = [item.kind for _, item in definitions]
    assert len(kinds) > len(set(kinds))  # the fixture repeats kinds: each one object
    assert len({id(kind) for kind in kinds}) == len(set(kinds))


def _lookup_tables(index: Index) -> tuple[list[tuple[str, str, int]], list[tuple[object, ...]]]:
    """The definitions' lookup words by path (file ids differ between two builds), and every
    term of the code files' full-text table with its column and counts."""
    words = index.conn.execute(
        "SELECT w.word, f.path, w.seq FROM definition_words w JOIN files f ON f.id = w.file_id"
        " ORDER BY 1, 2, 3"
    ).fetchall()
    index.conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.file_vocabulary"
        " USING fts5vocab(main, file_terms, 'col')"
    )
    vocabulary = index.conn.execute("SELECT * FROM temp.file_vocabulary ORDER BY 1, 2").fetchall()
    return words, vocabulary


def test_the_lookup_tables_after_refreshes_are_a_fresh_builds(
    copy_fixture: CopyFixture, tmp_path: Path
) -> None:
    root = copy_fixture("python_app")
    with build_index(root) as index:
        first = _lookup_tables(index)
        assert first[0] and first[1]
        code = sorted(path for path in root.rglob("*.py") if ".rag" not in path.parts)
        code[0].write_text(code[0].read_text() + "\n\ndef zanzibar_penguin():\n    pass\n")
        code[1].unlink()
        (root / "added.py").write_text("class Walrus:\n    def haul_out(self): pass\n")
        (root / "notes.md").write_text("# zanzibar walrus\n")  # no code: no file terms
        refresh_index(index)
        refreshed = _lookup_tables(index)
    fresh_root = tmp_path / "fresh"
    shutil.copytree(root, fresh_root, ignore=shutil.ignore_patterns(".rag"))
    with build_index(fresh_root) as fresh:
        assert refreshed == _lookup_tables(fresh)
        found = {
            (row.word, row.path) for row in fresh.definitions_by_words(["walrus"], ["zanzibar"])
        }
        assert found == {("walrus", "added.py"), ("zanzibar", code[0].relative_to(root).as_posix())}
        holders = fresh.code_files_holding(["walrus", "penguin", "added", "nowhere"])
    assert refreshed != first
    assert [holders.paths[number] for number in holders.in_tokens["walrus"]] == ["added.py"]
    assert "nowhere" not in holders.in_tokens and "penguin" not in holders.in_path
    assert [holders.paths[number] for number in holders.in_path["added"]] == ["added.py"]
