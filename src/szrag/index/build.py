"""Building, refreshing and loading the index.

Freshness compares each file's size, modification time, change time and inode with what was
indexed. Any difference leads to hashing the content: an edit that keeps size and mtime still
changes ctime (which user space cannot set back), and a touch that keeps the content only
updates the stored stat, with no re-read of chunks or re-parse.
"""

from __future__ import annotations

import errno
import heapq
import logging
import os
import re
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import multiprocessing.context

from szrag.base.config import RepoConfig, load_repo_config
from szrag.base.errors import DamagedIndexError, IndexStoreError
from szrag.base.public import utc_timestamp
from szrag.base.sqlite import into_wal, is_busy
from szrag.base.text import (
    SOURCE_TYPES,
    chunk_code_terms,
    create_chunks,
    file_type,
    tokens,
    words,
)
from szrag.index import store
from szrag.index.collect import (
    CollectedFile,
    Collection,
    FileStat,
    Skip,
    WalkSnapshot,
    collect,
    unchanged,
)
from szrag.index.handle import Index, RefreshReport
from szrag.index.terms import term_fields
from szrag.index.vcs import exclude_index_from_git, root_warning

log = logging.getLogger("szrag.index")
# set on a log record whose warning is also in the load's RefreshReport: a face that shows the
# report (the command line) leaves the record out, so the warning is said once
IN_REPORT = "szrag_in_report"

T = TypeVar("T")
Progress = Callable[[int, int, str], None]
"""Called as (done, total, path) while files are read."""

StatTuple = tuple[int, int, int, int]
MAX_ANALYSED_BYTES = 2 * 1024 * 1024  # larger files keep their text, not their structure
PARALLEL_THRESHOLD = 400  # below this, a process pool costs more than it saves
_BINARY_PROBE = 8192


@dataclass(frozen=True, slots=True)
class PreparedFile:
    """A file read, hashed, chunked and parsed, ready to be written."""

    path: str
    stat: StatTuple
    sha256: str
    type: str
    rows: store.FileRows  # packed where the file was parsed
    decode_errors: int


def _stat_tuple(stat: FileStat) -> StatTuple:
    return (stat.size, stat.mtime_ns, stat.ctime_ns, stat.inode)


def read_source(absolute: Path, max_bytes: int) -> tuple[bytes, StatTuple]:
    """The file's bytes and the stat that goes with exactly those bytes.

    Opened without blocking and checked to be a regular file: a path replaced by a FIFO or
    a device after the walk is left out instead of hanging the build."""
    descriptor = os.open(absolute, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as handle:
        result = os.fstat(handle.fileno())
        if not S_ISREG(result.st_mode):
            raise _SkipFile("not a regular file (a pipe, socket or device)")
        if result.st_size > max_bytes:
            raise _SkipFile(f"too large ({result.st_size} bytes > {max_bytes})")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise _SkipFile(f"too large (over {max_bytes} bytes)")
    return data, _stat_tuple(FileStat.of(result))


class _SkipFile(Exception):
    """Raised inside preparation when a file is left out on purpose."""


def decode(data: bytes) -> tuple[str, int]:
    """UTF-8 text (BOM dropped) and the number of bytes that had to be replaced."""
    try:
        return data.decode("utf-8-sig"), 0
    except UnicodeDecodeError:
        text = data.decode("utf-8-sig", errors="replace")
        return text, max(1, text.count("\ufffd"))


# Characters of decoded text that text does not hold: replaced bytes and control codes
# (a tab, line ends, form feeds and escapes are text)
_NOT_TEXT = re.compile("[\ufffd\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")
BINARY_SHARE = 0.3  # of the first characters; Latin-1 prose has a few per cent
BINARY_MIN_CHARACTERS = 64


def looks_binary(text: str) -> bool:
    """Whether decoded ``text`` is binary data without NUL bytes (compressed or encrypted
    files, images under a text extension): a large share of its first characters are
    replaced bytes or control codes."""
    probe = text[:_BINARY_PROBE]
    odd = len(_NOT_TEXT.findall(probe))
    return odd >= BINARY_MIN_CHARACTERS and odd >= BINARY_SHARE * len(probe)


# A code file a tool wrote says so in a comment at its top: a parser a grammar made, a
# protocol's stubs, a bundled validator. Its words match every question about what it was
# made from, and the source it was made from is what answers.
GENERATED_HEAD_LINES = 30  # past a licence header (Kubernetes' generators write one first)
GENERATED_HEAD_BYTES = 8192  # of a minified file's one line, no more is read
GENERATED_SHOWN = 100  # characters of the comment a skip's reason quotes
_COMMENT_LEADER = r"^[ \t]*(?://|/\*|\*|#|--|;|\"\"\"|''')"
_GENERATED = re.compile(
    _COMMENT_LEADER + r"[^\n]*?"
    # a tool's own signature
    r"(?:made by GNU Bison|generated by flex\b|@generated\b|Generated from \S+ by ANTLR"
    r"|Generated by Cython|Meta Object Compiler|Autogenerated by Thrift|Generated by the gRPC"
    r"|Generated by GNU Autoconf|Generated using SwiftGen|(?i:generated by OpenAPI Generator)"
    # "generated", then "do not edit" or "do not modify" ending its sentence (not "we do not
    # edit generated files here")
    r"|(?i:\bgenerated\b[^\n]*\bdo not (?:edit|modify)\b"
    r"(?=\s*(?:[.!:;,)\]]|\*/|-->|$|unless|by hand)))"
    # the file itself said to be generated
    r"|(?i:\b(?:this|the) (?:file|code|module|source|class) (?:is|was|has been) "
    r"(?:auto-?generated|auto generated|automatically generated|generated)\b))",
    re.MULTILINE,
)
_COMMENT_LINE = re.compile(_COMMENT_LEADER)
# a comment's leader inside a string or a here-document is text the file writes out
_HEREDOC = re.compile(r"<<-?[ \t]*['\"]?([A-Za-z_]\w*)['\"]?[ \t]*$", re.MULTILINE)


def _written_out(before: str) -> bool:
    """Whether text after ``before`` lies in a string or a here-document it opened (quotes
    in comments, a licence's `GNU' style, do not count)."""
    code = "\n".join(line for line in before.split("\n") if not _COMMENT_LINE.match(line))
    if code.count('"""') % 2 or code.count("'''") % 2 or code.count("`") % 2:
        return True
    opened = next(reversed(list(_HEREDOC.finditer(before))), None)  # the last one
    if opened is None:
        return False
    rest = before[opened.end() :].split("\n")
    return opened[1] not in (line.strip() for line in rest)


def generated_by(text: str) -> str | None:
    """The comment in the first lines of ``text`` saying a tool wrote it (``made by GNU
    Bison``, ``@generated``, ``Code generated ... DO NOT EDIT.``, ``This file is
    autogenerated``), if there is one; None for a file people write."""
    head = "\n".join(
        text[:GENERATED_HEAD_BYTES].split("\n", GENERATED_HEAD_LINES)[:GENERATED_HEAD_LINES]
    )
    for found in _GENERATED.finditer(head):
        if _written_out(head[: found.start()]):
            continue
        end = head.find("\n", found.start())
        return head[found.start() : end if end >= 0 else None].strip()[:GENERATED_SHOWN]
    return None


def prepare_file(
    path: str, absolute: Path, max_bytes: int, skip_generated: bool = False
) -> PreparedFile | Skip:
    """Read one file and turn it into what the index stores, or say why it is left out
    (with ``skip_generated``, a code file a tool wrote: ``generated_by``)."""
    try:
        data, stat = read_source(absolute, max_bytes)
    except _SkipFile as skip:
        return Skip(path, str(skip))
    except FileNotFoundError:
        return Skip(path, "vanished while indexing")
    except OSError as error:
        return Skip(path, f"unreadable ({error.strerror or error})")
    if b"\x00" in data[:_BINARY_PROBE] or b"\x00" in data:
        return Skip(path, "binary (contains NUL bytes)")
    # imported here: a refresh that finds nothing changed never loads the parsers
    import hashlib

    from szrag.code import analyse_source

    text, decode_errors = decode(data)
    if decode_errors and looks_binary(text):
        return Skip(path, "binary (mostly bytes that are not text)")
    kind = file_type(path)
    if skip_generated and kind in SOURCE_TYPES:
        note = generated_by(text)
        if note is not None:
            return Skip(path, f"generated: {note}")
    chunks = create_chunks(text, path)
    try:
        # a parse costs about a second per megabyte and much memory: a file larger than this
        # (with max_file_bytes raised) is indexed as text, without its structure
        code = analyse_source(path, text) if len(data) <= MAX_ANALYSED_BYTES else None
    except Exception as error:  # a parser bug must not stop the build
        log.warning("%s: code analysis failed: %s", path, error)
        code = None
    chunk_words = [" ".join(words(chunk.text)) for chunk in chunks]
    chunk_terms = term_fields(path, chunks, code, chunk_code_terms(text, chunks, chunk_words))
    return PreparedFile(
        path=path,
        stat=stat,
        sha256=hashlib.sha256(data).hexdigest(),
        type=kind,
        rows=store.FileRows.of(
            path=path,
            kind=kind,
            tokens=tokens(f"{path} {text}"),
            code=code,
            chunks=chunks,
            chunk_words=chunk_words,
            chunk_terms=chunk_terms,
        ),
        decode_errors=decode_errors,
    )


def _prepare_args(args: tuple[str, Path, int, bool]) -> PreparedFile | Skip:
    return prepare_file(*args)


def _worker_start(parent: int) -> None:
    """In each parse worker: die with the process that started the pool, even when it is
    killed outright (``kill -9``), so no orphan keeps reading the repository."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
    from szrag.code.languages import compile_whole_queries

    compile_whole_queries()  # a worker parses many files: each language's query once

    def watch() -> None:  # everywhere else, and as a second guard
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="szrag-parent-watch", daemon=True).start()


def _pool_context() -> multiprocessing.context.BaseContext:
    """fork is fastest, but forking a process that runs other threads (a server with its
    watcher and request threads) can deadlock the children: spawn there."""
    import multiprocessing

    return multiprocessing.get_context("fork" if threading.active_count() == 1 else "spawn")


def _prepare_many(
    items: Sequence[CollectedFile], config: RepoConfig, progress: Progress | None
) -> Iterable[PreparedFile | Skip]:
    skip_generated = config.profile.skips_generated
    args = [(item.path, item.absolute, config.max_file_bytes, skip_generated) for item in items]
    total = len(args)
    workers = min(os.cpu_count() or 1, 4)
    if total >= PARALLEL_THRESHOLD and workers > 1:
        from concurrent.futures import ProcessPoolExecutor  # only a large change needs a pool

        try:
            with ProcessPoolExecutor(
                max_workers=workers,
                mp_context=_pool_context(),
                initializer=_worker_start,
                initargs=(os.getpid(),),
            ) as pool:
                for done, result in enumerate(pool.map(_prepare_args, args, chunksize=32), 1):
                    if progress:
                        progress(done, total, result.path)
                    yield result
            return
        except (OSError, RuntimeError) as error:  # no pool here: read serially instead
            log.warning("parallel indexing unavailable (%s); reading files one by one", error)
    if total > 1:
        _compile_whole_queries_for_repeats(item.path for item in items)
    for done, arg in enumerate(args, 1):
        result = prepare_file(*arg)
        if progress:
            progress(done, total, result.path)
        yield result


def _compile_whole_queries_for_repeats(paths: Iterable[str]) -> None:
    """A language with two files or more to parse here gets its whole query: a first file's
    partial query would otherwise be followed by the whole one."""
    from szrag.code.languages import compile_whole_queries, language_of

    counts = Counter(language_of(path) for path in paths)
    compile_whole_queries(name for name, count in counts.items() if name and count > 1)


def _write_prepared(conn: sqlite3.Connection, prepared: PreparedFile) -> None:
    store.insert_file(
        conn,
        path=prepared.path,
        stat=prepared.stat,
        sha256=prepared.sha256,
        type=prepared.type,
        decode_errors=prepared.decode_errors,
        rows=prepared.rows,
    )


def _rebuild_edges(conn: sqlite3.Connection, paths: Iterable[str] | None) -> None:
    """Recompute edges for ``paths`` (None: every file) from their stored code records."""
    known = frozenset(row[0] for row in conn.execute("SELECT path FROM files"))
    if paths is None:
        conn.execute("DELETE FROM edges")
        rows = conn.execute("SELECT path, code FROM files WHERE code IS NOT NULL").fetchall()
    else:
        wanted = list(paths)
        rows = []
        for path in wanted:
            conn.execute("DELETE FROM edges WHERE source = ?", (path,))
            row = conn.execute(
                "SELECT path, code FROM files WHERE path = ? AND code IS NOT NULL", (path,)
            ).fetchone()
            if row:
                rows.append(row)
    from szrag.code import resolve_edges

    memo: dict[Any, list[str]] = {}  # imports files of one folder share
    for path, code in rows:
        edges = resolve_edges(path, store.unpack_json(code), known, memo)
        conn.executemany(
            "INSERT OR IGNORE INTO edges(source, target, kind) VALUES (?, ?, ?)",
            ((path, target, kind) for target, kind in edges),
        )


def _finish_meta(conn: sqlite3.Connection, config: RepoConfig) -> None:
    import uuid  # here: a question on a current index never writes a generation

    store.set_meta(
        conn,
        {
            "generation": uuid.uuid4().hex,
            "generated_at": utc_timestamp(),
            "profile": config.profile.name,
            "config": config.fingerprint(),
            "complete": "1",
        },
    )
    # which index this is, kept from its full build on: a store that published from it
    # may take the files that changed since, and one built again is published whole
    conn.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES ('lineage', ?)", (uuid.uuid4().hex,)
    )


def _images_of(collection: Collection) -> list[tuple[str, int, int]]:
    return [(item.path, item.stat.size, item.stat.mtime_ns) for item in collection.images]


def _full_build(
    conn: sqlite3.Connection, root: Path, config: RepoConfig, progress: Progress | None, reason: str
) -> RefreshReport:
    """Replace everything in the database with a fresh build (caller holds the write lock)."""
    report = RefreshReport(rebuilt=True, reason=reason)
    collection = collect(root, config)
    store.create_schema(conn, {"root": str(root), "complete": "0"})
    for prepared in _prepare_many(collection.files, config, progress):
        if isinstance(prepared, Skip):
            report.failed.append(prepared)
            continue
        _write_prepared(conn, prepared)
        report.added.append(prepared.path)
        report.chunks += len(prepared.rows.chunks)
        if prepared.decode_errors:
            report.warnings.append(
                f"{prepared.path}: not valid UTF-8, {prepared.decode_errors} byte(s) replaced"
            )
    _rebuild_edges(conn, None)
    store.replace_images(conn, _images_of(collection))
    _keep_walk(conn, collection, None)
    report.skipped = collection.skipped + report.failed
    store.replace_skipped(
        conn,
        ((skip.path, skip.reason) for skip in report.skipped),
        _failed_stats(collection, report),
    )
    report.files = len(report.added)
    report.images = len(collection.images)
    _finish_meta(conn, config)
    return report


def _failed_stats(collection: Collection, report: RefreshReport) -> dict[str, StatTuple]:
    """The collected stat of every file left out after it was read."""
    failed = {skip.path for skip in report.failed}
    return {item.path: _stat_tuple(item.stat) for item in collection.files if item.path in failed}


def _diff(
    collection: Collection,
    stored: dict[str, StatTuple],
    verify: bool,
    remembered: dict[str, tuple[StatTuple, str]] | None = None,
) -> tuple[list[CollectedFile], list[str]]:
    """Files whose stat differs from the index (all of them with ``verify``), and removed paths.

    A file left out after reading (``remembered``) is a candidate again only once its stat
    changes: a binary with a text extension is not re-read on every refresh."""
    known = remembered or {}
    candidates = []
    for item in collection.files:
        stat = _stat_tuple(item.stat)
        if verify or (
            stored.get(item.path) != stat and known.get(item.path, (None, ""))[0] != stat
        ):
            candidates.append(item)
    present = {item.path for item in collection.files}
    removed = sorted(path for path in stored if path not in present)
    return candidates, removed


def _apply_refresh(
    conn: sqlite3.Connection,
    collection: Collection,
    config: RepoConfig,
    progress: Progress | None,
    verify: bool,
    indexed: list[store.StatRow] | None = None,
) -> RefreshReport:
    """Bring the stored index in line with ``collection`` (caller holds the write lock);
    ``indexed``: the indexed files' stats if the caller read them in this transaction."""
    report = RefreshReport()
    stored = {
        row[0]: row[1:] for row in (store.indexed_stats(conn) if indexed is None else indexed)
    }
    remembered = store.remembered_skips(conn)
    candidates, removed = _diff(collection, stored, verify, remembered)
    # a re-read file whose bytes are as indexed only gets its new stat
    hashes = store.file_hashes(conn, [item.path for item in candidates if item.path in stored])
    retried = {item.path for item in candidates}
    present = {item.path for item in collection.files}
    # still unchanged, still left out: kept with their reason
    report.failed = [
        Skip(path, reason)
        for path, (_, reason) in remembered.items()
        if path in present and path not in retried
    ]
    for path in removed:
        store.delete_file(conn, path)
    report.removed = removed
    touched_paths: list[str] = []
    for prepared in _prepare_many(candidates, config, progress):
        if isinstance(prepared, Skip):
            report.failed.append(prepared)
            if prepared.path in stored:
                store.delete_file(conn, prepared.path)
                report.removed.append(prepared.path)
            continue
        previous = stored.get(prepared.path)
        if previous is not None and hashes.get(prepared.path) == prepared.sha256:
            if previous != prepared.stat:
                store.update_stat(conn, prepared.path, prepared.stat)
                touched_paths.append(prepared.path)
            continue
        if previous is not None:
            store.delete_file(conn, prepared.path)
            report.changed.append(prepared.path)
        else:
            report.added.append(prepared.path)
        _write_prepared(conn, prepared)
        if prepared.decode_errors:
            report.warnings.append(
                f"{prepared.path}: not valid UTF-8, {prepared.decode_errors} byte(s) replaced"
            )
    report.touched = touched_paths
    if report.added or report.removed:
        _rebuild_edges(conn, None)
    elif report.changed:
        _rebuild_edges(conn, report.changed)
    images = _images_of(collection)
    if images != store.image_rows(conn):
        store.replace_images(conn, images)
        report.touched.append("(images)")
    report.skipped = collection.skipped + report.failed
    store.replace_skipped(
        conn,
        ((skip.path, skip.reason) for skip in report.skipped),
        _failed_stats(collection, report),
    )
    if report.changed_anything:
        _finish_meta(conn, config)
    return report


def _stale_stats(conn: sqlite3.Connection, collection: Collection) -> list[store.StatRow] | None:
    """None when every collected file is as indexed (or as left out after reading), none is
    gone and the images are as listed: one comparison. Otherwise the indexed files' stats,
    for the refresh to work out what changed from."""
    indexed = store.indexed_stats(conn)
    remembered = store.remembered_stats(conn)
    known = list(heapq.merge(indexed, remembered)) if remembered else indexed
    if known == [
        (item.path, item.stat.size, item.stat.mtime_ns, item.stat.ctime_ns, item.stat.inode)
        for item in collection.files
    ] and _images_of(collection) == store.image_rows(conn):
        return None
    return indexed


class _LockBusy(Exception):
    """Another connection held the write lock longer than this caller waits."""


class _NotWritable(Exception):
    """The index was opened read-only: nothing to refresh."""


class _WriteLock:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any error; ``wait`` seconds at most for the
    lock (None: the store's busy timeout), after which _LockBusy is raised."""

    def __init__(self, conn: sqlite3.Connection, wait: float | None = None) -> None:
        self.conn = conn
        self.wait = wait

    def __enter__(self) -> sqlite3.Connection:
        if self.wait is None:
            self.conn.execute("BEGIN IMMEDIATE")
            return self.conn
        self.conn.execute(f"PRAGMA busy_timeout = {int(self.wait * 1000)}")
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY or "locked" in str(
                error
            ):
                raise _LockBusy(str(error)) from error
            raise
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {store.BUSY_TIMEOUT_MS}")
        return self.conn

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None:
            self.conn.execute("COMMIT")
        elif self.conn.in_transaction:  # SQLite rolls back by itself on a full disk
            self.conn.execute("ROLLBACK")


def _set_aside(path: Path, why: str) -> Path:
    """Move an unusable database out of the way, keeping it for inspection."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.{why}-{stamp}")
    number = 1
    while target.exists():  # a second one within the same second keeps the first
        number += 1
        target = path.with_name(f"{path.name}.{why}-{stamp}.{number}")
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, target.with_name(target.name + suffix))
    return target


def _connect_usable(path: Path) -> tuple[sqlite3.Connection, list[str], bool]:
    """A connection to ``path`` in WAL mode, and whether it is read-only (a disk that cannot
    be written); a file that is not SQLite is set aside first."""
    warnings: list[str] = []
    for attempt in range(2):
        conn: sqlite3.Connection | None = None
        try:
            conn = store.connect(path)
            into_wal(conn, store.BUSY_TIMEOUT_MS / 1000)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn, warnings, False
        except sqlite3.DatabaseError as error:
            if conn is not None:
                conn.close()
            if is_busy(error):  # another process holds it: no reason to think it damaged
                raise IndexStoreError(
                    f"index {path} is held by another process ({error}); try again"
                ) from error
            if is_disk_trouble(error):
                # the file may be as good as ever: read it as it is, never move it aside
                readonly = _connect_read_only(path)
                if readonly is None:
                    raise IndexStoreError(disk_message(path, error)) from error
                warnings.append(f"{disk_message(path, error)}; answering from the index as it is")
                return readonly, warnings, True
            if attempt:
                raise IndexStoreError(f"index {path}: {error}") from error
            moved = _set_aside(path, "corrupt")
            warnings.append(
                f"index {path} was unreadable ({error}); moved to {moved.name} and rebuilt"
            )
    raise AssertionError("unreachable")


# a full disk, a failed write or a read-only file system: the file itself may be intact
_DISK_CODES = frozenset(
    (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY)
)


def is_disk_trouble(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) says the disk cannot be written (full, say),
    which is no reason to think the database damaged."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, sqlite3.Error):
            code = getattr(seen, "sqlite_errorcode", None)
            if (code is not None and code & 0xFF in _DISK_CODES) or "disk is full" in str(seen):
                return True
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        seen = seen.__cause__
    return False


def disk_message(path: Path, error: BaseException) -> str:
    """What a command says when the index cannot be written."""
    return f"cannot write the index {path}: {error} (is the disk full?)"


def _connect_read_only(path: Path) -> sqlite3.Connection | None:
    """The database as its main file holds it, read without locks or a shared-memory file
    (which a full disk cannot hold); None when that is no usable index either."""
    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?immutable=1", uri=True, isolation_level=None
        )
    except sqlite3.Error:
        return None
    try:
        if store.check(conn) is None:
            return conn
    except sqlite3.Error:
        pass
    conn.close()
    return None


def _is_damage(error: sqlite3.Error, conn: sqlite3.Connection | None = None) -> bool:
    """Whether ``error`` comes from a damaged file rather than, say, a lock held elsewhere."""
    if is_disk_trouble(error):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or "malformed" in str(error):
        return True
    if is_busy(error) or conn is None:  # extended busy codes too (a WAL being recovered)
        return False
    try:  # garbage that still parses (text where numbers belong...) fails the quick check
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError:
        return True
    return rows != [("ok",)]


def _open(root: Path, config: RepoConfig, *, force: bool, progress: Progress | None) -> Index:
    """Open (building when needed); a damaged database is moved aside and rebuilt once."""
    try:
        return _open_once(root, config, force=force, progress=progress)
    except DamagedIndexError as damage:
        return _rebuild_damaged(root, config, progress, damage)


READ_LOCK_WAIT = 5.0  # seconds a question waits for another process's write lock


def is_damage(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) says the database file is damaged."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, DamagedIndexError):
            return True
        if isinstance(seen, sqlite3.DatabaseError) and _is_damage(seen):
            return True
        seen = seen.__cause__
    return False


def rebuild_damaged(root: Path, config: RepoConfig, reason: str) -> RefreshReport:
    """Set the damaged index of ``root`` aside and build a new one in its place; connections
    still open on the old file keep reading it until they are closed."""
    with _rebuild_damaged(root, config, None, DamagedIndexError(reason)) as index:
        return _counted(index).last_report


def _rebuild_damaged(
    root: Path, config: RepoConfig, progress: Progress | None, damage: DamagedIndexError
) -> Index:
    path = store.index_path(root.resolve())
    moved = _set_aside(path, "corrupt")
    index = _open_once(root, config, force=True, progress=progress)
    warning = f"index {path} was damaged ({damage.message}); moved to {moved.name} and rebuilt"
    log.warning("%s", warning, extra={IN_REPORT: True})
    index.last_report.warnings.insert(0, warning)
    return index


def _open_once(root: Path, config: RepoConfig, *, force: bool, progress: Progress | None) -> Index:
    root = root.resolve()
    if not root.is_dir():
        raise IndexStoreError(f"{root} is not a directory")
    path = store.index_path(root)
    created = not path.parent.exists()
    try:
        conn, warnings, read_only = _connect_usable(path)
    except OSError as error:
        raise IndexStoreError(f"cannot open index {path}: {error.strerror or error}") from error
    index = Index(root, config, conn)
    index.read_only = read_only
    report: RefreshReport | None = None
    try:
        reason = "rebuild requested" if force else store.check(conn)
        if reason is not None and index.read_only:
            conn.close()
            raise IndexStoreError(
                f"cannot rebuild the index {path}: the disk cannot be written (is it full?)"
            )
        if reason == "not a szrag index":
            conn.close()
            moved = _set_aside(path, "foreign")
            warnings.append(f"{path} is not a szrag index; moved to {moved.name}")
            conn, more, _ = _connect_usable(path)
            warnings.extend(more)
            index = Index(root, config, conn)
        if reason is not None:
            with _WriteLock(conn):
                # Another process may have rebuilt it while we waited for the lock.
                current = "rebuild requested" if force else store.check(conn)
                if current is not None:
                    started = time.perf_counter()
                    report = _full_build(conn, root, config, progress, current)
                    report.elapsed = time.perf_counter() - started
                    if current not in ("empty", "rebuild requested"):
                        warnings.append(f"index was rebuilt: {current}")
    except sqlite3.DatabaseError as error:
        damaged = _is_damage(error, conn)
        conn.close()
        if damaged:
            raise DamagedIndexError(str(error)) from error
        raise IndexStoreError(f"index {path}: {error}") from error
    note = exclude_index_from_git(root) if created else None
    if report is not None:
        doubt = root_warning(root, index.counts()["files"]) if created else None
        report.warnings = warnings + report.warnings + ([doubt] if doubt else [])
        report.notes = [note] if note else []
        index.last_report = report
    else:
        index.last_report.warnings = warnings
    for warning in warnings:
        log.warning("%s", warning, extra={IN_REPORT: True})
    return index


def refresh_index(
    index: Index,
    *,
    progress: Progress | None = None,
    verify: bool = False,
    lock_wait: float | None = None,
    prove: bool = True,
) -> RefreshReport:
    """Re-read only new, changed and removed files; with ``verify``, hash every file.

    With ``lock_wait``, a write lock another process holds longer than that many seconds
    leaves the index as it is, with a warning (a question is answered from the current
    snapshot rather than kept waiting). Without ``prove``, the walk starts at once: the
    caller's own proof that nothing changed (``collect.unchanged``) has just failed."""
    started = time.perf_counter()
    conn = index.conn
    try:
        if index.read_only:  # the warning came when it was opened
            raise _NotWritable
        seen = store.data_version(conn)
        kept = None if verify else store.read_walk(conn)
        previous = None if kept is None else WalkSnapshot.from_json(kept)
        if previous is not None and prove and unchanged(index.root, index.config, previous):
            # every directory and file as the walk the index was last brought in line with
            # saw them: nothing to collect or compare
            report = RefreshReport(skipped=index.skipped())
        else:
            report = _refresh_collected(index, progress, verify, lock_wait, (kept, previous, seen))
    except _NotWritable:
        report = RefreshReport(skipped=index.skipped())
    except _LockBusy:
        report = RefreshReport(skipped=index.skipped())
        report.warnings.append(
            f"another process has been writing the index for over {lock_wait:g} s;"
            " answering from the index as it is"
        )
    except sqlite3.DatabaseError as error:
        if is_disk_trouble(error):  # rolled back: the index is as it was
            report = RefreshReport(skipped=index.skipped())
            report.warnings.append(
                f"{disk_message(index.path, error)}; answering from the index as it is"
            )
        elif _is_damage(error, conn):
            raise DamagedIndexError(str(error)) from error
        else:
            raise IndexStoreError(f"index {index.path}: {error}") from error
    counts = index.counts()
    report.files, report.chunks, report.images = counts["files"], counts["chunks"], counts["images"]
    report.elapsed = time.perf_counter() - started
    index.last_report = report
    return report


def _refresh_collected(
    index: Index,
    progress: Progress | None,
    verify: bool,
    lock_wait: float | None,
    last: tuple[str | None, WalkSnapshot | None, int],
) -> RefreshReport:
    """A walk compared with the index, and the refresh it calls for; ``last``: the kept walk
    as stored and parsed, and the data version when it was read."""
    kept, previous, seen = last
    conn = index.conn
    collection = collect(index.root, index.config, previous)
    stale = None if verify else _stale_stats(conn, collection)
    if not verify and stale is None:
        report = RefreshReport(skipped=index.skipped())
        if collection.snapshot != previous:
            _keep_walk_quietly(conn, collection, kept, seen)
        return report
    with _WriteLock(conn, lock_wait):
        if store.data_version(conn) != seen:  # another writer committed meanwhile
            stale = None
        report = _apply_refresh(conn, collection, index.config, progress, verify, stale)
        _keep_walk(conn, collection, kept)
    return report


def _keep_walk(conn: sqlite3.Connection, collection: Collection, kept: str | None) -> None:
    """Keep this walk's listings for the next (inside the caller's write transaction)."""
    if collection.snapshot is not None:
        snapshot = collection.snapshot.to_json()
        if snapshot != kept:
            store.save_walk(conn, snapshot)


def _keep_walk_quietly(
    conn: sqlite3.Connection, collection: Collection, kept: str | None, seen: int
) -> None:
    """Keep the listings when nothing else is written: never waiting for another writer (the
    next walk lists the changed directories again instead), and only while the index is
    still the one they were found to match (``seen``: its data version then): the kept walk
    always describes the index as committed, which ``collect.unchanged`` relies on."""
    try:
        with _WriteLock(conn, 0):
            if store.data_version(conn) == seen:
                _keep_walk(conn, collection, kept)
    except (_LockBusy, sqlite3.OperationalError) as error:
        log.debug("walk listings not kept: %s", error)


def _resolve_config(root: Path, config: RepoConfig | None, profile: str | None) -> RepoConfig:
    return config if config is not None else load_repo_config(root.resolve(), profile=profile)


def build_index(
    root: Path | str = ".",
    *,
    config: RepoConfig | None = None,
    profile: str | None = None,
    progress: Progress | None = None,
) -> Index:
    """Rebuild the index of ``root`` from scratch and return it open."""
    root = Path(root)
    return _counted(
        _open(root, _resolve_config(root, config, profile), force=True, progress=progress)
    )


def load_index(
    root: Path | str = ".",
    *,
    config: RepoConfig | None = None,
    profile: str | None = None,
    refresh: bool = True,
    progress: Progress | None = None,
    verify: bool = False,
    lock_wait: float | None = READ_LOCK_WAIT,
) -> Index:
    """Open the index of ``root``: built when missing or unusable, refreshed when stale (with
    ``verify``, every file hashed); a database found damaged on the way is set aside and
    rebuilt. A refresh waits ``lock_wait`` seconds for another writer (None: as long as the
    store's busy timeout), then answers from the index as it is."""
    root = Path(root)
    index = _open(root, _resolve_config(root, config, profile), force=False, progress=progress)
    built = index.last_report
    if built.rebuilt:
        return _counted(index)
    if refresh:
        warnings = built.warnings
        index = _brought_current(index, progress=progress, verify=verify, lock_wait=lock_wait)
        if not index.last_report.rebuilt:
            index.last_report.warnings = warnings + index.last_report.warnings
    return index


def _brought_current(
    index: Index,
    *,
    progress: Progress | None,
    verify: bool,
    lock_wait: float | None,
    prove: bool = True,
) -> Index:
    """``index`` refreshed, or rebuilt when the refresh finds it damaged (then the index
    returned is another)."""
    try:
        refresh_index(index, progress=progress, verify=verify, lock_wait=lock_wait, prove=prove)
    except DamagedIndexError as damage:
        index.close()
        index = _counted(_rebuild_damaged(index.root, index.config, progress, damage))
    return index


def _counted(index: Index) -> Index:
    """``index`` with its last report's counts of files, chunks and images filled in."""
    counts = index.counts()
    report = index.last_report
    report.files, report.chunks, report.images = counts["files"], counts["chunks"], counts["images"]
    return index


def _disproven(
    index: Index, opened: RefreshReport, *, progress: Progress | None, lock_wait: float | None
) -> Index:
    """``index``, whose proof of being current failed, refreshed by a walk (no second
    proof); its report keeps the warnings of the open (``opened``) unless it was rebuilt."""
    index = _brought_current(
        index, progress=progress, verify=False, lock_wait=lock_wait, prove=False
    )
    report = index.last_report
    if not report.rebuilt:
        report.warnings = opened.warnings + report.warnings
    return index


def opened_current(
    root: Path | str,
    meanwhile: Callable[[Index], object],
    *,
    config: RepoConfig | None = None,
    progress: Progress | None = None,
    lock_wait: float | None = READ_LOCK_WAIT,
) -> Index:
    """The index of ``root`` as ``load_index`` brings it current, with ``meanwhile(index)``
    run while a second process proves that no file changed (``freshness.check_aside``):
    work that reads nothing of the index a refresh could change (its configuration, a
    tokenizer to load), so a command that then answers from the index pays for the proof
    only as far as it outlasts that work. Only when the proof fails is the index refreshed."""
    from szrag.index.freshness import check_aside

    index = load_index(root, config=config, progress=progress, refresh=False)
    try:
        opened = index.last_report
        if opened.rebuilt:
            meanwhile(index)
            return index
        with check_aside(index) as check:
            meanwhile(index)
        if check.confirmed():
            return index
        return _disproven(index, opened, progress=progress, lock_wait=lock_wait)
    except BaseException:
        index.close()
        raise


def answered_current(
    root: Path | str,
    use: Callable[[Index], T],
    *,
    config: RepoConfig | None = None,
    progress: Progress | None = None,
    lock_wait: float | None = READ_LOCK_WAIT,
) -> tuple[T, RefreshReport]:
    """``use(index)`` on the index of ``root`` as ``load_index`` brings it current, sooner:
    the proof that no file changed runs in a second process while ``use`` reads the index
    as it is (``freshness.check_aside``); only when the proof fails is the index refreshed,
    and only when the refresh writes it is ``use`` run again. An index that cannot be read
    as it is goes the way of ``load_index`` (a damaged one set aside and rebuilt). The
    index is closed on return; the report holds the warnings of the open and any refresh."""
    from szrag.index.freshness import check_aside

    index = load_index(root, config=config, progress=progress, refresh=False)
    try:
        opened = index.last_report
        if opened.rebuilt:
            return use(index), opened
        try:
            asked_of = index.generation()
            with check_aside(index) as check:
                found = use(index)
        except (IndexStoreError, sqlite3.DatabaseError):
            index.close()
            index = load_index(root, config=config, progress=progress, lock_wait=lock_wait)
            return use(index), index.last_report
        if check.confirmed():
            return found, opened
        index = _disproven(index, opened, progress=progress, lock_wait=lock_wait)
        report = index.last_report
        if not report.rebuilt and index.generation() == asked_of:
            # nothing written (a file within a walk's racy window is proven only by a walk):
            # the index it was asked of is the current one
            return found, report
        return use(index), report
    finally:
        index.close()
