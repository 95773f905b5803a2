"""The conversation store in PostgreSQL: conversations, turns, feedback and the audit log of
every replica of a service in one database.

The same records, bounds and semantics as the SQLite store (``store.py``): caller-chosen ids,
owners, the last ``turns`` of a conversation kept for ``max_age`` and at most
``conversations`` of them per repository, one feedback per answer and identity (a new one
replaces it), every age judged by the store's ``clock``. Its tables are apart from the index's
(``szrag_conversations``, ``szrag_turns``, ``szrag_feedback``, ``szrag_audit``), so one
database may hold both, and so are its migrations (``szrag_conversation_migrations``, applied
once under an advisory lock, a database recording one this version does not know refused).

Several processes write at once. Every write is one transaction that first takes the advisory
lock of its repository's conversations: two replicas appending to one conversation, or one
pruning while another starts, run one after the other, so no turn is lost, none lands between
another's insert and its trimming, and the order of a conversation's turns is the order they
were kept in (``seq``). Reads take no lock: they see what was committed.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from szrag.base.errors import (
    ConversationError,
    ConversationStoreError,
    SzragError,
    UnknownAnswer,
    UnknownConversation,
)
from szrag.conversations.model import (
    Conversation,
    ConversationLimits,
    Feedback,
    Turn,
    checked_id,
    new_id,
)
from szrag.conversations.protocol import AuditLine, AuditSink
from szrag.conversations.rows import conversation_of, feedback_of, sources_value, turn_of
from szrag.index.pg.schema import checked_url, shown_url

CONNECT_TIMEOUT = 10  # seconds to reach the server before the store is called unreachable
POOL_SIZE = 4
LOCK_CLASS = 0x737B  # advisory locks of conversations: (class, hash of the repository)
MIGRATION_LOCK = (0x737C, 0)

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_conversations_turns_feedback_audit",
        """
        CREATE TABLE szrag_conversations (
            id text COLLATE "C" PRIMARY KEY,
            repository text COLLATE "C" NOT NULL DEFAULT '',
            face text NOT NULL,
            owner text,
            started_at double precision NOT NULL,  -- epoch seconds, by the store's clock
            updated_at double precision NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY  -- the order they were started in
        );
        CREATE INDEX szrag_conversations_used ON szrag_conversations (repository, updated_at);
        CREATE INDEX szrag_conversations_face
            ON szrag_conversations (repository, face, updated_at);
        CREATE TABLE szrag_turns (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- the order kept
            answer_id text COLLATE "C" NOT NULL UNIQUE,
            conversation_id text COLLATE "C" NOT NULL
                REFERENCES szrag_conversations (id) ON DELETE CASCADE,
            asked_at double precision NOT NULL,
            question text NOT NULL,
            answer text NOT NULL,
            outcome text NOT NULL,
            sources jsonb NOT NULL,  -- [[path, start, end], ...]
            commit_id text
        );
        CREATE INDEX szrag_turns_conversation ON szrag_turns (conversation_id, seq);
        CREATE INDEX szrag_turns_asked ON szrag_turns (asked_at);
        CREATE SEQUENCE szrag_feedback_seq;
        CREATE TABLE szrag_feedback (
            answer_id text COLLATE "C" NOT NULL,
            given_by text COLLATE "C" NOT NULL,
            repository text COLLATE "C" NOT NULL DEFAULT '',
            conversation_id text NOT NULL,
            rating text NOT NULL CHECK (rating IN ('up', 'down')),
            right_files jsonb NOT NULL,
            comment text,
            question text NOT NULL,
            sources jsonb NOT NULL,
            cited_files jsonb NOT NULL,
            commit_id text,
            given_at double precision NOT NULL,
            seq bigint NOT NULL DEFAULT nextval('szrag_feedback_seq'),  -- a replacement's anew
            PRIMARY KEY (answer_id, given_by)
        );
        CREATE INDEX szrag_feedback_repository ON szrag_feedback (repository, given_at, seq);
        CREATE TABLE szrag_audit (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            repository text COLLATE "C" NOT NULL DEFAULT '',
            event text NOT NULL,
            written_at timestamptz NOT NULL DEFAULT now(),
            entry json NOT NULL  -- json, not jsonb: the line's text as written, keys in order
        );
        """,
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: psycopg.Connection[Any], url: str) -> list[str]:
    """Apply the migrations ``conn``'s database lacks, each in its own transaction under the
    migration lock; their names. ConversationStoreError for a database of a newer szrag."""
    applied: list[str] = []
    for name, statements in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", MIGRATION_LOCK)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS szrag_conversation_migrations ("
                " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            rows = conn.execute("SELECT name FROM szrag_conversation_migrations").fetchall()
            done = {row[0] for row in rows}
            unknown = done - {known for known, _ in MIGRATIONS}
            if unknown:
                raise ConversationStoreError(
                    f"the conversation store at {shown_url(url)} records migrations this szrag"
                    f" does not know ({', '.join(sorted(unknown))}): it was written by a newer"
                    " szrag, and is left as it is"
                )
            if name in done:
                continue
            conn.execute(statements)
            conn.execute("INSERT INTO szrag_conversation_migrations (name) VALUES (%s)", (name,))
            applied.append(name)
    return applied


class PostgresConversations:
    """Conversations, turns and feedback (and the audit log) in a PostgreSQL database."""

    def __init__(
        self,
        url: str,
        limits: ConversationLimits | None = None,
        *,
        clock: Callable[[], float] = time.time,
        repository: str = "",
        pool_size: int = POOL_SIZE,
    ) -> None:
        self._url = checked_url(url)  # never shown: it may hold a password
        self.limits = limits or ConversationLimits()
        self.clock = clock
        self._repository = repository
        self._owner = True  # the store that opened the pool closes it; its views do not
        try:
            with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT, autocommit=True) as conn:
                migrate(conn, url)
        except psycopg.Error as error:
            raise self._unusable(error) from error
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT},
            open=False,
            name="szrag-conversations",
        )
        try:
            self._pool.open(wait=True, timeout=30)
        except psycopg.Error as error:
            self._pool.close()
            raise self._unusable(error) from error

    # --- the store and its views ----------------------------------------------------------

    @property
    def location(self) -> str:
        """The database, its password hidden."""
        return shown_url(self._url)

    @property
    def repository(self) -> str:
        """The repository whose conversations this store reads and writes."""
        return self._repository

    def for_repository(
        self, repository: str, limits: ConversationLimits | None = None
    ) -> PostgresConversations:
        """This store as ``repository`` sees it (one pool for all), pruned by ``limits``."""
        view = copy.copy(self)
        view._repository = repository
        view._owner = False
        view.limits = limits or self.limits
        return view

    def repository_of(self, conversation_id: str) -> str | None:
        """The repository the conversation of ``conversation_id`` is about, if it is kept."""
        chosen = checked_id(conversation_id)
        with self._reading() as conn:
            row = conn.execute(
                "SELECT repository FROM szrag_conversations WHERE id = %s", (chosen,)
            ).fetchone()
        return None if row is None else str(row["repository"])

    def repository_of_answer(self, answer_id: str) -> str | None:
        """The repository of the conversation the kept answer ``answer_id`` belongs to."""
        chosen = checked_id(answer_id, "answer")
        with self._reading() as conn:
            row = conn.execute(
                "SELECT c.repository FROM szrag_conversations c JOIN szrag_turns t"
                " ON t.conversation_id = c.id WHERE t.answer_id = %s",
                (chosen,),
            ).fetchone()
        return None if row is None else str(row["repository"])

    def audit_sink(self) -> AuditSink:
        """The audit log's table, ``szrag_audit``, in the same database."""
        return PostgresAudit(self)

    def close(self) -> None:
        """Close the pool (a view leaves it to the store it was made from)."""
        if self._owner:
            self._pool.close()

    # --- conversations --------------------------------------------------------------------

    def start(
        self,
        conversation_id: str | None = None,
        *,
        face: str = "library",
        owner: str | None = None,
    ) -> Conversation:
        """A new conversation, or the one of a caller-chosen id, started on first use."""
        chosen = checked_id(conversation_id) if conversation_id is not None else new_id()
        with self._writing() as conn:
            return self._start(conn, chosen, face, owner, self.clock())

    def start_with(self, turn: Turn, *, face: str = "library", owner: str | None = None) -> Turn:
        """``start`` the conversation of ``turn`` and ``append`` the turn, in one transaction."""
        chosen = checked_id(turn.conversation_id)
        with self._writing() as conn:
            self._start(conn, chosen, face, owner, turn.asked_at)
            return self._append(conn, turn)

    def _start(
        self, conn: psycopg.Connection[Any], chosen: str, face: str, owner: str | None, now: float
    ) -> Conversation:
        mine = self._repository
        conn.execute(  # another repository's conversation no longer kept gives its id up
            "DELETE FROM szrag_conversations WHERE id = %s AND repository <> %s"
            " AND updated_at < %s",
            (chosen, mine, now - self.limits.max_age_seconds),
        )
        added = conn.execute(
            "INSERT INTO szrag_conversations (id, repository, face, owner, started_at,"
            " updated_at) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
            (chosen, mine, face, owner, now, now),
        ).rowcount
        # starting counts as using: an expired thread starts afresh (its old turns go)
        row = conn.execute(
            "UPDATE szrag_conversations SET updated_at = %s WHERE id = %s AND repository = %s"
            " RETURNING *",
            (now, chosen, mine),
        ).fetchone()
        if row is None:
            taken = conn.execute(
                "SELECT repository FROM szrag_conversations WHERE id = %s", (chosen,)
            ).fetchone()
            whose = taken["repository"] if taken else "another repository"
            raise ConversationError(
                f"conversation {chosen} is about repository {whose}: continue it there"
            )
        self._prune(conn, now, added=added > 0)
        return conversation_of(row)

    def get(self, conversation_id: str, *, owner: str | None = None) -> Conversation:
        """The kept conversation of ``conversation_id``; UnknownConversation otherwise."""
        chosen = checked_id(conversation_id)
        with self._reading() as conn:
            row = conn.execute(
                "SELECT * FROM szrag_conversations WHERE id = %s AND repository = %s"
                " AND updated_at >= %s",
                (chosen, self._repository, self._cutoff()),
            ).fetchone()
        if row is None or (owner is not None and row["owner"] not in (None, owner)):
            raise UnknownConversation(
                f"no conversation {chosen}: it was never started here, or it is older than the"
                f" {self.limits.max_age_hours:g} hours conversations are kept"
            )
        return conversation_of(row)

    def latest(self, face: str, *, owner: str | None = None) -> Conversation | None:
        """The conversation of ``face`` used last, when one is still kept."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT * FROM szrag_conversations WHERE face = %s AND repository = %s"
                " AND updated_at >= %s ORDER BY updated_at DESC, seq DESC",
                (face, self._repository, self._cutoff()),
            ).fetchall()
        for row in rows:
            if owner is None or row["owner"] in (None, owner):
                return conversation_of(row)
        return None

    # --- turns ----------------------------------------------------------------------------

    def append(self, turn: Turn) -> Turn:
        """Keep ``turn`` in its conversation (which must be kept), then prune by the bounds."""
        with self._writing() as conn:
            return self._append(conn, turn)

    def _append(self, conn: psycopg.Connection[Any], turn: Turn) -> Turn:
        found = conn.execute(
            "SELECT 1 FROM szrag_conversations WHERE id = %s AND repository = %s"
            " AND updated_at >= %s FOR UPDATE",
            (turn.conversation_id, self._repository, self._cutoff()),
        ).fetchone()
        if found is None:
            raise UnknownConversation(
                f"no conversation {turn.conversation_id} to add the answer to: it was "
                "never started here, or it is no longer kept"
            )
        try:
            self._insert(conn, turn)
        except psycopg.errors.UniqueViolation:
            raise ConversationError(f"answer id {turn.answer_id} is taken") from None
        conn.execute(
            "UPDATE szrag_conversations SET updated_at = GREATEST(updated_at, %s) WHERE id = %s",
            (turn.asked_at, turn.conversation_id),
        )
        conn.execute(
            "DELETE FROM szrag_turns WHERE conversation_id = %s AND seq NOT IN (SELECT seq"
            " FROM szrag_turns WHERE conversation_id = %s ORDER BY seq DESC LIMIT %s)",
            (turn.conversation_id, turn.conversation_id, self.limits.turns),
        )
        self._prune(conn, self.clock())
        return turn

    def _insert(self, conn: psycopg.Connection[Any], turn: Turn) -> None:
        conn.execute(
            "INSERT INTO szrag_turns (answer_id, conversation_id, asked_at, question, answer,"
            " outcome, sources, commit_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (
                turn.answer_id,
                turn.conversation_id,
                turn.asked_at,
                turn.question,
                turn.answer,
                turn.outcome,
                Jsonb(sources_value(turn.sources)),
                turn.commit,
            ),
        )

    def turns(self, conversation_id: str) -> tuple[Turn, ...]:
        """The kept turns of a conversation, oldest first (none for an unknown id)."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT * FROM (SELECT t.* FROM szrag_turns t JOIN szrag_conversations c"
                " ON c.id = t.conversation_id WHERE t.conversation_id = %s AND t.asked_at >= %s"
                " AND c.repository = %s ORDER BY t.seq DESC LIMIT %s) kept ORDER BY seq",
                (
                    checked_id(conversation_id),
                    self._cutoff(),
                    self._repository,
                    self.limits.turns,
                ),
            ).fetchall()
        return tuple(turn_of(row, _kept) for row in rows)

    def turn(self, answer_id: str, *, owner: str | None = None) -> Turn:
        """The kept turn of ``answer_id``; UnknownAnswer when there is none (or, with
        ``owner``, another identity owns its conversation)."""
        chosen = checked_id(answer_id, "answer")
        with self._reading() as conn:
            row = conn.execute(
                "SELECT t.*, c.owner AS owner FROM szrag_turns t JOIN szrag_conversations c"
                " ON c.id = t.conversation_id WHERE t.answer_id = %s AND t.asked_at >= %s"
                " AND c.repository = %s",
                (chosen, self._cutoff(), self._repository),
            ).fetchone()
        if row is None or (owner is not None and row["owner"] not in (None, owner)):
            raise UnknownAnswer(
                f"no answer {chosen}: it was never given here, or it is no longer kept (a"
                f" conversation keeps its last {self.limits.turns} answers, for"
                f" {self.limits.max_age_hours:g} hours)"
            )
        return turn_of(row, _kept)

    # --- feedback -------------------------------------------------------------------------

    def add_feedback(self, feedback: Feedback) -> Feedback:
        """Keep ``feedback``, tagged with this store's repository; it replaces what the same
        identity said of the same answer (and takes its place last)."""
        feedback = _tagged(feedback, self._repository)
        with self._writing() as conn:
            conn.execute(
                "INSERT INTO szrag_feedback (answer_id, given_by, repository, conversation_id,"
                " rating, right_files, comment, question, sources, cited_files, commit_id,"
                " given_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (answer_id, given_by) DO UPDATE SET"
                " repository = excluded.repository, conversation_id = excluded.conversation_id,"
                " rating = excluded.rating, right_files = excluded.right_files,"
                " comment = excluded.comment, question = excluded.question,"
                " sources = excluded.sources, cited_files = excluded.cited_files,"
                " commit_id = excluded.commit_id, given_at = excluded.given_at,"
                " seq = nextval('szrag_feedback_seq')",
                (
                    feedback.answer_id,
                    feedback.given_by,
                    feedback.repository,
                    feedback.conversation_id,
                    feedback.rating.value,
                    Jsonb(list(feedback.right_files)),
                    feedback.comment,
                    feedback.question,
                    Jsonb(sources_value(feedback.sources)),
                    Jsonb(list(feedback.cited_files)),
                    feedback.commit,
                    feedback.given_at,
                ),
            )
        return feedback

    def feedback(self) -> list[Feedback]:
        """Every feedback kept on this repository's answers, oldest first."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT * FROM szrag_feedback WHERE repository = %s ORDER BY given_at, seq",
                (self._repository,),
            ).fetchall()
        return [feedback_of(row, _kept) for row in rows]

    # --- the database ---------------------------------------------------------------------

    def _cutoff(self) -> float:
        return self.clock() - self.limits.max_age_seconds

    def _prune(self, conn: psycopg.Connection[Any], now: float, *, added: bool = False) -> None:
        """Forget what is past the age bound and, when a conversation was ``added`` (only
        that can pass the count bound), the least recently used past the count bound."""
        cutoff = now - self.limits.max_age_seconds
        mine = self._repository
        conn.execute(
            "DELETE FROM szrag_turns t WHERE t.asked_at < %s AND EXISTS (SELECT 1 FROM"
            " szrag_conversations c WHERE c.id = t.conversation_id AND c.repository = %s)",
            (cutoff, mine),
        )
        conn.execute(
            "DELETE FROM szrag_conversations WHERE updated_at < %s AND repository = %s",
            (cutoff, mine),
        )
        if not added:
            return
        conn.execute(
            "DELETE FROM szrag_conversations WHERE id IN (SELECT id FROM szrag_conversations"
            " WHERE repository = %s ORDER BY updated_at DESC, seq DESC OFFSET %s)",
            (mine, self.limits.conversations),
        )

    @contextmanager
    def _reading(self) -> Iterator[psycopg.Connection[Any]]:
        with self._connection() as conn:
            yield conn

    @contextmanager
    def _writing(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction holding this repository's write lock until it ends."""
        with self._connection() as conn, conn.transaction():
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_CLASS, self._repository)
            )
            yield conn

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as conn:
                conn.row_factory = dict_row
                yield conn
        except SzragError:
            raise
        except psycopg.Error as error:
            raise self._unusable(error) from error

    def _unusable(self, error: Exception) -> ConversationStoreError:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        return ConversationStoreError(
            f"the conversation store at {shown_url(self._url)} cannot be used:"
            f" {first.replace(self._url, shown_url(self._url))}"
        )


class PostgresAudit:
    """The audit log as rows of ``szrag_audit``, appended by every replica."""

    def __init__(self, store: PostgresConversations) -> None:
        self._store = store

    def append(self, line: AuditLine) -> None:
        """Keep ``line`` (ConversationStoreError when the database cannot be written)."""
        with self._store._connection() as conn:
            conn.execute(
                "INSERT INTO szrag_audit (repository, event, entry) VALUES (%s, %s, %s)",
                (line.repository, line.event, line.text),
            )

    def lines(self, limit: int | None = None) -> list[str]:
        """The lines kept, oldest first (the last ``limit`` when given)."""
        with self._store._connection() as conn:
            rows = conn.execute(
                "SELECT entry::text AS entry FROM (SELECT seq, entry FROM szrag_audit"
                " ORDER BY seq DESC LIMIT %s) last ORDER BY seq",
                (limit,),
            ).fetchall()
        return [str(row["entry"]) for row in rows]


def _tagged(feedback: Feedback, repository: str) -> Feedback:
    if feedback.repository == repository:
        return feedback
    return dataclasses.replace(feedback, repository=repository)


def _kept(value: Any) -> Any:
    """A ``jsonb`` column's value: decoded already."""
    return value
