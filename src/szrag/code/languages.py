"""Which files are code, and the tree-sitter grammar and queries of each language.

Grammars and compiled queries are built on first use and kept for the life of the process:
index builds parse in worker processes, and each worker pays the compile cost once.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from importlib import resources
from pathlib import PurePosixPath

from tree_sitter import Language, Parser, Query


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """A language szrag parses: its grammar loader and its query files, in order."""

    name: str
    family: str  # "ecmascript" or "python": which extraction rules apply
    query_files: tuple[str, ...]
    # Patterns rooted at the file's root node. They run in a cursor that never starts below
    # the root: in the main query their open states would be checked at every node.
    root_query_files: tuple[str, ...] = ()


_ECMASCRIPT_TS = ("ecmascript-structure.scm", "typescript-structure.scm")

LANGUAGES: dict[str, LanguageSpec] = {
    "javascript": LanguageSpec(
        "javascript", "ecmascript", ("ecmascript-structure.scm", "javascript-structure.scm")
    ),
    "typescript": LanguageSpec("typescript", "ecmascript", _ECMASCRIPT_TS),
    "tsx": LanguageSpec("tsx", "ecmascript", _ECMASCRIPT_TS),
    "python": LanguageSpec(
        "python", "python", ("python-structure.scm",), ("python-module-structure.scm",)
    ),
    # read from their queries alone: definitions, calls, imports, environment reads, routes
    "go": LanguageSpec("go", "literal", ("go-structure.scm",)),
    "rust": LanguageSpec("rust", "literal", ("rust-structure.scm",)),
    "java": LanguageSpec("java", "literal", ("java-structure.scm",)),
    "ruby": LanguageSpec("ruby", "literal", ("ruby-structure.scm",)),
    "php": LanguageSpec("php", "literal", ("php-structure.scm",)),
    "csharp": LanguageSpec("csharp", "literal", ("csharp-structure.scm",)),
}

# The official grammar wheels: (module, the function that returns its language)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "csharp": ("tree_sitter_c_sharp", "language"),
}

EXTENSIONS: dict[str, str] = {
    ".js": "javascript",
    ".jsx": "javascript",  # the JavaScript grammar parses JSX
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".py": "python",
    ".pyi": "python",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".rb": "ruby",
    ".rake": "ruby",
    ".php": "php",
    ".cs": "csharp",
}


def language_of(path: str) -> str | None:
    """The language of a repository path by its extension, or None when it is not code."""
    return EXTENSIONS.get(PurePosixPath(path).suffix.lower())


@functools.cache
def grammar(name: str) -> Language:
    """The tree-sitter grammar of ``name``."""
    # Imported here so that a process that never parses never loads the grammar libraries.
    if name == "javascript":
        import tree_sitter_javascript

        return Language(tree_sitter_javascript.language())
    if name in ("typescript", "tsx"):
        import tree_sitter_typescript

        loader = (
            tree_sitter_typescript.language_tsx
            if name == "tsx"
            else tree_sitter_typescript.language_typescript
        )
        return Language(loader())
    if name == "python":
        import tree_sitter_python

        return Language(tree_sitter_python.language())
    if name in _GRAMMARS:
        module_name, function = _GRAMMARS[name]
        return Language(getattr(importlib.import_module(module_name), function)())
    raise KeyError(f"no grammar for {name!r}")


def query_text(file_name: str) -> str:
    """The text of one bundled query file."""
    return resources.files("szrag").joinpath("queries", file_name).read_text(encoding="utf-8")


@functools.cache
def query(name: str) -> Query:
    """The compiled structure query of ``name``: its query files joined in order."""
    spec = LANGUAGES[name]
    return Query(grammar(name), "\n".join(query_text(file) for file in spec.query_files))


@functools.cache
def root_query(name: str) -> Query | None:
    """The compiled patterns of ``name`` rooted at the file's root node, if it has any."""
    spec = LANGUAGES[name]
    if not spec.root_query_files:
        return None
    return Query(grammar(name), "\n".join(query_text(file) for file in spec.root_query_files))


def parser(name: str) -> Parser:
    """A fresh parser for ``name`` (cheap; parsers are not shared between threads)."""
    return Parser(grammar(name))
