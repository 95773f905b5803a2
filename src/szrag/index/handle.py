"""An open index: the read side that retrieval, the structure graph and the faces use."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from szrag.base.collector import collections_paused
from szrag.base.config import RepoConfig
from szrag.base.text import path_tokens as tokens_of_path
from szrag.base.text import stitch_lines
from szrag.index import store
from szrag.index.collect import Skip
from szrag.index.memory import MemoryMode
from szrag.index.search import SqliteFullText

if TYPE_CHECKING:
    from szrag.code.model import Definition
    from szrag.code.units import Unit
    from szrag.index.memory import ChunkMemory, Edges
    from szrag.index.protocol import (
        ChunkRow,
        ChunkWords,
        FullTextSearch,
        IndexStore,
        NamedLine,
        TokenHolders,
        TokenSet,
        WordDefinition,
    )

T = TypeVar("T")
DERIVED_GENERATIONS = 2


@dataclass(frozen=True, slots=True)
class FileEntry:
    """What retrieval needs of a file without reading its chunks."""

    id: int
    path: str
    path_lower: str
    type: str

    @property
    def path_tokens(self) -> frozenset[str]:
        """The tokens of the path (worked out when asked: only the spec ranker reads them,
        and a long-running face keeps every file's entry)."""
        return tokens_of_path(self.path)


@dataclass
class RefreshReport:
    """What a build or refresh did."""

    rebuilt: bool = False
    reason: str | None = None
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)  # stat changed, content did not
    failed: list[Skip] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # things done on the user's behalf
    files: int = 0
    chunks: int = 0
    images: int = 0
    elapsed: float = 0.0

    @property
    def changed_anything(self) -> bool:
        """True when the stored index was written."""
        return bool(self.rebuilt or self.added or self.changed or self.removed or self.touched)


def stitched_lines(
    index: IndexStore, path: str, first: int = 1, last: int | None = None
) -> list[str]:
    """The indexed lines ``first``-``last`` (1-based, inclusive; to the end without ``last``)
    of one file of ``index``, put together from the chunks that hold them."""
    wanted = None if first <= 1 and last is None else [(first, last or 1 << 62)]
    return stitch_lines(index.chunks(path, wanted), first, last)


MAX_IMAGE_BYTES = 16 * 1024 * 1024  # an image larger than this is neither served nor published


def read_image(root: Path, path: str) -> bytes | None:
    """The bytes of the file ``path`` under ``root`` when it is a regular file inside it (after
    symlinks) of ``MAX_IMAGE_BYTES`` at most; None otherwise."""
    base = root.resolve()
    absolute = (base / path).resolve()
    if not absolute.is_relative_to(base):
        return None
    try:
        if not absolute.is_file() or absolute.stat().st_size > MAX_IMAGE_BYTES:
            return None
        return absolute.read_bytes()
    except OSError:
        return None


class Index:
    """A handle on one repository's index database."""

    reads_from_any_thread = False  # one sqlite3 connection, bound to the thread that opened it
    read_errors: tuple[type[Exception], ...] = (sqlite3.DatabaseError,)

    def __init__(self, root: Path, config: RepoConfig, conn: sqlite3.Connection) -> None:
        self.root = root
        self.config = config
        self.conn = conn
        self.last_report = RefreshReport()
        # read as it is, never written: the disk could not be written when it was opened
        self.read_only = False
        self._entries: list[FileEntry] | None = None
        self._entries_generation: str | None = None
        self._memory = MemoryMode()
        # views per generation; two kept so a reader still on the previous snapshot during a
        # refresh neither throws away nor rebuilds the views of the new one
        self._derived: dict[str, dict[str, object]] = {}
        # a view being built, by (generation, key): another thread asking for it waits for
        # that build instead of building it again beside it (twice the work, each half as fast)
        self._building: dict[tuple[str, str], threading.RLock] = {}
        self._views_lock = threading.Lock()
        # what a view's next build may reuse from its last (``carry``), whatever the generation
        self._carried: dict[str, object] = {}
        # the snapshots ``reading`` holds open, by connection (a server reads from several
        # threads), with their generation once read
        self._snapshots: dict[int, str | None] = {}

    def derived(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, remembered until the index changes (for views built from it); built
        once however many threads ask for it at the same time."""
        generation = self.generation()
        with self._views_lock:
            views = self._derived.get(generation)
            if views is None:
                views = self._derived[generation] = {}
                while len(self._derived) > DERIVED_GENERATIONS:
                    self._derived.pop(next(iter(self._derived)))
            if key in views:
                return cast(T, views[key])
            # reentrant: a view whose build asks for itself builds again, as it always did
            building = self._building.setdefault((generation, key), threading.RLock())
        with self._memory.building(), building:
            if key in views:  # built by the thread this one waited for
                return cast(T, views[key])
            try:
                with collections_paused():  # long-lived objects: no pass walks them as made
                    views[key] = value = compute()
            finally:
                with self._views_lock:
                    self._building.pop((generation, key), None)
        return value

    def built(self, key: str) -> object | None:
        """The view ``key`` of the current generation when a thread has built it already
        (``derived``), else None: what a question read from the store may still use."""
        generation = self.generation()
        with self._views_lock:
            return self._derived.get(generation, {}).get(key)

    def carry(self, key: str, value: object) -> None:
        """Keep ``value`` for the next build of a view (the parts of its last build it may
        reuse, checked by the view itself: they may be of any earlier generation)."""
        self._carried[key] = value

    def carried(self, key: str, default: T) -> T:
        """What the last build of a view kept with ``carry``, or ``default``."""
        return cast(T, self._carried.get(key, default))

    def code_records(self) -> list[tuple[str, dict[str, Any]]]:
        """(path, code record) of every file that has one, by path."""
        rows = self.conn.execute(
            "SELECT path, code FROM files WHERE code IS NOT NULL ORDER BY path"
        )
        return [(path, store.unpack_json(code)) for path, code in rows]

    def definitions(self) -> list[tuple[str, Definition]]:
        """(path, definition) of every code record's definitions, by path, each record's
        in its order (as decoding every record would give them); the files a refresh left
        as they were keep the definitions read before."""
        with self.reading():
            by_file = store.definition_rows(self.conn, self.carried("store.definitions", {}))
        self.carry("store.definitions", by_file)
        return [(path, item) for (_, path, _), items in by_file.items() for item in items]

    def definitions_by_words(
        self, words: Iterable[str], prefixes: Iterable[str]
    ) -> list[WordDefinition]:
        """The definitions whose name has a lookup word among ``words`` or beginning with one
        of ``prefixes``, a row for each such word, by path, record order and word."""
        with self.reading():
            return store.definitions_by_words(self.conn, words, prefixes)

    def code_files_holding(self, tokens: Iterable[str]) -> TokenHolders:
        """Every code file's path and, per token of ``tokens``, the files holding it in their
        tokens and in their path's."""
        with self.reading():
            return store.code_files_holding(self.conn, tokens)

    def route_rows(self) -> list[tuple[str, str]]:
        """(path, routes as JSON) of every file whose code record has routes, by path."""
        return store.route_rows(self.conn)

    def environment_reads(self) -> list[tuple[str, str, int]]:
        """(path, name, line) of every read of an environment variable, by path, each file's
        in its record's order."""
        return store.environment_rows(self.conn)

    def keep_in_memory(self, enabled: bool = True) -> None:
        """Let rankers serve from in-memory views (rebuilt when the index changes).

        Worth it in processes that answer many questions; one-shot commands query SQLite.
        """
        self._memory.enabled = enabled

    def warming(self) -> AbstractContextManager[None]:
        """Keep views in memory in the calling thread alone while it builds a long-running
        face's first views; the other threads read from the store until ``keep_in_memory``."""
        return self._memory.warming()

    def drop_views(self) -> None:
        """Forget every view kept in memory (a service over many repositories drops those of
        the one asked least recently); views stay enabled and are built again on next use.
        A reader holding a view keeps it until it is done."""
        with self._views_lock:
            self._derived.clear()
            self._carried.clear()
        self._entries = None
        self._entries_generation = None

    @property
    def in_memory(self) -> bool:
        """Whether rankers may keep in-memory views of this index (``keep_in_memory``)."""
        return self._memory.active()

    @property
    def path(self) -> Path:
        """The database file."""
        return store.index_path(self.root)

    @property
    def location(self) -> str:
        """The database file, as messages name it."""
        return str(self.path)

    @contextmanager
    def reading(self) -> Iterator[Index]:
        """One consistent snapshot for several reads: a refresh committed meanwhile by another
        connection stays invisible until the block ends. Nests; a no-op inside a transaction."""
        conn = self.conn
        if conn.in_transaction:
            yield self
            return
        with self._memory.reader():
            conn.execute("BEGIN")
            snapshot = id(conn)
            self._snapshots[snapshot] = None  # its generation, once read
            try:
                yield self
            finally:
                self._snapshots.pop(snapshot, None)
                if self.conn.in_transaction:  # a healed index's reader has a new connection
                    self.conn.execute("COMMIT")

    def generation(self) -> str:
        """Changes every time a writer commits (read once per ``reading`` snapshot: every
        view a question uses asks for it)."""
        conn = self.conn
        snapshot = id(conn)
        if snapshot not in self._snapshots:
            return store.read_generation(conn)
        generation = self._snapshots[snapshot]
        if generation is None:
            generation = self._snapshots[snapshot] = store.read_generation(conn)
        return generation

    def meta(self) -> dict[str, str]:
        """The index's meta values (schema version, generated_at, profile, ...)."""
        return store.read_meta(self.conn)

    def file_entries(self) -> list[FileEntry]:
        """Every indexed file's path facts, cached until the index changes."""
        generation = self.generation()
        if self._entries is None or generation != self._entries_generation:
            # a path's entry holds as long as its row and type do (most survive a refresh)
            earlier = {entry.path: entry for entry in self._entries or ()}
            entries = []
            for row in self.conn.execute("SELECT id, path, type FROM files ORDER BY path"):
                entry = earlier.get(row[1])
                if entry is None or (entry.id, entry.type) != (row[0], row[2]):
                    entry = FileEntry(row[0], row[1], row[1].lower(), row[2])
                entries.append(entry)
            self._entries = entries
            self._entries_generation = generation
        return self._entries

    def files(self) -> list[store.StoredFile]:
        """Every indexed file with its token set and code record."""
        return list(store.iter_files(self.conn))

    def files_by_path(self) -> dict[str, store.StoredFile]:
        """Every indexed file by path, kept until the index changes (a view: not to be
        changed by its readers)."""
        return self.derived("files.by_path", lambda: {file.path: file for file in self.files()})

    def get_file(self, path: str) -> store.StoredFile | None:
        """One indexed file by relative path (from ``files_by_path`` when kept in memory)."""
        if self.in_memory:
            return self.files_by_path().get(path)
        return store.get_file(self.conn, path)

    def has_file(self, path: str) -> bool:
        """Whether ``path`` is indexed (cheaper than reading it)."""
        if self.in_memory:
            return path in self.files_by_path()
        return (
            self.conn.execute("SELECT 1 FROM files WHERE path = ?", (path,)).fetchone() is not None
        )

    def file_tokens(self, paths: Sequence[str]) -> dict[str, TokenSet]:
        """The distinct tokens of each of ``paths`` that is indexed, space-joined as stored:
        inflated from the rows a long-running reader keeps, else read (only these files)."""
        if self.in_memory:
            from szrag.index.memory import TokenMemory  # a one-shot command keeps no views

            recent = self.derived("files.tokens.recent", TokenMemory)
            return dict(recent.joined(self.files_by_path(), paths))
        return dict(store.file_tokens(self.conn, paths))

    def chunk_at(self, path: str, line: int | None = None) -> ChunkRow | None:
        """The first chunk of ``path`` holding ``line`` (without a line: its first chunk)."""
        return store.chunk_at(self.conn, path, line)

    def chunk_words(self, *, by_path: bool = False) -> Iterator[ChunkWords]:
        """Every chunk with its words (with ``by_path``: by file path, then position)."""
        return store.chunk_words(self.conn, by_path=by_path)

    def first_chunks(self, file_ids: Sequence[int]) -> list[ChunkWords]:
        """The first chunk of each file of ``file_ids`` (its words left empty)."""
        return store.first_chunks(self.conn, file_ids)

    def named_any(self, lookups: Iterable[tuple[str, str]]) -> list[NamedLine]:
        """Every names row for any of the (name, kind) ``lookups``, by path and line."""
        return store.named_any(self.conn, list(lookups))

    def names_held(self, names: Iterable[str], kind: str) -> list[str]:
        """Those of the lookup keys ``names`` that a ``kind`` row holds, sorted."""
        return store.names_held(self.conn, list(dict.fromkeys(names)), kind)

    def term_counts(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """How many chunks the index holds, and how many hold each of ``terms`` (SQLite's
        full-text table asked, whatever views are kept)."""
        with self.reading():
            chunks = store.chunk_count(self.conn)
            return chunks, {term: store.term_frequency(self.conn, term) for term in terms}

    def full_text(self, weights: Sequence[float]) -> FullTextSearch:
        """The full-text search over chunks with these column weights."""
        return SqliteFullText(self, weights)

    def chunks(
        self, path: str, lines: Sequence[tuple[int, int]] | None = None
    ) -> list[store.StoredChunk]:
        """The chunks of one file in order; with ``lines``, only those overlapping one of
        these (first, last) ranges."""
        with self.reading():  # the rows and texts of one generation
            if self.in_memory:
                return self._chunk_memory().chunks(self.conn, path, lines)
            return store.file_chunks(self.conn, path, lines)

    def named(self, name: str, kind: str) -> list[tuple[str, int]]:
        """(path, line) of each ``kind`` (definition, call, route, environment) stored for
        the lookup key ``name`` (``symbol_key`` of a definition or call)."""
        with self.reading():
            return store.named(self.conn, name, kind)

    def lines(self, path: str, first: int = 1, last: int | None = None) -> list[str]:
        """The indexed lines ``first``-``last`` (1-based, inclusive; to the end without
        ``last``) of one file, put together from the windows that hold them."""
        if first <= 1 and last is None and self.in_memory:
            # a whole file is read to be cut, and its cut keeps the text: the windows read
            # for it are not kept again (each line in one and a half of them)
            with self.reading():
                chunks = self._chunk_memory().chunks(self.conn, path, None, keep=False)
            return stitch_lines(chunks)
        return stitched_lines(self, path, first, last)

    def stored_units(self, path: str) -> tuple[Unit, ...] | None:
        """The units the file was cut into when it was indexed, None when none are kept."""
        with self.reading():
            packed = store.stored_units(self.conn, path)
        return None if packed is None else store.unpacked_units(packed, path)

    def chunk_texts(self, ids: Sequence[int]) -> dict[int, str]:
        """The text of each chunk id that has one."""
        with self.reading():
            if self.in_memory:
                return self._chunk_memory().texts(self.conn, ids)
            return store.chunk_texts(self.conn, ids)

    def _chunk_memory(self) -> ChunkMemory:
        from szrag.index.memory import ChunkMemory  # a one-shot command keeps no views

        return self.derived("index.chunks", ChunkMemory)

    def image_paths(self) -> list[str]:
        """Every collected image's relative path."""
        return [row[0] for row in self.conn.execute("SELECT path FROM images ORDER BY path")]

    def image_data(self, path: str) -> bytes | None:
        """The bytes of the image at ``path`` as the checkout holds them now (the index keeps
        only its path): None when it is gone, larger than ``MAX_IMAGE_BYTES``, or resolves
        outside the root (a symlink pointing out)."""
        return read_image(self.root, path)

    def skipped(self) -> list[Skip]:
        """Files left out of the index on purpose, with the reason."""
        return [
            Skip(*row)
            for row in self.conn.execute("SELECT path, reason FROM skipped ORDER BY path")
        ]

    def dependencies(self, path: str) -> list[str]:
        """Files that ``path`` imports or refers to."""
        if self.in_memory:
            return list(self._edges().dependencies.get(path, ()))
        rows = self.conn.execute(
            "SELECT DISTINCT target FROM edges WHERE source = ? ORDER BY target", (path,)
        )
        return [row[0] for row in rows]

    def dependants(self, path: str) -> list[str]:
        """Files that import ``path``."""
        if self.in_memory:
            return list(self._edges().dependants.get(path, ()))
        rows = self.conn.execute(
            "SELECT DISTINCT source FROM edges WHERE target = ? AND kind = 'import' ORDER BY source",
            (path,),
        )
        return [row[0] for row in rows]

    def _edges(self) -> Edges:
        from szrag.index.memory import Edges

        return self.derived("index.edges", lambda: Edges.of(self.conn))

    def counts(self) -> dict[str, int]:
        """Row counts of files, chunks, images, edges and skipped files."""
        return store.counts(self.conn)

    def close(self) -> None:
        """Close the database connection."""
        self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
