"""Questions over an open index about the code's structure: which definitions, routes,
references and environment variables a question names, a file's dependencies and dependants,
and one file's code context.

``queries`` reads the code records and edges the index stores; ``context`` puts one file's
structure and named definitions together. The scores are ``szrag.code.scoring``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from szrag.base.lazy import lazy_getattr

if TYPE_CHECKING:
    from szrag.structure.context import get_code_context
    from szrag.structure.queries import (
        find_environment_variable,
        find_references,
        find_routes,
        find_symbols,
        get_dependants,
        get_dependencies,
        references_report,
    )

_HOMES = {
    "find_environment_variable": "szrag.structure.queries",
    "find_references": "szrag.structure.queries",
    "find_routes": "szrag.structure.queries",
    "find_symbols": "szrag.structure.queries",
    "get_code_context": "szrag.structure.context",
    "get_dependants": "szrag.structure.queries",
    "get_dependencies": "szrag.structure.queries",
    "references_report": "szrag.structure.queries",
}

__getattr__ = lazy_getattr(__name__, _HOMES)

__all__ = [
    "find_environment_variable",
    "find_references",
    "find_routes",
    "find_symbols",
    "get_code_context",
    "get_dependants",
    "get_dependencies",
    "references_report",
]
