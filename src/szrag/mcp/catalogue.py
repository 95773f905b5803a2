"""The code tools an MCP client sees: each one's strict input schema and the library call it
makes. The eight live tools come from ``szrag.tools`` unchanged (same schemas, adapter,
timeout, sanitising, size cap and command policy as the model's tool loop).

Every runner is synchronous (SQLite reads): the server calls it in a worker thread and gives
it the shared index and the host. Results are public JSON (camelCase); source text and packed
context are redacted like everywhere else.

One convention for an MCP client: every tool name is snake_case (the live tools keep their
spec names, ``getStatus`` and the rest, for the model's own tool loop, and are listed here as
``get_status``...; the spec name is still accepted in a call), and the text a tool searches by
is ``question`` wherever a tool takes one (``query``, the name ``find_symbols`` and
``find_routes`` once took, is still accepted).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from szrag.base.public import to_public
from szrag.context.assemble import assemble_context
from szrag.index.protocol import IndexStore
from szrag.rank.retrieve import MAX_QUESTION_CHARS
from szrag.service.host import Host
from szrag.service.service import Service
from szrag.structure.queries import (
    all_routes,
    find_environment_variable,
    find_routes,
    get_dependants,
    get_dependencies,
    indexed_path,
)
from szrag.tools.code import (
    MAX_READ_LINES,
    READ_LINES,
    read_code,
    references_to,
    search_code,
    symbols_matching,
)
from szrag.tools.schema import count_schema, object_schema, text_schema

Runner = Callable[[IndexStore, Host, Mapping[str, Any]], Any]

DEFAULT_SOURCES = 8
MAX_SOURCES = 20
DEFAULT_MATCHES = 20
MAX_MATCHES = 200
MIN_BUDGET = 500
MAX_BUDGET = 200_000


@dataclass(frozen=True, slots=True)
class CodeTool:
    """One repository tool: its name, what it is for, its JSON Schema and its runner."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Runner
    # whether it reads the views built once per index generation (code records, file lists):
    # a call made while the start-up thread builds them waits for it instead of racing it
    needs_views: bool = True
    # argument names still accepted for a listed one (old name -> listed name)
    aliases: Mapping[str, str] = field(default_factory=dict)

    def arguments(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` with any alias renamed to the argument it stands for (unless both are
        given: the schema then names the alias as unexpected)."""
        args = dict(given)
        for alias, name in self.aliases.items():
            if alias in args and name not in args:
                args[name] = args.pop(alias)
        return args


def mcp_tool_name(spec_name: str) -> str:
    """The snake_case name an MCP client sees for a live tool (``getReleaseInfo`` ->
    ``get_release_info``)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", spec_name).lower()


_QUESTION = text_schema("A question or keywords about the repository", MAX_QUESTION_CHARS)
_PATH = text_schema("A file's path relative to the repository root, e.g. src/app/server.py", 1000)


def _search_code(index: IndexStore, host: Host, args: Mapping[str, Any]) -> Any:
    return search_code(index, args["question"], args.get("limit", DEFAULT_SOURCES))


def _get_context(index: IndexStore, host: Host, args: Mapping[str, Any]) -> Any:
    plan = host.plan(budget=args.get("budget"))
    found = assemble_context(
        args["question"], index, limit=args.get("limit", DEFAULT_SOURCES), plan=plan
    )
    return found.to_dict(args["question"])


def _find_symbols(index: IndexStore, host: Host, args: Mapping[str, Any]) -> Any:
    return symbols_matching(index, args["question"], args.get("limit", DEFAULT_MATCHES))


def _find_references(index: IndexStore, host: Host, args: Mapping[str, Any]) -> Any:
    return references_to(index, args["name"], args.get("limit", DEFAULT_MATCHES))


def _read_code(index: IndexStore, host: Host, args: Mapping[str, Any]) -> Any:
    return to_public(
        read_code(index, args["path"], args.get("start_line", 1), args.get("end_line"))
    )


def _find_routes(index: IndexStore, host: Host, args: Mapping[str, Any]) -> Any:
    question = args.get("question")
    matches = find_routes(question, index) if question else all_routes(index)
    method = str(args.get("method", "")).upper()
    if method:
        matches = [match for match in matches if match.method.upper() in (method, "ALL")]
    return {"routes": to_public(matches[: args.get("limit", DEFAULT_MATCHES)])}


def _get_dependencies(index: IndexStore, host: Host, args: Mapping[str, Any]) -> Any:
    path = indexed_path(args["path"], index)
    return {"path": path, "dependencies": get_dependencies(path, index)}


def _get_dependants(index: IndexStore, host: Host, args: Mapping[str, Any]) -> Any:
    path = indexed_path(args["path"], index)
    return {"path": path, "dependants": get_dependants(path, index)}


def _find_environment_variable(index: IndexStore, host: Host, args: Mapping[str, Any]) -> Any:
    name = args["name"]
    return {"name": name, "references": to_public(find_environment_variable(name, index))}


CODE_TOOLS: tuple[CodeTool, ...] = (
    CodeTool(
        "search_code",
        "Search the repository: the files that best answer a question, best first, each with "
        "its best units, a function, a class's own lines or a section (path, start and end "
        "line, heading, text with secrets redacted, score).",
        object_schema(
            {
                "question": _QUESTION,
                "limit": count_schema(DEFAULT_SOURCES, MAX_SOURCES, "How many sources at most"),
            },
            ("question",),
        ),
        _search_code,
        needs_views=False,
    ),
    CodeTool(
        "get_context",
        "The repository context a model would receive for a question: retrieved passages, "
        "the symbols, routes, dependencies and environment variables around them, packed "
        "into a token budget and redacted; with the files and chunks it holds.",
        object_schema(
            {
                "question": _QUESTION,
                "budget": {
                    "type": "integer",
                    "minimum": MIN_BUDGET,
                    "maximum": MAX_BUDGET,
                    "description": "Token budget (default: the repository's configured one)",
                },
                "limit": count_schema(DEFAULT_SOURCES, MAX_SOURCES, "How many sources at most"),
            },
            ("question",),
        ),
        _get_context,
    ),
    CodeTool(
        "find_symbols",
        "The functions, classes and methods whose names best match a question or a name "
        "(path, name, kind, line and endLine, score).",
        object_schema(
            {
                "question": text_schema("A symbol name or a question, e.g. Blueprint.register"),
                "limit": count_schema(DEFAULT_MATCHES, MAX_MATCHES, "How many symbols at most"),
            },
            ("question",),
        ),
        _find_symbols,
        aliases={"query": "question"},
    ),
    CodeTool(
        "find_references",
        "Where a function, method or class is called: path, line, the definition each call "
        "sits in (caller) and the line of code, secrets redacted; for a name called and "
        "defined nowhere, didYouMean lists the defined names one letter away.",
        object_schema(
            {
                "name": text_schema("The name called, e.g. build_auth_header or Client.send", 200),
                "limit": count_schema(DEFAULT_MATCHES, MAX_MATCHES, "How many call sites at most"),
            },
            ("name",),
        ),
        _find_references,
    ),
    CodeTool(
        "read_code",
        "Lines of an indexed file by number, e.g. the rest of a function a search shows in "
        f"part: numbered, at most {MAX_READ_LINES} a call ({READ_LINES} from start_line "
        "without end_line), secrets redacted; moreLines says whether the file goes on.",
        object_schema(
            {
                "path": _PATH,
                "start_line": {"type": "integer", "minimum": 1, "description": "First line"},
                "end_line": {"type": "integer", "minimum": 1, "description": "Last line"},
            },
            ("path",),
        ),
        _read_code,
        needs_views=False,
    ),
    CodeTool(
        "find_routes",
        "The HTTP routes the code serves (method, route: the URL path, path: the file, line, "
        "handler); those matching the question when one is given, else all of them.",
        object_schema(
            {
                "question": text_schema("A route, handler or question, e.g. POST /api/report"),
                "method": text_schema("Only this HTTP method, e.g. GET", 10),
                "limit": count_schema(DEFAULT_MATCHES, MAX_MATCHES, "How many routes at most"),
            }
        ),
        _find_routes,
        aliases={"query": "question"},
    ),
    CodeTool(
        "get_dependencies",
        "The indexed files a file imports or refers to.",
        object_schema({"path": _PATH}, ("path",)),
        _get_dependencies,
    ),
    CodeTool(
        "get_dependants",
        "The indexed files that import a file.",
        object_schema({"path": _PATH}, ("path",)),
        _get_dependants,
    ),
    CodeTool(
        "find_environment_variable",
        "Where the code reads an environment variable (any case): path and line of each read.",
        object_schema(
            {
                "name": {
                    "type": "string",
                    "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,127}$",
                    "description": "The variable's name, e.g. DATABASE_URL",
                }
            },
            ("name",),
        ),
        _find_environment_variable,
    ),
)

CODE_TOOLS_BY_NAME: dict[str, CodeTool] = {tool.name: tool for tool in CODE_TOOLS}

# Several repositories: every code tool takes ``repository``; these two search by a question,
# so without one their question is routed (the others ask the first repository), and
# search_code naming none searches them all (``search_everywhere``).
REPOSITORY = "repository"
ROUTED_TOOLS = frozenset({"search_code", "get_context"})
SEARCH_EVERYWHERE = "search_code"


def search_everywhere(service: Service, args: Mapping[str, Any]) -> dict[str, Any]:
    """``search_code`` naming no repository of several: the best files of every repository
    on one scale, each source naming its ``repository``; the result's ``repository`` is the
    one the question is routed to (the best file's)."""
    question = args["question"]
    routed = service.route(question, args.get("limit", DEFAULT_SOURCES))
    return {
        REPOSITORY: routed.repository,
        "question": question,
        "sources": [to_public(item.redacted()) for item in routed.merged],
    }


def with_repository(parameters: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """A tool's schema with the optional ``repository`` argument: one of ``names`` (an enum
    when there are several)."""
    choice: dict[str, Any] = {
        "type": "string",
        "description": "The repository to ask (default: the first, "
        f"{names[0]}; search_code naming none searches every repository, get_context routes"
        " its question)",
    }
    if len(names) > 1:
        choice["enum"] = list(names)
    properties = {**parameters["properties"], REPOSITORY: choice}
    return {**parameters, "properties": properties}
