"""Which files are code, and the tree-sitter grammar and queries of each language.

Grammars and compiled queries are built on first use and kept for the life of the process:
index builds parse in worker processes, and each worker pays the compile cost once. A
process that parses a few files (a refresh) first compiles only the patterns its file could
match (``query``): TypeScript's whole query takes 0.3 s to compile, and a file that reads no
environment variable and compares no pathname needs about a third to two thirds of it.
"""

from __future__ import annotations

import functools
import importlib
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from tree_sitter import Language, Node, Parser, Query

from szrag.base.text import extensions_of
from szrag.code.patterns import Pattern, split_patterns


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
    "kotlin": LanguageSpec("kotlin", "literal", ("kotlin-structure.scm",)),
    "swift": LanguageSpec("swift", "literal", ("swift-structure.scm",)),
    "c": LanguageSpec("c", "literal", ("c-structure.scm",)),
    "cpp": LanguageSpec("cpp", "literal", ("c-structure.scm", "cpp-structure.scm")),
}

# The official grammar wheels: (module, the function that returns its language)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "swift": ("tree_sitter_swift", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
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
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    # C's and C++'s as files are typed; a .h header is C++ by what it holds (language_of_source)
    **extensions_of("c", "cpp"),
}

# what only C++ writes: a header holding any of it is parsed as C++, any other as C (whose
# code may name a variable ``new`` or ``class``, which the C++ grammar cannot read; the
# ``extern "C"`` guard of a C header is C's too)
_CPP_HEADER = re.compile(
    r"^\s*(class|namespace|template|using)\b|\w::\w|^\s*(public|private|protected)\s*:"
    r"|\benum\s+class\b|\b(noexcept|constexpr|nullptr)\b|^\s*#\s*include\s*<\w+>",
    re.MULTILINE,
)


def language_of(path: str) -> str | None:
    """The language of a repository path by its extension, or None when it is not code."""
    return EXTENSIONS.get(PurePosixPath(path).suffix.lower())


def language_of_source(path: str, source: str) -> str | None:
    """The language of a file by its extension and, for a C header, what it holds."""
    name = language_of(path)
    if name == "c" and path.lower().endswith(".h") and _CPP_HEADER.search(source):
        return "cpp"
    return name


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


# beside the package's modules, as setuptools installs its package data; read by path, since
# importlib.resources costs about 10 ms to import in every process that parses a file
_QUERIES = Path(__file__).resolve().parent.parent / "queries"


def query_text(file_name: str) -> str:
    """The text of one bundled query file."""
    return (_QUERIES / file_name).read_text(encoding="utf-8")


STRUCTURE = "structure"
ROOT = "root"
_QueryKey = tuple[str, str]  # (language, STRUCTURE or ROOT)


@functools.cache
def _query_source(key: _QueryKey) -> str:
    spec = LANGUAGES[key[0]]
    files = spec.query_files if key[1] == STRUCTURE else spec.root_query_files
    return "\n".join(query_text(file) for file in files)


@functools.cache
def _patterns(key: _QueryKey) -> tuple[Pattern, ...]:
    return split_patterns(_query_source(key))


_queries_lock = threading.Lock()
_whole_queries: dict[_QueryKey, Query] = {}
_partial_queries: dict[_QueryKey, tuple[frozenset[int], Query]] = {}  # what each leaves out
_whole_only: set[str] = set()  # languages whose whole queries are compiled at once


def compile_whole_queries(names: Iterable[str] | None = None) -> None:
    """From now on, compile the whole queries of these languages (default: all): for a
    process that parses many files of one (a build's worker), where files needing different
    patterns would cost a partial query and then the whole one."""
    with _queries_lock:
        _whole_only.update(LANGUAGES if names is None else names)


def forget_queries() -> None:
    """Drop the compiled queries and compile as a fresh process would (tests)."""
    with _queries_lock:
        _whole_queries.clear()
        _partial_queries.clear()
        _whole_only.clear()


def query(name: str, source: bytes | None = None, root: Node | None = None) -> Query:
    """The compiled structure query of ``name``: its query files joined in order.

    With ``source`` and ``root`` (the file it will match and its tree), the first query a
    process compiles for ``name`` leaves out the patterns that cannot match there
    (``patterns.py``): a refresh that parses one file compiles only what it needs. A later
    file that needs a pattern left out gets the whole query, and every file after it too.
    """
    return _compiled((name, STRUCTURE), source, root)


def root_query(name: str, source: bytes | None = None, root: Node | None = None) -> Query | None:
    """The compiled patterns of ``name`` rooted at the file's root node, if it has any
    (``source`` and ``root`` as for ``query``)."""
    if not LANGUAGES[name].root_query_files:
        return None
    return _compiled((name, ROOT), source, root)


def _compiled(key: _QueryKey, source: bytes | None, root: Node | None) -> Query:
    whole = _whole_queries.get(key)
    if whole is not None:  # read without the lock: a query once compiled stays
        return whole
    left_out: frozenset[int] | None = None
    if source is not None and root is not None and key[0] not in _whole_only:
        holds = _node_texts(source, root)
        left_out = frozenset(
            place for place, pattern in enumerate(_patterns(key)) if not pattern.possible(holds)
        )
    with _queries_lock:
        whole = _whole_queries.get(key)
        if whole is not None:
            return whole
        if left_out is not None:
            partial = _partial_queries.get(key)
            if partial is not None and partial[0] <= left_out:
                return partial[1]  # it holds every pattern this file could match
            if partial is None and left_out:
                kept = (
                    pattern.text
                    for place, pattern in enumerate(_patterns(key))
                    if place not in left_out
                )
                compiled = Query(grammar(key[0]), "\n".join(kept))
                _partial_queries[key] = (left_out, compiled)
                return compiled
        whole = _whole_queries[key] = Query(grammar(key[0]), _query_source(key))
        _partial_queries.pop(key, None)
        return whole


def _node_texts(source: bytes, root: Node) -> Callable[[bytes], bool]:
    """Whether some node of the tree ``root`` (of ``source``) has a literal as its text."""
    found: dict[bytes, bool] = {}

    def holds(literal: bytes) -> bool:
        if literal not in found:
            found[literal] = _spans_a_node(source, root, literal)
        return found[literal]

    return holds


# occurrences of a literal tried against the tree before it is taken as held: each costs a
# descent from the root, and a word inside many longer ones ("all" in "call") is rarely a node
MAX_TRIED_OCCURRENCES = 64


def _spans_a_node(source: bytes, root: Node, literal: bytes) -> bool:
    # the deepest node around an occurrence spans it exactly when any node does
    start = source.find(literal)
    for _ in range(MAX_TRIED_OCCURRENCES):
        if start < 0:
            return False
        end = start + len(literal)
        node = root.descendant_for_byte_range(start, end)
        if node is not None and node.start_byte == start and node.end_byte == end:
            return True
        start = source.find(literal, start + 1)
    return start >= 0  # more occurrences than were tried: held, to be safe


def parser(name: str) -> Parser:
    """A fresh parser for ``name`` (cheap; parsers are not shared between threads)."""
    return Parser(grammar(name))
