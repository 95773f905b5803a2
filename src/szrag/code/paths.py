"""Literal file paths a source builds from its own location.

``path.join(__dirname, "../x.json")``, ``new URL("./x", import.meta.url)``,
``Path(__file__).parent / "data" / "x.json"`` and
``os.path.join(os.path.dirname(__file__), "x")`` are evaluated statically: starting at the
anchor (``__dirname``, ``__file__`` ...) the expression around it is climbed as long as each
step is a known path operation on literals. A value assigned to a variable
(``BASE_DIR = Path(__file__).resolve().parent``) becomes an anchor in turn, so
``BASE_DIR / "templates"`` is found too.

Values are POSIX paths relative to the file's directory; the file itself is its base name.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from tree_sitter import Node

from szrag.code.model import PathReference, RecordBuilder
from szrag.code.syntax import (
    arguments_of,
    dotted_name,
    is_call,
    line,
    member_parts,
    positional,
    string_value,
    text,
)

_JS_JOIN = frozenset({"path.join", "join", "path.posix.join"})
_JOIN = _JS_JOIN | frozenset({"os.path.join", "posixpath.join"})
_RESOLVE = frozenset({"path.resolve", "resolve", "path.posix.resolve"})
_PATH_TYPES = frozenset({"Path", "pathlib.Path", "PurePath", "PurePosixPath"})
_DIRNAME = frozenset({"path.dirname", "dirname", "os.path.dirname"})
_SAME = frozenset(
    {
        "os.path.abspath",
        "os.path.realpath",
        "os.path.normpath",
        "abspath",
        "realpath",
        "path.normalize",
        "str",
        "os.fspath",
        "fileURLToPath",
        "url.fileURLToPath",
    }
)
_SAME_METHODS = frozenset({"resolve", "absolute", "expanduser"})
_MAX_ROUNDS = 4  # variables assigned from variables assigned from ... an anchor
_MAX_PARENTS = 32  # Path(__file__).parents[n]: deeper than any real tree

Step = tuple[Node, str | None, bool]
"""(expression reached, its value or None when unknowable, True when fully literal)."""


def parent_of(value: str) -> str:
    """The directory containing ``value``."""
    normal = posixpath.normpath(value)
    if normal == ".":
        return ".."
    if all(part == ".." for part in normal.split("/")):
        return f"{normal}/.."
    return posixpath.dirname(normal) or "."


def join(value: str, literal: str, *, absolute_is_relative: bool = False) -> str | None:
    """``value`` joined with a literal segment; None when the literal is absolute."""
    if literal.startswith("/"):
        if not absolute_is_relative:
            return None
        literal = literal.lstrip("/")
    return posixpath.normpath(posixpath.join(value, literal))


def is_reference(value: str, file_name: str) -> bool:
    """True when a value names something other than the file itself or a bare ``..``."""
    normal = posixpath.normpath(value)
    return normal != file_name and any(part not in (".", "..") for part in normal.split("/"))


def finish(
    path: str, source: bytes, root: Node, anchors: list[Node], builder: RecordBuilder
) -> None:
    """Evaluate every anchor and record the path references it leads to."""
    file_name = posixpath.basename(path)
    bases: dict[str, str] = {}
    seen: set[int] = set()
    pending = [(anchor, start_value(anchor, file_name)) for anchor in anchors]
    for _round in range(_MAX_ROUNDS):
        found: dict[str, str] = {}
        for start, value in pending:
            if value is None:
                continue
            top, result, complete = climb(start, value)
            if top.id in seen or result is None or not complete:
                continue
            seen.add(top.id)
            name = assigned_name(top)
            if name is not None and name not in bases:
                found[name] = result
            # A variable used on its own is not a new reference; its assignment was.
            if (top.id != start.id or start.type == "new_expression") and is_reference(
                result, file_name
            ):
                builder.path_references.append(PathReference(result, line(top)))
        if not found:
            return
        bases.update(found)
        pending = [
            (use, value) for name, value in found.items() for use in uses(root, source, name)
        ]


def start_value(anchor: Node, file_name: str) -> str | None:
    """The value of an anchor: ``.`` for the directory, the base name for the file."""
    if anchor.type == "new_expression":  # new URL("./x", import.meta.url)
        args = arguments_of(anchor)
        literal = string_value(args[0]) if args else None
        return join(".", literal) if literal is not None else None
    name = text(anchor)
    if name in ("__dirname", "import.meta.dirname"):
        return "."
    return file_name


def climb(node: Node, value: str) -> Step:
    """Follow path operations outwards from ``node`` as far as they stay literal."""
    while True:
        step = _step(node, value)
        if step is None:
            return node, value, True
        node, next_value, complete = step
        if next_value is None or not complete:
            return node, next_value, False
        value = next_value


def _step(node: Node, value: str) -> Step | None:
    parent = node.parent
    if parent is None:
        return None
    if parent.type in ("arguments", "argument_list"):
        return _call_step(node, parent.parent, value)
    if parent.type in ("member_expression", "attribute"):
        return _member_step(node, parent, value)
    if parent.type == "binary_operator":  # Path / "x"
        left = parent.child_by_field_name("left")
        operator = parent.child_by_field_name("operator")
        if left is None or left.id != node.id or operator is None or text(operator) != "/":
            return None
        literal = string_value(parent.child_by_field_name("right"))
        return (
            (parent, join(value, literal), True) if literal is not None else (parent, value, False)
        )
    return None


def _call_step(node: Node, call: Node | None, value: str) -> Step | None:
    """``path.join(node, ...)``, ``os.path.dirname(node)``, ``Path(node)`` ..."""
    if call is None or not is_call(call):
        return None
    args = positional(arguments_of(call))
    if not args or args[0].id != node.id:
        return None
    name = dotted_name(call.child_by_field_name("function"))
    if name in _DIRNAME and len(args) == 1:
        return call, parent_of(value), True
    if name in _SAME and len(args) == 1:
        return call, value, True
    if name in _JOIN or name in _RESOLVE or name in _PATH_TYPES:
        return (call, *_join_all(value, args[1:], absolute_is_relative=name in _JS_JOIN))
    return None


def _member_step(node: Node, member: Node, value: str) -> Step | None:
    """``.parent``, ``.parents[n]``, ``.resolve()``, ``.joinpath(...)``, ``.with_name(...)``."""
    obj, name = member_parts(member)
    if obj is None or obj.id != node.id:
        return None
    if name == "parent":
        return member, parent_of(value), True
    outer = member.parent
    if name == "parents" and outer is not None and outer.type == "subscript":
        index = outer.child_by_field_name("subscript")
        levels = text(index) if index is not None and index.type == "integer" else ""
        if not levels.isdigit() or int(levels) > _MAX_PARENTS:
            return None
        for _level in range(int(levels) + 1):
            value = parent_of(value)
        return outer, value, True
    if outer is None or not is_call(outer):
        return None
    function = outer.child_by_field_name("function")
    if function is None or function.id != member.id:
        return None
    args = positional(arguments_of(outer))
    if name in _SAME_METHODS and not args:
        return outer, value, True
    if name == "joinpath":
        return (outer, *_join_all(value, args))
    if name == "with_name" and len(args) == 1:
        literal = string_value(args[0])
        return (
            (outer, join(parent_of(value), literal), True)
            if literal is not None
            else (outer, None, False)
        )
    return None


def _join_all(
    value: str, args: list[Node], *, absolute_is_relative: bool = False
) -> tuple[str | None, bool]:
    result: str | None = value
    for arg in args:
        literal = string_value(arg)
        if literal is None or result is None:
            return result, False
        result = join(result, literal, absolute_is_relative=absolute_is_relative)
    return result, True


def assigned_name(node: Node) -> str | None:
    """The variable a path expression is stored in: ``const ROOT = ...``, ``BASE = ...``."""
    parent = node.parent
    if parent is None:
        return None
    if parent.type == "variable_declarator":
        target, source = parent.child_by_field_name("name"), parent.child_by_field_name("value")
    elif parent.type in ("assignment", "assignment_expression"):
        target, source = parent.child_by_field_name("left"), parent.child_by_field_name("right")
    else:
        return None
    if target is None or source is None or source.id != node.id or target.type != "identifier":
        return None
    return text(target)


def _is_assignment_target(node: Node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "variable_declarator":
        field = "name"
    elif parent.type in ("assignment", "assignment_expression", "augmented_assignment"):
        field = "left"
    else:
        return False
    target = parent.child_by_field_name(field)
    return target is not None and target.id == node.id


def uses(root: Node, source: bytes, name: str) -> Iterator[Node]:
    """Identifier nodes that read variable ``name`` (found by text, confirmed in the tree)."""
    pattern = re.compile(rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])")
    for match in pattern.finditer(source):
        node = root.named_descendant_for_byte_range(match.start(), match.end())
        if node is not None and node.type == "identifier" and not _is_assignment_target(node):
            yield node
