"""Text primitives shared by indexing and retrieval: tokens, file types, headings, chunks.

Pure functions, no I/O. The rules follow the original service so that scores are comparable.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Protocol, cast

CHUNK_SIZE = 60
CHUNK_STEP = 40

# Each pattern that splits words matches the capital letter a space goes before, tested from
# behind: a pattern that starts with a capital is tried only at capitals, which are few, and
# one that starts with a look-behind (or a lowercase letter) is tried at every character.
_CAMEL_BOUNDARY = re.compile(r"[A-Z](?<=[a-z][A-Z])")
# a token is a run of these characters in a token text (``token_text``), two or more
TOKEN_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
TOKEN_CLASS = "[a-z0-9]"
MIN_TOKEN = 2
_TOKEN = re.compile(rf"{TOKEN_CLASS}{{{MIN_TOKEN},}}")
_LINE_BREAK = re.compile(r"\r?\n")
_ALNUM = b"0123456789abcdefghijklmnopqrstuvwxyz"
# bytes.translate tables over a text's UTF-8 bytes, a C pass a character at a time (a str's
# translate looks every character up in a dict). An ASCII byte that is neither a letter nor
# a digit becomes a space, so str.split() cuts the text into its runs of letters and digits.
# A byte of a multi-byte character is never ASCII: the runs keep such characters, the words
# (of lowercase ASCII letters and digits only) end at them.
_RUN_BYTES = bytes(
    code if code >= 0x80 or bytes([code]).lower() in _ALNUM else 0x20 for code in range(256)
)
# each byte as its case: a lowercase ASCII letter "a", an uppercase one "A", any other "."
# (camelCase boundaries are found as "aA" by ``bytes.find``, far faster than a pattern)
_CASE_BYTES = bytes(
    0x61 if 0x61 <= code <= 0x7A else 0x41 if 0x41 <= code <= 0x5A else 0x2E for code in range(256)
)
_WORD_BYTES = bytes(
    bytes([code]).lower()[0] if code < 0x80 and bytes([code]).lower() in _ALNUM else 0x20
    for code in range(256)
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+)$")

_FILE_TYPES: dict[str, str] = {
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".py": "python",
    ".pyi": "python",
    ".md": "markdown",
    ".json": "json",
    ".yml": "yaml",
    ".yaml": "yaml",
    ".css": "css",
    ".html": "html",
    ".service": "config",
    ".conf": "config",
    ".example": "config",
    ".ini": "config",
    ".cfg": "config",
    ".toml": "toml",
    ".sh": "shell",
    ".rst": "text",
    ".txt": "text",
    ".mdx": "markdown",
    ".adoc": "text",
    ".xml": "config",
    ".properties": "config",
    ".vue": "vue",
    ".svelte": "svelte",
    ".astro": "astro",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".sc": "scala",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".m": "objc",
    ".mm": "objc",
    ".cs": "csharp",
    ".fs": "fsharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".erb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".lua": "lua",
    ".dart": "dart",
    ".zig": "zig",
    ".nim": "nim",
    ".jl": "julia",
    ".r": "r",
    ".pl": "perl",
    ".pm": "perl",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".elm": "elm",
    ".bash": "shell",
    ".zsh": "shell",
    ".fish": "shell",
    ".ps1": "shell",
    ".sql": "sql",
    ".y": "grammar",  # yacc and Bison
    ".yy": "grammar",
    ".l": "grammar",  # lex and flex
    ".g4": "grammar",  # ANTLR
    ".graphql": "graphql",
    ".gql": "graphql",
    ".proto": "protobuf",
    ".thrift": "thrift",
    ".tf": "terraform",
    ".tfvars": "terraform",
    ".hcl": "terraform",
    ".nix": "nix",
    ".scss": "css",
    ".sass": "css",
    ".less": "css",
    ".hbs": "html",
    ".ejs": "html",
    ".pug": "html",
    ".njk": "html",
    ".jinja": "html",
    ".j2": "html",
}
_NAMED_TYPES: dict[str, str] = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "makefile",
    "gnumakefile": "makefile",
    "justfile": "makefile",
    "rakefile": "ruby",
    "gemfile": "ruby",
    "vagrantfile": "ruby",
    "brewfile": "ruby",
    "jenkinsfile": "groovy",
    "cmakelists.txt": "cmake",
    "go.mod": "go",
    "build": "starlark",
    "workspace": "starlark",
}

# Languages whose structure szrag parses (definitions, imports, calls) with tree-sitter.
CODE_TYPES = frozenset({"javascript", "typescript", "python"})
# Every programming-language type: what answers "where is X implemented?" questions.
SOURCE_TYPES = CODE_TYPES | frozenset(
    {"vue", "svelte", "astro", "go", "rust", "java", "kotlin", "scala", "groovy", "c", "cpp"}
    | {"objc", "csharp", "fsharp", "ruby", "php", "swift", "elixir", "erlang", "lua", "dart"}
    | {"zig", "nim", "julia", "r", "perl", "clojure", "haskell", "ocaml", "elm", "shell", "sql"}
    | {"grammar"}
)


TEST_PATH = re.compile(
    r"(^|/)(tests?|Tests?|__tests__|spec|fixtures)/|(^|/)test_[^/]*$|[._-](test|spec)\.[a-z]+$"
    # SwiftPM's Tests/, an Xcode test target (ShopTests/), a Gradle source set (src/jvmTest/),
    # a .NET test project (Shop.Tests/)
    r"|(^|/)\w+Tests/|(^|/)src/\w*[a-z]Tests?/|(^|/)[\w.]+\.Tests?/"
    # a JUnit, Kotlin, PHPUnit, XCTest or NUnit class (CacheTest.kt, OrderTests.cs,
    # PayIT.java), but not a testing library's own code (src/main/.../ParameterizedTest.java)
    r"|^(?!(.*/)?(src/main|Sources)/).*[a-z0-9](Tests?|IT)"
    r"\.(java|kt|kts|scala|groovy|cs|fs|php|swift)$"
)


@functools.lru_cache(maxsize=1 << 16)  # asked of every candidate file of every question
def is_test_path(path: str) -> bool:
    """A test, spec or fixture file."""
    return bool(TEST_PATH.search(path))


@dataclass(frozen=True, slots=True)
class Chunk:
    """A window of lines from one file (1-based, inclusive)."""

    start: int
    end: int
    type: str
    heading: str | None
    text: str


def _space_before(match: re.Match[str]) -> str:
    # a function: a template such as r" \g<0>" is expanded by Python code for every match
    return " " + match[0]


def tokens(value: str) -> set[str]:
    """Unique lowercase alphanumeric tokens of two or more characters, camelCase split."""
    # path separators need no pass of their own: no token holds one. A token never spans an
    # ASCII character that is neither a letter nor a digit, so the patterns need only read
    # each distinct run between such characters once (code repeats its names many times);
    # a short text (a name, a path, a question) is read as it stands, faster than cut
    if len(value) < SHORT_TEXT:
        return set(_TOKEN.findall(token_text(value)))
    separated = value.encode("utf-8", "surrogatepass").translate(_RUN_BYTES)
    runs = " ".join(set(separated.decode("utf-8", "surrogatepass").split()))
    return set(_TOKEN.findall(token_text(runs)))


def tokens_by_line(value: str) -> list[set[str]]:
    """``tokens`` of each line of ``value`` (split at newlines), the text read once."""
    return [set(_TOKEN.findall(line)) for line in token_text(value).split("\n")]


def token_text(value: str) -> str:
    """``value`` as ``tokens_by_line`` reads it: a space at each camelCase boundary, then
    lowercased. Its tokens are its runs of two or more ASCII letters and digits, each where
    it stands, and its lines are ``value``'s (a camelCase boundary is two letters, never a
    newline)."""
    if len(value) < SHORT_TEXT:
        return _CAMEL_BOUNDARY.sub(_space_before, value).lower()
    return _spaced_through_bytes(value)


SHORT_TEXT = 1024  # characters below which the pattern spaces a text faster than bytes do


def _spaced_through_bytes(value: str) -> str:
    """``token_text`` of a long text: its camelCase boundaries found as "aA" in a case map of
    its bytes, far faster than the pattern calling a function at each."""
    data = value.encode("utf-8", "surrogatepass")
    ascii_only = len(data) == len(value)
    # between the pieces of the case shape split at each "aA" (never overlapping), the places
    # of the capitals: between two ASCII letters, never inside a character's bytes
    pieces = [len(piece) for piece in data.translate(_CASE_BYTES).split(b"aA")]
    if len(pieces) == 1:
        return data.lower().decode("ascii") if ascii_only else value.lower()
    cuts = itertools.accumulate((size + 2 for size in pieces[1:-1]), initial=pieces[0] + 1)
    ends = [0, *cuts, len(data)]
    spaced = b" ".join(data[start:end] for start, end in itertools.pairwise(ends))
    if ascii_only:  # bytes lowercase ASCII letters alone, and faster than a string
        return spaced.lower().decode("ascii")
    return spaced.decode("utf-8", "surrogatepass").lower()


@functools.lru_cache(maxsize=1 << 16)
def path_tokens(path: str) -> frozenset[str]:
    """The tokens of a repository path, remembered: every question scores every path."""
    return frozenset(tokens(path))


def words(value: str) -> list[str]:
    """Distinct maximal alphanumeric runs of the lowercased text, in first-seen order.

    A token occurs as a substring of the lowercased text exactly when it occurs inside
    one of these runs, so they stand in for the text in substring matching.
    """
    # lowercased (ASCII, the only letters a word holds) and cut at every other character in
    # one pass; any other text is lowercased first, as a letter outside ASCII may lowercase
    # into it (the Kelvin sign into k)
    if value.isascii():
        data = value.encode("ascii")
    else:
        data = value.lower().encode("utf-8", "surrogatepass")
    return list(dict.fromkeys(data.translate(_WORD_BYTES).decode("ascii").split()))


_VOWEL = re.compile(r"[aeiouy]")
_KEPT_DOUBLES = frozenset("lsz")  # "call", "pass", "buzz" end doubled in their own right
MIN_STEM = 3  # shorter words ("use", "add", "of") are left whole: too little left to compare
STEMMED_WORDS = 16_384  # the words whose stems a process keeps: code repeats its words


@functools.lru_cache(maxsize=STEMMED_WORDS)
def stem(word: str) -> str:
    """``word`` (lowercase) without its English inflection, so that ``registered``,
    ``registers``, ``registering`` and ``register`` share one stem, as ``blueprints`` and
    ``blueprint`` do. Deliberately light: plurals, third person, past and ``-ing`` forms only;
    a derived word (``registration``, ``router``) keeps a stem of its own."""
    if len(word) <= MIN_STEM or not word.isalpha():
        return word
    base = word
    if word.endswith(("ies", "ied")) and len(word) > MIN_STEM + 2:
        base = word[:-3] + "y"  # entries, applied
    elif word.endswith("sses"):
        base = word[:-2]  # classes
    else:
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            base = word[:-1]  # blueprints, caches, settings; not class, status, analysis
        if base.endswith(("ing", "ed")):
            rest = base[: -3 if base.endswith("ing") else -2]
            if len(rest) >= MIN_STEM and _VOWEL.search(rest):  # not "string" or "need"
                base = rest
    if len(base) > MIN_STEM and base[-1] == base[-2] and base[-1] not in _KEPT_DOUBLES:
        base = base[:-1]  # mapped, running
    if base.endswith("e") and len(base) > MIN_STEM:
        base = base[:-1]  # parse / parsed / parsing
    return base


def extensions_of(*kinds: str) -> dict[str, str]:
    """The extensions of files of these types, each with its type."""
    return {extension: kind for extension, kind in _FILE_TYPES.items() if kind in kinds}


def file_type(path: str) -> str:
    """The detected type of a file from its extension or well-known name ("text" if unknown)."""
    pure = PurePosixPath(path)
    named = _NAMED_TYPES.get(pure.name.lower())
    if named is not None:
        return named
    return _FILE_TYPES.get(pure.suffix.lower(), "text")


def split_lines(content: str) -> list[str]:
    """Lines split on LF or CRLF, as the chunker sees them."""
    # str.split is several times faster than the pattern, and the same without a CR
    return _LINE_BREAK.split(content) if "\r" in content else content.split("\n")


class LineRanges:
    """Line ranges ``(first, last)``, for asking whether a chunk's lines ``(start, end)``
    overlap one of them: merged once, each test a binary search (a file's symbols are often
    dozens of ranges, asked of every chunk of the file)."""

    __slots__ = ("_bisect", "_ends", "_ranges", "_starts", "_unmerged")

    def __init__(self, ranges: Iterable[tuple[int, int]]) -> None:
        from bisect import bisect_left  # a C module a one-shot retrieval need not load

        self._bisect = bisect_left
        self._ranges = list(ranges)
        self._starts: list[int] = []
        self._ends: list[int] = []
        # an inverted range overlaps the chunks that hold both its ends: not one interval
        self._unmerged = [item for item in self._ranges if item[0] > item[1]]
        for first, last in sorted(item for item in self._ranges if item[0] <= item[1]):
            if self._ends and first <= self._ends[-1] + 1:  # lines are whole numbers
                self._ends[-1] = max(self._ends[-1], last)
            else:
                self._starts.append(first)
                self._ends.append(last)

    def overlap(self, start: int, end: int) -> bool:
        """Whether lines ``start`` to ``end`` overlap one of the ranges."""
        if start > end:  # not a span of lines: the plain test, range by range
            return any(start <= last and end >= first for first, last in self._ranges)
        at = self._bisect(self._ends, start)
        if at < len(self._ends) and self._starts[at] <= end:
            return True
        return any(start <= last and end >= first for first, last in self._unmerged)


def heading_before(lines: list[str], start: int) -> str | None:
    """The nearest Markdown heading at or above line index ``start``."""
    for index in range(min(start, len(lines) - 1), -1, -1):
        match = _HEADING.match(lines[index])
        if match:
            return match.group(1).strip()
    return None


class Window(Protocol):
    """Lines of a file from ``start`` (1-based), newline-joined: a chunk as written or read."""

    @property
    def start(self) -> int: ...

    @property
    def text(self) -> str: ...


def stitch_lines(windows: Iterable[Window], first: int = 1, last: int | None = None) -> list[str]:
    """Lines ``first``-``last`` (1-based, inclusive; to the end without ``last``) of a file,
    put together from ``windows`` of it (in file order, mostly; a line no window holds is
    empty)."""
    # a line is the first window's that holds it; windows come in file order, so each one
    # mostly extends the lines stitched so far (``stitched[0]`` is line ``base``)
    stitched: list[str | None] = []
    base = 0
    holes = False
    for window in windows:
        texts = window.text.split("\n")
        if not stitched:
            base = window.start
        elif window.start < base:  # out of order: the lines before are put in front
            stitched[:0] = [None] * (base - window.start)
            base, holes = window.start, True
        at = window.start - base
        if holes or at > len(stitched):
            holes = True  # lines no window held yet: each one is looked at
            if at + len(texts) > len(stitched):
                stitched.extend([None] * (at + len(texts) - len(stitched)))
            for offset, line in enumerate(texts, at):
                if stitched[offset] is None:
                    stitched[offset] = line
        else:  # every line so far is held: the window adds those past them
            stitched.extend(texts[len(stitched) - at :])
    while stitched and stitched[-1] is None:
        stitched.pop()
    top = base + len(stitched) - 1 if stitched else 0
    if last is not None:
        top = min(last, top)
    start = max(first, 1)
    if top < start:
        return []
    if not holes and start >= base:
        return cast("list[str]", stitched[start - base : top - base + 1])
    return [
        (stitched[number - base] or "") if 0 <= number - base < len(stitched) else ""
        for number in range(start, top + 1)
    ]


def create_chunks(
    content: str, path: str, chunk_size: int = CHUNK_SIZE, chunk_step: int = CHUNK_STEP
) -> list[Chunk]:
    """Overlapping windows of ``chunk_size`` lines every ``chunk_step`` lines."""
    if chunk_size < 1 or chunk_step < 1:
        raise ValueError("chunk_size and chunk_step must be positive")
    lines = split_lines(content)
    kind = file_type(path)
    chunks: list[Chunk] = []
    for start in range(0, len(lines), chunk_step):
        window = lines[start : start + chunk_size]
        chunks.append(
            Chunk(
                start=start + 1,
                end=min(start + chunk_size, len(lines)),
                type=kind,
                heading=heading_before(lines, start) if kind == "markdown" else None,
                text="\n".join(window),
            )
        )
    return chunks


_QUOTE_LEAD = re.compile(r"^[\"'`(]+")
_QUOTE_TRAIL = re.compile(r"[\"'`),.]+$")


def normalise_path(value: str) -> str:
    """A file reference as written in a question, made comparable with indexed paths."""
    cleaned = _QUOTE_TRAIL.sub("", _QUOTE_LEAD.sub("", value.strip()))
    cleaned = cleaned.replace("\\", "/")
    cleaned = re.sub(r"^\./+", "", cleaned)
    return cleaned.lower()


def _path_pattern(extensions: frozenset[str]) -> str:
    """A path with one of ``extensions`` as a question writes it (folders optional)."""
    names = "|".join(
        sorted((re.escape(ext.lstrip(".")) for ext in extensions), key=len, reverse=True)
    )
    # starting only where a run of path characters starts: tried at every character of a
    # long run without a separator, the pattern took seconds
    return rf"(?<![\w.-])(?:[\w.-]+[/\\])*[\w.-]+\.(?:{names})\b"


def extract_file_references(question: str, extensions: frozenset[str]) -> list[str]:
    """Paths with a known extension mentioned in the question, normalised, first-seen order."""
    if not extensions:
        return []
    pattern = re.compile(_path_pattern(extensions), re.IGNORECASE)
    return list(dict.fromkeys(normalise_path(match) for match in pattern.findall(question)))


def extract_line_references(question: str, extensions: frozenset[str]) -> list[tuple[str, int]]:
    """(path, line) for each line of a file the question names as a stack trace, an editor or
    a link writes it: ``server/webhook.js:20`` (``:20:5``), Python's ``File "app.py", line
    20``, ``app.py#L20``; paths normalised, first-seen order."""
    if not extensions:
        return []
    pattern = re.compile(
        rf"({_path_pattern(extensions)})(?::(\d+)|[\"']?,\s+line\s+(\d+)|#L(\d+))",
        re.IGNORECASE,
    )
    found = (
        (normalise_path(path), int(colon or python or anchor))
        for path, colon, python, anchor in pattern.findall(question)
    )
    return list(dict.fromkeys(found))


# a link to a file on a forge's web page: what follows blob/<branch>/ is the repository's path
_LINKED_PATH = re.compile(
    r"^(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org)/[^/]+/[^/]+/(?:-/)?"
    r"(?:blob|tree|raw|src)/[^/]+/(.+)$"
)
# where a trace's frame is some installed dependency's code, not the repository's own
_DEPENDENCY_FOLDER = re.compile(r"(^|/)(node_modules|site-packages|dist-packages)/")


def path_suffixes(requested: str) -> list[str]:
    """The repository paths a path the question writes may name, longest first: itself, then
    each tail of it, as a stack trace writes a file where it was deployed or installed
    (``/srv/app/server/webhook.js``, ``.../site-packages/httpx/_client.py``); a link to a file
    on GitHub, GitLab or Bitbucket names what follows its ``blob/<branch>/``. A file name alone
    only under at most one folder (``/app/main.py``): deep in a trace it is some dependency's."""
    parts = requested.split("/")
    last = len(parts) - 1
    shallow = last <= 1
    tails = ["/".join(parts[start:]) for start in range(len(parts)) if start < last or shallow]
    linked = _LINKED_PATH.match(requested)
    return [linked.group(1), *tails] if linked else tails


def own_paths(requested: Sequence[str]) -> list[str]:
    """Of the paths a question writes, those of the repository's own code: a trace's frames
    in installed dependencies (``node_modules/``, ``site-packages/``) are left out when it
    has other frames, since a tail of theirs (``lib/utils.js``) could name a file of the
    repository's that the frame is not; all of them when it has none (the question is about
    the dependency itself, installed)."""
    own = [path for path in requested if not _DEPENDENCY_FOLDER.search(path)]
    return own or list(requested)


_LOWER_UPPER = re.compile(r"[A-Z](?<=[a-z0-9][A-Z])")
_ACRONYM_WORD = re.compile(r"[A-Z](?<=[A-Z][A-Z])(?=[a-z])")


def symbol_key(name: str) -> str:
    """How a function or class name is looked up: last dotted part, lowercase, no underscores."""
    return name.rsplit(".", 1)[-1].replace("_", "").lower()


_KEY_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"
SPELLING_MIN = 6  # a shorter name has too many neighbours one letter away to guess between


def near_spellings(key: str) -> set[str]:
    """The lookup keys one slip of a typing hand from ``key`` (a letter left out, added,
    changed, or two swapped): how ``restartServce`` finds ``restartService``. Empty for a
    key shorter than ``SPELLING_MIN``."""
    if len(key) < SPELLING_MIN:
        return set()
    splits = [(key[:cut], key[cut:]) for cut in range(len(key) + 1)]
    found = {head + tail[1:] for head, tail in splits if tail}
    found |= {head + tail[1] + tail[0] + tail[2:] for head, tail in splits if len(tail) > 1}
    found |= {head + letter + tail[1:] for head, tail in splits if tail for letter in _KEY_LETTERS}
    found |= {head + letter + tail for head, tail in splits for letter in _KEY_LETTERS}
    found.discard(key)
    return found


def split_identifiers(text: str) -> str:
    """camelCase, PascalCase and snake_case identifiers spelt as separate words.

    Never joins or splits lines, so a whole file can be rewritten once and cut into chunks.
    """
    spaced = _ACRONYM_WORD.sub(_space_before, _LOWER_UPPER.sub(_space_before, text))
    return spaced.replace("_", " ")


def code_terms(text: str, text_words: list[str] | None = None) -> str:
    """Text rewritten for a full-text index that understands code.

    Identifiers are split into their words, followed by the text's distinct lowercase runs,
    which keep each camelCase identifier whole: both "github signature" and
    "verifyGithubSignature" then find ``verifyGithubSignature``.
    """
    runs = words(text) if text_words is None else text_words
    return f"{split_identifiers(text)}\n{' '.join(runs)}"


def chunk_code_terms(content: str, chunks: list[Chunk], chunk_words: list[str]) -> list[str]:
    """``code_terms`` of every chunk, rewriting the file once; ``chunk_words`` are the
    chunks' space-joined ``words``."""
    return _window_terms(split_lines(split_identifiers(content)), chunks, chunk_words)


def lines_code_terms(lines: list[str], chunks: list[Chunk], chunk_words: list[str]) -> list[str]:
    """``chunk_code_terms`` from the file's lines (each without its line break)."""
    # split_identifiers keeps every line a line of its own
    return _window_terms(split_identifiers("\n".join(lines)).split("\n"), chunks, chunk_words)


def _window_terms(split: list[str], chunks: list[Chunk], chunk_words: list[str]) -> list[str]:
    return [
        "\n".join(split[chunk.start - 1 : chunk.end]) + "\n" + joined
        for chunk, joined in zip(chunks, chunk_words, strict=True)
    ]
