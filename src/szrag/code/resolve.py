"""Resolve a file's imports and path references to indexed files.

Resolution looks only at the set of indexed paths, never at the disk, so it is fast and can
run again whenever files come or go. Imports that lead outside the repository (packages,
the standard library) stay recorded in the code record and simply make no edge.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable, Sequence, Set
from typing import Any

from szrag.code.packages import RESOLVERS

SCRIPT_EXTENSIONS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
INDEX_FILES = tuple(f"index{extension}" for extension in SCRIPT_EXTENSIONS)
# TypeScript sources import "./x.js" and mean "./x.ts".
_COMPILED_TO_SOURCE = {
    ".js": (".ts", ".tsx"),
    ".jsx": (".tsx",),
    ".mjs": (".mts",),
    ".cjs": (".cts",),
}


def resolve_edges(
    path: str,
    record: dict[str, Any],
    known_paths: Collection[str],
    memo: dict[Any, list[str]] | None = None,
) -> list[tuple[str, str]]:
    """(target, kind) edges of one file: "import" for resolved imports, "path" for references.

    ``memo``: a dict the caller keeps for files resolved against the same ``known_paths``;
    the same Python import from files of one folder is then resolved once."""
    known = known_paths if isinstance(known_paths, Set) else frozenset(known_paths)
    language = record.get("language")
    python = language == "python"
    by_package = RESOLVERS.get(str(language))
    resolved = memo if python else None
    folder = posixpath.dirname(path)
    edges: list[tuple[str, str]] = []
    roots: tuple[str, ...] | None = None  # the same for every import of the file
    for item in record.get("imports") or ():
        if not isinstance(item, dict) or not isinstance(item.get("source"), str):
            continue
        if by_package is not None:
            targets = by_package(path, item, known)
        elif python:
            names = tuple(item.get("names") or ())
            # the same import from files of one folder resolves the same: once per folder
            key = (folder, item["source"], names, item.get("kind"))
            here = resolved if resolved is not None and _hashable(key) else None
            found = here.get(key) if here is not None else None
            if found is None:
                if roots is None:
                    roots = tuple(python_roots(path, known))
                found = resolve_python_import(
                    path, item["source"], names, item.get("kind"), known, roots
                )
                if here is not None:
                    here[key] = found
            targets = found
        else:
            target = resolve_script_import(path, item["source"], known)
            targets = [target] if target else []
        edges.extend((target, "import") for target in targets)
    for reference in record.get("path_references") or ():
        if isinstance(reference, dict) and isinstance(reference.get("path"), str):
            target = resolve_relative(path, reference["path"], known)
            if target is not None:
                edges.append((target, "path"))
    return [edge for edge in dict.fromkeys(edges) if edge[0] != path]


def _inside(directory: str, relative: str) -> str | None:
    """``relative`` joined to a repository directory, or None when it climbs out of the root."""
    joined = posixpath.normpath(posixpath.join(directory, relative))
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None
    return "" if joined == "." else joined


def resolve_relative(path: str, reference: str, known: Set[str]) -> str | None:
    """A literal path relative to the file's directory, when it names an indexed file."""
    target = _inside(posixpath.dirname(path), reference)
    return target if target and target in known else None


def script_candidates(base: str) -> Iterable[str]:
    """Files a JavaScript/TypeScript specifier may mean, in the order they are tried."""
    prefix = f"{base}/" if base else ""
    if base:
        yield base
        yield from (base + extension for extension in SCRIPT_EXTENSIONS)
        stem, extension = posixpath.splitext(base)
        yield from (stem + other for other in _COMPILED_TO_SOURCE.get(extension, ()))
    yield from (prefix + name for name in INDEX_FILES)


def resolve_script_import(path: str, source: str, known: Set[str]) -> str | None:
    """A relative import of JavaScript or TypeScript (bare package names are not resolved)."""
    if not (source in (".", "..") or source.startswith(("./", "../"))):
        return None
    base = _inside(posixpath.dirname(path), source)
    if base is None:
        return None
    return next((candidate for candidate in script_candidates(base) if candidate in known), None)


def python_module_file(module_path: str, known: Set[str]) -> str | None:
    """``a/b`` as a module (a/b.py, a/b.pyi) or package (a/b/__init__.py)."""
    prefix = f"{module_path}/" if module_path else ""
    candidates = (
        (f"{module_path}.py", f"{prefix}__init__.py", f"{module_path}.pyi", f"{prefix}__init__.pyi")
        if module_path
        else ("__init__.py", "__init__.pyi")
    )
    return next((candidate for candidate in candidates if candidate in known), None)


def python_roots(path: str, known: Set[str]) -> Iterable[str]:
    """Directories an absolute import may start from, nearest first.

    Every directory above the file that is not itself a package (a script's own folder,
    the repository root ...), each also with ``src/`` under it for src layouts.
    """
    directory = posixpath.dirname(path)
    while True:
        if not directory or f"{directory}/__init__.py" not in known:
            yield directory
            yield f"{directory}/src" if directory else "src"
        if not directory:
            return
        directory = posixpath.dirname(directory)


def resolve_python_import(
    path: str,
    source: str,
    names: Iterable[str],
    kind: object,
    known: Set[str],
    roots: Sequence[str] | None = None,
) -> list[str]:
    """Repository files a Python import loads: the module, or the submodules it names.
    ``roots``: ``python_roots(path, known)``, when the caller has them already."""
    wanted = [name for name in names if name != "*"] if kind == "from" else []
    level = len(source) - len(source.lstrip("."))
    dotted = source[level:]
    relative_path = dotted.replace(".", "/")
    bases: Iterable[str]
    if level:
        package = posixpath.dirname(path)
        for _up in range(level - 1):
            if not package:
                return []
            package = posixpath.dirname(package)
        bases = [posixpath.join(package, relative_path) if relative_path else package]
    else:
        # lazily: the first base that resolves ends the search. A dotted name holds no "/"
        # to restart the path at, so joining is concatenation (posixpath.join is slower)
        joiner = posixpath.join if relative_path.startswith("/") else _concatenate
        bases = (
            joiner(root, relative_path) if root else relative_path
            for root in (python_roots(path, known) if roots is None else roots)
        )
    folders = _folders(known)
    for base in bases:
        if folders is not None and base not in folders:
            # no indexed file lies under it: neither a package nor a submodule, at most a module
            module = next(
                (found for found in (f"{base}.py", f"{base}.pyi") if found in known), None
            )
            if module:
                return [module]
            continue
        module = python_module_file(base, known)
        submodules = [
            found
            for name in wanted
            if (found := python_module_file(posixpath.join(base, name), known))
        ]
        if submodules:
            # from package import sub: the submodules, plus the package when it gave other names
            extra = [module] if module and len(submodules) < len(wanted) else []
            return submodules + extra
        if module:
            return [module]
    return []


def _hashable(key: tuple[Any, ...]) -> bool:
    try:
        hash(key)
    except TypeError:  # a damaged record's names or kind: resolved without the memo
        return False
    return True


def _concatenate(directory: str, relative: str) -> str:
    return f"{directory}/{relative}"


_FOLDERS: list[tuple[frozenset[str], frozenset[str]]] = []  # the last known set's folders


def _folders(known: Set[str]) -> frozenset[str] | None:
    """Every folder holding an indexed file (the root as ""), for an immutable ``known``
    (kept for the last one seen: a refresh resolves every file against the same set)."""
    if not isinstance(known, frozenset):
        return None
    if _FOLDERS and _FOLDERS[0][0] is known:
        return _FOLDERS[0][1]
    parents = {path.rpartition("/")[0] for path in known}  # indexed paths are normalised
    folders = {""}
    for parent in parents:
        while parent not in folders:
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    found = frozenset(folders)
    _FOLDERS[:] = [(known, found)]
    return found
