"""Units follow the code: definitions, class lines, long bodies in parts, prose by heading."""

from __future__ import annotations

import random
import sqlite3
import textwrap
import zlib
from pathlib import Path

import pytest

from szrag.answer import Question
from szrag.base.errors import DamagedIndexError
from szrag.code.extract import analyse
from szrag.code.units import MAX_UNIT_CHARS, MAX_UNIT_LINES, MOST_UNIT_LINES, Unit, file_units
from szrag.index import build_index, load_index
from szrag.rank.retrieve import retrieve
from szrag.rank.units import (
    FILE_UNITS,
    SCREEN_LINES,
    FileUnits,
    chosen_units,
    cut_of,
    rank_units,
    units_of,
)
from szrag.rank.words import quoted_literals


def units_for(path: str, text: str) -> list[Unit]:
    record = analyse(path, text)
    definitions = record.functions if record is not None else ()
    return file_units(text.split("\n"), definitions, prose=path.endswith(".md"))


def spans(units: list[Unit]) -> list[tuple[int, int, str, str | None]]:
    return [(unit.start, unit.end, unit.kind, unit.name) for unit in units]


PYTHON = textwrap.dedent(
    '''\
    import hashlib
    import os

    LIMIT = 10


    class Signer:
        """Signs payloads."""

        secret: str

        def __init__(self, secret):
            self.secret = secret

        @staticmethod
        def digest(body):
            return hashlib.sha256(body).hexdigest()


    def verify(signature, body):
        expected = Signer(os.environ["KEY"]).digest(body)
        return expected == signature
    '''
)


def test_python_file_gives_module_lines_a_class_its_methods_and_a_function() -> None:
    units = units_for("app.py", PYTHON)
    # a small class is one unit whole; the function has a unit of its own
    assert spans(units) == [
        (1, 4, "module", None),
        (7, 17, "class", "Signer"),
        (20, 22, "function", "verify"),
    ]


def test_a_long_class_is_cut_into_its_header_and_each_method_with_decorators() -> None:
    filler = "".join(f"        value_{n} = {n}\n" for n in range(90))
    text = PYTHON.replace("        return hashlib", filler + "        return hashlib")
    units = units_for("app.py", text)
    named = {(unit.kind, unit.name) for unit in units}
    assert ("class", "Signer") in named  # the class's own lines: docstring and fields
    assert ("method", "Signer.__init__") in named
    header = next(unit for unit in units if unit.kind == "class")
    assert (header.start, header.end) == (7, 10)
    digest = next(unit for unit in units if unit.name == "Signer.digest")
    assert text.split("\n")[digest.start - 1].strip() == "@staticmethod"  # decorator kept


def test_a_5000_line_function_is_cut_in_bounded_parts_at_statements_naming_its_signature() -> None:
    body = "".join(
        f"    total = total + {n}\n" if n % 7 else f"    if total > {n}:\n        total = 0\n"
        for n in range(5000)
    )
    text = f"def huge(total):\n{body}    return total\n"
    units = units_for("huge.py", text)
    lines = text.split("\n")
    assert len(units) > 5000 // MAX_UNIT_LINES
    # a part is cut at the bound; only the body's last few lines may stay past it
    assert all(unit.end - unit.start + 1 <= MAX_UNIT_LINES for unit in units[:-1])
    assert units[-1].end - units[-1].start + 1 <= MOST_UNIT_LINES
    assert units[0].kind == "function" and units[0].signature is None
    for unit in units[1:]:
        assert unit.kind == "part" and unit.name == "huge"
        assert unit.signature == "def huge(total):"
        # each part begins a statement of the body, never inside an `if` block
        assert lines[unit.start - 1].startswith("    ") and not lines[unit.start - 1].startswith(
            "        "
        )
    covered = [number for unit in units for number in range(unit.start, unit.end + 1)]
    assert covered == list(range(1, len(lines)))  # every line once, in order


def test_a_bodys_last_few_lines_stay_with_the_part_before_them() -> None:
    # a return past the bound is not a part of its own; eight lines past it are
    def function(extra: int) -> str:
        body = "".join(f"    total += {number}\n" for number in range(MAX_UNIT_LINES - 2 + extra))
        return f"def add(total):\n{body}    return total\n"

    near = units_for("near.py", function(2))  # 42 lines
    assert spans(near) == [(1, 42, "function", "add")]
    far = units_for("far.py", function(8))
    assert [unit.kind for unit in far] == ["function", "part"]
    assert far[0].end - far[0].start + 1 <= MAX_UNIT_LINES
    assert far[-1].end == 48 and far[-1].end - far[-1].start + 1 >= 8


def test_a_doc_comment_a_blank_line_above_its_function_is_part_of_it() -> None:
    # express's style: the JSDoc, a blank line, then the function; a header comment with
    # code after it stays where it is
    source = textwrap.dedent(
        """\
        /*!
         * app
         */

        var merge = require('merge');

        /**
         * Dispatch a req, res pair into the application.
         *
         * @private
         */

        app.handle = function handle(req, res) {
          return merge(req, res);
        };
        """
    )
    found = spans(units_for("app.js", source))
    assert found[-1] == (7, 15, "function", "handle")
    assert all(start < 7 for start, _, kind, _ in found[:-1] if kind == "module")


def test_a_part_names_the_whole_signature_past_its_decorators() -> None:
    # a decorated definition whose signature spans lines: each later part names it whole
    body = "".join(f"    total += {number}\n" for number in range(60))
    source = (
        '@app.route(\n    "/report",\n    methods=["POST"],\n)\n@login_required\n'
        "def report(\n    request,\n    user,\n):\n    total = 0\n"
        f"{body}    return total\n"
    )
    units = units_for("views.py", source)
    assert units[0].start == 1 and units[0].signature is None
    assert len(units) > 1
    assert {unit.signature for unit in units[1:]} == {"def report(request, user):"}


def test_a_closure_stays_in_its_function_and_each_part_names_the_signature() -> None:
    # a 47-line method holding a two-line helper: cut at its statements like any long
    # body, not into its first lines, the helper and a rest with no signature
    body = "\n".join(f"        total += {number}" for number in range(40))
    source = (
        "class Auth:\n"
        "    def header(self, request):\n"
        "        total = 0\n\n"
        "        def digest(data):\n"
        "            return data.upper()\n\n"
        f"{body}\n"
        "        return digest(str(total))\n"
    )
    units = units_for("auth.py", source)
    method = [unit for unit in units if unit.name == "Auth.header"]
    assert [unit.kind for unit in method] == ["method", "part"]
    assert method[0].start == 2 and method[-1].end == source.count("\n")
    assert method[0].signature is None and method[1].signature == "def header(self, request):"
    assert not [unit for unit in units if unit.name and "digest" in unit.name]


def test_a_long_helper_is_a_unit_apart_and_the_rest_of_its_function_names_the_signature() -> None:
    # a helper too long to read at once keeps its own unit; the function's lines after it
    # are a part that says which function they belong to
    helper = "\n".join(f"        step_{number} = {number}" for number in range(45))
    source = (
        "def outer(value):\n"
        "    first = value\n\n"
        "    def inner():\n"
        f"{helper}\n"
        "        return step_0\n\n"
        "    second = inner()\n"
        "    return first + second\n"
    )
    units = units_for("outer.py", source)
    assert [(unit.kind, unit.name) for unit in units if unit.name == "inner"] == [
        ("function", "inner"),
        ("part", "inner"),
    ]
    tail = [unit for unit in units if unit.name == "outer" and unit.start > 40]
    assert tail and all(unit.signature == "def outer(value):" for unit in tail)
    assert units[0].kind == "function" and units[0].signature is None


def test_a_class_line_alone_joins_the_member_after_it() -> None:
    # in a class too long to be one unit, ``class Formatter(Base):`` and a lone field are
    # no answer to show: each joins the method after it, which keeps its name; a class
    # whose own lines are more than a few keeps them as a unit
    body = "".join(f"        step_{number} = {number}\n" for number in range(20))

    def method(name: str) -> str:
        return f"    def {name}(self):\n{body}        return 1\n"

    source = (
        f"class Formatter(Base):\n{method('start')}\n    ready = False\n\n{method('finish')}\n\n"
        f'class Settings:\n    """What the command line sets."""\n\n    verbose = False\n'
        f"    quiet = False\n\n{method('load')}{method('save')}"
    )
    lines = source.split("\n")
    found = spans(units_for("formatter.py", source))
    assert found == [
        (1, 23, "method", "Formatter.start"),
        (25, 48, "method", "Formatter.finish"),
        (51, 55, "class", "Settings"),
        (57, 78, "method", "Settings.load"),
        (79, 100, "method", "Settings.save"),
    ]
    assert lines[0] == "class Formatter(Base):" and lines[24] == "    ready = False"


def test_a_types_closing_brace_stays_with_its_last_member() -> None:
    # a class too long to be one unit ends in ``}``: a line with no word is no answer to
    # show, and the last method's unit takes it, as a body's last lines stay with its part
    body = "".join(f"    int step{number} = {number};\n" for number in range(20))

    def method(name: str) -> str:
        return f"  void {name}() {{\n{body}  }}\n"

    source = f"public class Stepper {{\n{method('start')}\n{method('finish')}}}\n"
    lines = source.split("\n")
    found = spans(units_for("Stepper.java", source))
    assert found[-1] == (25, 47, "method", "Stepper.finish")
    assert lines[46] == "}"
    assert all(
        any(character.isalnum() for line in lines[start - 1 : end] for character in line)
        for start, end, _, _ in found
    )


def test_a_20000_line_section_is_cut_at_its_blank_lines_without_scanning_them_all() -> None:
    lines = ["# Changes"] + [f"line {n} of a long changelog" if n % 2 else "" for n in range(20000)]
    units = file_units(lines, [], prose=True)
    assert all(unit.end - unit.start + 1 <= MOST_UNIT_LINES for unit in units)
    assert [unit.start for unit in units[:3]] == [1, 41, 81]
    assert all(not lines[unit.end - 1].strip() for unit in units[:-1])  # cut at blank lines
    assert units[-1].end == len(lines)
    assert [unit.start for unit in units[1:]] == [unit.end + 1 for unit in units[:-1]]


def test_javascript_methods_and_arrow_functions_are_units() -> None:
    text = textwrap.dedent(
        """\
        const express = require('express');

        class Router {
          constructor() {
            this.routes = [];
          }

          add(path, handler) {
            this.routes.push({ path, handler });
          }
        }

        const verify = (signature) => {
          return signature.length > 0;
        };

        module.exports = { Router, verify };
        """
    )
    units = units_for("router.js", text)
    names = [unit.name for unit in units]
    assert "Router" in names and "verify" in names
    assert (units[0].start, units[0].name) == (1, "Router")  # the lone require line joined it
    verify = next(unit for unit in units if unit.name == "verify")
    assert (verify.start, verify.end) == (13, 17)  # the export line joined the unit before


def test_go_functions_are_units() -> None:
    text = (
        'package main\n\nimport "fmt"\n\nfunc hello(name string) string {\n'
        '\treturn fmt.Sprintf("hi %s", name)\n}\n\nfunc main() {\n\tfmt.Println(hello("you"))\n}\n'
    )
    units = units_for("main.go", text)
    assert [(unit.kind, unit.name) for unit in units][-2:] == [
        ("function", "hello"),
        ("function", "main"),
    ]


def test_markdown_is_cut_at_headings_not_inside_code_blocks() -> None:
    text = "# Title\nintro\n\n## Install\nrun it\n```sh\n# not a heading\n```\n## Usage\nask\n"
    units = units_for("README.md", text)
    assert [(unit.start, unit.end, unit.name) for unit in units] == [
        (1, 3, "Title"),
        (4, 8, "Install"),
        (9, 11, "Usage"),
    ]


def test_a_file_with_nothing_parsed_is_cut_into_bounded_windows() -> None:
    text = "\n".join(f"key_{n} = {n}" for n in range(300))
    units = file_units(text.split("\n"), (), prose=False)
    assert units[0].start == 1 and units[-1].end == 300
    assert all(unit.kind == "window" for unit in units)
    assert all(unit.end - unit.start + 1 <= MOST_UNIT_LINES for unit in units)


def test_a_minified_file_gives_one_unit_per_line_bounded_later_by_the_source_length() -> None:
    line = "var a=1;" * 20000
    units = file_units([line, line], (), prose=False)
    assert [(unit.start, unit.end) for unit in units] == [(1, 1), (2, 2)]
    assert all(len(line) > MAX_UNIT_CHARS for _ in units)


# ---- the second stage --------------------------------------------------------------------

AUTH = textwrap.dedent(
    """\
    import hashlib


    class DigestAuth:
        def __init__(self, username, password):
            self.username = username
            self.password = password

        def auth_flow(self, request):
            response = yield request
            if response.status_code != 401:
                return
            challenge = self._parse_challenge(response)
            request.headers["Authorization"] = self._build_auth_header(request, challenge)
            yield request

        def _parse_challenge(self, response):
            header = response.headers["www-authenticate"]
            scheme, _, fields = header.partition(" ")
            return dict(item.split("=", 1) for item in fields.split(","))

        def _build_auth_header(self, request, challenge):
            nonce = challenge["nonce"]
            realm = challenge["realm"]
            digest = hashlib.md5(f"{self.username}:{realm}:{self.password}".encode()).hexdigest()
            response = hashlib.md5(f"{digest}:{nonce}".encode()).hexdigest()
            return f'Digest username="{self.username}", realm="{realm}", response="{response}"'
    """
) + "".join(  # more methods: a class too long to be one unit is cut into its methods
    f"\n    def helper_{n}(self, value):\n"
    + "".join(f"        value += {m}\n" for m in range(8))
    + "        return value\n"
    for n in range(6)
)


@pytest.fixture
def auth_root(tmp_path: Path) -> Path:
    (tmp_path / "auth.py").write_text(AUTH, encoding="utf-8")
    (tmp_path / "other.py").write_text("def unrelated():\n    return 1\n", encoding="utf-8")
    build_index(tmp_path)
    return tmp_path


def test_the_second_stage_prefers_the_definition_the_question_names(auth_root: Path) -> None:
    with load_index(auth_root) as index:
        found = units_of(index, "auth.py", "code")
        assert found is not None
        best = rank_units(found, "where is `_build_auth_header` defined?")[0]
        assert best.unit.name == "DigestAuth._build_auth_header"
        words = rank_units(found, "how is the digest response computed from the nonce and realm")
        assert words[0].unit.name == "DigestAuth._build_auth_header"
        challenge = chosen_units(found, "parse the www-authenticate challenge header")
        assert challenge[0].unit.name == "DigestAuth._parse_challenge"


def test_a_file_of_small_definitions_shows_more_of_them_within_a_screenful(
    tmp_path: Path,
) -> None:
    # a header of one-line inline functions, each naming the buffer: three of them would
    # show nine lines of it
    header = "".join(
        f"static inline int buffer_{name}(struct buffer* b) {{ return b->{name}; }}\n\n"
        for name in ("size", "capacity", "data", "count", "limit", "start", "stop", "step")
    )
    (tmp_path / "buffer.h").write_text(header)
    (tmp_path / "long.py").write_text(
        "".join(
            f"def buffer_{n}(b):\n" + "    b.grow()\n" * 18 + "    return b\n\n\n" for n in range(6)
        )
    )
    with build_index(tmp_path) as index:
        small = units_of(index, "buffer.h", "c")
        assert small is not None
        chosen = chosen_units(small, "how is the buffer read?")
        assert len(chosen) > FILE_UNITS
        assert sum(item.unit.end - item.unit.start + 1 for item in chosen) <= SCREEN_LINES
        # units of twenty lines: three, as before
        longer = units_of(index, "long.py", "python")
        assert longer is not None
        assert len(chosen_units(longer, "how is the buffer grown?")) == FILE_UNITS


def test_a_files_cut_is_made_once_and_measured_only_when_ranked(auth_root: Path) -> None:
    with load_index(auth_root) as index:
        cut = cut_of(index, "auth.py", "code")
        assert cut is not None and not isinstance(cut, FileUnits)
        assert cut.span(1, 1) == "import hashlib"
        measured = units_of(index, "auth.py", "code")
        assert isinstance(measured, FileUnits)
        assert (measured.text, measured.offsets, measured.units) == (
            cut.text,
            cut.offsets,
            cut.units,
        )
        assert len(measured.lengths) == len(measured.name_words) == len(measured.units)
        assert cut_of(index, "auth.py", "code") is measured  # the measured one is kept
        assert units_of(index, "auth.py", "code") is measured
        assert cut_of(index, "missing.py", "code") is None


def test_each_files_units_are_cut_once_when_it_is_indexed(tmp_path: Path) -> None:
    from szrag.code.units import PROSE_TYPES
    from szrag.index.records import records_by_path

    (tmp_path / "auth.py").write_text(AUTH, encoding="utf-8")
    long_function = ["def long():"] + [f"    step_{n} = {n}" for n in range(130)]
    (tmp_path / "long.py").write_text("\n".join(long_function) + "\n", encoding="utf-8")
    sections = ["# Title", "", "Intro.", "", "## Install", "", "pip install it", ""] * 30
    (tmp_path / "README.md").write_text("\n".join(sections), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("plain words\n" * 200, encoding="utf-8")
    (tmp_path / "empty.py").write_text("", encoding="utf-8")
    build_index(tmp_path)
    with load_index(tmp_path) as index:
        records = records_by_path(index)
        for path, stored in index.files_by_path().items():
            kept = index.stored_units(path)
            record = records.get(path)
            definitions = record.functions if record is not None else ()
            lines = index.lines(path)
            cut = file_units(lines, definitions, prose=stored.type in PROSE_TYPES)
            assert kept == tuple(cut), path  # what the second stage would cut when read
        assert len(index.stored_units("long.py") or ()) > 3  # a long function in parts
        assert index.stored_units("missing.py") is None
        # the second stage reads the units kept, not the record's definitions again
        found = units_of(index, "auth.py", "python")
        assert found is not None and found.units == index.stored_units("auth.py")

    # a damaged row says so, and how to mend it
    conn = sqlite3.connect(tmp_path / ".rag" / "index.db")
    for damage in (b"not deflated", zlib.compress(b"[[1, 2]"), zlib.compress(b'[["x"]]')):
        with conn:
            conn.execute("UPDATE files SET units = ? WHERE path = 'long.py'", (damage,))
        with load_index(tmp_path) as index, pytest.raises(DamagedIndexError, match="--rebuild"):
            index.stored_units("long.py")
    conn.close()


TERM_LINES = textwrap.dedent(
    """\
    class EntryCache:  # entries, entry, Entries
        def parseEntries(self, parsed_entry, PARSING):
            return [entry for entry in self.entries if entry.applied]

        def apply(self, applies, applied_at):  # the \u212aelvin sign lowercases to k
            self.kelvinMapped = mapped_entries  # mapping, mapped, maps
            return "\u0130stanbul entry_ies y"
    """
).split("\n")


def test_the_lines_holding_a_word_are_those_whose_words_stem_to_it() -> None:
    # the reference: every line's words stemmed, as the second stage once measured a file
    from szrag.base.text import stem, tokens_by_line
    from szrag.rank.units import _measured

    record = analyse("cache.py", "\n".join(TERM_LINES))
    assert record is not None
    definitions = record.functions
    found = _measured(TERM_LINES, file_units(TERM_LINES, definitions, prose=False))
    by_line = [{stem(word) for word in words} for words in tokens_by_line("\n".join(TERM_LINES))]
    every_stem = set().union(*by_line) | {"entry", "kelvin", "absent", "y", "ies"}
    for term in sorted(every_stem):
        expected = tuple(number for number, stems in enumerate(by_line, 1) if term in stems)
        assert found.lines_holding(term) == expected, term
        assert found.term_counts(term) == [
            sum(1 for number in expected if unit.start <= number <= unit.end)
            for unit in found.units
        ]
    assert found.lines_holding("entry") == (1, 2, 3, 6, 7)
    assert found.lines_holding("absent") == ()
    assert found.lines_holding("") == ()  # no word's stem is empty


def test_the_lines_holding_a_word_match_every_line_stemmed_on_random_text() -> None:
    # words inside words ("latest" holds "test"), camelCase, digits, underscores, letters
    # that lowercase into two, a word at a line's end and the file's
    from szrag.base.text import stem, tokens_by_line
    from szrag.rank.units import _measured

    pieces = [
        "test",
        "Tests",
        "latest",
        "reTest",
        "entry",
        "Entries",
        "x",
        "2fa",
        "_",
        " ",
        "\u0130",
        "\u212a",
        "ing",
        "applied",
        "Apply",
        "mapping",
        "-",
        "testing9",
    ]
    ascii_pieces = [piece for piece in pieces if piece.isascii()]  # spaces placed by offset
    chooser = random.Random(7)
    for round_number in range(80):
        chosen = pieces if round_number % 2 else ascii_pieces
        lines = [
            "".join(chooser.choice(chosen) for _ in range(chooser.randint(0, 12)))
            for _ in range(chooser.randint(1, 30))
        ]
        found = _measured(lines, [])
        by_line = [{stem(word) for word in words} for words in tokens_by_line("\n".join(lines))]
        for term in sorted(set().union(*by_line) | {"test", "y", "entry"}):
            expected = tuple(number for number, stems in enumerate(by_line, 1) if term in stems)
            assert found.lines_holding(term) == expected, (term, lines)


def test_a_files_scores_for_a_question_are_kept_and_its_window_added_each_time(
    auth_root: Path,
) -> None:
    with load_index(auth_root) as index:
        found = units_of(index, "auth.py", "code")
        assert found is not None
        question = "how is the digest response computed from the nonce and realm"
        plain = rank_units(found, question)
        assert question in found.scored
        last = plain[-1].unit  # the last unit, lifted a little by a window over it
        lifted = {
            item.unit: item.score
            for item in rank_units(found, question, [(last.start, last.end, 1.0)])
        }
        assert lifted[last] > plain[-1].score
        # a window the first stage scored at half its best lifts a unit half as much, and
        # of two windows over one unit the better counts
        half = [(last.start, last.end, 0.5)]
        halved = {item.unit: item.score for item in rank_units(found, question, half)}
        assert halved[last] - plain[-1].score == pytest.approx((lifted[last] - plain[-1].score) / 2)
        both = [(last.start, last.end, 0.5), (last.start, last.end, 1.0)]
        assert {item.unit: item.score for item in rank_units(found, question, both)} == lifted
        assert rank_units(found, question) == plain  # the kept scores, no window added
        for number in range(10):
            rank_units(found, f"question {number}")
        assert len(found.scored) <= 4


def test_the_words_a_file_keeps_the_lines_of_are_bounded() -> None:
    from szrag.rank.units import HELD_WORDS, _measured

    found = _measured(TERM_LINES, file_units(TERM_LINES, [], prose=False))
    for number in range(HELD_WORDS + 10):
        assert found.lines_holding(f"word{number}") == ()
    assert 0 < len(found.held) <= HELD_WORDS
    assert found.lines_holding("entry") == (1, 2, 3, 6, 7)  # worked out again when dropped


def test_text_the_question_quotes_lifts_the_unit_holding_it(auth_root: Path) -> None:
    with load_index(auth_root) as index:
        found = units_of(index, "auth.py", "code")
        assert found is not None
        plain = rank_units(found, "why is the request sent again with the digest header?")
        assert plain[0].unit.name != "DigestAuth._parse_challenge"
        quoted = rank_units(
            found, "why is the request sent again with the digest header 'www-authenticate'?"
        )
        assert quoted[0].unit.name == "DigestAuth._parse_challenge"


@pytest.mark.parametrize(
    ("question", "quoted"),
    [
        ("Remove pointless 'No server-side tools for' message", ("No server-side tools for",)),
        ('why do I get "database is locked"?', ("database is locked",)),
        ("what does `--line-range` do, and `-r`?", ("--line-range",)),
        ("the user's file isn't 'ok'", ()),  # apostrophes open nothing; two letters tell nothing
        ("\u2018smart quotes\u2019 and \u201cdouble ones\u201d", ("smart quotes", "double ones")),
        ("'same' twice: 'same'", ("same",)),
    ],
)
def test_quoted_literals_are_the_texts_in_quotes_or_backticks(
    question: str, quoted: tuple[str, ...]
) -> None:
    assert quoted_literals(question) == quoted


def test_retrieve_cites_the_units_real_span_and_the_slackzilla_profile_keeps_windows(
    auth_root: Path,
) -> None:
    sources = retrieve("how is the digest response computed from nonce and realm", root=auth_root)
    first = sources[0]
    lines = AUTH.split("\n")
    assert first.path == "auth.py"
    assert lines[first.start - 1].strip().startswith("def _build_auth_header")
    assert first.end == 27 and first.heading == "DigestAuth._build_auth_header"
    assert first.text == "\n".join(lines[first.start - 1 : first.end])

    script = "".join(
        f"function step{n}(nonce, realm) {{\n  return nonce + realm;\n}}\n" for n in range(30)
    )
    (auth_root / "auth.js").write_text(script, encoding="utf-8")
    with build_index(auth_root, profile="slackzilla") as index:
        spec = retrieve("digest nonce realm", index=index)
    # the original's 60-line window, whatever the functions inside it
    assert [(item.path, item.start, item.end, item.heading) for item in spec][:1] == [
        ("auth.js", 1, 60, None)
    ]


def test_a_question_about_uses_returns_the_call_sites_not_the_definition(auth_root: Path) -> None:
    sources = retrieve("where is `_build_auth_header` called?", root=auth_root)
    first = sources[0]
    lines = AUTH.split("\n")
    assert (first.path, first.heading) == ("auth.py", "DigestAuth.auth_flow")
    assert any("self._build_auth_header(" in line for line in lines[first.start - 1 : first.end])
    # a follow-up, searched with the question it follows: "that" is the function named before
    followed = retrieve(
        "and where is that used?\nhow does `_build_auth_header` compute the digest?", root=auth_root
    )
    assert followed[0].heading == "DigestAuth.auth_flow"
    # without a question about uses the definition itself comes first
    defined = retrieve("how does `_build_auth_header` compute the digest?", root=auth_root)
    assert defined[0].heading == "DigestAuth._build_auth_header"


def test_debug_notes_what_was_cut_and_where_nothing_parsed(tmp_path: Path) -> None:
    from szrag.service.host import debug_question

    (tmp_path / "bundle.js").write_text("var needle=1;" * 1000 + "\n", encoding="utf-8")
    (tmp_path / "main.lua").write_text(
        "".join(f"local function value{n}(needle) return needle + {n} end\n" for n in range(10)),
        encoding="utf-8",
    )
    build_index(tmp_path).close()
    report = debug_question(Question("needle", limit=4), tmp_path)
    notes = "\n".join(report.notes)
    assert "bundle.js:1-1: its text is cut at 3,500 characters (a line of 3,500+" in notes
    assert "main.lua:1-10: no definitions were parsed in this file; cut into windows" in notes
    assert report.to_dict()["notes"] == list(report.notes)


def test_the_units_kept_are_bounded_by_files_and_lines() -> None:
    from szrag.rank.units import FileCut, _UnitCache

    def units(lines: int) -> FileCut:
        return FileCut.of(["x = 1"] * lines, ())

    cache = _UnitCache(max_lines=100)
    for number in range(5):
        cache.put((f"f{number}.py", "hash"), units(30))
    cache.put(("none.py", "hash"), None)
    assert cache.get(("f0.py", "hash")) == (False, None)  # the oldest dropped for lines
    assert cache.get(("f4.py", "hash"))[0] and cache.get(("none.py", "hash")) == (True, None)
    assert cache._lines == sum(found.line_count for found in cache._kept.values() if found)
    assert cache._lines <= 100
    cache.put(("big.py", "hash"), units(500))  # a file larger than the bound is still kept
    assert cache.get(("big.py", "hash"))[0] and len(cache._kept) == 1
    cache.put(("big.py", "hash"), units(10))  # the same key again counts its lines once
    assert cache._lines == 10


def test_a_cut_keeps_its_lines_as_one_text_and_gives_any_span_of_them() -> None:
    from szrag.rank.units import FileCut, _holds_any

    chooser = random.Random(11)
    pieces = ["", " ", "def f():", "    return 'ſK'", "\tx = 1", "İstanbul", "}"]
    for _ in range(200):
        lines = [chooser.choice(pieces) for _ in range(chooser.randint(0, 9))]
        cut = FileCut.of(lines, ())
        assert cut.line_count == len(lines)
        for first in range(1, len(lines) + 2):
            for last in range(first - 1, len(lines) + 2):
                assert cut.span(first, last) == "\n".join(lines[first - 1 : last])
                unit = Unit(first, last, "function")
                for texts in (["ſK"], ["x = 1", "nothing"], ["\n"], ["f():\n    return"]):
                    expected = any(
                        text in line for line in lines[unit.start - 1 : unit.end] for text in texts
                    )
                    assert _holds_any(cut, unit, texts) == expected


def _cut_samples() -> list[list[Unit]]:
    """Files of every shape the cutter knows, with their definitions given (not parsed)."""
    from szrag.code.model import Definition

    module = ["import os", "", "LIMIT = 3", ""]
    body = [f"        total += step_{n}(value)" for n in range(70)]
    long_class = [
        "@register",
        "class Ledger(Base):",
        '    """Keeps the entries."""',
        "    fields = ()",
        "",
        "    def add(self, value):",
        "        total = 0",
        *body,
        "        return total",
        "",
        "    def close(self):",
        "        def helper():",
        "            return 1",
        "        return helper()",
        "}",
    ]
    code = module + long_class
    start = len(module) + 2
    definitions = [
        Definition("Ledger", "class", start, len(code) - 1),
        Definition("add", "method", start + 4, start + 76, "Ledger"),
        Definition("close", "method", start + 78, start + 81, "Ledger"),
        Definition("helper", "function", start + 79, start + 80),
    ]
    # a function too long for a screen, handing routes their handlers: each a unit, the
    # function's first lines with the first of them
    routes = ["function routes(app) {", "  const cache = new Map()"]
    handlers = []
    for n in range(15):
        handlers.append(
            Definition(f'app.get("/a{n}")', "callback", len(routes) + 1, len(routes) + 3)
        )
        routes += [f'  app.get("/a{n}", (req, res) => {{', "    res.end()", "  })"]
    routes.append("}")
    handlers.append(Definition("routes", "function", 1, len(routes)))
    prose = ["# Title", "", "Intro.", "", "```", "# not a heading", "```", "## Use", "", "Run it."]
    windows = [f"line {n}" if n % 9 else "" for n in range(130)]
    return [
        file_units(code, definitions, prose=False),
        file_units(routes, handlers, prose=False),
        file_units(prose * 12, [], prose=True),
        file_units(windows, [], prose=False),
        file_units(["x" * 5000, "y"], [], prose=False),
    ]


# what the samples are cut into at each units version of the index (``store.UNITS_VERSION``)
CUT_FINGERPRINTS = {1: "4734f53fdd2eb8a7", 2: "65265fc443795a4a"}


def test_a_change_to_how_files_are_cut_bumps_the_units_version() -> None:
    # an index keeps each file's units: cut another way, an index must be rebuilt, which
    # a new units version asks for
    import hashlib

    from szrag.code.units import encoded_units
    from szrag.index.store import UNITS_VERSION

    cut = "\n".join(encoded_units(units) for units in _cut_samples())
    fingerprint = hashlib.sha256(cut.encode()).hexdigest()[:16]
    assert CUT_FINGERPRINTS.get(UNITS_VERSION) == fingerprint, (
        "files are cut differently: bump index.store.UNITS_VERSION and record"
        f" {UNITS_VERSION + 1}: {fingerprint!r} in CUT_FINGERPRINTS"
    )
