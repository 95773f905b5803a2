"""The conversation store: ``<root>/.rag/conversations.db``, SQLite in WAL mode.

Conversations, their turns and the feedback on answers live in a database of their own, apart
from the index: rebuilding the index (a damaged file, a new schema) never touches them. Unlike
the index this is not derived data, so nothing here is ever set aside or rebuilt: a file that
cannot be used is a :class:`~szrag.base.errors.ConversationStoreError` naming it.

The schema is versioned by ordered, named migrations (``MIGRATIONS``), each applied once in
the transaction that records it in ``migrations``; a database that records a migration this
version does not know was written by a newer szrag and is refused, not altered.

A store keeps one connection, used by one operation at a time, so any thread may use one
store (a server calls it from worker threads: a read waits for a write in progress, which may
itself wait for another process's). Closing a WAL database's last connection checkpoints it,
and doing that after every write cost a server's answer 3 ms a turn. The connection is opened
again when the file at the path is no longer the one it reads (moved aside, replaced) or after
an SQLite error. Writes prune as they go: turns older than the age bound, all but the last
``turns`` of the conversation written to, and the conversations used least recently beyond
``conversations``. Feedback is kept until removed by hand: it is the
benchmark's source. The file is created readable by its owner only.

A service's store holds the conversations of all its repositories, each tagged with its
repository (``for_repository``: a view sharing the connection, that repository's rows only,
pruned by its limits); a repository's own store tags none (the empty name), so an older file
keeps working once migration ``0002`` has added the columns.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from szrag.base.errors import (
    ConversationError,
    ConversationStoreError,
    UnknownAnswer,
    UnknownConversation,
)
from szrag.base.sqlite import into_wal
from szrag.conversations.model import (
    Conversation,
    ConversationLimits,
    Feedback,
    ShownSource,
    Turn,
    checked_id,
    new_id,
)
from szrag.conversations.protocol import AuditSink
from szrag.conversations.rows import conversation_of, feedback_of, sources_value, turn_of

APPLICATION = "szrag-conversations"
DIRECTORY = ".rag"
FILENAME = "conversations.db"
BUSY_TIMEOUT_MS = 10_000

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_conversations_turns_feedback",
        """
        CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            face TEXT NOT NULL,
            owner TEXT,
            started_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX conversations_used ON conversations(updated_at);
        CREATE INDEX conversations_face ON conversations(face, updated_at);
        CREATE TABLE turns (
            answer_id TEXT PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            asked_at REAL NOT NULL,
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            outcome TEXT NOT NULL,
            sources TEXT NOT NULL,  -- JSON: [[path, start, end], ...]
            commit_id TEXT
        );
        CREATE INDEX turns_conversation ON turns(conversation_id);
        CREATE INDEX turns_asked ON turns(asked_at);
        CREATE TABLE feedback (
            answer_id TEXT NOT NULL,
            given_by TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            rating TEXT NOT NULL CHECK (rating IN ('up', 'down')),
            right_files TEXT NOT NULL,  -- JSON: [path, ...]
            comment TEXT,
            question TEXT NOT NULL,
            sources TEXT NOT NULL,
            cited_files TEXT NOT NULL,
            commit_id TEXT,
            given_at REAL NOT NULL,
            PRIMARY KEY (answer_id, given_by)
        );
        """,
    ),
    (
        "0002_repository_of_each_conversation",
        """
        ALTER TABLE conversations ADD COLUMN repository TEXT NOT NULL DEFAULT '';
        CREATE INDEX conversations_repository ON conversations(repository, updated_at);
        ALTER TABLE feedback ADD COLUMN repository TEXT NOT NULL DEFAULT '';
        CREATE INDEX feedback_repository ON feedback(repository, given_at);
        """,
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


def store_path(root: Path | str) -> Path:
    """Where the conversations of the repository at ``root`` are kept."""
    return Path(root) / DIRECTORY / FILENAME


class ConversationStore:
    """Conversations, their last turns and the feedback on answers, in one SQLite file.

    ``clock`` (epoch seconds) is the store's notion of now: every age is judged by it;
    ``repository``: the repository whose rows this store reads and writes ("": one
    repository's own file)."""

    def __init__(
        self,
        path: Path | str,
        limits: ConversationLimits | None = None,
        *,
        clock: Callable[[], float] = time.time,
        repository: str = "",
    ) -> None:
        self.limits = limits or ConversationLimits()
        self.clock = clock
        self._repository = repository
        self._database = _Database(Path(path))

    @classmethod
    def for_root(
        cls, root: Path | str, limits: ConversationLimits | None = None
    ) -> ConversationStore:
        """The store of the repository at ``root`` (``.rag/conversations.db``)."""
        return cls(store_path(root), limits)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._database.path

    @property
    def location(self) -> str:
        """The database file, as messages name it."""
        return str(self._database.path)

    @property
    def repository(self) -> str:
        """The repository whose conversations this store reads and writes."""
        return self._repository

    def for_repository(
        self, repository: str, limits: ConversationLimits | None = None
    ) -> ConversationStore:
        """This store as ``repository`` sees it (one connection for all), pruned by ``limits``."""
        view = copy.copy(self)
        view._repository = repository
        view.limits = limits or self.limits
        return view

    def repository_of(self, conversation_id: str) -> str | None:
        """The repository the conversation of ``conversation_id`` is about, if it is kept."""
        chosen = checked_id(conversation_id)
        with self._reading() as conn:
            row = conn.execute(
                "SELECT repository FROM conversations WHERE id = ?", (chosen,)
            ).fetchone()
        return None if row is None else str(row["repository"])

    def repository_of_answer(self, answer_id: str) -> str | None:
        """The repository of the conversation the kept answer ``answer_id`` belongs to."""
        chosen = checked_id(answer_id, "answer")
        with self._reading() as conn:
            row = conn.execute(
                "SELECT repository FROM conversations JOIN turns"
                " ON turns.conversation_id = conversations.id WHERE answer_id = ?",
                (chosen,),
            ).fetchone()
        return None if row is None else str(row["repository"])

    def audit_sink(self) -> AuditSink | None:
        """None: a SQLite store leaves the audit log to a file of its own."""
        return None

    # --- conversations -------------------------------------------------------------------

    def start(
        self,
        conversation_id: str | None = None,
        *,
        face: str = "library",
        owner: str | None = None,
    ) -> Conversation:
        """A new conversation with a random id; or, with a caller-chosen ``conversation_id``
        (a Slack thread's ``slack:TEAM:CHANNEL:THREAD_TS``), the conversation of that id, started
        on first use. ``owner``: only that identity may continue it (None: anyone)."""
        chosen = checked_id(conversation_id) if conversation_id is not None else new_id()
        with self._writing() as conn:
            return self._start(conn, chosen, face, owner)

    def start_with(self, turn: Turn, *, face: str = "library", owner: str | None = None) -> Turn:
        """``start`` the conversation of ``turn.conversation_id`` and ``append`` the turn to
        it, in one transaction (a face keeping its first answer)."""
        chosen = checked_id(turn.conversation_id)
        with self._writing() as conn:
            self._start(conn, chosen, face, owner, now=turn.asked_at)
            return self._append(conn, turn)

    def _start(
        self,
        conn: sqlite3.Connection,
        chosen: str,
        face: str,
        owner: str | None,
        *,
        now: float | None = None,
    ) -> Conversation:
        now = self.clock() if now is None else now
        # another repository's conversation that is no longer kept gives its id up
        conn.execute(
            "DELETE FROM conversations WHERE id = ? AND repository != ? AND updated_at < ?",
            (chosen, self._repository, now - self.limits.max_age_seconds),
        )
        added = conn.execute(
            "INSERT OR IGNORE INTO conversations"
            " (id, face, owner, started_at, updated_at, repository) VALUES (?, ?, ?, ?, ?, ?)",
            (chosen, face, owner, now, now, self._repository),
        ).rowcount
        found = conn.execute("SELECT repository FROM conversations WHERE id = ?", (chosen,))
        taken_by = found.fetchone()["repository"]
        if taken_by != self._repository:
            raise ConversationError(_taken(chosen, taken_by))
        # starting counts as using: an expired thread starts afresh (its old turns go)
        conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, chosen))
        self._prune(conn, now, added=bool(added))
        row = conn.execute("SELECT * FROM conversations WHERE id = ?", (chosen,)).fetchone()
        return conversation_of(row)

    def get(self, conversation_id: str, *, owner: str | None = None) -> Conversation:
        """The conversation of ``conversation_id``; UnknownConversation when there is none, it
        is older than the age bound, or (``owner`` given) another identity owns it."""
        chosen = checked_id(conversation_id)
        with self._reading() as conn:
            row = conn.execute(
                "SELECT * FROM conversations WHERE id = ? AND repository = ? AND updated_at >= ?",
                (chosen, self._repository, self._cutoff()),
            ).fetchone()
        if row is None or (owner is not None and row["owner"] not in (None, owner)):
            raise UnknownConversation(
                f"no conversation {chosen}: it was never started here, or it is older than the"
                f" {self.limits.max_age_hours:g} hours conversations are kept"
            )
        return conversation_of(row)

    def latest(self, face: str, *, owner: str | None = None) -> Conversation | None:
        """The conversation of ``face`` (``cli``) used last, when one is still kept."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT * FROM conversations WHERE face = ? AND repository = ?"
                " AND updated_at >= ? ORDER BY updated_at DESC, rowid DESC",
                (face, self._repository, self._cutoff()),
            ).fetchall()
        for row in rows:
            if owner is None or row["owner"] in (None, owner):
                return conversation_of(row)
        return None

    # --- turns -----------------------------------------------------------------------------

    def append(self, turn: Turn) -> Turn:
        """Keep ``turn`` in its conversation (which must exist), then forget what the bounds
        no longer keep."""
        with self._writing() as conn:
            return self._append(conn, turn)

    def _append(self, conn: sqlite3.Connection, turn: Turn) -> Turn:
        found = conn.execute(
            "SELECT 1 FROM conversations WHERE id = ? AND repository = ? AND updated_at >= ?",
            (turn.conversation_id, self._repository, self._cutoff()),
        ).fetchone()
        if found is None:
            raise UnknownConversation(
                f"no conversation {turn.conversation_id} to add the answer to: it was "
                "never started here, or it is no longer kept"
            )
        try:
            conn.execute(
                "INSERT INTO turns (answer_id, conversation_id, asked_at, question, answer,"
                " outcome, sources, commit_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    turn.answer_id,
                    turn.conversation_id,
                    turn.asked_at,
                    turn.question,
                    turn.answer,
                    turn.outcome,
                    _sources_json(turn.sources),
                    turn.commit,
                ),
            )
        except sqlite3.IntegrityError:
            raise ConversationError(f"answer id {turn.answer_id} is taken") from None
        conn.execute(
            "UPDATE conversations SET updated_at = MAX(updated_at, ?) WHERE id = ?",
            (turn.asked_at, turn.conversation_id),
        )
        conn.execute(
            "DELETE FROM turns WHERE conversation_id = ? AND rowid NOT IN (SELECT rowid"
            " FROM turns WHERE conversation_id = ? ORDER BY rowid DESC LIMIT ?)",
            (turn.conversation_id, turn.conversation_id, self.limits.turns),
        )
        self._prune(conn, self.clock())
        return turn

    def turns(self, conversation_id: str) -> tuple[Turn, ...]:
        """The turns of a conversation that are kept, oldest first (none for an unknown id)."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT * FROM (SELECT turns.rowid AS seq, turns.* FROM turns"
                " JOIN conversations ON conversations.id = turns.conversation_id"
                " WHERE turns.conversation_id = ? AND asked_at >= ?"
                " AND conversations.repository = ? ORDER BY turns.rowid DESC LIMIT ?)"
                " ORDER BY seq",
                (
                    checked_id(conversation_id),
                    self._cutoff(),
                    self._repository,
                    self.limits.turns,
                ),
            ).fetchall()
        return tuple(turn_of(row, json.loads) for row in rows)

    def turn(self, answer_id: str, *, owner: str | None = None) -> Turn:
        """The kept turn whose answer is ``answer_id``; UnknownAnswer when there is none (or,
        with ``owner``, another identity owns its conversation)."""
        chosen = checked_id(answer_id, "answer")
        with self._reading() as conn:
            row = conn.execute(
                "SELECT turns.*, conversations.owner AS owner FROM turns JOIN conversations"
                " ON conversations.id = turns.conversation_id"
                " WHERE answer_id = ? AND asked_at >= ? AND conversations.repository = ?",
                (chosen, self._cutoff(), self._repository),
            ).fetchone()
        if row is None or (owner is not None and row["owner"] not in (None, owner)):
            raise UnknownAnswer(
                f"no answer {chosen}: it was never given here, or it is no longer kept (a"
                f" conversation keeps its last {self.limits.turns} answers, for"
                f" {self.limits.max_age_hours:g} hours)"
            )
        return turn_of(row, json.loads)

    # --- feedback --------------------------------------------------------------------------

    def add_feedback(self, feedback: Feedback) -> Feedback:
        """Keep ``feedback``, tagged with this store's repository; it replaces what the same
        identity said of the same answer."""
        feedback = dataclasses.replace(feedback, repository=self._repository)
        with self._writing() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO feedback (answer_id, given_by, conversation_id, rating,"
                " right_files, comment, question, sources, cited_files, commit_id, given_at,"
                " repository) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    feedback.answer_id,
                    feedback.given_by,
                    feedback.conversation_id,
                    feedback.rating.value,
                    json.dumps(list(feedback.right_files)),
                    feedback.comment,
                    feedback.question,
                    _sources_json(feedback.sources),
                    json.dumps(list(feedback.cited_files)),
                    feedback.commit,
                    feedback.given_at,
                    feedback.repository,
                ),
            )
        return feedback

    def feedback(self) -> list[Feedback]:
        """Every feedback kept on this repository's answers, oldest first."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT * FROM feedback WHERE repository = ? ORDER BY given_at, rowid",
                (self._repository,),
            ).fetchall()
        return [feedback_of(row, json.loads) for row in rows]

    # --- the database ----------------------------------------------------------------------

    def _cutoff(self) -> float:
        return self.clock() - self.limits.max_age_seconds

    def _prune(self, conn: sqlite3.Connection, now: float, *, added: bool = False) -> None:
        """Forget the turns and conversations past the age bound and, when a conversation
        was ``added``, the least recently used past the count bound (only an added one can
        pass it; finding them walks every conversation kept)."""
        cutoff = now - self.limits.max_age_seconds
        mine = self._repository
        conn.execute(  # only the expired turns are looked at (by turns_asked), then each one's
            # conversation: never every conversation of the repository at each write
            "DELETE FROM turns WHERE asked_at < ? AND EXISTS (SELECT 1 FROM conversations"
            " WHERE conversations.id = turns.conversation_id AND repository = ?)",
            (cutoff, mine),
        )
        conn.execute(
            "DELETE FROM conversations WHERE updated_at < ? AND repository = ?", (cutoff, mine)
        )
        if not added:
            return
        conn.execute(
            "DELETE FROM conversations WHERE id IN (SELECT id FROM conversations"
            " WHERE repository = ? ORDER BY updated_at DESC, rowid DESC LIMIT -1 OFFSET ?)",
            (mine, self.limits.conversations),
        )

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._database.connection() as conn:
            yield conn

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        with self._database.connection() as conn:
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise
            else:
                conn.commit()

    def close(self) -> None:
        """Close the kept connection (the next operation opens one again)."""
        self._database.close()


class _Database:
    """The file of a store and the one connection its views share, one operation at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._use = threading.Lock()  # the kept connection: one operation at a time
        self._conn: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None  # the (device, inode) it reads

    @contextlib.contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        with self._use:
            try:
                conn = self._kept()
            except (sqlite3.Error, OSError) as error:
                raise self._unusable(error) from error
            try:
                yield conn
            except sqlite3.Error as error:
                self._drop()
                raise self._unusable(error) from error

    def _kept(self) -> sqlite3.Connection:
        """The kept connection, opened again when the file at the path is another one."""
        if self._conn is not None and _identity(self.path) == self._file:
            return self._conn
        self._drop()
        conn = self._open()
        self._conn, self._file = conn, _identity(self.path)
        return conn

    def _drop(self) -> None:
        conn, self._conn, self._file = self._conn, None, None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                # closing checkpoints the WAL into the file, except a file moved aside while
                # open (the advice when a store cannot be used): its last turns would stay
                # behind in the WAL, so they are written into it first
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def close(self) -> None:
        """Close the kept connection (the next operation opens one again)."""
        with self._use:
            self._drop()

    def _unusable(self, error: sqlite3.Error | OSError) -> ConversationStoreError:
        return ConversationStoreError(
            f"the conversation store {self.path} cannot be used ({error}); nothing in it was"
            " changed: move it aside to start afresh"
        )

    def _open(self) -> sqlite3.Connection:
        if not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):  # private: it holds people's questions
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        conn = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,  # kept, and used by one thread at a time (``_use``)
        )
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            # every connection opened (kept until the file changes, and opened under
            # ``_use``) checks the schema: a store moved aside is started afresh at its path
            migrate(conn, self.path)  # first: a foreign file stays as it was
            # SQLite does not wait for the switch: two replicas opening a new store together
            # failed about once in twenty-five
            into_wal(conn, BUSY_TIMEOUT_MS / 1000)
        except BaseException:
            conn.close()
            raise
        return conn


def _taken(conversation_id: str, repository: str) -> str:
    """What to say of a conversation id that another repository's conversation holds."""
    whose = f"repository {repository}" if repository else "the service's one repository"
    return f"conversation {conversation_id} is about {whose}: continue it there"


def _identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``, or None when there is none."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino


def migrate(conn: sqlite3.Connection, path: Path | str = "the database") -> list[str]:
    """Apply the migrations ``conn``'s database lacks, in order, each in the transaction that
    records it; the names applied. A database of another application, or one that records a
    migration this version does not know, is refused unchanged (ConversationStoreError)."""
    applied: list[str] = []
    conn.execute("BEGIN IMMEDIATE")
    try:
        tables = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if tables and "migrations" not in tables:
            raise ConversationStoreError(
                f"{path} is not a szrag conversation store (it holds other tables); move it"
                " aside or remove it"
            )
        conn.execute(
            "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL)"
        )
        done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
        known = {name for name, _ in MIGRATIONS}
        if done - known:
            newest = max(done - known)
            raise ConversationStoreError(
                f"{path} was written by a newer szrag (migration {newest}); this version"
                " leaves it untouched: upgrade szrag to use it"
            )
        conn.commit()
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise
    for name, script in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                conn.rollback()  # another process applied it meanwhile
                continue
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute("INSERT INTO migrations VALUES (?, ?)", (name, time.time()))
            conn.commit()
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            raise
        applied.append(name)
    return applied


def _statements(script: str) -> list[str]:
    """The statements of a migration script (none of ours holds a ``;`` inside a literal)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [part.strip() for part in "\n".join(lines).split(";") if part.strip()]


def _sources_json(sources: tuple[ShownSource, ...]) -> str:
    return json.dumps(sources_value(sources))
