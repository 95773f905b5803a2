"""Records of the codebase context: the files chosen for a question and why."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from szrag.code.model import EnvReference, RouteMatch, SymbolMatch
from szrag.rank.retrieve import Source

DIRECT = "direct"
DEPENDENCY = "dependency"
DEPENDANT = "dependant"
MAX_SUMMARY_ITEMS = 20  # per list in the structural summary


@dataclass(frozen=True, slots=True)
class CodeEntry:
    """One selected file's structure, with the source of its matching symbols."""

    path: str
    score: int
    relation: str  # direct, dependency or dependant
    symbols: tuple[str, ...]
    text: str
    symbol_source: str = ""  # the matched symbols' lines alone (empty without symbols)
    structure: str = ""  # the file's structure listing alone
    via: str | None = None  # the direct file a dependency or dependant was reached from
    connects: tuple[str, ...] = ()  # the names that tie it to ``via``

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form without the text."""
        return {
            "path": self.path,
            "score": self.score,
            "relation": self.relation,
            "symbols": list(self.symbols),
        }


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

    def counts(self) -> dict[str, int]:
        """How many of each kind of finding, as the original's activity event reports them."""
        return {
            "symbols": len(self.symbols),
            "routes": len(self.routes),
            "files": len(self.files),
            "dependencies": len(self.dependencies),
            "dependants": len(self.dependants),
            "environmentVariables": len(self.environment_variables),
            "codeContexts": len(self.code),
        }

    def metadata(self) -> dict[str, Any]:
        """The context metadata: findings, file groups, per-file scores and counts."""
        return {
            "symbols": [
                {**item.to_dict(), "location": f"{item.file}:{item.line}-{item.end_line}"}
                for item in self.symbols
            ],
            "routes": [item.to_dict() for item in self.routes],
            "files": list(self.files),
            "dependencies": list(self.dependencies),
            "dependants": list(self.dependants),
            "environmentVariables": [item.to_dict() for item in self.environment_variables],
            "codeContexts": [entry.to_dict() for entry in self.code],
            "directFiles": list(self.direct_files),
            "relatedFiles": list(self.related_files),
            "scores": dict(self.scores),
            "counts": self.counts(),
        }

    def to_dict(self) -> dict[str, Any]:
        """The metadata plus the text of every code entry and the structural summary."""
        data = self.metadata()
        for item, entry in zip(data["codeContexts"], self.code, strict=True):
            item["text"] = entry.text
        data["structure"] = self.structure_text()
        return data


def _section(title: str, lines: Iterable[str]) -> str:
    items = [f"- {line}" for line in islice(lines, MAX_SUMMARY_ITEMS)]
    return f"{title}:\n" + "\n".join(items) if items else ""
