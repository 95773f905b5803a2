"""Facts read from a repository's index without building or refreshing it.

Live tools run under a short time limit, so they open the SQLite file read-only and report
what is there; building the index is the job of ``szrag index`` and the answer path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from szrag.base.errors import IndexStoreError
from szrag.base.public import public_timestamp
from szrag.index import store
from szrag.index.store import open_read_only


def index_statistics(root: Path) -> dict[str, Any]:
    """Row counts and meta facts of the index, or why there is none."""
    try:
        with open_read_only(root) as conn:
            meta = store.read_meta(conn)
            counts = store.counts(conn)
    except IndexStoreError as error:
        return {"available": False, "reason": error.message}
    return {
        "available": True,
        "schemaVersion": _number(meta.get("schema_version")),
        "generatedAt": public_timestamp(meta.get("generated_at")),
        "profile": meta.get("profile"),
        **counts,
    }


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
    import json

    from szrag.code.model import CodeRecord
    from szrag.code.mounts import mounted_routes

    with open_read_only(root) as conn:
        generation = store.read_meta(conn).get("generation", "")
        key = (str(Path(root).resolve()), generation)
        cached = _ROUTES.get(key) if generation else None
        if cached is not None:
            return [dict(route) for route in cached]
        known = frozenset(store.file_paths(conn))
        rows = store.route_rows(conn)
    records = {path: CodeRecord.from_dict({"routes": json.loads(found)}) for path, found in rows}
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
    ordered = sorted(routes, key=lambda r: (r["route"], r["method"], r["path"], r["line"] or 0))
    if generation:
        if len(_ROUTES) >= _ROUTES_KEPT:
            _ROUTES.pop(next(iter(_ROUTES)))
        _ROUTES[key] = tuple(dict(route) for route in ordered)
    return ordered


_ROUTES_KEPT = 4  # indexes (by root and generation) whose route lists are kept
_ROUTES: dict[tuple[str, str], tuple[dict[str, Any], ...]] = {}
