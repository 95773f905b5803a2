"""Small readers over tree-sitter nodes shared by every language.

Node type names of the JavaScript/TypeScript and Python grammars do not collide
(``member_expression`` vs ``attribute``), so one helper can serve both.
"""

from __future__ import annotations

import re

from tree_sitter import Node

_NAME_TYPES = frozenset(
    {
        "identifier",
        "property_identifier",
        "private_property_identifier",
        "shorthand_property_identifier",
        "type_identifier",
        "this",
        "super",
    }
)
_MEMBER_TYPES = frozenset({"member_expression", "attribute"})
_WRAPPER_TYPES = frozenset({"non_null_expression", "parenthesized_expression", "await_expression"})
_PYTHON_STRING_PREFIX = frozenset("rRbBuU")
# Names joined by dots and nothing else: no spaces, comments, ``?.``, brackets or non-ASCII.
_PLAIN_CHAIN = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+", re.ASCII)


def text(node: Node) -> str:
    """The source text of a node."""
    return (node.text or b"").decode("utf-8", errors="replace")


def line(node: Node) -> int:
    """The 1-based line a node starts on."""
    return node.start_point.row + 1


def end_line(node: Node) -> int:
    """The 1-based line a node ends on."""
    return node.end_point.row + 1


def string_value(node: Node | None) -> str | None:
    """The value of a string literal without interpolation, or None for anything else."""
    if node is None:
        return None
    if node.type == "string":
        written = text(node)
        if _is_plain_quoted(written):
            return written[1:-1]  # what the general reading below gives, found sooner
        return _string_literal_value(node, written)
    if node.type == "template_string":
        if any(child.type == "template_substitution" for child in node.children):
            return None
        return text(node)[1:-1]
    return None


def _is_plain_quoted(written: str) -> bool:
    """True for ``"..."`` or ``'...'`` with no prefix, escape or triple quote."""
    return (
        len(written) >= 2
        and written[0] in "\"'"
        and written[-1] == written[0]
        and "\\" not in written
        and not written.startswith(written[0] * 3)
    )


def _string_literal_value(node: Node, written: str) -> str | None:
    if any(child.type == "interpolation" for child in node.children):
        return None  # a Python f-string with fields
    start = node.child(0)
    if start is not None and start.type == "string_start":
        prefix = text(start).rstrip("\"'")
        if not set(prefix) <= _PYTHON_STRING_PREFIX:
            return None
        parts = [text(child) for child in node.children if child.type == "string_content"]
        return "".join(parts)
    return written[1:-1]


def name_of(node: Node) -> str:
    """The text of a name, or the value of a string standing for one (``{"key": ...}``)."""
    if node.type == "string":
        return string_value(node) or ""
    if "string" in node.type:  # Go, Rust, Java, C# string literals
        return _unquoted(text(node))
    return text(node)


# the nodes around a type's own name: a reference, a pointer, type arguments, a path, dyn
_TYPE_WRAPPERS = frozenset(
    {
        "reference_type",
        "pointer_type",
        "generic_type",
        "scoped_type_identifier",
        "qualified_type",
        "dynamic_type",
        "parenthesized_type",
        "abstract_type",
        "scope_resolution",
        "user_type",  # the type a Swift extension or a Kotlin extension function extends
        "nullable_type",  # fun String?.orBlank()
    }
)
_TYPE_NAMES = frozenset({"type_identifier", "identifier", "constant", "name"})


def type_name(node: Node) -> str | None:
    """The bare name of the type a node writes: ``*Command[T]`` (a Go receiver) gives
    ``Command``, ``&'a mut InteractivePrinter<'a>`` and ``fmt::Display`` (a Rust impl's type)
    ``InteractivePrinter`` and ``Display``; a type with no name of its own (a slice, a
    tuple) gives None."""
    while node.type in _TYPE_WRAPPERS:
        if node.type == "user_type":  # Array<Int>, Request.Builder: the last name
            named = [child for child in node.named_children if child.type in _TYPE_NAMES]
            node = named[-1] if named else node
            break
        inner = (
            node.child_by_field_name("type")
            or node.child_by_field_name("name")
            or node.child_by_field_name("trait")
        )
        if inner is None:  # a wrapper without fields: its last named child is the type
            named = [child for child in node.named_children if child.type != "lifetime"]
            inner = named[-1] if named else None
        if inner is None:
            return None
        node = inner
    if node.type not in _TYPE_NAMES:
        return None
    return text(node) or None


def _unquoted(written: str) -> str:
    """A quoted literal's inside (``"X"`` -> ``X``); other text unchanged."""
    if len(written) >= 2 and written[0] in "\"'`" and written[-1] == written[0]:
        return written[1:-1]
    return written


def dotted_name(node: Node | None) -> str | None:
    """``a.b.c`` for a chain of names (member access, attributes, string subscripts)."""
    if node is None:
        return None
    kind = node.type
    if kind in _NAME_TYPES:
        return text(node)
    if kind in _MEMBER_TYPES:
        # Most chains are written plainly: then the name is the text itself, once the head
        # is known to be a name (``import.meta.x`` or ``None.x`` are not).
        written = text(node)
        if _PLAIN_CHAIN.fullmatch(written) and _chain_head(node).type in _NAME_TYPES:
            return written
    return _walk_dotted_name(node)


def _chain_head(node: Node) -> Node:
    """The innermost object of a member chain."""
    while node.type in _MEMBER_TYPES:
        inner = node.child_by_field_name("object")
        if inner is None:
            break
        node = inner
    return node


def _walk_dotted_name(node: Node | None) -> str | None:
    parts: list[str] = []
    current = node
    while current is not None:
        kind = current.type
        if kind in _NAME_TYPES:
            parts.append(text(current))
            return ".".join(reversed(parts))
        if kind in _WRAPPER_TYPES and current.named_child_count == 1:
            current = current.named_child(0)
        elif kind in _MEMBER_TYPES:
            member = current.child_by_field_name(_member_field(kind))
            if member is None:
                return None
            parts.append(text(member))
            current = current.child_by_field_name("object")
        elif kind == "subscript_expression":
            key = string_value(current.child_by_field_name("index"))
            if key is None:
                return None
            parts.append(key)
            current = current.child_by_field_name("object")
        else:
            return None
    return None


def _member_field(kind: str) -> str:
    return "property" if kind == "member_expression" else "attribute"


def callee_name(node: Node) -> str | None:
    """The name of a called expression; for ``f().then`` only the trailing ``then``."""
    name = dotted_name(node)
    if name is not None:
        return name
    if node.named_child_count == 0 and node.type.endswith(("identifier", "name", "constant")):
        return text(node)  # a query that captured the called name itself (Go, Java, Ruby...)
    # The chain starts with something that has no name (a call, an array ...): keep the
    # trailing named members, as the original parser does.
    parts: list[str] = []
    current: Node | None = node
    while current is not None and current.type in _MEMBER_TYPES:
        member = current.child_by_field_name(_member_field(current.type))
        if member is None:
            break
        parts.append(text(member))
        current = current.child_by_field_name("object")
    return ".".join(reversed(parts)) or None


def arguments_of(call: Node) -> list[Node]:
    """The named argument nodes of a call (comments excluded)."""
    args = call.child_by_field_name("arguments")
    if args is None:
        return []
    return [child for child in args.named_children if child.type != "comment"]


def keyword_argument(args: list[Node], name: str) -> Node | None:
    """The value of Python keyword argument ``name`` among ``args``."""
    for arg in args:
        if arg.type == "keyword_argument":
            key = arg.child_by_field_name("name")
            if key is not None and text(key) == name:
                return arg.child_by_field_name("value")
    return None


def positional(args: list[Node]) -> list[Node]:
    """The positional arguments among ``args``."""
    return [
        arg
        for arg in args
        if arg.type not in ("keyword_argument", "dictionary_splat", "list_splat")
    ]


def member_parts(node: Node) -> tuple[Node | None, str | None]:
    """(object, member name) of ``a.b`` / ``a?.b`` / Python ``a.b``; (None, None) otherwise."""
    if node.type not in _MEMBER_TYPES:
        return None, None
    member = node.child_by_field_name(_member_field(node.type))
    return node.child_by_field_name("object"), text(member) if member is not None else None


def is_call(node: Node | None) -> bool:
    """True for a call expression of either language."""
    return node is not None and node.type in ("call_expression", "call")


def first_capture(captures: dict[str, list[Node]], key: str) -> Node | None:
    """The first node captured under ``key`` in a query match."""
    nodes = captures.get(key)
    return nodes[0] if nodes else None


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
        name = name_of(key)
        if name:
            keys.append((name, key))
    return keys
