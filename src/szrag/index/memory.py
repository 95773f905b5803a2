"""A long-running reader's views of one index generation: each file's chunk rows and the chunk
texts read lately (``ChunkMemory``), the token strings of the files read lately
(``TokenMemory``), and the edges by file (``Edges``).

A question's codebase context reads every chunk overlapping the symbols it matched in up to
twenty files (a class spanning a file is the whole file), and inflating them was a third of a
warm answer's context on the benchmarks' corpus. The files a server's questions reach recur
(the same modules answer many questions), so a face that keeps views in memory
(``Index.keep_in_memory``) keeps, per index generation, each file's chunk rows without text
and the inflated texts most recently read, up to ``MAX_CHARS`` characters. The chunks given
are those SQLite gives, in the same order, with the same texts.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from szrag.index import store

QUIET_WAIT_SECONDS = 2.0  # the longest a warm-up waits in all for questions to be answered


class MemoryMode:
    """Whether a reader keeps views in memory (``IndexStore.keep_in_memory``), and the thread
    building a long-running face's first views (``IndexStore.warming``), which keeps them
    while the other threads still read from the store: a question arriving meanwhile reads
    the few rows it reaches instead of waiting for views of the whole index. The threads of
    one interpreter share it, so the warming thread builds each view only once no question
    is being read (``reader``); under a stream of questions it stops waiting after
    ``QUIET_WAIT_SECONDS`` in all, since they are answered faster from its views."""

    def __init__(self) -> None:
        self.enabled = False
        self._thread = threading.local()
        self._readers = 0
        self._quiet = threading.Condition()

    def active(self) -> bool:
        """Whether the calling thread reads through views kept in memory."""
        return self.enabled or self._warming_here()

    def _warming_here(self) -> bool:
        return bool(getattr(self._thread, "warming", False))

    @contextmanager
    def warming(self) -> Iterator[None]:
        """Views kept in memory for the calling thread alone, until it leaves."""
        self._thread.warming, self._thread.waited = True, 0.0
        try:
            yield
        finally:
            self._thread.warming = False

    @contextmanager
    def reader(self) -> Iterator[None]:
        """Around another thread's outermost snapshot (a question being read)."""
        if self._warming_here():
            yield
            return
        with self._quiet:
            self._readers += 1
        try:
            yield
        finally:
            with self._quiet:
                self._readers -= 1
                if not self._readers:
                    self._quiet.notify_all()

    @contextmanager
    def building(self) -> Iterator[None]:
        """Around a view's build: the warming thread's outermost builds first wait for the
        questions being read. A view built inside another's is not held back: a question
        may be waiting for the outer one."""
        if not self._warming_here() or getattr(self._thread, "building", False):
            yield
            return
        waited = getattr(self._thread, "waited", 0.0)
        started = time.monotonic()
        with self._quiet:
            self._quiet.wait_for(lambda: not self._readers, timeout=QUIET_WAIT_SECONDS - waited)
        self._thread.waited = waited + time.monotonic() - started
        self._thread.building = True
        try:
            yield
        finally:
            self._thread.building = False


MAX_CHARS = 16_000_000  # inflated text kept per generation: about 16-32 MB of str


class ChunkMemory:
    """One generation's chunk rows by file and a bounded, least recently used set of texts;
    safe to share between threads."""

    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self._max_chars = max_chars
        self._lock = threading.Lock()
        self._places: dict[str, list[store.ChunkPlace]] = {}
        self._texts: OrderedDict[int, str] = OrderedDict()
        self._chars = 0

    def chunks(
        self,
        conn: sqlite3.Connection,
        path: str,
        lines: Sequence[tuple[int, int]] | None,
        *,
        keep: bool = True,
    ) -> list[store.StoredChunk]:
        """``store.file_chunks`` of this generation, from memory where it can (the texts read
        kept only with ``keep``)."""
        places = self._places.get(path)
        if places is None:
            places = self._places[path] = store.chunk_places(conn, path)
        chosen = store.overlapping(places, lines)
        texts = self.texts(conn, [place[0] for place in chosen], keep=keep)
        return store.with_texts(chosen, texts)

    def texts(
        self, conn: sqlite3.Connection, ids: Sequence[int], *, keep: bool = True
    ) -> dict[int, str]:
        """``store.chunk_texts`` of this generation, from memory where it can; the texts read
        are kept for later readers only with ``keep``."""
        found: dict[int, str] = {}
        with self._lock:
            for chunk_id in ids:
                text = self._texts.get(chunk_id)
                if text is not None:
                    self._texts.move_to_end(chunk_id)
                    found[chunk_id] = text
        missing = [chunk_id for chunk_id in ids if chunk_id not in found]
        if not missing:
            return found
        read = store.chunk_texts(conn, missing)
        if not keep:
            found.update(read)
            return found
        with self._lock:
            for chunk_id, text in read.items():
                if chunk_id not in self._texts:
                    self._texts[chunk_id] = text
                    self._chars += len(text)
            while self._chars > self._max_chars and self._texts:
                self._chars -= len(self._texts.popitem(last=False)[1])
        found.update(read)
        return found


TOKEN_CHARS = 8_000_000  # inflated token strings kept per generation: about 8 MB


class TokenMemory:
    """The space-joined tokens of the files read lately (the bm25 ranker reads its leading
    hundred files' for each question, and the same files lead many questions), inflated from
    the deflated rows a long-running reader keeps, least recently used first out, up to
    ``TOKEN_CHARS`` characters; safe to share between threads."""

    def __init__(self, max_chars: int = TOKEN_CHARS) -> None:
        self._max_chars = max_chars
        self._lock = threading.Lock()
        self._joined: OrderedDict[str, str] = OrderedDict()
        self._chars = 0

    def joined(self, files: Mapping[str, store.StoredFile], paths: Sequence[str]) -> dict[str, str]:
        """The tokens of each of ``paths`` that ``files`` holds, space-joined."""
        found: dict[str, str] = {}
        with self._lock:
            for path in paths:
                joined = self._joined.get(path)
                if joined is not None:
                    self._joined.move_to_end(path)
                    found[path] = joined
        read = {
            path: files[path].joined_tokens for path in paths if path not in found and path in files
        }
        if read:
            with self._lock:
                for path, joined in read.items():
                    if path not in self._joined:
                        self._joined[path] = joined
                        self._chars += len(joined)
                while self._chars > self._max_chars and self._joined:
                    self._chars -= len(self._joined.popitem(last=False)[1])
        found.update(read)
        return {path: found[path] for path in paths if path in found}


@dataclass(frozen=True, slots=True)
class Edges:
    """The stored edges of one generation by file, for a reader that keeps views in memory:
    what each file imports or refers to, and which files import it (each sorted, as SQLite
    orders them)."""

    dependencies: dict[str, tuple[str, ...]]
    dependants: dict[str, tuple[str, ...]]

    @classmethod
    def of(cls, conn: sqlite3.Connection) -> Edges:
        targets: dict[str, set[str]] = {}
        importers: dict[str, set[str]] = {}
        paths: dict[str, str] = {}  # one string a path: each row reads its own copies
        for source, target, kind in conn.execute("SELECT source, target, kind FROM edges"):
            source, target = paths.setdefault(source, source), paths.setdefault(target, target)
            targets.setdefault(source, set()).add(target)
            if kind == "import":
                importers.setdefault(target, set()).add(source)
        return cls(
            {path: tuple(sorted(found)) for path, found in targets.items()},
            {path: tuple(sorted(found)) for path, found in importers.items()},
        )
