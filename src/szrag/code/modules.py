"""What a file takes from other modules and what it gives them: imports and exports.

Each function reads the captures of one query match; ``extract`` decides what to keep.
"""

from __future__ import annotations

from tree_sitter import Node

from szrag.code.model import Export, Import
from szrag.code.syntax import first_capture, line, name_of, pattern_keys, string_value, text

Captures = dict[str, list[Node]]

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


# ---- imports ------------------------------------------------------------------------------


def read_import(captures: Captures, role: str) -> Import | None:
    """The import one query match stands for (role ``import.<kind>``)."""
    statement = captures[role][0]
    kind = role.removeprefix("import.")
    clause = first_capture(captures, "import.clause")
    source_node = first_capture(captures, "import.source")
    if kind == "module" and clause is not None:  # Python: import a.b [as c]
        target = clause.child_by_field_name("name") if clause.type == "aliased_import" else clause
        alias = clause.child_by_field_name("alias")
        if target is None:
            return None
        source = text(target)
        local = text(alias) if alias is not None else source.split(".")[0]
        return Import(source, line(statement), (local,), kind)
    if source_node is None:
        return None
    written = "".join(text(source_node).split()) if kind == "from" else string_value(source_node)
    if not written:
        return None
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
    return Import(written, line(statement), names, kind)


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
                    names.append(name_of(name))
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


def python_binding(statement: Node, local: str) -> tuple[str, str] | None:
    """``(module, name)`` when a Python import statement binds ``local``: ``from .a import b
    as c`` binds ``c`` to ``(".a", "b")``, ``import a.b`` binds ``a`` to ``("a", "")``,
    ``import a.b as c`` binds ``c`` to ``("a.b", "")``; None when it binds no such name."""
    for child in statement.children_by_field_name("name"):
        aliased = child.type == "aliased_import"
        name_node = child.child_by_field_name("name") if aliased else child
        alias = child.child_by_field_name("alias") if aliased else None
        if name_node is None:
            continue
        name = text(name_node)
        if statement.type == "import_from_statement":
            module_node = statement.child_by_field_name("module_name")
            if module_node is not None and text(alias or name_node) == local:
                return "".join(text(module_node).split()), name
        elif alias is not None:
            if text(alias) == local:
                return name, ""
        elif name.split(".")[0] == local:
            return local, ""
    return None


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


# ---- exports ------------------------------------------------------------------------------


def export_names(captures: Captures, role: str) -> list[Export]:
    """Names an ES or CommonJS export statement exports, at the statement's line."""
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
    return [Export(name, at) for name in names if name]


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
                names.append(name_of(exported))
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
            name = name_of(key)
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


def listed_names(node: Node) -> list[Export]:
    """The names of a Python ``__all__`` list or tuple."""
    return [
        Export(value, line(node)) for item in node.named_children if (value := string_value(item))
    ]


def public_name(captures: Captures) -> Export | None:
    """A public top-level Python name, used when the module has no ``__all__``."""
    for key in ("export.public", "export.definition", "export.type"):
        node = first_capture(captures, key)
        if node is not None and (name := _python_name(node)):
            return Export(name, line(node))
    return None
