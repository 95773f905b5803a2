"""What the languages read from their queries alone (Go, Rust, Java, Ruby, PHP, C#) write as
literals: quoted strings, route registrations and the prefixes their controllers add.

The queries name the nodes (``@route.method``, ``@route.path``, ``@route.prefix``); the rules
here only read them, the same for every such language.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from szrag.code.model import Route
from szrag.code.syntax import text

_QUOTED = re.compile(
    r"""^(?:[rbf]?#*)?(?P<quote>\"\"\"|'''|["'`])(?P<value>.*)(?P=quote)#*$""", re.S
)
HTTP_METHODS = frozenset({"get", "post", "put", "patch", "delete", "options", "head"})
_ANY = frozenset({"handle", "handlefunc", "any", "request", "match", "all"})


def quoted_value(node: Node | None) -> str | None:
    """The text inside a string literal of any of these languages (``"x"``, ``'x'``,
    `` `x` ``, Rust's ``r#"x"#``), or None when it is not a plain literal (interpolation)."""
    if node is None:
        return None
    written = text(node)
    found = _QUOTED.match(written)
    if found is None:
        return None
    value = found.group("value")
    if "#{" in value or "${" in value or (found.group("quote") == '"' and "{$" in value):
        return None  # Ruby, PHP interpolation: not a literal path or name
    return value


def route_method(name: str) -> str | None:
    """The HTTP method a registration name stands for: ``GET``, ``HttpPost``, ``MapGet``,
    ``GetMapping``, ``get``; ``ANY`` for ``HandleFunc``, ``RequestMapping``, ``any``."""
    lowered = name.lower()
    for prefix in ("http", "map"):
        if lowered.startswith(prefix) and lowered[len(prefix) :] in HTTP_METHODS:
            lowered = lowered[len(prefix) :]
    lowered = lowered.removesuffix("mapping")
    if lowered in _ANY:
        return "ANY"
    return lowered.upper() if lowered in HTTP_METHODS else None


def join_route(prefix: str | None, path: str) -> str:
    """``/api`` + ``items`` -> ``/api/items``; every route starts with ``/``."""
    parts = [part.strip("/") for part in (prefix or "", path) if part and part.strip("/")]
    return "/" + "/".join(parts)


def literal_route(captures: dict[str, list[Node]], role: str) -> tuple[int, Route] | None:
    """``(byte offset, route)`` of a ``route.literal`` match, or None when it is none."""
    node = captures[role][0]
    method_node = captures.get("route.method", [None])[0]
    method = route_method(text(method_node)) if method_node is not None else None
    path_nodes = captures.get("route.path")
    path = quoted_value(path_nodes[0]) if path_nodes else ""
    if method is None or path is None:
        return None
    if path_nodes and not path.startswith("/") and "://" in path:
        return None  # a client call with a whole URL, not a registration
    handler_nodes = captures.get("route.handler")
    handler = text(handler_nodes[0]) if handler_nodes else None
    if handler is not None and (len(handler) > 80 or "\n" in handler):
        handler = None  # an inline closure
    line = node.start_point[0] + 1
    return node.start_byte, Route(method, join_route(None, path), line, handler)


def route_prefix(captures: dict[str, list[Node]], role: str) -> tuple[int, int, str] | None:
    """``(start, end, prefix)`` of a controller that prefixes the routes inside it; ASP.NET's
    ``[controller]`` token becomes the controller's name without ``Controller``."""
    scope = captures[role][0]
    prefix = quoted_value(captures.get("route.prefix", [None])[0])
    if prefix is None:
        return None
    if "[controller]" in prefix:
        name = scope.child_by_field_name("name")
        if name is not None:
            prefix = prefix.replace("[controller]", text(name).removesuffix("Controller"))
    return scope.start_byte, scope.end_byte, prefix


def apply_prefixes(
    routes: list[tuple[int, Route]], prefixes: list[tuple[int, int, str]]
) -> list[Route]:
    """Each route under the innermost prefix that encloses it."""
    result = []
    for at, route in sorted(routes, key=lambda item: item[0]):
        enclosing = [scope for scope in prefixes if scope[0] <= at < scope[1]]
        if enclosing:
            prefix = max(enclosing, key=lambda scope: scope[0])[2]
            route = Route(route.method, join_route(prefix, route.path), route.line, route.handler)
        result.append(route)
    return result
