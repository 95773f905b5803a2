"""Routes under the prefixes their routers are mounted at, across files.

A Flask blueprint or FastAPI router declares its routes in one file and is mounted in
another: ``app.register_blueprint(auth.bp, url_prefix="/auth")``,
``app.include_router(router, prefix="/api")``, ``app.mount("/v1", api)``. Each mount is
recorded as a ``USE`` route whose ``target`` says, through the imports of its file, where the
mounted object is defined (``code.routes.mount_target``); here the target is resolved to an
indexed file (``code.resolve``, as the dependency edges are) and every route declared on that
object is given the mount's prefix. The frameworks join prefixes differently: FastAPI and
Starlette put the mount's prefix before the router's own, a Flask registration with a
prefix replaces the blueprint's own (``BlueprintSetupState``); a blueprint registered in a
blueprint sits under its parent's prefix. A name mounted in the file that declares it means
the object of the same function (tests build a local ``bp`` in each), or of the module when
that function declares no routes on it; an imported name means the module's own. Pure
functions over records: nothing is stored.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Set
from dataclasses import replace

from szrag.code.model import CodeRecord, Route
from szrag.code.resolve import python_module_file, resolve_python_import

# Mounts whose prefix takes the place of the mounted router's own prefix.
REPLACES_OWN_PREFIX = frozenset({"register_blueprint"})
MAX_MOUNTED_PATHS = 32  # one route under this many mounts at most: a bound, not a rule

# (file, the name of the object routes are declared on, the line of the function that
# declares it or 0 for the module)
Declared = tuple[str, str, int]


def join_prefix(prefix: str, path: str) -> str:
    """A router's prefix and a route's path as the frameworks join them: ``/auth`` and
    ``/login`` give ``/auth/login``, ``/auth`` and ``/`` give ``/auth``. (Here, not in
    ``code.routes``, so that reading routes never loads the parser.)"""
    if not prefix:
        return path
    return prefix.rstrip("/") + ("/" + path.lstrip("/") if path.strip("/") else "") or "/"


def resolve_target(path: str, target: str, known: Set[str]) -> tuple[str, str] | None:
    """The file and name a mount's ``module:name`` target means, seen from ``path``:
    ``.:auth.bp`` from ``app/__init__.py`` is ``("app/auth.py", "bp")``; None when the module
    is no indexed file or the name is not a plain name of one."""
    module, _, attribute = target.partition(":")
    parts = attribute.split(".")
    if not module:
        return (path, attribute) if attribute else None
    found = resolve_python_import(path, module, (), "import", known)
    if not found:
        return None
    file = found[0]
    while len(parts) > 1:  # package.submodule.name: step into the submodule
        if posixpath.basename(file) not in ("__init__.py", "__init__.pyi"):
            break
        submodule = python_module_file(posixpath.join(posixpath.dirname(file), parts[0]), known)
        if submodule is None:
            break
        file, parts = submodule, parts[1:]
    return (file, parts[0]) if len(parts) == 1 and parts[0] else None


def mounts_by_target(
    records: Mapping[str, CodeRecord], known: Set[str]
) -> dict[Declared, list[tuple[str, Route]]]:
    """Every mount with a resolvable target, by the object it mounts: ``(file, mount)``."""
    found: dict[Declared, list[tuple[str, Route]]] = {}
    for path, record in records.items():
        for route in record.routes:
            if route.method != "USE" or route.target is None:
                continue
            resolved = resolve_target(path, route.target, known)
            if resolved is None:
                continue
            file, name = resolved
            scope = 0
            if file == path and route.scope and route.target.startswith(":"):
                declared_here = any(
                    item.owner == name and item.scope == route.scope for item in record.routes
                )
                scope = route.scope if declared_here else 0
            found.setdefault((file, name, scope), []).append((path, route))
    return found


def mounted_paths(
    path: str,
    route: Route,
    mounts: Mapping[Declared, list[tuple[str, Route]]],
    seen: frozenset[Declared] = frozenset(),
) -> list[str]:
    """The paths ``route`` of file ``path`` is served at: its own when the object it is
    declared on is mounted nowhere, else one per mount, each under that mount's own paths."""
    declared = (path, route.owner, route.scope) if route.owner is not None else None
    if declared is None or declared not in mounts or declared in seen:
        return [route.path]
    paths: list[str] = []
    for mount_file, mount in mounts[declared]:
        own = route.path
        if mount.mounted_with in REPLACES_OWN_PREFIX and route.router_prefix:
            own = route.path[len(route.router_prefix) :] or "/"
        for outer in mounted_paths(mount_file, mount, mounts, seen | {declared}):
            paths.append(join_prefix(outer, own))
    return list(dict.fromkeys(paths))[:MAX_MOUNTED_PATHS]


def mounted_routes(
    records: Mapping[str, CodeRecord], known: Set[str]
) -> dict[str, tuple[Route, ...]]:
    """Each file's routes with the prefixes of the mounts of their routers, by path."""
    mounts = mounts_by_target(records, known)
    return {path: tuple(_mounted(path, record.routes, mounts)) for path, record in records.items()}


def _mounted(
    path: str, routes: Iterable[Route], mounts: Mapping[Declared, list[tuple[str, Route]]]
) -> Iterable[Route]:
    for route in routes:
        for served in mounted_paths(path, route, mounts) if mounts else [route.path]:
            yield route if served == route.path else replace(route, path=served)
