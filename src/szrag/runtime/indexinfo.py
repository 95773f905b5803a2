"""Facts read from a repository's index without building or refreshing it.

Live tools run under a short time limit, so they open the SQLite file read-only and report
what is there; building the index is the job of ``szrag index`` and the answer path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from szrag.base.errors import IndexStoreError, SzragError
from szrag.base.public import public, public_timestamp
from szrag.index import store
from szrag.index.records import route_records
from szrag.index.store import open_read_only

if TYPE_CHECKING:
    from szrag.code.model import CodeRecord
    from szrag.index.protocol import IndexStore


@dataclass(frozen=True, slots=True)
class IndexStatistics:
    """The index's meta facts and row counts (by table: data)."""

    schema_version: int | None
    generated_at: str | None  # the public timestamp
    profile: str | None
    counts: Mapping[str, int] = field(metadata=public(spread=True))
    available: bool = field(default=True, init=False)

    public_order: ClassVar[tuple[str, ...]] = ("available",)


@dataclass(frozen=True, slots=True)
class NoIndex:
    """Why there is no usable index."""

    reason: str
    available: bool = field(default=False, init=False)

    public_order: ClassVar[tuple[str, ...]] = ("available",)


def index_statistics(root: Path) -> IndexStatistics | NoIndex:
    """Row counts and meta facts of the index, or why there is none."""
    try:
        with open_read_only(root) as conn:
            meta = store.read_meta(conn)
            counts = store.counts(conn)
    except IndexStoreError as error:
        return NoIndex(error.message)
    return _statistics(meta, counts)


def statistics_of(index: IndexStore) -> IndexStatistics | NoIndex:
    """:func:`index_statistics` of any store (a replica's: no SQLite file), or why it
    cannot be read now."""
    try:
        with index.reading():
            meta = index.meta()
            counts = index.counts()
    except SzragError as error:
        return NoIndex(error.message)
    return _statistics(meta, counts)


def _statistics(meta: Mapping[str, Any], counts: Mapping[str, int]) -> IndexStatistics:
    return IndexStatistics(
        schema_version=_number(meta.get("schema_version")),
        generated_at=public_timestamp(meta.get("generated_at")),
        profile=meta.get("profile"),
        counts=counts,
    )


def _number(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def read_routes(root: Path) -> list[dict[str, Any]]:
    """Every route the index detected (``route`` the URL path, ``path`` the file), by route,
    method and file: a router's routes under the prefixes it is mounted at in other files, as
    ``szrag routes`` lists them. Only the routes are read (SQLite picks them out of each
    file's record), and the list is kept for the index's generation."""
    with open_read_only(root) as conn:
        generation = store.read_meta(conn).get("generation", "")
        key = (str(Path(root).resolve()), generation)
        cached = _ROUTES.get(key) if generation else None
        if cached is not None:
            return [dict(route) for route in cached]
        known = frozenset(store.file_paths(conn))
        rows = store.route_rows(conn)
    ordered = _listed(route_records(rows), known)
    if generation:
        if len(_ROUTES) >= _ROUTES_KEPT:
            _ROUTES.pop(next(iter(_ROUTES)))
        _ROUTES[key] = tuple(dict(route) for route in ordered)
    return ordered


def routes_of(index: IndexStore) -> list[dict[str, Any]]:
    """:func:`read_routes` of any store (a replica's PostgreSQL one: no checkout, no SQLite
    file), from its files' stored routes; kept for the store's generation."""

    def listed() -> tuple[dict[str, Any], ...]:
        with index.reading():
            known = frozenset(entry.path for entry in index.file_entries())
            rows = index.route_rows()
        return tuple(_listed(route_records(rows), known))

    return [dict(route) for route in index.derived("runtime.routes", listed)]


def _listed(records: Mapping[str, CodeRecord], known: frozenset[str]) -> list[dict[str, Any]]:
    """Every route of ``records`` under the prefixes it is mounted at, by route, method and
    file."""
    from szrag.code.mounts import mounted_routes

    routes = [
        {
            "method": (route.method or "ANY").upper(),
            "route": route.path,
            "path": path,
            "line": route.line,
            "handler": route.handler,
        }
        for path, mounted in mounted_routes(records, known).items()
        for route in mounted
    ]
    return sorted(routes, key=lambda r: (r["route"], r["method"], r["path"], r["line"] or 0))


_ROUTES_KEPT = 4  # indexes (by root and generation) whose route lists are kept
_ROUTES: dict[tuple[str, str], tuple[dict[str, Any], ...]] = {}
