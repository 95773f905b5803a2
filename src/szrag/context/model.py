"""Records of the codebase context: the files chosen for a question and why."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from szrag.base.public import public, public_dict
from szrag.code.model import EnvReference, RouteMatch, SymbolMatch
from szrag.rank.retrieve import Source

_HIDDEN = public(hidden=True)

DIRECT = "direct"
DEPENDENCY = "dependency"
DEPENDANT = "dependant"
MAX_SUMMARY_ITEMS = 20  # per list in the structural summary


@dataclass(frozen=True, slots=True)
class CodeEntry:
    """One selected file's structure, with the source of its matching symbols; shown
    without its text (:class:`ShownEntry` adds it)."""

    path: str
    score: int
    relation: str  # direct, dependency or dependant
    symbols: tuple[str, ...]
    text: str = field(metadata=_HIDDEN)
    # the matched symbols' lines alone (empty without symbols)
    symbol_source: str = field(default="", metadata=_HIDDEN)
    # the same lines as the units the file is cut into (profiles that answer with units)
    symbol_units: tuple[Source, ...] = field(default=(), metadata=_HIDDEN)
    structure: str = field(default="", metadata=_HIDDEN)  # the file's structure listing alone
    # the direct file a dependency or dependant was reached from
    via: str | None = field(default=None, metadata=_HIDDEN)
    connects: tuple[str, ...] = field(default=(), metadata=_HIDDEN)  # what ties it to ``via``


@dataclass(frozen=True, slots=True)
class ShownEntry:
    """A code entry with its text, as a codebase context shows it in full."""

    entry: CodeEntry = field(metadata=public(spread=True))
    text: str


@dataclass(frozen=True, slots=True)
class LocatedSymbol:
    """A symbol match with its ``path:line-endLine`` place, as a codebase context lists it."""

    symbol: SymbolMatch = field(metadata=public(spread=True))
    location: str


@dataclass(frozen=True, slots=True)
class ContextCounts:
    """How many of each kind of finding a codebase context holds."""

    symbols: int
    routes: int
    files: int
    dependencies: int
    dependants: int
    environment_variables: int
    code_contexts: int


@dataclass(frozen=True, slots=True)
class ContextSummary:
    """A codebase context as it is shown: its findings, file groups, per-file scores and
    counts; in full (``to_dict``) also each code entry's text and the structural summary."""

    symbols: tuple[LocatedSymbol, ...]
    routes: tuple[RouteMatch, ...]
    files: tuple[str, ...]
    dependencies: tuple[str, ...]
    dependants: tuple[str, ...]
    environment_variables: tuple[EnvReference, ...]
    code_contexts: tuple[CodeEntry | ShownEntry, ...]
    direct_files: tuple[str, ...]
    related_files: tuple[str, ...]
    scores: Mapping[str, int]
    counts: ContextCounts
    structure: str | None = field(default=None, metadata=public(omit_none=True))


@dataclass(frozen=True, slots=True)
class CodebaseContext:
    """What the structure graph adds to the retrieved sources for one question."""

    symbols: Sequence[SymbolMatch] = ()  # a SymbolMatches when built for a question
    routes: tuple[RouteMatch, ...] = ()
    files: tuple[str, ...] = ()  # every selected file, best score first
    dependencies: tuple[str, ...] = ()
    dependants: tuple[str, ...] = ()
    environment_variables: tuple[EnvReference, ...] = ()
    code: tuple[CodeEntry, ...] = ()
    direct_files: tuple[str, ...] = ()
    related_files: tuple[str, ...] = ()
    scores: Mapping[str, int] = field(default_factory=dict)
    # the found files' next best units, for a context with room after the sources
    more_sources: tuple[Source, ...] = ()

    def structure_text(self) -> str:
        """The structural summary: symbols, routes, dependencies, dependants, variables."""
        sections = [
            _section(
                "RELEVANT SYMBOLS",
                (
                    f"{item.name} ({item.kind}) in {item.file}:{item.line}-{item.end_line}"
                    for item in self.symbols
                ),
            ),
            _section(
                "RELEVANT ROUTES",
                (
                    f"{item.method} {item.path} in {item.file}:{item.line}"
                    + (f" (handler {item.handler})" if item.handler else "")
                    for item in self.routes
                ),
            ),
            _section("DEPENDENCIES", self.dependencies),
            _section("DEPENDANTS", self.dependants),
            _section(
                "ENVIRONMENT VARIABLES",
                (f"{item.name} in {item.file}:{item.line}" for item in self.environment_variables),
            ),
        ]
        body = "\n\n".join(section for section in sections if section)
        return f"CODEBASE STRUCTURE\n\n{body}" if body else ""

    def counted(self) -> ContextCounts:
        """How many of each kind of finding, as the original's activity event reports them."""
        return ContextCounts(
            symbols=len(self.symbols),
            routes=len(self.routes),
            files=len(self.files),
            dependencies=len(self.dependencies),
            dependants=len(self.dependants),
            environment_variables=len(self.environment_variables),
            code_contexts=len(self.code),
        )

    def counts(self) -> dict[str, int]:
        """The counts in their public form."""
        return public_dict(self.counted())

    def summary(self, *, full: bool = False) -> ContextSummary:
        """The context as it is shown: ``full`` adds each code entry's text and the
        structural summary."""
        return ContextSummary(
            symbols=tuple(
                LocatedSymbol(item, f"{item.file}:{item.line}-{item.end_line}")
                for item in self.symbols
            ),
            routes=self.routes,
            files=self.files,
            dependencies=self.dependencies,
            dependants=self.dependants,
            environment_variables=self.environment_variables,
            code_contexts=tuple(ShownEntry(entry, entry.text) for entry in self.code)
            if full
            else self.code,
            direct_files=self.direct_files,
            related_files=self.related_files,
            scores=self.scores,
            counts=self.counted(),
            structure=self.structure_text() if full else None,
        )

    def metadata(self) -> dict[str, Any]:
        """The context metadata in its public form: findings, file groups, per-file scores
        and counts."""
        return public_dict(self.summary())

    def public_view(self) -> ContextSummary:
        """The metadata plus the text of every code entry and the structural summary."""
        return self.summary(full=True)

    def to_dict(self) -> dict[str, Any]:
        """The public form (:meth:`public_view`)."""
        return public_dict(self)


def _section(title: str, lines: Iterable[str]) -> str:
    items = [f"- {line}" for line in islice(lines, MAX_SUMMARY_ITEMS)]
    return f"{title}:\n" + "\n".join(items) if items else ""
