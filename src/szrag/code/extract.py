"""Turn one source file into a CodeRecord by walking the matches of its structure query.

Every query pattern names one role capture (``@definition.function``, ``@import.require``,
``@env`` ...). ``analyse`` runs the language's query once over the tree and hands each match
to the handler of its role; the handlers read the match's other captures. Work that needs
the whole file (the function around each call, path variables, Python's public names) is
finished after the walk.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from tree_sitter import Node, Query, QueryCursor

from szrag.code import literal, modules, paths, routes
from szrag.code.components import component_script
from szrag.code.languages import (
    LANGUAGES,
    LanguageSpec,
    language_of_source,
    parser,
    query,
    root_query,
)
from szrag.code.model import (
    CALLBACK_KIND,
    Call,
    CodeRecord,
    Definition,
    EnvironmentVariable,
    Export,
    Import,
    RecordBuilder,
    Route,
)
from szrag.code.rereading import best_reading
from szrag.code.syntax import (
    callee_name,
    end_line,
    first_capture,
    line,
    name_of,
    pattern_keys,
    text,
    type_name,
)

Captures = dict[str, list[Node]]

_start_byte = operator.attrgetter("start_byte")

# the nodes whose members a definition belongs to (named by their ``name`` field, or by the
# type a Rust ``impl`` is for), and the bodies between them and their members
_CLASS_TYPES = frozenset(
    {
        "class_declaration",
        "class",
        "abstract_class_declaration",
        "class_definition",
        "module",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "struct_declaration",
        "trait_declaration",
        "impl_item",
        "trait_item",
        "class_specifier",
        "struct_specifier",
        "union_specifier",
        "object_declaration",
        "protocol_declaration",
    }
)
_CLASS_BODIES = frozenset(
    {
        "class_body",
        "block",
        "decorated_definition",
        "body_statement",
        "interface_body",
        "enum_body",
        "enum_body_declarations",
        "enum_declaration_list",
        "enum_constant",
        "field_declaration_list",
        "template_declaration",
        "enum_class_body",
        "companion_object",
        "protocol_body",
    }
)
_CALLABLE_KINDS = frozenset({"function", "method", "arrow"})


@dataclass
class Extraction:
    """The state of one file's walk: the builder plus what the finishing steps need."""

    spec: LanguageSpec
    path: str
    source: bytes
    root: Node
    builder: RecordBuilder
    function_spans: list[tuple[int, int, str]] = field(default_factory=list)  # bytes, name
    named_calls: set[tuple[int, int]] = field(default_factory=set)  # calls given a callback
    call_nodes: list[Node] = field(default_factory=list)
    anchors: list[Node] = field(default_factory=list)
    literal_routes: list[tuple[int, Route]] = field(default_factory=list)
    route_prefixes: list[tuple[int, int, str]] = field(default_factory=list)
    all_names: list[Export] | None = None
    public_names: list[Export] = field(default_factory=list)

    @property
    def python(self) -> bool:
        """True for Python sources."""
        return self.spec.family == "python"


log = logging.getLogger("szrag.code")

MAX_NESTING = 1000
_BRACKETS = b"()[]{}"
_NOT_BRACKETS = bytes(value for value in range(256) if value not in _BRACKETS)
_STEP = {ord("("): 1, ord("["): 1, ord("{"): 1, ord(")"): -1, ord("]"): -1, ord("}"): -1}


def bracket_depth(source: bytes) -> int:
    """The deepest bracket nesting in ``source`` (strings and comments included: an upper bound
    good enough to spot generated code nested thousands deep): the highest running sum of +1
    per opening and -1 per closing bracket, counted over every byte."""
    if not source:
        return 0
    brackets = source.translate(None, _NOT_BRACKETS)
    deepest = max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)
    # a byte before the first bracket holds the sum at 0
    return max(deepest, 0) if source[0] not in _BRACKETS else deepest


def analyse(path: str, source_text: str) -> CodeRecord | None:
    """The code record of ``path``, or None when it is not code or cannot be parsed at all."""
    name = language_of_source(path, source_text)
    if name is None:
        embedded = component_script(path, source_text)
        if embedded is None:
            return None
        name, source_text = embedded
    source = source_text.encode("utf-8", errors="replace")
    if bracket_depth(source) > MAX_NESTING:
        # tree-sitter's query walk grows steeply with nesting (minutes for generated code
        # nested thousands deep); such a file is still chunked and searchable, just not parsed
        log.warning("%s: nested more than %d deep; code structure not extracted", path, MAX_NESTING)
        return None
    tree = parser(name).parse(source)
    if tree is None:
        return None
    if tree.root_node.has_error:  # C's preprocessor, Kotlin's one-line bodies
        source, tree = best_reading(name, source, tree)
    if tree.root_node.is_error:
        return None
    root = tree.root_node
    state = Extraction(LANGUAGES[name], path, source, root, RecordBuilder(name))
    if (top_level := root_query(name, source, root)) is not None:
        _walk(state, top_level, max_start_depth=0)
    _walk(state, query(name, source, root))
    _finish_calls(state)
    _finish_exports(state)
    state.builder.routes.extend(literal.apply_prefixes(state.literal_routes, state.route_prefixes))
    paths.finish(state.path, state.source, state.root, state.anchors, state.builder)
    record = state.builder.build(partial=root.has_error)
    if record.partial and record.is_empty:
        return None  # nothing in the file could be read as code
    return record


Handler = Callable[[Extraction, Captures, str], None]


def _walk(state: Extraction, compiled: Query, *, max_start_depth: int | None = None) -> None:
    """Hand every match of ``compiled`` over the file to the handlers of its roles."""
    cursor = QueryCursor(compiled)
    if max_start_depth is not None:
        cursor.set_max_start_depth(max_start_depth)
    handlers = _pattern_handlers(compiled)
    for pattern, captures in cursor.matches(state.root):
        if (known := handlers.get(pattern)) is None:
            known = handlers[pattern] = _handlers_for(captures)
        for role, handler in known:
            handler(state, captures, role)


def _handlers_for(captures: Captures) -> list[tuple[str, Handler]]:
    return [(role, _HANDLERS[role]) for role in captures if role in _HANDLERS]


@functools.cache
def _pattern_handlers(compiled: Query) -> dict[int, list[tuple[str, Handler]]]:
    """The handlers of each pattern of a query, filled in as patterns first match.

    A role capture is never optional, so every match of one pattern has the same roles and
    reading them once per pattern spares scanning the captures of every match.
    """
    return {}


# ---- definitions ------------------------------------------------------------------------


def _definition(state: Extraction, captures: Captures, role: str) -> None:
    node = captures[role][0]
    name_node = first_capture(captures, "name")
    if name_node is None:
        return
    # a Go method's receiver, a Kotlin extension function's
    owner: Node | None = first_capture(captures, "definition.container")
    scope: str | None = None
    if name_node.type == "default":  # export default function () {}: named for its module
        name = module_name(state.path)
    elif name_node.type in _CPP_NAMES:
        name, scope = _cpp_name(name_node)
    else:
        name = name_of(name_node)
    if not name:
        return
    if node.type == "function_signature" and _overload(node, name):
        return  # an overload's signature reads as part of the function it declares
    kind = role.removeprefix("definition.")
    parent = node.parent  # looked up once: tree-sitter finds a parent by descending the tree
    container = scope or _enclosing_class(parent, state.path)
    if owner is not None and container is None:  # a member extension belongs to its class
        container = type_name(owner)
        if container in _type_parameters(node):
            container = None  # fun <T> T.clamp(): an extension of any type
    if kind == "function" and container is not None:
        kind = "method"  # a Python method, a Rust function of an impl or a trait
    if kind in _CALLABLE_KINDS:
        state.function_spans.append((node.start_byte, node.end_byte, name))
    start = _start_with_decorators(node, parent)
    if node.type == "function_declaration":
        start = _first_overload(node, name, start)
    last = end_line(node)
    if node.end_point.column == 0 and last > start:
        last -= 1  # a node that takes its line's end with it (#define) ends on the line before
    state.builder.functions.append(Definition(name, kind, start, last, container))


CALLBACK_LABEL_CHARS = 80  # of a test's description, say: the name stays a name
CALLEE_CHARS = 40  # a longer callee (a chain of calls) is named by its last part
_LAST_NAME = re.compile(r"[\w$]+$")
_SPACED_DOTS = re.compile(r"\s*(\??\.)\s*")  # app\n  .post(...) is app.post


def _callback(state: Extraction, captures: Captures, role: str) -> None:
    """A function handed to a call whose first argument says what it is for, named by the
    call: ``app.post("/api/report")``, ``it("rejects a report without a title")``,
    ``socket.on("auth:perform")``, ``t.Run("empty input")``. One definition a call, however
    many functions it is handed."""
    node = captures[role][0]
    label_node = first_capture(captures, "name")
    callee_node = first_capture(captures, "definition.callee")
    key = (node.start_byte, node.end_byte)
    if label_node is None or callee_node is None or key in state.named_calls:
        return
    state.named_calls.add(key)
    label = " ".join(name_of(label_node).split())
    if not label:
        return
    if len(label) > CALLBACK_LABEL_CHARS:
        label = label[: CALLBACK_LABEL_CHARS - 3] + "..."
    callee = _SPACED_DOTS.sub(r"\1", " ".join(text(callee_node).split()))
    if len(callee) > CALLEE_CHARS or "(" in callee:
        last = _LAST_NAME.search(callee)
        callee = last[0] if last else "callback"
    name = f"{callee}({json.dumps(label, ensure_ascii=False)})"
    container = _enclosing_class(node.parent, state.path)
    # from the line its callee ends on: the call that hands it over is its caller's
    state.builder.callbacks.append(
        Definition(name, CALLBACK_KIND, end_line(callee_node), end_line(node), container)
    )


_CPP_NAMES = frozenset({"qualified_identifier", "operator_cast"})


def _cpp_name(node: Node) -> tuple[str, str | None]:
    """A C++ definition's own name and the class it is defined in, from its declarator:
    ``int shop::Cart::total()`` is ``total`` of ``Cart``, ``Box<T>::put`` ``put`` of ``Box``,
    ``A::operator bool()`` ``operator bool`` of ``A``."""
    scope: str | None = None
    while node.type == "qualified_identifier":
        outer = node.child_by_field_name("scope")
        if outer is not None:
            named = outer.child_by_field_name("name") if outer.type == "template_type" else outer
            scope = text(named) if named is not None else scope
        inner = node.child_by_field_name("name")
        if inner is None:
            break
        node = inner
    if node.type == "operator_cast":
        target = node.child_by_field_name("type")
        return (f"operator {text(target)}" if target is not None else "operator"), scope
    if node.type == "template_function":
        named = node.child_by_field_name("name")
        return (text(named) if named is not None else text(node)), scope
    return text(node), scope


def module_name(path: str) -> str:
    """What a module's anonymous default export is called: the file's name without its
    extension, or its folder's for an index file (``csrf/index.ts`` gives ``csrf``)."""
    parts = PurePosixPath(path)
    stem = parts.name.split(".", 1)[0]
    if stem == "index" and parts.parent.name:
        return parts.parent.name
    return stem


def _statement(node: Node) -> Node:
    parent = node.parent
    return parent if parent is not None and parent.type == "export_statement" else node


def _declared(statement: Node | None) -> Node | None:
    if statement is not None and statement.type == "export_statement":
        return statement.child_by_field_name("declaration")
    return statement


def _named(node: Node | None, name: str, types: tuple[str, ...]) -> bool:
    if node is None or node.type not in types:
        return False
    declared = node.child_by_field_name("name")
    return declared is not None and text(declared) == name


def _overload(signature: Node, name: str) -> bool:
    """Whether a function signature is an overload of the function declared after it."""
    following = _declared(_statement(signature).next_named_sibling)
    return _named(following, name, ("function_declaration", "function_signature"))


def _first_overload(function: Node, name: str, start: int) -> int:
    """The first line of a TypeScript function's overload signatures just above it, if any."""
    before = _declared(_statement(function).prev_named_sibling)
    while _named(before, name, ("function_signature",)):
        assert before is not None
        start = line(_statement(before))
        before = _declared(_statement(before).prev_named_sibling)
    return start


def _type_parameters(node: Node) -> set[str]:
    """The names of the type parameters a definition declares (``<T>``)."""
    names: set[str] = set()
    for child in node.named_children:
        if child.type == "type_parameters":
            for parameter in child.named_children:
                first = parameter.named_children[0] if parameter.named_children else None
                if first is not None:
                    names.add(text(first))
    return names


def _enclosing_class(parent: Node | None, path: str) -> str | None:
    """The class a method or field belongs to (directly, not through a nested function); a
    module's class without a name (its default export) is called as ``module_name`` says."""
    while parent is not None:
        if parent.type in _CLASS_TYPES:
            name = parent.child_by_field_name("name") or parent.child_by_field_name("type")
            if name is None:
                exported = parent.parent is not None and parent.parent.type == "export_statement"
                return module_name(path) if exported else None
            return type_name(name)
        if parent.type not in _CLASS_BODIES and parent.type != "declaration_list":
            return None
        parent = parent.parent
    return None


def _start_with_decorators(node: Node, parent: Node | None) -> int:
    """The first line of a definition including its decorators."""
    if parent is not None and parent.type in ("decorated_definition", "template_declaration"):
        return line(parent)  # template <typename T> above a C++ definition is part of it
    start = node
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type == "decorator":  # TypeScript class members
        start = sibling
        sibling = sibling.prev_named_sibling
    return line(start)


# ---- calls ------------------------------------------------------------------------------


def _call(state: Extraction, captures: Captures, role: str) -> None:
    state.call_nodes.append(captures[role][0])


def _finish_calls(state: Extraction) -> None:
    """Record each call with the innermost named function around it.

    Definitions nest like the tree, so one sweep in source order with a stack of the
    definitions still open finds it without climbing the tree for every call.
    """
    spans = sorted(state.function_spans, key=lambda span: (span[0], -span[1]))
    open_spans: list[tuple[int, int, str]] = []
    next_span = 0
    calls = state.builder.calls
    for callee in sorted(state.call_nodes, key=_start_byte):
        at = callee.start_byte
        while next_span < len(spans) and spans[next_span][0] <= at:
            _close_ended(open_spans, spans[next_span][0])
            open_spans.append(spans[next_span])
            next_span += 1
        _close_ended(open_spans, at)
        name = callee_name(callee)  # None for import(), which is recorded as an import
        if name:
            function = open_spans[-1][2] if open_spans else None
            calls.append(Call(name, end_line(callee), function))


def _close_ended(open_spans: list[tuple[int, int, str]], position: int) -> None:
    """Drop the definitions that end at or before byte ``position``."""
    while open_spans and open_spans[-1][1] <= position:
        open_spans.pop()


# ---- imports ----------------------------------------------------------------------------


def _import(state: Extraction, captures: Captures, role: str) -> None:
    found = modules.read_import(captures, role)
    if found is not None:
        state.builder.imports.append(found)


# ---- exports ----------------------------------------------------------------------------


def _export(state: Extraction, captures: Captures, role: str) -> None:
    state.builder.exports.extend(modules.export_names(captures, role))
    if (listed := first_capture(captures, "export.all")) is not None:
        state.all_names = (state.all_names or []) + modules.listed_names(listed)
    if (public := modules.public_name(captures)) is not None:
        state.public_names.append(public)


def _finish_exports(state: Extraction) -> None:
    if not state.python:
        return
    if state.all_names is not None:
        state.builder.exports.extend(state.all_names)
    else:
        state.builder.exports.extend(
            item for item in state.public_names if not item.name.startswith("_")
        )


# ---- environment variables --------------------------------------------------------------


def _environment(state: Extraction, captures: Captures, role: str) -> None:
    found = state.builder.environment_variables
    if (node := first_capture(captures, "env.name")) is not None and (name := name_of(node)):
        found.append(EnvironmentVariable(name, line(node)))
    if (node := first_capture(captures, "env.pattern")) is not None:
        found.extend(EnvironmentVariable(name, line(key)) for name, key in pattern_keys(node))


# ---- path anchors and routes ------------------------------------------------------------


def _anchor(state: Extraction, captures: Captures, role: str) -> None:
    state.anchors.append(captures[role][0])


def _route(state: Extraction, captures: Captures, role: str) -> None:
    state.builder.routes.extend(routes.routes_of(captures, role))


def _literal_route(state: Extraction, captures: Captures, role: str) -> None:
    if (found := literal.literal_route(captures, role)) is not None:
        state.literal_routes.append(found)


def _route_prefix(state: Extraction, captures: Captures, role: str) -> None:
    if (found := literal.route_prefix(captures, role)) is not None:
        state.route_prefixes.append(found)


def _literal_import(state: Extraction, captures: Captures, role: str) -> None:
    """``import "net/http"``, ``require 'x'`` (a path) or ``use a::b``, ``import a.b.C`` (a
    name, written without its spaces)."""
    source = first_capture(captures, "import.source")
    if source is None:
        return
    if role == "import.path":
        written = literal.quoted_value(source)
    else:
        written = "".join(text(source).split()) or None
    if written:
        state.builder.imports.append(
            Import(written, line(captures[role][0]), (), role.removeprefix("import."))
        )


_HANDLERS: dict[str, Handler] = {
    "definition.function": _definition,
    "definition.class": _definition,
    "definition.method": _definition,
    "definition.arrow": _definition,
    "definition.type": _definition,
    "definition.interface": _definition,
    "definition.trait": _definition,
    "definition.macro": _definition,
    "definition.callback": _callback,
    "import.path": _literal_import,
    "import.name": _literal_import,
    "route.literal": _literal_route,
    "route.prefix.scope": _route_prefix,
    "reference.call": _call,
    "import.import": _import,
    "import.reexport": _import,
    "import.require": _import,
    "import.dynamic": _import,
    "import.module": _import,
    "import.from": _import,
    "export": _export,
    "env": _environment,
    "path.anchor": _anchor,
    "path.url": _anchor,
    **{role: _route for role in routes.ROLES},
}
