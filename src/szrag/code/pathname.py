"""Routes of servers without a router: ``url.pathname`` checks and ``req.method`` tests.

A check is a route only when it decides an ``if``. Its method comes from the nearest
``req.method`` test, looked for in order: in the same condition, at the top of the branch
it guards (a guard clause, one ``if`` per method, or a ``switch``), then in an enclosing
``if`` of the same function. Without one the route serves ALL methods.
"""

from __future__ import annotations

from tree_sitter import Node

from szrag.code.model import Route
from szrag.code.syntax import (
    callee_name,
    first_capture,
    is_call,
    line,
    member_parts,
    string_value,
    text,
)

Captures = dict[str, list[Node]]

_FUNCTION_TYPES = frozenset(
    {"function_declaration", "function_expression", "arrow_function", "method_definition"}
)
# Calls inside a branch that only write the response or log: never its handler.
_RESPONSE_OBJECTS = frozenset({"res", "response", "reply", "ctx", "console", "logger", "log"})


def routes_of_check(check: Node, captures: Captures) -> list[Route]:
    """Routes of one pathname check: its paths, each with every method inferred for it.

    The query only matches checks on a ``pathname`` (``url.pathname`` or a destructured one).
    """
    listed = first_capture(captures, "route.paths")
    candidates = (
        [string_value(item) for item in listed.named_children]
        if listed is not None
        else [string_value(first_capture(captures, "route.path"))]
    )
    found = [path for path in candidates if path and path.startswith("/")]
    # Only a branch taken on the path is a route; "/" as a prefix says nothing.
    prefix_of_everything = found == ["/"] and check.type == "call_expression"
    if not found or prefix_of_everything or _branch_of(_condition_root(check)) is None:
        return []
    methods, handler = infer_method(check)
    return [Route(method, path, line(check), handler) for path in found for method in methods]


def infer_method(check: Node) -> tuple[list[str], str | None]:
    """Methods a pathname check serves, from nearby ``req.method`` conditions, and its handler.

    In order: a method test in the same condition (``req.method === "POST" && ...``); tests
    at the top of the branch the check guards (``if (req.method !== "POST") return ...``
    or one ``if`` per method); an enclosing ``if`` on the method. Otherwise ALL.
    """
    condition = _condition_root(check)
    methods = _method_literals(condition, ("===", "=="))
    branch = _branch_of(condition)
    if not methods and branch is not None:
        methods = _branch_methods(branch)
    if not methods:
        methods = _enclosing_methods(condition)
    handler = _first_handler_call(branch) if branch is not None else None
    return (methods or ["ALL"]), handler


def _condition_root(node: Node) -> Node:
    """Climb from a check through &&, ||, ! and parentheses to the whole condition."""
    current = node
    while (parent := current.parent) is not None and _joins_conditions(parent):
        current = parent
    return current


def _joins_conditions(node: Node) -> bool:
    if node.type in ("parenthesized_expression", "unary_expression"):
        return True
    return node.type == "binary_expression" and _operator(node) in ("&&", "||")


def _operator(node: Node) -> str:
    operator = node.child_by_field_name("operator")
    return text(operator) if operator is not None else ""


def _branch_of(condition: Node) -> Node | None:
    """The statement an ``if`` runs when ``condition`` holds."""
    parent = condition.parent
    if parent is not None and parent.type == "if_statement":
        return parent.child_by_field_name("consequence")
    return None


def _is_method_subject(node: Node | None) -> bool:
    if node is None:
        return False
    if node.type == "identifier":
        return text(node) == "method"
    return member_parts(node)[1] == "method"


def _method_literals(node: Node, operators: tuple[str, ...]) -> list[str]:
    """Methods compared with ``req.method`` anywhere inside ``node``."""
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "binary_expression" and _operator(current) in operators:
            left = current.child_by_field_name("left")
            right = current.child_by_field_name("right")
            for subject, literal in ((left, right), (right, left)):
                value = string_value(literal)
                if _is_method_subject(subject) and value:
                    found.append(value.upper())
        stack.extend(reversed(current.named_children))
    return list(dict.fromkeys(found))


def _statements(branch: Node) -> list[Node]:
    if branch.type == "statement_block":
        return [child for child in branch.named_children if child.type != "comment"]
    return [branch]


def _branch_methods(branch: Node) -> list[str]:
    methods: list[str] = []
    for statement in _statements(branch):
        if statement.type == "if_statement":
            condition = statement.child_by_field_name("condition")
            if condition is not None:
                methods += _method_literals(condition, ("!==", "!="))  # guard clause
                methods += _method_literals(condition, ("===", "=="))  # one branch per method
        elif statement.type == "switch_statement" and _is_method_subject(
            _unwrap(statement.child_by_field_name("value"))
        ):
            body = statement.child_by_field_name("body")
            for case in body.named_children if body is not None else ():
                value = string_value(case.child_by_field_name("value"))
                if case.type == "switch_case" and value:
                    methods.append(value.upper())
    return list(dict.fromkeys(methods))


def _unwrap(node: Node | None) -> Node | None:
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count:
        node = node.named_child(0)
    return node


def _enclosing_methods(condition: Node) -> list[str]:
    """Methods tested by an ``if`` whose branch contains the check."""
    child = condition
    parent = condition.parent
    while parent is not None:
        if parent.type == "if_statement":
            consequence = parent.child_by_field_name("consequence")
            test = parent.child_by_field_name("condition")
            if consequence is not None and consequence.id == child.id and test is not None:
                methods = _method_literals(test, ("===", "=="))
                if methods:
                    return methods
        if parent.type in _FUNCTION_TYPES:
            return []  # conditions outside the handler say nothing about this request
        child, parent = parent, parent.parent
    return []


def _first_handler_call(branch: Node) -> str | None:
    """The first statement-level call of a branch that is not a response write."""
    for statement in _statements(branch):
        expression = statement.named_child(0) if statement.named_child_count else None
        expression = _unwrap(expression)
        if expression is not None and expression.type == "await_expression":
            expression = expression.named_child(0)
        if statement.type not in ("expression_statement", "return_statement") or not is_call(
            expression
        ):
            continue
        assert expression is not None
        function = expression.child_by_field_name("function")
        name = callee_name(function) if function is not None else None
        if name and name.split(".")[0] not in _RESPONSE_OBJECTS:
            return name
    return None
