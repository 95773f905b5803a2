"""HTTP routes from route-registration calls, ``url.pathname`` checks and Python decorators.

The query finds the candidates; the rules that need a look around the tree live here:
which objects are routers, ``.route(path).get().post()`` chains, and the keyword arguments
of Flask, FastAPI and Django registrations. ``url.pathname`` checks are in ``pathname``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from szrag.code import pathname
from szrag.code.model import Route
from szrag.code.modules import python_binding
from szrag.code.mounts import join_prefix
from szrag.code.syntax import (
    arguments_of,
    callee_name,
    dotted_name,
    first_capture,
    is_call,
    keyword_argument,
    line,
    member_parts,
    positional,
    string_value,
    text,
)

Captures = dict[str, list[Node]]

ROLES = (
    "route",
    "route.chain",
    "route.pathname",
    "route.decorated",
    "route.rule",
    "route.mount",
    "route.django",
)
HTTP_METHODS = frozenset({"get", "post", "put", "patch", "delete", "all", "options", "head"})
_ROUTER_NAME = re.compile(r"(app|router|routes|server|api)$", re.IGNORECASE)


def routes_of(captures: Captures, role: str) -> list[Route]:
    """The routes one query match stands for (none when a rule rejects the candidate)."""
    node = captures[role][0]
    if role == "route":
        return _registration(node, captures)
    if role == "route.chain":
        return list(_chain(node, captures))
    if role == "route.pathname":
        return pathname.routes_of_check(node, captures)
    if role == "route.decorated":
        return _decorated(captures)
    if role == "route.rule":
        return _url_rule(node)
    if role == "route.mount":
        return _mount(node, captures)
    return _django(node, captures)


def is_route_path(path: str | None) -> bool:
    """True for what an Express-style router accepts as a literal path."""
    return path is not None and (path.startswith("/") or path == "*")


def is_router(obj: Node | None) -> bool:
    """True when a call's object looks like an app or router (``app``, ``apiRouter`` ...)."""
    name = dotted_name(obj)
    return name is not None and _ROUTER_NAME.search(name.rsplit(".", 1)[-1]) is not None


def handler_name(node: Node | None) -> str | None:
    """The name of a route handler argument: ``handler``, ``auth.check``, a named function."""
    if node is None:
        return None
    if node.type in ("function_expression", "function", "function_declaration"):
        name = node.child_by_field_name("name")
        return text(name) if name is not None else None
    if is_call(node):
        function = node.child_by_field_name("function")
        return callee_name(function) if function is not None else None
    return dotted_name(node)


# ---- JavaScript ---------------------------------------------------------------------------


def _registration(call: Node, captures: Captures) -> list[Route]:
    method = first_capture(captures, "route.method")
    path = string_value(first_capture(captures, "route.path"))
    args = arguments_of(call)
    # app.get("port") reads a setting: a route has a path and at least one handler.
    if method is None or not is_route_path(path) or len(args) < 2:
        return []
    if not is_router(first_capture(captures, "route.object")):
        return []
    assert path is not None
    return [Route(text(method).upper(), path, line(call), handler_name(args[-1]))]


def _chain(route_call: Node, captures: Captures) -> Iterator[Route]:
    """router.route("/x").get(a).post(b): one route per chained method."""
    path = string_value(first_capture(captures, "route.path"))
    if not is_route_path(path):
        return
    assert path is not None
    current = route_call
    while True:
        member = current.parent
        call = member.parent if member is not None else None
        if member is None or call is None or call.type != "call_expression":
            return
        obj, method = member_parts(member)
        if obj is None or obj.id != current.id or method not in HTTP_METHODS:
            return
        args = arguments_of(call)
        property_node = member.child_by_field_name("property")
        at = line(property_node) if property_node is not None else line(call)
        yield Route(method.upper(), path, at, handler_name(args[-1]) if args else None)
        current = call


# ---- Python -------------------------------------------------------------------------------


def _string_list(node: Node | None) -> list[str]:
    if node is None or node.type not in ("list", "tuple", "set"):
        return []
    return [value.upper() for item in node.named_children if (value := string_value(item))]


def _decorated(captures: Captures) -> list[Route]:
    method = first_capture(captures, "route.method")
    handler = first_capture(captures, "route.handler")
    args_node = first_capture(captures, "route.args")
    if method is None or args_node is None:
        return []
    args = [child for child in args_node.named_children if child.type != "comment"]
    given = positional(args)
    path = string_value(given[0]) if given else None
    if path is None:
        path = string_value(keyword_argument(args, "path") or keyword_argument(args, "rule"))
    # FastAPI allows "" under a router prefix; anything else must be an absolute path.
    if path is None or not (path == "" or path.startswith("/")):
        return []
    name = text(method)
    methods = (
        _string_list(keyword_argument(args, "methods")) or ["GET"]
        if name in ("route", "api_route")
        else [name.upper()]
    )
    owner = first_capture(captures, "route.object")
    prefix = router_prefix(owner) if owner is not None else ""
    at = line(method)
    handler_text = text(handler) if handler is not None else None
    joined, scope = join_prefix(prefix, path), scope_of(method)
    return [
        Route(item, joined, at, handler_text, dotted_name(owner), prefix, scope=scope)
        for item in methods
    ]


def scope_of(node: Node) -> int:
    """The line of the function ``node`` stands in, 0 at the top of the module."""
    current = node.parent
    while current is not None:
        if current.type == "function_definition":
            return line(current)
        current = current.parent
    return 0


def call_owner(call: Node) -> Node | None:
    """The object a method is called on: ``app`` of ``app.register_blueprint(...)``."""
    function = call.child_by_field_name("function")
    return function.child_by_field_name("object") if function is not None else None


_ROUTER_FACTORIES = frozenset({"Blueprint", "APIRouter"})


def router_prefix(owner: Node) -> str:
    """The prefix a Flask ``Blueprint(url_prefix=...)`` or FastAPI ``APIRouter(prefix=...)``
    assigned to the decorator's object at the top of the module gives its routes ("" when
    there is none, or it is not a literal)."""
    name = text(owner)
    module = owner
    while module.parent is not None:
        module = module.parent
    for statement in module.named_children:
        if statement.type != "expression_statement" or not statement.named_children:
            continue
        assignment = statement.named_children[0]
        if assignment.type != "assignment":
            continue
        left = assignment.child_by_field_name("left")
        right = assignment.child_by_field_name("right")
        if left is None or right is None or text(left) != name or not is_call(right):
            continue
        factory = dotted_name(right.child_by_field_name("function")) or ""
        if factory.rsplit(".", 1)[-1] not in _ROUTER_FACTORIES:
            continue
        args = arguments_of(right)
        prefix = string_value(
            keyword_argument(args, "url_prefix") or keyword_argument(args, "prefix")
        )
        return prefix if prefix and prefix.startswith("/") else ""
    return ""


def _url_rule(call: Node) -> list[Route]:
    """Flask: app.add_url_rule("/x", "endpoint", view, methods=[...])."""
    args = arguments_of(call)
    given = positional(args)
    path = string_value(given[0]) if given else string_value(keyword_argument(args, "rule"))
    if not is_route_path(path):
        return []
    assert path is not None
    view = keyword_argument(args, "view_func") or (given[2] if len(given) > 2 else None)
    endpoint = string_value(given[1]) if len(given) > 1 else None
    handler = handler_name(view) or endpoint
    methods = _string_list(keyword_argument(args, "methods")) or ["GET"]
    owner = call_owner(call)
    prefix = router_prefix(owner) if owner is not None else ""
    return [
        Route(
            method,
            join_prefix(prefix, path),
            line(call),
            handler,
            dotted_name(owner),
            prefix,
            scope=scope_of(call),
        )
        for method in methods
    ]


def _mount(call: Node, captures: Captures) -> list[Route]:
    """include_router(prefix=), register_blueprint(url_prefix=), mount(path, app): USE."""
    method = first_capture(captures, "route.method")
    args = arguments_of(call)
    given = positional(args)
    kind = text(method) if method is not None else ""
    if kind == "mount":
        path = string_value(given[0]) if given else None
        target = given[1] if len(given) > 1 else keyword_argument(args, "app")
    else:
        path = string_value(
            keyword_argument(args, "prefix" if kind == "include_router" else "url_prefix")
        )
        target = given[0] if given else None
    if not is_route_path(path):
        return []
    assert path is not None
    owner = call_owner(call)
    prefix = router_prefix(owner) if owner is not None else ""  # a blueprint in a blueprint
    return [
        Route(
            "USE",
            join_prefix(prefix, path),
            line(call),
            handler_name(target),
            dotted_name(owner),
            prefix,
            target=mount_target(call, target),
            mounted_with=kind,
            scope=scope_of(call),
        )
    ]


def mount_target(call: Node, target: Node | None) -> str | None:
    """Where a mounted router or application is defined, as ``module:name`` read through the
    imports in scope: ``auth.bp`` after ``from . import auth`` is ``.:auth.bp``, ``router``
    after ``from .api import router`` is ``.api:router``, a name no import binds is the
    file's own (``:bp``). None for anything but a name (``StaticFiles(...)``)."""
    if target is None or target.type not in ("identifier", "attribute"):
        return None
    written = dotted_name(target)
    if written is None:
        return None
    head, _, rest = written.partition(".")
    scope = call.parent
    while scope is not None:
        for statement in scope.named_children:
            if statement.type in ("import_statement", "import_from_statement"):
                bound = python_binding(statement, head)
                if bound is not None:
                    module, name = bound
                    attribute = ".".join(part for part in (name, rest) if part)
                    return f"{module}:{attribute}" if attribute else None
        scope = scope.parent
    return f":{written}"


def _django(call: Node, captures: Captures) -> list[Route]:
    """path("users/<int:pk>/", view) / re_path(...); include("app.urls") mounts."""
    path = string_value(first_capture(captures, "route.path"))
    view = first_capture(captures, "route.view")
    if path is None or view is None:
        return []
    function = view.child_by_field_name("function") if is_call(view) else None
    if function is not None and dotted_name(function) == "include":
        included = arguments_of(view)
        first = included[0] if included else None
        return [Route("USE", path, line(call), string_value(first) or handler_name(first))]
    return [Route("ALL", path, line(call), handler_name(view))]
