"""Units: the parts of a file a reader would cite, cut where the code or the prose is cut.

The index keeps 60-line windows for the first stage of retrieval (and for the original's
behaviour); once a file is chosen, its units are what is ranked, returned and packed. A unit
of code is a definition: a function, a method, a class's own lines (its header and fields),
with the comments and decorators just above it. A definition too long to read at once is
cut at lines of its body's first indentation, each part naming the definition's signature.
Lines outside every definition (imports, constants) make units of their own, merged when
they are only a few lines. Prose is cut at Markdown headings; a file with nothing parsed is
cut into bounded windows. Every unit is bounded in lines and characters, so a minified
file or a 5,000-line function still gives units a model can be shown whole.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from szrag.code.model import CALLBACK_KIND, Definition

# An index keeps each file's units (``encoded_units``): a change to how any file is cut must
# bump ``index.store.UNITS_VERSION``, so that an index cut the old way is rebuilt (a test
# fails until it is bumped)
MAX_UNIT_LINES = 40  # a screenful: a longer definition is read, ranked and cited by its parts
MAX_UNIT_CHARS = 3400  # within a source's character bound, so no unit is cut mid-line later
MIN_PART_LINES = 12  # a cut closer than this to the last one leaves a part too small to read
MIN_GAP_LINES = 3  # fewer non-blank lines outside definitions join the unit before them
TAIL_LINES = 4  # a body's last lines past the bound that stay with the part before them
MOST_UNIT_LINES = MAX_UNIT_LINES + TAIL_LINES  # the most lines any unit holds
WINDOW_LINES = 40
PROSE_TYPES = frozenset({"markdown", "docs", "text"})  # file types cut at headings
CALLABLE_KINDS = frozenset({"function", "method", "arrow"})
TYPE_KINDS = frozenset({"class", "interface", "trait", "type"})

# a line that continues the statement above rather than starting one
_CONTINUES = re.compile(
    r"^\s*([)\]}>,.:?|&+\-*/%=]|else\b|elif\b|except\b|finally\b|catch\b|case\b|default\b"
    r"|when\b|rescue\b|ensure\b|end\b|\\)"
)
_WORD = re.compile(r"\w")
_MARKDOWN_HEADING = re.compile(r"^#{1,6}\s+\S")
_COMMENT = re.compile(r"^\s*(//|/\*|\*|#(?!include)|--|\"\"\"|''')")  # a comment's line
_ATTACHED = re.compile(r"^\s*(@|#\[|//|/\*|\*|#(?!include)|--|;|\"\"\"|''')")


@dataclass(frozen=True, slots=True)
class Unit:
    """Lines ``start``-``end`` (1-based, inclusive) of a file and what they are."""

    start: int
    end: int
    kind: str  # a definition kind, "part" of one, "module" lines, "section" or "window"
    name: str | None = None  # the definition (``Class.method``) or the section heading
    signature: str | None = None  # a part's definition line, shown with the part


def encoded_units(units: Iterable[Unit]) -> str:
    """``units`` as the index keeps them: JSON rows of start, end, kind, name, signature."""
    rows = [[unit.start, unit.end, unit.kind, unit.name, unit.signature] for unit in units]
    return json.dumps(rows, separators=(",", ":"))


def decoded_units(value: str) -> tuple[Unit, ...]:
    """The units ``encoded_units`` wrote."""
    return tuple(Unit(*row) for row in json.loads(value))


def file_units(lines: Sequence[str], definitions: Sequence[Definition], prose: bool) -> list[Unit]:
    """The units of a file of ``lines``: by definition where there are any, by heading for
    prose, else windows. They cover every non-blank line once, in order."""
    count = len(lines)
    if not count:
        return []
    if definitions:
        units = _code_units(lines, definitions)
    elif prose:
        units = _sections(lines)
    else:
        last = count
        while last > 1 and not lines[last - 1].strip():
            last -= 1  # the empty line after a final newline is no part of a window
        units = _windows(lines, 1, last, "window", None, None)
    return units


# ---- code --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Node:
    start: int
    end: int
    definition: Definition
    children: tuple[_Node, ...]


@dataclass(slots=True)
class _Open:
    start: int
    end: int
    definition: Definition
    children: list[_Open]


def _nest(lines: Sequence[str], definitions: Sequence[Definition]) -> list[_Node]:
    """The definitions as a forest (a method inside its class), each widened upwards over
    the decorators and comments directly above it."""
    count = len(lines)
    spans = sorted(
        {
            (max(1, item.line), min(count, max(item.line, item.end_line)), item)
            for item in definitions
            if item.line <= count
        },
        # of two with the same lines, a definition owns a callback (the named function a
        # call is handed: ``app.use("/x", function errorHandler ...)`` is ``errorHandler``)
        key=lambda span: (span[0], -span[1], span[2].kind == CALLBACK_KIND, span[2].name),
    )
    roots: list[_Open] = []
    stack: list[_Open] = []
    for start, end, item in spans:
        while stack and stack[-1].end < start:
            stack.pop()
        if stack and end > stack[-1].end:
            continue  # overlaps its neighbour without nesting: the outer one stands
        if stack and (start, end) == (stack[-1].start, stack[-1].end):
            continue  # the same lines found twice (an arrow function and its constant)
        entry = _Open(start, end, item, [])
        (stack[-1].children if stack else roots).append(entry)
        stack.append(entry)

    def freeze(entry: _Open, floor: int) -> _Node:
        top = entry.start
        while True:
            while top - 1 > floor and _ATTACHED.match(lines[top - 2]):
                top -= 1
            # a doc comment a blank line above (``*/``, then the definition) is still its own
            if top - 2 > floor and not lines[top - 2].strip() and _COMMENT.match(lines[top - 3]):
                top -= 1
                continue
            break
        frozen: list[_Node] = []
        inner_floor = entry.start
        for child in entry.children:
            node = freeze(child, inner_floor)
            frozen.append(node)
            inner_floor = node.end
        return _Node(top, entry.end, entry.definition, tuple(frozen))

    nodes: list[_Node] = []
    floor = 0
    for root in roots:
        node = freeze(root, floor)
        nodes.append(node)
        floor = node.end
    return nodes


def _code_units(lines: Sequence[str], definitions: Sequence[Definition]) -> list[Unit]:
    units: list[Unit] = []
    _cover(lines, 1, len(lines), _nest(lines, definitions), None, units)
    return _merge_small(lines, _join_small_heads(lines, units))


def _join_small_heads(lines: Sequence[str], units: list[Unit]) -> list[Unit]:
    """A type's own lines of only a few non-blank lines (``class Signer(Base):``, a field
    between two methods) join the member after them: a line alone is no answer to show."""
    joined: list[Unit] = []
    pending: Unit | None = None
    for unit in units:
        if pending is not None:
            owner = pending.name or ""
            if (
                unit.name
                and unit.name.startswith(owner + ".")
                and _fits(lines, pending.start, unit.end)
            ):
                unit = Unit(pending.start, unit.end, unit.kind, unit.name, unit.signature)
            else:
                _close(lines, joined, pending)
            pending = None
        own = unit.kind == "part" or unit.kind in TYPE_KINDS
        if own and unit.name and _non_blank(lines, unit) < MIN_GAP_LINES:
            pending = unit
            continue
        joined.append(unit)
    if pending is not None:
        _close(lines, joined, pending)
    return joined


def _close(lines: Sequence[str], joined: list[Unit], pending: Unit) -> None:
    """Add ``pending``, a type's own lines no member follows; a type's closing brace (lines
    without a word) stays with the member before it, as a body's last lines do."""
    words = any(_WORD.search(line) for line in lines[pending.start - 1 : pending.end])
    if joined and not words and joined[-1].end < pending.start:
        last = joined[-1]
        joined[-1] = Unit(last.start, pending.end, last.kind, last.name, last.signature)
    else:
        joined.append(pending)


def _qualified(item: Definition) -> str:
    return f"{item.container}.{item.name}" if item.container else item.name


def _cover(
    lines: Sequence[str],
    first: int,
    last: int,
    nodes: Sequence[_Node],
    owner: _Node | None,
    units: list[Unit],
) -> None:
    """Units for lines ``first``-``last``: each node's own, and the lines between them as
    the owner's (a class's header and fields) or the module's."""
    at = first
    for node in nodes:
        if node.start > at:
            _gap(lines, at, node.start - 1, owner, units)
        _definition(lines, node, units)
        at = node.end + 1
    if at <= last:
        _gap(lines, at, last, owner, units)


def _definition(lines: Sequence[str], node: _Node, units: list[Unit]) -> None:
    item = node.definition
    name = _qualified(item)
    if _fits(lines, node.start, node.end):
        units.append(Unit(node.start, node.end, item.kind, name))
        return
    children = node.children
    callable_ = item.kind in CALLABLE_KINDS or item.kind == CALLBACK_KIND
    if callable_:
        # a function's own helpers and closures are statements of its body: only one too
        # long to read at once is a unit apart, so a closure does not cut its function in
        # two; a callback a call names (a route's handler, a test) is a unit wherever it is,
        # unless it is a line or two (a listener that hands an error on)
        children = tuple(
            child
            for child in children
            if not _fits(lines, child.start, child.end) or _named_callback(lines, child)
        )
    if children:
        first = len(units)
        _cover(lines, node.start, node.end, children, node, units)
        if callable_:
            _join_head(lines, units, first)
    else:
        units.extend(_parts(lines, node.start, node.end, item.kind, name, _signature(lines, item)))


def _named_callback(lines: Sequence[str], node: _Node) -> bool:
    if node.definition.kind != CALLBACK_KIND:
        return False
    return _non_blank_between(lines, node.start, node.end) >= MIN_GAP_LINES


def _join_head(lines: Sequence[str], units: list[Unit], first: int) -> None:
    """A function's or callback's first lines, when only a few come before its first unit
    apart (``describe("reports", () => {``), join that unit rather than stand alone."""
    if len(units) < first + 2:
        return
    head, after = units[first], units[first + 1]
    if _non_blank(lines, head) < MIN_GAP_LINES and _fits(lines, head.start, after.end):
        units[first : first + 2] = [
            Unit(head.start, after.end, after.kind, after.name, after.signature)
        ]


def _gap(
    lines: Sequence[str], first: int, last: int, owner: _Node | None, units: list[Unit]
) -> None:
    while first <= last and not lines[first - 1].strip():
        first += 1
    while last >= first and not lines[last - 1].strip():
        last -= 1
    if first > last:
        return
    if owner is None:
        units.extend(_windows(lines, first, last, "module", None, None))
        return
    item = owner.definition
    kind = item.kind if first <= item.line else "part"
    units.extend(_parts(lines, first, last, kind, _qualified(item), _signature(lines, item)))


SIGNATURE_LINES = 8  # a signature written over more lines is named by its first ones
SIGNATURE_CHARS = 200
DECORATOR_LINES = 20  # decorators and attributes looked past to find the signature


def _signature(lines: Sequence[str], item: Definition) -> str | None:
    """The definition's signature on one line: its first line after any decorators or
    attributes, and the lines after it while a parenthesis it opened is still open
    (``def header(`` ... ``) -> str:``)."""
    at, depth = item.line - 1, 0
    while at < min(len(lines), item.line - 1 + DECORATOR_LINES):
        piece = lines[at].strip()
        if not (depth > 0 or piece.startswith(("@", "#["))):
            break
        depth = max(
            depth + piece.count("(") + piece.count("[") - piece.count(")") - piece.count("]"), 0
        )
        at += 1
    if at >= len(lines):
        return None
    pieces: list[str] = []
    depth = 0
    for line in lines[at : at + SIGNATURE_LINES]:
        piece = line.strip()
        pieces.append(piece)
        depth += piece.count("(") - piece.count(")")
        if depth <= 0:
            break
    joined = " ".join(piece for piece in pieces if piece)
    joined = joined.replace("( ", "(").replace(" )", ")").replace(",)", ")")
    return joined if len(joined) <= SIGNATURE_CHARS else joined[: SIGNATURE_CHARS - 3] + "..."


def _fits(lines: Sequence[str], first: int, last: int) -> bool:
    if last - first + 1 > MAX_UNIT_LINES:
        return False
    return sum(len(line) + 1 for line in lines[first - 1 : last]) <= MAX_UNIT_CHARS


def _parts(
    lines: Sequence[str],
    first: int,
    last: int,
    kind: str,
    name: str | None,
    signature: str | None,
) -> list[Unit]:
    """Lines ``first``-``last`` cut into bounded parts at statement starts: lines at the
    smallest indentation of the body that do not continue the line above."""
    body = [
        number
        for number in range(first + 1, last + 1)
        if lines[number - 1].strip() and not _CONTINUES.match(lines[number - 1])
    ]
    indents = [_indent(lines[number - 1]) for number in body]
    level = min(indents, default=0)
    starts = [number for number, indent in zip(body, indents, strict=True) if indent == level]
    parts: list[Unit] = []
    at = first
    while at <= last:
        end = _part_end(lines, at, last, starts)
        shown_kind = kind if at == first else "part"
        # every part but the definition's own first lines names the signature it belongs to
        shown = None if shown_kind != "part" else signature
        parts.append(Unit(at, end, shown_kind, name, shown))
        at = end + 1
    return parts


def _part_end(lines: Sequence[str], at: int, last: int, starts: Sequence[int]) -> int:
    """The last line of the part that begins at ``at``: before the latest statement start
    that keeps it bounded, else as far as the bound allows. The last few lines of a body
    (a ``return``, a closing brace) stay with the part before them, a little past the bound
    in lines, rather than making a part of their own."""
    limit = at
    chars = 0
    while limit <= last and limit - at < MOST_UNIT_LINES:
        chars += len(lines[limit - 1]) + 1
        if chars > MAX_UNIT_CHARS and limit > at:
            break
        limit += 1
    limit -= 1  # the last line within the bound and the tail's slack
    if limit >= last:
        return last
    limit = min(limit, at + MAX_UNIT_LINES - 1)  # no end of the body in reach: the bound
    # the latest start within reach (``starts`` ascend: a search, not a scan of every start)
    place = bisect.bisect_right(starts, limit + 1) - 1
    if place >= 0 and starts[place] >= at + MIN_PART_LINES:
        return starts[place] - 1
    return limit


def _indent(line: str) -> int:
    """The width of the line's leading whitespace, a tab reaching the next fourth column."""
    lead = line[: len(line) - len(line.lstrip())]  # only the lead is expanded: long lines
    return len(lead.expandtabs(4)) if "\t" in lead else len(lead)


def _merge_small(lines: Sequence[str], units: list[Unit]) -> list[Unit]:
    """Module lines of only a few non-blank lines join the unit before them, or the unit
    after them when they open its block (Rust's ``impl Printer for Pager {``)."""
    merged: list[Unit] = []
    pending: Unit | None = None  # small module lines with nothing before them yet
    for unit in units:
        small = unit.kind == "module" and _non_blank(lines, unit) < MIN_GAP_LINES
        if small and pending is None and _opens_block(lines[unit.end - 1]):
            # a closing brace before it still ends the unit before: only the opening goes on
            opening = unit.start
            while opening < unit.end and not _WORD.search(lines[opening - 1]):
                opening += 1
            closing = opening - 1
            while closing >= unit.start and not lines[closing - 1].strip():
                closing -= 1
            if closing >= unit.start:  # every line stays in a unit: apart if it must
                if merged and _fits(lines, merged[-1].start, closing):
                    last = merged[-1]
                    merged[-1] = Unit(last.start, closing, last.kind, last.name, last.signature)
                else:
                    merged.append(Unit(unit.start, closing, unit.kind, unit.name, unit.signature))
            pending = Unit(opening, unit.end, unit.kind, unit.name, unit.signature)
            continue
        if small and merged and _fits(lines, merged[-1].start, unit.end):
            merged[-1] = Unit(
                merged[-1].start, unit.end, merged[-1].kind, merged[-1].name, merged[-1].signature
            )
            continue
        if small and not merged and pending is None:
            pending = unit
            continue
        if pending is not None:
            if _fits(lines, pending.start, unit.end) and unit.signature is None:
                unit = Unit(pending.start, unit.end, unit.kind, unit.name, unit.signature)
            else:
                merged.append(pending)
            pending = None
        merged.append(unit)
    if pending is not None:
        merged.append(pending)
    return merged


def _opens_block(line: str) -> bool:
    return line.rstrip().endswith(("{", ":"))


def _non_blank(lines: Sequence[str], unit: Unit) -> int:
    return _non_blank_between(lines, unit.start, unit.end)


def _non_blank_between(lines: Sequence[str], first: int, last: int) -> int:
    return sum(1 for line in lines[first - 1 : last] if line.strip())


# ---- prose and the rest ------------------------------------------------------------------


def _sections(lines: Sequence[str]) -> list[Unit]:
    """Markdown sections, each from its heading to the next; long ones in bounded parts."""
    starts = [number for number, line in enumerate(lines, 1) if _MARKDOWN_HEADING.match(line)]
    if not starts or starts[0] != 1:
        starts.insert(0, 1)
    units: list[Unit] = []
    in_fence = False
    fenced: set[int] = set()
    for number, line in enumerate(lines, 1):  # a "#" inside a code block is no heading
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        elif in_fence:
            fenced.add(number)
    starts = [start for start in starts if start not in fenced]
    for place, start in enumerate(starts):
        end = starts[place + 1] - 1 if place + 1 < len(starts) else len(lines)
        heading = (
            lines[start - 1].lstrip("#").strip()
            if _MARKDOWN_HEADING.match(lines[start - 1])
            else None
        )
        units.extend(_windows(lines, start, end, "section", heading, heading))
    return [unit for unit in units if _non_blank(lines, unit)]


def _windows(
    lines: Sequence[str],
    first: int,
    last: int,
    kind: str,
    name: str | None,
    signature: str | None,
) -> list[Unit]:
    """Lines ``first``-``last`` whole when they fit, else bounded parts cut at blank lines
    where there are some."""
    if _fits(lines, first, last):
        return [Unit(first, last, kind, name)]
    blanks = [number + 1 for number in range(first, last) if not lines[number - 1].strip()]
    units: list[Unit] = []
    at = first
    while at <= last:
        end = _part_end(lines, at, last, blanks) if blanks else _part_end(lines, at, last, ())
        if not blanks and end - at + 1 > WINDOW_LINES and end < last:
            end = at + WINDOW_LINES - 1
        units.append(Unit(at, end, kind, name, signature if at != first else None))
        at = end + 1
    return units
