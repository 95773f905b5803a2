"""The PostgreSQL store's schema, its migrations, and how a store URL is reached.

Every table is keyed by repository name. A publish writes the next generation in one
transaction: the rows of the files that changed since the last one, or every row when the
store holds nothing it can build on, and, in the same transaction, points
``szrag_repositories`` at it. Readers read inside repeatable-read snapshots, so a refresh
becomes visible at once, whole, and a publish that fails or is killed leaves the previous one
served.

The schema is versioned by ordered, named migrations (``MIGRATIONS``), each applied once, under
an advisory lock, in the transaction that records it in ``szrag_migrations``; a database that
records a migration this version does not know was written by a newer szrag and is refused.
Paths, names and terms are compared byte by byte (``COLLATE "C"``), so every ``ORDER BY``
orders as SQLite's does, whatever the database's locale.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from szrag.base.config import ConversationConfig, RepoConfig, RuntimeConfig, profile_named
from szrag.base.errors import ConfigError, IndexStoreError, StoreUnavailable

CONNECT_TIMEOUT = 10  # seconds to reach the server before the store is called unreachable
LOCK_CLASS = 0x737A  # the first key of szrag's advisory locks
MIGRATION_LOCK = 0  # the second key while migrating; a repository's lock is its name's hash
INDEXER_LOCK_CLASS = LOCK_CLASS + 1  # the first key of a repository's one indexer (a session lock)

_KEY = 'repository text COLLATE "C" NOT NULL, generation bigint NOT NULL'

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_generations_of_repositories",
        f"""
        CREATE TABLE szrag_repositories (
            name text COLLATE "C" PRIMARY KEY,
            generation bigint NOT NULL,  -- the latest complete generation: the one read
            published_at timestamptz NOT NULL
        );
        CREATE TABLE szrag_generations (
            {_KEY},
            published_at timestamptz NOT NULL DEFAULT now(),
            root text NOT NULL,  -- the folder it was built from, as messages name it
            index_schema integer NOT NULL,  -- the SQLite schema whose packed values it keeps
            config jsonb NOT NULL,  -- the repository configuration it was built with
            chunks bigint NOT NULL,
            full_text_rows bigint NOT NULL,  -- FTS5's averages record: rows, column totals
            column_totals bigint[] NOT NULL,
            PRIMARY KEY (repository, generation)
        );
        CREATE TABLE szrag_meta (
            {_KEY}, key text NOT NULL, value text NOT NULL,
            PRIMARY KEY (repository, generation, key)
        );
        CREATE TABLE szrag_files (
            {_KEY},
            id bigint NOT NULL,
            path text COLLATE "C" NOT NULL,
            size bigint NOT NULL,
            mtime_ns bigint NOT NULL,
            ctime_ns bigint NOT NULL,
            inode bigint NOT NULL,
            sha256 text NOT NULL,
            type text NOT NULL,
            tokens bytea NOT NULL,  -- packed as the SQLite store packs them (store.pack)
            code bytea,
            routes text,
            decode_errors integer NOT NULL,
            PRIMARY KEY (repository, generation, id),
            UNIQUE (repository, generation, path)
        );
        CREATE TABLE szrag_chunks (
            {_KEY},
            id bigint NOT NULL,
            file_id bigint NOT NULL,
            seq integer NOT NULL,
            start integer NOT NULL,
            "end" integer NOT NULL,
            type text NOT NULL,
            heading text,
            words bytea NOT NULL,
            PRIMARY KEY (repository, generation, id)
        );
        CREATE INDEX szrag_chunks_file ON szrag_chunks (repository, generation, file_id, seq);
        CREATE TABLE szrag_chunk_texts (
            {_KEY}, id bigint NOT NULL, text bytea NOT NULL,
            PRIMARY KEY (repository, generation, id)
        );
        -- FTS5's tokens of each chunk: weights A-D for path, heading, symbols, body; the
        -- column sizes bm25 uses; and, for a chunk whose tokens a tsvector cannot hold
        -- exactly (too many instances of one, or too far in), each token's count by column
        CREATE TABLE szrag_chunk_terms (
            {_KEY},
            chunk_id bigint NOT NULL,
            terms tsvector NOT NULL,
            sizes integer[] NOT NULL,
            size bigint NOT NULL,
            counts jsonb,
            PRIMARY KEY (repository, generation, chunk_id)
        );
        CREATE INDEX szrag_chunk_terms_terms ON szrag_chunk_terms USING gin (terms);
        CREATE TABLE szrag_vocabulary (
            {_KEY}, term text COLLATE "C" NOT NULL, documents bigint NOT NULL,
            PRIMARY KEY (repository, generation, term)
        );
        CREATE TABLE szrag_names (
            {_KEY},
            name text COLLATE "C" NOT NULL,
            kind text COLLATE "C" NOT NULL,
            file_id bigint NOT NULL,
            line integer NOT NULL,
            PRIMARY KEY (repository, generation, name, kind, file_id, line)
        );
        CREATE TABLE szrag_images (
            {_KEY}, path text COLLATE "C" NOT NULL, size bigint NOT NULL, mtime_ns bigint NOT NULL,
            PRIMARY KEY (repository, generation, path)
        );
        CREATE TABLE szrag_edges (
            {_KEY},
            source text COLLATE "C" NOT NULL,
            target text COLLATE "C" NOT NULL,
            kind text COLLATE "C" NOT NULL,
            PRIMARY KEY (repository, generation, source, target, kind)
        );
        CREATE INDEX szrag_edges_target ON szrag_edges (repository, generation, target);
        CREATE TABLE szrag_skipped (
            {_KEY},
            path text COLLATE "C" NOT NULL,
            reason text NOT NULL,
            size bigint, mtime_ns bigint, ctime_ns bigint, inode bigint,
            PRIMARY KEY (repository, generation, path)
        );
        """,
    ),
    (
        # an image's bytes, so a replica without a checkout serves it (NULL: too large)
        "0002_image_bytes",
        "ALTER TABLE szrag_images ADD COLUMN data bytea",
    ),
    (
        # each code record's definitions in its order (index schema 14): a symbol table is
        # read without decoding every record
        "0003_definitions",
        f"""
        CREATE TABLE szrag_definitions (
            {_KEY},
            file_id bigint NOT NULL,
            seq integer NOT NULL,
            name text COLLATE "C" NOT NULL,
            kind text COLLATE "C" NOT NULL,
            line integer NOT NULL,
            end_line integer NOT NULL,
            container text COLLATE "C",
            PRIMARY KEY (repository, generation, file_id, seq)
        );
        """,
    ),
    (
        # each file's environment reads in its record's order (index schema 15)
        "0004_environment_reads",
        "ALTER TABLE szrag_files ADD COLUMN environment text",
    ),
    (
        # each file's units as its build cut them (index schema 17), packed: a reader ranks
        # a found file's units without cutting it (NULL: published before, cut when read)
        "0005_units",
        "ALTER TABLE szrag_files ADD COLUMN units bytea",
    ),
    (
        # a repository's rows are kept from one generation to the next: a publish rewrites
        # the files that changed, not all of them (readers' repeatable-read snapshots keep
        # the rows they started on); a generation records the SQLite index it came from, and
        # the files and chunks it rewrote (NULL: every one), so a replica carries its views
        "0006_rows_kept_across_generations",
        """
        ALTER TABLE szrag_generations ADD COLUMN lineage text,
            ADD COLUMN changed_files bigint[], ADD COLUMN changed_chunks bigint[];
        """
        + "".join(
            f"""
            DELETE FROM {table} AS t WHERE NOT EXISTS (SELECT 1 FROM szrag_repositories r
                WHERE r.name = t.repository AND r.generation = t.generation);
            ALTER TABLE {table} DROP COLUMN generation;
            ALTER TABLE {table} ADD PRIMARY KEY (repository, {key});
            """
            for table, key in (
                ("szrag_meta", "key"),
                ("szrag_files", "id"),
                ("szrag_chunks", "id"),
                ("szrag_chunk_texts", "id"),
                ("szrag_chunk_terms", "chunk_id"),
                ("szrag_vocabulary", "term"),
                ("szrag_names", "name, kind, file_id, line"),
                ("szrag_definitions", "file_id, seq"),
                ("szrag_images", "path"),
                ("szrag_edges", "source, target, kind"),
                ("szrag_skipped", "path"),
            )
        )
        + """
        ALTER TABLE szrag_files ADD UNIQUE (repository, path);
        CREATE INDEX szrag_chunks_file ON szrag_chunks (repository, file_id, seq);
        CREATE INDEX szrag_names_file ON szrag_names (repository, file_id);
        CREATE INDEX szrag_edges_target ON szrag_edges (repository, target);
        """,
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)

# every table holding a repository's rows (besides its generations' own records)
REPOSITORY_TABLES = (
    "szrag_meta",
    "szrag_files",
    "szrag_chunks",
    "szrag_chunk_texts",
    "szrag_chunk_terms",
    "szrag_vocabulary",
    "szrag_names",
    "szrag_definitions",
    "szrag_images",
    "szrag_edges",
    "szrag_skipped",
)


# --- URLs and connections ---------------------------------------------------------------------


_PASSWORD = re.compile(r"(://[^/@:?#]*):[^/@?#]*@")
_PASSWORD_PARAMETER = re.compile(r"([?&]password=)[^&#]*")


def shown_url(url: str) -> str:
    """``url`` as messages show it: its password (if any) as ``***``."""
    return _PASSWORD_PARAMETER.sub(r"\1***", _PASSWORD.sub(r"\1:***@", url))


def checked_url(url: str) -> str:
    """``url`` when it is a PostgreSQL connection URL; ConfigError naming what is wrong."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            f"store {shown_url(url)!r} is not a PostgreSQL URL (postgresql://user@host/database)"
        )
    try:
        conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        reason = first_line(error).replace(url, shown_url(url))
        raise ConfigError(f"store {shown_url(url)} is not a valid URL: {reason}") from error
    return url


def first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def connect(url: str, **options: Any) -> psycopg.Connection[Any]:
    """A connection to the store at ``url``; IndexStoreError when it cannot be reached."""
    checked_url(url)
    try:
        return psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT, **options)
    except psycopg.Error as error:
        raise unreachable(url, error) from error


def unreachable(url: str, error: Exception) -> StoreUnavailable:
    """The error of a store that cannot be reached (or refuses the connection)."""
    return StoreUnavailable(
        f"the PostgreSQL store at {shown_url(url)} cannot be reached: {first_line(error)}"
    )


# --- migrations -------------------------------------------------------------------------------


def migrate(conn: psycopg.Connection[Any]) -> list[str]:
    """Apply the migrations ``conn``'s database lacks, each in its own transaction under
    szrag's migration lock; returns their names. IndexStoreError for a newer database."""
    applied: list[str] = []
    for name, statements in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, MIGRATION_LOCK))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS szrag_migrations ("
                " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {row[0] for row in conn.execute("SELECT name FROM szrag_migrations")}
            unknown = done - {known for known, _ in MIGRATIONS}
            if unknown:
                raise IndexStoreError(
                    f"the PostgreSQL store records migrations this szrag does not know"
                    f" ({', '.join(sorted(unknown))}): it was written by a newer szrag,"
                    " and is left as it is"
                )
            if name in done:
                continue
            conn.execute(statements)
            conn.execute("INSERT INTO szrag_migrations (name) VALUES (%s)", (name,))
            applied.append(name)
    return applied


def check_schema(conn: psycopg.Connection[Any], url: str, repository: str) -> None:
    """IndexStoreError unless ``conn``'s database holds every migration this szrag knows and
    none it does not (read without writing anything)."""
    found = conn.execute("SELECT to_regclass('szrag_migrations')").fetchone()
    done = (
        {row[0] for row in conn.execute("SELECT name FROM szrag_migrations")}
        if found is not None and found[0] is not None
        else set()
    )
    known = {name for name, _ in MIGRATIONS}
    if done - known:
        raise IndexStoreError(
            f"the PostgreSQL store at {shown_url(url)} was written by a newer szrag"
            f" (migrations {', '.join(sorted(done - known))}); upgrade szrag to read it"
        )
    if done and known - done:
        raise IndexStoreError(
            f"the PostgreSQL store at {shown_url(url)} was written by an older szrag (it lacks"
            f" {', '.join(sorted(known - done))}); publishing with this one migrates it:"
            f" `szrag index --store URL --repo {repository}=PATH`"
        )
    if known - done:
        raise IndexStoreError(
            f"the PostgreSQL store at {shown_url(url)} holds no szrag index yet; publish one"
            f" with `szrag index --store URL --repo {repository}=PATH`"
        )


@contextmanager
def repository_lock(
    conn: psycopg.Connection[Any], url: str, repository: str, wait: float | None
) -> Iterator[None]:
    """Inside a transaction: the advisory lock of ``repository``, held until it ends (two
    publishers of one repository never interleave); waits ``wait`` seconds at most (None: as
    long as it takes), then IndexStoreError."""
    if wait is not None:
        conn.execute(f"SET LOCAL lock_timeout = {max(1, round(wait * 1000))}")
    try:
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_CLASS, repository))
    except psycopg.errors.LockNotAvailable as error:
        raise IndexStoreError(
            f"another process is publishing repository {repository!r} to {shown_url(url)};"
            " try again when it has finished"
        ) from error
    if wait is not None:
        conn.execute("SET LOCAL lock_timeout = 0")
    yield


# --- the configuration a generation was built with ---------------------------------------------


def config_record(config: RepoConfig) -> dict[str, Any]:
    """``config`` as a generation keeps it (JSON): its profile by name, with the extensions
    and ranker the repository file may change; ConfigError when that cannot describe it."""
    profile = config.profile
    record: dict[str, Any] = {
        "profile": profile.name,
        "extensions": sorted(profile.extensions),
        "ranker": profile.ranker,
        "extra_ignores": list(config.extra_ignores),
        "max_file_bytes": config.max_file_bytes,
        "source": config.source,
        "context_budget": config.context_budget,
        "context_window": config.context_window,
        "tools": config.tools,
        "runtime": dataclasses.asdict(config.runtime),
        "conversations": dataclasses.asdict(config.conversations),
    }
    if config_of(record) != config:
        raise ConfigError(f"the configuration of profile {profile.name!r} cannot be published")
    return record


def config_of(record: dict[str, Any]) -> RepoConfig:
    """The configuration ``config_record`` kept."""
    profile = dataclasses.replace(
        profile_named(record["profile"]),
        extensions=frozenset(record["extensions"]),
        ranker=record["ranker"],
    )
    runtime = dict(record["runtime"])
    runtime["log_files"] = tuple(runtime["log_files"])
    runtime["paths"] = tuple((name, path) for name, path in runtime["paths"])
    return RepoConfig(
        profile=profile,
        extra_ignores=tuple(record["extra_ignores"]),
        max_file_bytes=record["max_file_bytes"],
        source=record["source"],
        context_budget=record["context_budget"],
        context_window=record["context_window"],
        tools=record["tools"],
        runtime=RuntimeConfig(**runtime),
        conversations=ConversationConfig(**record["conversations"]),
    )
