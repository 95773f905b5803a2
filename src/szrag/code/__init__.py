"""Code structure: per-language parsers and the structure graph.

``analyse_source(path, text)`` returns the JSON-ready code record the index stores for a
file, or None when the file is not code szrag can parse. ``resolve_edges(path, record,
known_paths)`` turns a record's imports and path references into dependency edges. The
questions that read both back from an open index (``find_symbols``, ``find_routes`` ...) are
``szrag.structure``, a layer above the index: this package never imports the index.

Modules: ``languages`` (extensions, grammars, query files), ``extract`` (walks the query
matches into a ``model.CodeRecord``), ``modules`` (imports and exports), ``routes`` and
``pathname`` (HTTP routes), ``paths`` (path references), ``resolve`` (edges), ``scoring``
(how well a name or route matches a question). Language knowledge lives in
``szrag/queries/<language>-structure.scm``; the Python modules hold only the few rules a
query cannot express.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from szrag.base.lazy import lazy_getattr

if TYPE_CHECKING:
    from szrag.code.model import CodeRecord, EnvReference, RouteMatch, SymbolMatch

# imported on first use (PEP 562): a refresh that parses a changed file needs only
# ``analyse_source``
_HOMES = {
    "CodeRecord": "szrag.code.model",
    "EnvReference": "szrag.code.model",
    "RouteMatch": "szrag.code.model",
    "SymbolMatch": "szrag.code.model",
}


__getattr__ = lazy_getattr(__name__, _HOMES)


__all__ = [
    "CodeRecord",
    "EnvReference",
    "RouteMatch",
    "SymbolMatch",
    "analyse_source",
    "resolve_edges",
]


def analyse_source(path: str, text: str) -> dict[str, Any] | None:
    """The code record of one file, or None when no parser handles it."""
    from szrag.code import extract  # the parsers load when a file is parsed, not before

    record = extract.analyse(path, text)
    return record.to_dict() if record is not None else None


def resolve_edges(
    path: str,
    record: dict[str, Any],
    known_paths: Collection[str],
    memo: dict[Any, list[str]] | None = None,
) -> list[tuple[str, str]]:
    """(target path, kind) dependency edges of one file; kind is "import" or "path".
    ``memo``: one dict for files resolved against the same ``known_paths``, to share work."""
    from szrag.code import resolve

    return resolve.resolve_edges(path, record, known_paths, memo)
