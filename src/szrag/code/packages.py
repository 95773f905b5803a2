"""Imports resolved to repository files for the languages read from their queries alone.

Each language names its modules its own way, and each rule below is that language's:

* Go imports a package, which is a directory: ``example.com/shop/internal/store`` is the
  directory whose path ends the import path (``internal/store``), and the edge goes to its
  ``.go`` files (tests aside).
* Java, PHP and C# name a class by package or namespace: ``com.example.model.Item`` is the file
  whose path ends in ``com/example/model/Item.java`` (or the longest tail of it that exists);
  PSR-4 roots (``App\\`` in ``app/``) are found the same way, by the longest tail.
* Rust: ``mod store;`` is ``store.rs`` or ``store/mod.rs`` beside the file (inside its own
  directory for a file that is not ``main``, ``lib`` or ``mod``); ``use crate::a::b`` is
  ``src/a/b.rs`` or ``src/a.rs``.
* Ruby: ``require_relative 'lib/store'`` is relative to the file; ``require 'store'`` is
  ``lib/store.rb`` or ``store.rb``.
* C and C++: ``#include "store/db.h"`` is relative to the file, else an indexed path that ends
  in it (an include directory: ``include/store/db.h``), the one nearest the including file; a
  system header (``<stdio.h>``) or an absolute path names no repository file.

Like the rest of resolution, only the set of indexed paths is consulted, never the disk.
"""

from __future__ import annotations

import functools
import posixpath
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

MAX_PACKAGE_FILES = 20
Resolver = Callable[[str, dict[str, Any], Collection[str]], list[str]]


@dataclass(frozen=True)
class _Layout:
    """The indexed paths looked up by last name, built once per set of paths."""

    by_name: dict[str, list[str]]  # file name -> paths, sorted
    go_packages: dict[str, list[str]]  # directory's last name -> directories holding Go files
    go_files: dict[str, list[str]]  # directory -> its non-test .go files, sorted


@functools.lru_cache(maxsize=4)
def _layout(known: frozenset[str]) -> _Layout:
    by_name: dict[str, list[str]] = defaultdict(list)
    go_files: dict[str, list[str]] = defaultdict(list)
    for path in sorted(known):
        by_name[posixpath.basename(path)].append(path)
        if path.endswith(".go") and not path.endswith("_test.go"):
            go_files[posixpath.dirname(path)].append(path)
    go_packages: dict[str, list[str]] = defaultdict(list)
    for directory in go_files:
        go_packages[posixpath.basename(directory)].append(directory)
    return _Layout(dict(by_name), dict(go_packages), dict(go_files))


def _frozen(known: Collection[str]) -> frozenset[str]:
    return known if isinstance(known, frozenset) else frozenset(known)


def _tail_match(segments: list[str], suffixes: Sequence[str], known: Collection[str]) -> str | None:
    """The indexed path that ends in the longest tail of ``segments`` + a suffix, the first
    of ``suffixes`` winning between tails of one length."""
    if not segments:
        return None
    layout = _layout(_frozen(known))
    candidates = {suffix: layout.by_name.get(segments[-1] + suffix, []) for suffix in suffixes}
    for start in range(len(segments)):
        for suffix in suffixes:
            tail = "/".join(segments[start:]) + suffix
            found = [
                path for path in candidates[suffix] if path == tail or path.endswith("/" + tail)
            ]
            if found:
                return found[0]
    return None


def _go(path: str, item: dict[str, Any], known: Collection[str]) -> list[str]:
    segments = [part for part in str(item["source"]).split("/") if part]
    # "fmt" and "net/http" are the standard library; a module path starts with a domain, or
    # is a local module name followed by its packages
    shortest = 1 if segments and "." in segments[0] else 2
    layout = _layout(_frozen(known))
    directories = layout.go_packages.get(segments[-1], []) if segments else []
    for start in range(len(segments) - shortest + 1):
        tail = "/".join(segments[start:])
        found = [d for d in directories if d == tail or d.endswith("/" + tail)]
        if found:
            return layout.go_files[sorted(found)[0]][:MAX_PACKAGE_FILES]
    return []


def _dotted(separator: str, *suffixes: str) -> Resolver:
    """A class by its package path, in a file of the first of ``suffixes`` that has one
    (Kotlin imports Java's classes as its own)."""

    def resolve(path: str, item: dict[str, Any], known: Collection[str]) -> list[str]:
        written = str(item["source"]).strip().lstrip(separator)
        if written.endswith("*") or " " in written:
            return []
        segments = [part for part in written.split(separator) if part]
        found = _tail_match(segments, suffixes, known) if len(segments) > 1 else None
        return [found] if found else []

    return resolve


def _rust(path: str, item: dict[str, Any], known: Collection[str]) -> list[str]:
    written = str(item["source"])
    directory = posixpath.dirname(path)
    stem = posixpath.splitext(posixpath.basename(path))[0]
    if "::" not in written and "{" not in written:  # mod name;
        base = directory if stem in ("main", "lib", "mod") else posixpath.join(directory, stem)
        return _first(
            known,
            (posixpath.join(base, f"{written}.rs"), posixpath.join(base, written, "mod.rs")),
        )
    segments = written.split("{", 1)[0].strip(":").split("::")
    if segments and segments[0] == "crate":
        root = directory.split("/src", 1)[0] + "/src" if "/src" in directory else "src"
        root = "src" if directory == "src" or directory.startswith("src/") else root
        parts = segments[1:]
        candidates = []
        for end in range(len(parts), 0, -1):
            module = "/".join(parts[:end])
            candidates += [f"{root}/{module}.rs", f"{root}/{module}/mod.rs"]
        return _first(known, candidates)
    return []


def _ruby(path: str, item: dict[str, Any], known: Collection[str]) -> list[str]:
    written = str(item["source"]).removesuffix(".rb")
    relative = posixpath.normpath(posixpath.join(posixpath.dirname(path), written)) + ".rb"
    return _first(known, (relative, f"lib/{written}.rb", f"{written}.rb"))


def _include(path: str, item: dict[str, Any], known: Collection[str]) -> list[str]:
    written = str(item["source"]).strip()
    if written.startswith("/"):
        return []  # a file of the machine's, not the repository's
    here = posixpath.dirname(path)
    relative = posixpath.normpath(posixpath.join(here, written))
    if relative in known:
        return [relative]
    if ".." in written.split("/"):
        return []  # a path relative to the file that is not there
    name = posixpath.basename(written)
    candidates = [
        found
        for found in _layout(_frozen(known)).by_name.get(name, [])
        if found == written or found.endswith("/" + written)
    ]
    if not candidates:
        return []
    # several include directories may hold it: the one nearest the including file
    return [max(candidates, key=lambda found: (_shared_folders(here, found), -len(found)))]


def _shared_folders(folder: str, path: str) -> int:
    mine, theirs = folder.split("/"), posixpath.dirname(path).split("/")
    shared = 0
    for one, other in zip(mine, theirs, strict=False):
        if one != other:
            break
        shared += 1
    return shared


def _first(known: Collection[str], candidates: Iterable[str]) -> list[str]:
    for candidate in candidates:
        if candidate in known:
            return [candidate]
    return []


RESOLVERS: dict[str, Resolver] = {
    "go": _go,
    "java": _dotted(".", ".java"),
    "csharp": _dotted(".", ".cs"),
    "kotlin": _dotted(".", ".kt", ".java"),
    "php": _dotted("\\", ".php"),
    "rust": _rust,
    "ruby": _ruby,
    "c": _include,
    "cpp": _include,
}
