"""What every reader of an index may ask of it: the ``IndexStore`` protocol and its records.

Rankers, the context builder, the code graph and the faces read a repository's index only
through these methods, so none of them knows how it is stored. :class:`~szrag.index.Index`
is the SQLite implementation (the embedded default); a second store implements the same
protocol and every reader works unchanged. SQL lives in the implementations alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

if TYPE_CHECKING:
    from szrag.base.config import RepoConfig
    from szrag.code.model import Definition
    from szrag.code.units import Unit
    from szrag.index.collect import Skip
    from szrag.index.handle import FileEntry, RefreshReport
    from szrag.index.store import StoredChunk, StoredFile

T = TypeVar("T")

# A file's distinct tokens: a set, or the space-joined string the store keeps (cheaper to
# test a few terms against than to split); ``" term "`` in ``" " + tokens + " "`` either way.
TokenSet = frozenset[str] | str


class ChunkRow(NamedTuple):
    """Where one chunk lies, without its text."""

    id: int
    path: str
    seq: int
    start: int
    end: int
    type: str  # its file's type
    heading: str | None


class ChunkWords(NamedTuple):
    """One chunk's place by file id, with its distinct words space-joined."""

    id: int
    file_id: int
    seq: int
    start: int
    end: int
    heading: str | None
    words: str


class NamedLine(NamedTuple):
    """One row of the names table: a definition, call, route or variable read at a line."""

    path: str
    kind: str
    line: int


class WordDefinition(NamedTuple):
    """A definition reached by one of its name's lookup words (``code.scoring.lookup_words``)."""

    word: str
    path: str
    seq: int  # its place among its file's definitions
    definition: Definition


class TokenHolders(NamedTuple):
    """The code files holding some tokens (``IndexStore.code_files_holding``): every code
    file's path, by path, and per token the places in ``paths`` of the files holding it in
    their tokens and in their path's, ascending."""

    paths: tuple[str, ...]
    in_tokens: dict[str, tuple[int, ...]]
    in_path: dict[str, tuple[int, ...]]


class FullTextSearch(Protocol):
    """Fielded BM25 over the chunks (path, heading, symbols, body), with the column weights
    the search was opened with."""

    def chunk_count(self) -> int:
        """How many chunks the index holds."""
        ...

    def frequency(self, term: str) -> int:
        """How many chunks hold ``term``."""
        ...

    def best(
        self, terms: Sequence[str], limit: int, frequencies: Mapping[str, int]
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 rank: lower is better) of the ``limit`` best chunks holding any
        of ``terms``, best first (``frequencies``: how many chunks hold each)."""
        ...

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """The chunks of ``ids`` that the index holds, by id."""
        ...

    def holds(self, term: str, chunk_id: int) -> bool:
        """Whether chunk ``chunk_id`` holds ``term``."""
        ...

    def warm(self, most_chunks: float | None = None) -> None:
        """Build whatever this search keeps in memory for the current generation (terms held
        by more than ``most_chunks`` chunks are never searched for)."""
        ...


class IndexStore(Protocol):
    """One repository's index, as every reader sees it."""

    root: Path
    config: RepoConfig
    last_report: RefreshReport
    read_only: bool
    read_errors: tuple[type[Exception], ...]  # what a damaged store raises while it is read

    @property
    def location(self) -> str:
        """Where the store keeps this index, as a user would look for it (a file, a URL)."""
        ...

    @property
    def reads_from_any_thread(self) -> bool:
        """Whether several threads may read at once (a server's store)."""
        ...

    @property
    def in_memory(self) -> bool:
        """Whether readers may keep in-memory views of this index (a long-running face)."""
        ...

    def keep_in_memory(self, enabled: bool = True) -> None:
        """Let readers serve from in-memory views (rebuilt when the index changes)."""
        ...

    def warming(self) -> AbstractContextManager[None]:
        """Keep views in memory in the calling thread alone while it builds a long-running
        face's first views; the other threads read from the store until ``keep_in_memory``."""
        ...

    def drop_views(self) -> None:
        """Forget every view kept in memory; they are built again on next use."""
        ...

    # --- snapshots and views ---------------------------------------------------------------

    def reading(self) -> AbstractContextManager[IndexStore]:
        """One consistent snapshot for several reads."""
        ...

    def generation(self) -> str:
        """Changes every time a writer commits."""
        ...

    def derived(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, remembered until the index changes."""
        ...

    def built(self, key: str) -> object | None:
        """The view ``key`` of the current generation when a thread has built it already
        (``derived``), else None: what a question read from the store may still use."""
        ...

    def carry(self, key: str, value: object) -> None:
        """Keep ``value`` for the next build of a view."""
        ...

    def carried(self, key: str, default: T) -> T:
        """What the last build of a view kept with ``carry``, or ``default``."""
        ...

    # --- files -----------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        """The index's meta values (schema version, generated_at, profile, ...)."""
        ...

    def counts(self) -> dict[str, int]:
        """Row counts of files, chunks, images, edges and skipped files."""
        ...

    def file_entries(self) -> list[FileEntry]:
        """Every indexed file's path facts, by path."""
        ...

    def files(self) -> list[StoredFile]:
        """Every indexed file with its token set and code record, by path."""
        ...

    def files_by_path(self) -> dict[str, StoredFile]:
        """Every indexed file by path (a view: not to be changed by its readers)."""
        ...

    def get_file(self, path: str) -> StoredFile | None:
        """One indexed file by relative path (from ``files_by_path`` when kept in memory)."""
        ...

    def has_file(self, path: str) -> bool:
        """Whether ``path`` is indexed."""
        ...

    def file_tokens(self, paths: Sequence[str]) -> dict[str, TokenSet]:
        """The distinct tokens of each of ``paths`` that is indexed."""
        ...

    def code_records(self) -> list[tuple[str, dict[str, Any]]]:
        """(path, code record) of every file that has one, by path."""
        ...

    def definitions(self) -> list[tuple[str, Definition]]:
        """(path, definition) of every code record's definitions, by path, each record's
        in its order (as decoding every record would give them)."""
        ...

    def definitions_by_words(
        self, words: Iterable[str], prefixes: Iterable[str]
    ) -> list[WordDefinition]:
        """The definitions whose name has a lookup word (``code.scoring.lookup_words``) that is
        one of ``words`` or begins with one of ``prefixes``, a row for each such word, by path,
        each record's order and word: what a question can match without reading every definition."""
        ...

    def code_files_holding(self, tokens: Iterable[str]) -> TokenHolders:
        """Every code file's path and, per token of ``tokens``, the files holding it in their
        tokens and in their path's: what a question counts without reading every file."""
        ...

    def route_rows(self) -> list[tuple[str, str]]:
        """(path, routes as JSON) of every file whose code record has routes, by path."""
        ...

    def environment_reads(self) -> list[tuple[str, str, int]]:
        """(path, name, line) of every read of an environment variable, by path, each file's
        in its record's order."""
        ...

    def image_paths(self) -> list[str]:
        """Every collected image's relative path."""
        ...

    def image_data(self, path: str) -> bytes | None:
        """The bytes of the collected image at ``path`` (None when the store cannot give
        them: not collected, gone from the checkout, or resolving outside it)."""
        ...

    def skipped(self) -> list[Skip]:
        """Files left out of the index on purpose, with the reason."""
        ...

    def dependencies(self, path: str) -> list[str]:
        """Files that ``path`` imports or refers to."""
        ...

    def dependants(self, path: str) -> list[str]:
        """Files that import ``path``."""
        ...

    # --- chunks and names ------------------------------------------------------------------

    def chunks(
        self, path: str, lines: Sequence[tuple[int, int]] | None = None
    ) -> list[StoredChunk]:
        """The chunks of one file in order, with their texts; with ``lines``, only those
        overlapping one of these (first, last) ranges."""
        ...

    def chunk_texts(self, ids: Sequence[int]) -> dict[int, str]:
        """The text of each chunk id that has one."""
        ...

    def chunk_at(self, path: str, line: int | None = None) -> ChunkRow | None:
        """The first chunk of ``path`` holding ``line`` (without a line: its first chunk)."""
        ...

    def chunk_words(self, *, by_path: bool = False) -> Iterator[ChunkWords]:
        """Every chunk with its words (with ``by_path``: by file path, then position)."""
        ...

    def first_chunks(self, file_ids: Sequence[int]) -> list[ChunkWords]:
        """The first chunk of each file of ``file_ids`` (its words left empty)."""
        ...

    def lines(self, path: str, first: int = 1, last: int | None = None) -> list[str]:
        """The indexed lines ``first``-``last`` (1-based, inclusive) of one file."""
        ...

    def stored_units(self, path: str) -> tuple[Unit, ...] | None:
        """The units the file was cut into when it was indexed (``code.units.file_units``
        of its indexed lines), None when the store keeps none for it: then they are cut
        when read."""
        ...

    def named(self, name: str, kind: str) -> list[tuple[str, int]]:
        """(path, line) of each ``kind`` stored for the lookup key ``name``."""
        ...

    def named_any(self, lookups: Iterable[tuple[str, str]]) -> list[NamedLine]:
        """Every row for any of the (name, kind) ``lookups``, by path and line."""
        ...

    def names_held(self, names: Iterable[str], kind: str) -> list[str]:
        """Those of the lookup keys ``names`` that a ``kind`` row holds, sorted."""
        ...

    def term_counts(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """How many chunks the index holds, and how many hold each of ``terms``, read from
        the store without building any view (a service judging many repositories)."""
        ...

    def full_text(self, weights: Sequence[float]) -> FullTextSearch:
        """The full-text search over chunks with these column weights."""
        ...

    def close(self) -> None:
        """Let go of the store's connections."""
        ...
