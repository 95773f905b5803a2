"""Turn one source file into a CodeRecord by walking the matches of its structure query.

Every query pattern names one role capture (``@definition.function``, ``@import.require``,
``@env`` ...). ``analyse`` runs the language's query once over the tree and hands each match
to the handler of its role; the handlers read the match's other captures. Work that needs
the whole file (the function around each call, path variables, Python's public names) is
finished after the walk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node, QueryCursor

from szrag.code import paths, routes
from szrag.code.languages import LANGUAGES, LanguageSpec, language_of, parser, query
from szrag.code.model import (
    Call,
    CodeRecord,
    Definition,
    EnvironmentVariable,
    Export,
    Import,
    RecordBuilder,
)
from szrag.code.syntax import (
    ancestors,
    callee_name,
    end_line,
    first_capture,
    line,
    string_value,
    text,
)

Captures = dict[str, list[Node]]

_CLASS_TYPES = frozenset(
    {"class_declaration", "class", "abstract_class_declaration", "class_definition"}
)
_DECLARATION_NAME_TYPES = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
    }
)


@dataclass
class Extraction:
    """The state of one file's walk: the builder plus what the finishing steps need."""

    spec: LanguageSpec
    path: str
    source: bytes
    root: Node
    builder: RecordBuilder
    function_spans: list[tuple[int, int, str]] = field(default_factory=list)  # bytes, name
    call_nodes: list[Node] = field(default_factory=list)
    anchors: list[Node] = field(default_factory=list)
    all_names: list[Export] | None = None
    public_names: list[Export] = field(default_factory=list)

    @property
    def python(self) -> bool:
        """True for Python sources."""
        return self.spec.family == "python"


def analyse(path: str, source_text: str) -> CodeRecord | None:
    """The code record of ``path``, or None when it is not code or cannot be parsed at all."""
    name = language_of(path)
    if name is None:
        return None
    source = source_text.encode("utf-8", errors="replace")
    tree = parser(name).parse(source)
    if tree is None or tree.root_node.is_error:
        return None
    root = tree.root_node
    state = Extraction(LANGUAGES[name], path, source, root, RecordBuilder(name))
    for _pattern, captures in QueryCursor(query(name)).matches(root):
        for role, handler in _handlers_for(captures):
            handler(state, captures, role)
    _finish_calls(state)
    _finish_exports(state)
    paths.finish(state.path, state.source, state.root, state.anchors, state.builder)
    record = state.builder.build(partial=root.has_error)
    if record.partial and record.is_empty:
        return None  # nothing in the file could be read as code
    return record


Handler = Callable[[Extraction, Captures, str], None]


def _handlers_for(captures: Captures) -> list[tuple[str, Handler]]:
    return [(role, _HANDLERS[role]) for role in captures if role in _HANDLERS]


# ---- definitions ------------------------------------------------------------------------


def _definition(state: Extraction, captures: Captures, role: str) -> None:
    node = captures[role][0]
    name_node = first_capture(captures, "name")
    if name_node is None:
        return
    name = string_value(name_node) if name_node.type == "string" else text(name_node)
    if not name:
        return
    kind = role.removeprefix("definition.")
    container = _enclosing_class(node)
    if state.python and kind == "function" and container is not None:
        kind = "method"
    if kind != "class":
        state.function_spans.append((node.start_byte, node.end_byte, name))
    state.builder.functions.append(
        Definition(name, kind, _start_with_decorators(node), end_line(node), container)
    )


def _enclosing_class(node: Node) -> str | None:
    """The class a method or field belongs to (directly, not through a nested function)."""
    for parent in ancestors(node):
        if parent.type in _CLASS_TYPES:
            name = parent.child_by_field_name("name")
            return text(name) if name is not None else None
        if parent.type not in ("class_body", "block", "decorated_definition"):
            return None
    return None


def _start_with_decorators(node: Node) -> int:
    """The first line of a definition including its decorators."""
    parent = node.parent
    if parent is not None and parent.type == "decorated_definition":
        return line(parent)
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
    callees = sorted(state.call_nodes, key=lambda node: node.start_byte)
    open_spans: list[tuple[int, int, str]] = []
    next_span = 0
    for callee in callees:
        at = callee.start_byte
        while next_span < len(spans) and spans[next_span][0] <= at:
            _close_ended(open_spans, spans[next_span][0])
            open_spans.append(spans[next_span])
            next_span += 1
        _close_ended(open_spans, at)
        if callee.type == "import":
            continue  # dynamic import() is recorded as an import
        name = callee_name(callee)
        if name:
            function = open_spans[-1][2] if open_spans else None
            state.builder.calls.append(Call(name, end_line(callee), function))


def _close_ended(open_spans: list[tuple[int, int, str]], position: int) -> None:
    """Drop the definitions that end at or before byte ``position``."""
    while open_spans and open_spans[-1][1] <= position:
        open_spans.pop()


# ---- imports ----------------------------------------------------------------------------


def _import(state: Extraction, captures: Captures, role: str) -> None:
    statement = captures[role][0]
    kind = role.removeprefix("import.")
    clause = first_capture(captures, "import.clause")
    source_node = first_capture(captures, "import.source")
    if kind == "module" and clause is not None:  # Python: import a.b [as c]
        target = clause.child_by_field_name("name") if clause.type == "aliased_import" else clause
        alias = clause.child_by_field_name("alias")
        if target is None:
            return
        source = text(target)
        local = text(alias) if alias is not None else source.split(".")[0]
        state.builder.imports.append(Import(source, line(statement), (local,), kind))
        return
    if source_node is None:
        return
    source = "".join(text(source_node).split()) if kind == "from" else string_value(source_node)
    if not source:
        return
    if kind == "import":
        names = _clause_names(clause)
    elif kind == "reexport":
        names = _reexport_names(statement)
    elif kind == "from":
        names = _from_names(statement)
    elif clause is not None:  # TypeScript: import fs = require("fs")
        names = (text(clause),)
    else:
        names = _bound_names(statement)
    state.builder.imports.append(Import(source, line(statement), names, kind))


def _clause_names(clause: Node | None) -> tuple[str, ...]:
    """Names of an ES import clause: the local default and namespace names, named imports as
    the module exports them."""
    if clause is None:
        return ()
    names: list[str] = []
    for child in clause.named_children:
        if child.type == "identifier":
            names.append(text(child))
        elif child.type == "namespace_import":
            names.extend(text(item) for item in child.named_children if item.type == "identifier")
        elif child.type == "named_imports":
            for specifier in child.named_children:
                name = specifier.child_by_field_name("name")
                if specifier.type == "import_specifier" and name is not None:
                    names.append(string_value(name) if name.type == "string" else text(name))
    return tuple(names)


def _reexport_names(statement: Node) -> tuple[str, ...]:
    """Names passed through by ``export ... from``."""
    names: list[str] = []
    for child in statement.children:
        if child.type == "*":
            names.append("*")
        elif child.type == "namespace_export":
            names.extend(text(item) for item in child.named_children)
        elif child.type == "export_clause":
            for specifier in child.named_children:
                name = specifier.child_by_field_name("name")
                if specifier.type == "export_specifier" and name is not None:
                    names.append(text(name))
    return tuple(names)


def _from_names(statement: Node) -> tuple[str, ...]:
    """Names a Python ``from ... import ...`` takes from the module (before any ``as``)."""
    names: list[str] = []
    for child in statement.children_by_field_name("name"):
        name = child.child_by_field_name("name") if child.type == "aliased_import" else child
        if name is not None:
            names.append(text(name))
    if any(child.type == "wildcard_import" for child in statement.children):
        names.append("*")
    return tuple(names)


def _bound_names(call: Node) -> tuple[str, ...]:
    """Names a require() or import() result is bound to: ``const x = ...``, ``const {a} = ...``."""
    holder = call.parent
    while holder is not None and holder.type in ("await_expression", "parenthesized_expression"):
        holder = holder.parent
    if holder is None or holder.type != "variable_declarator":
        return ()
    target = holder.child_by_field_name("name")
    if target is None:
        return ()
    if target.type == "identifier":
        return (text(target),)
    if target.type == "object_pattern":
        return tuple(name for name, _node in pattern_keys(target))
    return ()


def pattern_keys(pattern: Node) -> list[tuple[str, Node]]:
    """The property names an object pattern reads: ``{a, b: c, d = 1}`` gives a, b, d."""
    keys: list[tuple[str, Node]] = []
    for child in pattern.named_children:
        key: Node | None = None
        if child.type == "shorthand_property_identifier_pattern":
            key = child
        elif child.type == "pair_pattern":
            key = child.child_by_field_name("key")
        elif child.type == "object_assignment_pattern":
            key = child.child_by_field_name("left")
        if key is None:
            continue
        name = string_value(key) if key.type == "string" else text(key)
        if name:
            keys.append((name, key))
    return keys


# ---- exports ----------------------------------------------------------------------------


def _export(state: Extraction, captures: Captures, role: str) -> None:
    statement = captures[role][0]
    at = line(statement)
    names: list[str] = []
    if (node := first_capture(captures, "export.name")) is not None:
        names.append(text(node))
    if (node := first_capture(captures, "export.declaration")) is not None:
        default = any(child.type == "default" for child in statement.children)
        names.extend(["default"] if default else _declared_names(node))
    if first_capture(captures, "export.default") is not None:
        names.append("default")
    if (node := first_capture(captures, "export.clause")) is not None:
        names.extend(_clause_exports(node))
    if (node := first_capture(captures, "export.value")) is not None:
        names.extend(_object_keys(node) if node.type == "object" else ["default"])
    if (node := first_capture(captures, "export.all")) is not None:
        listed = [
            Export(value, line(node))
            for item in node.named_children
            if (value := string_value(item))
        ]
        state.all_names = (state.all_names or []) + listed
    for key in ("export.public", "export.definition", "export.type"):
        if (node := first_capture(captures, key)) is not None and (name := _python_name(node)):
            state.public_names.append(Export(name, line(node)))
    state.builder.exports.extend(Export(name, at) for name in names if name)


def _declared_names(declaration: Node) -> list[str]:
    if declaration.type in _DECLARATION_NAME_TYPES:
        name = declaration.child_by_field_name("name")
        return [text(name)] if name is not None else []
    if declaration.type in ("lexical_declaration", "variable_declaration"):
        names: list[str] = []
        for declarator in declaration.named_children:
            target = declarator.child_by_field_name("name")
            if target is not None and target.type == "identifier":
                names.append(text(target))
            elif target is not None and target.type == "object_pattern":
                names.extend(name for name, _node in pattern_keys(target))
        return names
    return []


def _clause_exports(clause: Node) -> list[str]:
    names: list[str] = []
    for specifier in clause.named_children:
        if specifier.type == "export_specifier":
            exported = specifier.child_by_field_name("alias") or specifier.child_by_field_name(
                "name"
            )
            if exported is not None:
                names.append(
                    string_value(exported) if exported.type == "string" else text(exported)
                )
    return [name for name in names if name]


def _object_keys(node: Node) -> list[str]:
    """Keys of ``module.exports = { a, b: c, d() {} }``."""
    names: list[str] = []
    for child in node.named_children:
        key: Node | None = None
        if child.type == "shorthand_property_identifier":
            key = child
        elif child.type in ("pair", "method_definition"):
            key = child.child_by_field_name("key") or child.child_by_field_name("name")
        if key is not None:
            name = string_value(key) if key.type == "string" else text(key)
            if name:
                names.append(name)
    return names


def _python_name(node: Node) -> str | None:
    if node.type == "identifier":
        return text(node)
    if node.type in ("function_definition", "class_definition"):
        name = node.child_by_field_name("name")
        return text(name) if name is not None else None
    # type Alias[T] = ...: the alias name is the first identifier inside the type
    for child in (node, *node.named_children):
        if child.type == "identifier":
            return text(child)
        if child.type == "generic_type" and child.named_child_count:
            first = child.named_child(0)
            return text(first) if first is not None else None
    return None


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
    found: list[tuple[str, Node]] = []
    if (node := first_capture(captures, "env.name")) is not None:
        name = string_value(node) if node.type == "string" else text(node)
        if name:
            found.append((name, node))
    if (node := first_capture(captures, "env.pattern")) is not None:
        found.extend(pattern_keys(node))
    state.builder.environment_variables.extend(
        EnvironmentVariable(name, line(node)) for name, node in found
    )


# ---- path anchors -----------------------------------------------------------------------


def _anchor(state: Extraction, captures: Captures, role: str) -> None:
    state.anchors.append(captures[role][0])


def _route(state: Extraction, captures: Captures, role: str) -> None:
    state.builder.routes.extend(routes.routes_of(captures, role))


_HANDLERS: dict[str, Handler] = {
    "definition.function": _definition,
    "definition.class": _definition,
    "definition.method": _definition,
    "definition.arrow": _definition,
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
