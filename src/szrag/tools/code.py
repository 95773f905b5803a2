"""The code tools: what a model (in the default profile) and an MCP client may ask of the
repository's index beside the live tools. Search it again with other words, find where a
name is defined or called, and read a file's lines by number: the packed context holds a
found file's best units, and when the change a question is about sits in another part of
that file (the gap line-level evaluation measures), the model can read it before answering.

Each runner is synchronous (index reads) and returns public JSON; source text is redacted.
The model's tool loop marks their results ``CODE_LABEL``, not as live runtime evidence.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from szrag.base.errors import PathError, QuestionError
from szrag.base.public import to_public
from szrag.base.redact import redact
from szrag.index.protocol import IndexStore
from szrag.tools.definitions import CODE_TOOL, ToolDefinition
from szrag.tools.schema import count_schema, object_schema, text_schema

# the rankers and the structure queries are imported by the calls: a host that offers these
# tools and answers without a model loads neither
MAX_SEARCH_CHARS = 2000  # a model's search words, well under a question's bound

CODE_LABEL = "REPOSITORY CODE (read from the index: cite path:start-end)"
DEFAULT_SOURCES = 5
MAX_SOURCES = 10
DEFAULT_MATCHES = 20
MAX_MATCHES = 100
READ_LINES = 80  # lines read from startLine when no endLine is given
MAX_READ_LINES = 200  # lines one call may read

CodeRunner = Callable[[IndexStore, Mapping[str, Any]], Any]


def search_code(index: IndexStore, question: str, limit: int = DEFAULT_SOURCES) -> dict[str, Any]:
    """The files that best answer ``question``, best first, each with its best units."""
    from szrag.rank.retrieve import retrieve

    sources = retrieve(question, limit, index=index)
    return {"question": question, "sources": [to_public(source.redacted()) for source in sources]}


def symbols_matching(
    index: IndexStore, question: str, limit: int = DEFAULT_MATCHES
) -> dict[str, Any]:
    """The definitions whose names best match ``question``, best first."""
    from szrag.structure.queries import find_symbols

    return {"symbols": to_public(find_symbols(question, index)[:limit])}


def references_to(index: IndexStore, name: str, limit: int = DEFAULT_MATCHES) -> dict[str, Any]:
    """Where ``name`` is called, with the definition each call sits in; when nowhere, the
    defined names one letter away (``didYouMean``)."""
    from szrag.structure.queries import references_report

    shown: dict[str, Any] = to_public(references_report(name, index, limit))
    return {**shown, "name": name}  # as asked, not as looked up


@dataclass(frozen=True, slots=True)
class CodeRead:
    """Lines read from an indexed file: where, whether the file goes on past them, and the
    lines themselves, each as ``N: line``."""

    path: str
    start_line: int
    end_line: int
    more_lines: bool
    text: str


def read_code(
    index: IndexStore, path: str, start_line: int = 1, end_line: int | None = None
) -> CodeRead:
    """The lines ``start_line``-``end_line`` of an indexed file (at most ``MAX_READ_LINES``;
    ``READ_LINES`` without an end), numbered, secrets redacted; PathError for a file the
    index does not hold or a start past its end, QuestionError for an end before the start."""
    from szrag.structure.queries import indexed_path

    try:
        found = indexed_path(path, index)
    except PathError as error:  # said without the server's own folder
        message = error.message.replace(f" of {index.root}", "").replace(f" {index.root}", "")
        raise PathError(message) from None
    last = start_line + READ_LINES - 1 if end_line is None else end_line
    if last < start_line:
        raise QuestionError(f"endLine {last} is before startLine {start_line}")
    last = min(last, start_line + MAX_READ_LINES - 1)
    lines = index.lines(found, start_line, last + 1)  # one more: whether the file goes on
    more = len(lines) > last - start_line + 1
    shown = lines[: last - start_line + 1]
    if not more and shown and shown[-1] == "":  # the end of the file's last line
        shown.pop()
    if not shown and start_line > 1:
        raise PathError(f"{found} has fewer than {start_line} lines")
    end = start_line + len(shown) - 1
    return CodeRead(found, start_line, end, more, _numbered(shown, start_line, found))


def _numbered(lines: list[str], first: int, path: str) -> str:
    """``lines`` (the first numbered ``first``) redacted, then each shown as ``N: line``.

    Redaction runs on the lines as they are: a number before each would hide the start of
    a line that many rules look for (``KEY=value``, ``password:``, a private key's BEGIN
    line). A secret over several lines becomes one marker, numbered as the first of them."""
    redacted = redact("\n".join(lines), path=path).split("\n")
    if len(redacted) == len(lines):
        return "\n".join(f"{first + offset}: {line}" for offset, line in enumerate(redacted))
    numbered: list[str] = []
    matcher = difflib.SequenceMatcher(a=lines, b=redacted, autojunk=False)
    for _, start, stop, shown_start, shown_stop in matcher.get_opcodes():
        for offset in range(shown_stop - shown_start):
            number = first + min(start + offset, max(start, stop - 1))
            numbered.append(f"{number}: {redacted[shown_start + offset]}")
    return "\n".join(numbered)


def _line(description: str) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "description": description}


CODE_TOOLS: tuple[ToolDefinition, ...] = (
    ToolDefinition(
        "searchCode",
        "Search the repository's indexed code and documentation again, with other words than "
        "the question's (a function's name, an error message, a setting): the files that best "
        "match, best first, each with its best units (path, startLine, endLine, text).",
        object_schema(
            {
                "question": text_schema("Keywords or a question", MAX_SEARCH_CHARS),
                "limit": count_schema(DEFAULT_SOURCES, MAX_SOURCES, "How many files at most"),
            },
            ("question",),
        ),
        "index",
        CODE_TOOL,
    ),
    ToolDefinition(
        "findSymbols",
        "Where functions, classes and methods are defined, by name or by a question: path, "
        "name, kind, line and endLine of each, best match first.",
        object_schema(
            {
                "question": text_schema("A name or words of it, e.g. build_auth_header", 200),
                "limit": count_schema(DEFAULT_MATCHES, MAX_MATCHES, "How many definitions at most"),
            },
            ("question",),
        ),
        "index",
        CODE_TOOL,
    ),
    ToolDefinition(
        "findReferences",
        "Where a function, method or class is called: path, line, the definition each call "
        "sits in (caller) and the line of code; for a name called and defined nowhere, "
        "didYouMean lists the defined names one letter away.",
        object_schema(
            {
                "name": text_schema("The name called, e.g. verify_signature or Client.send", 200),
                "limit": count_schema(DEFAULT_MATCHES, MAX_MATCHES, "How many call sites at most"),
            },
            ("name",),
        ),
        "index",
        CODE_TOOL,
    ),
    ToolDefinition(
        "readCode",
        "Read lines of an indexed file by number, e.g. the rest of a function an excerpt "
        f"shows in part: numbered lines, at most {MAX_READ_LINES} a call ({READ_LINES} from "
        "startLine without endLine); moreLines says whether the file goes on.",
        object_schema(
            {
                "path": text_schema(
                    "The file's path as the excerpts give it, e.g. src/app.py", 1000
                ),
                "startLine": _line("The first line to read (default 1)"),
                "endLine": _line("The last line to read"),
            },
            ("path",),
        ),
        "index",
        CODE_TOOL,
    ),
)
CODE_TOOLS_BY_NAME = {tool.name: tool for tool in CODE_TOOLS}

RUNNERS: dict[str, CodeRunner] = {
    "searchCode": lambda index, args: search_code(
        index, args["question"], args.get("limit", DEFAULT_SOURCES)
    ),
    "findSymbols": lambda index, args: symbols_matching(
        index, args["question"], args.get("limit", DEFAULT_MATCHES)
    ),
    "findReferences": lambda index, args: references_to(
        index, args["name"], args.get("limit", DEFAULT_MATCHES)
    ),
    "readCode": lambda index, args: to_public(
        read_code(index, args["path"], args.get("startLine", 1), args.get("endLine"))
    ),
}
