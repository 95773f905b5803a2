from __future__ import annotations

from collections.abc import Iterator

import pytest

from szrag.code.model import EnvReference, RouteMatch, SymbolMatch
from szrag.context.model import CodebaseContext, CodeEntry
from szrag.context.pack import (
    DUPLICATE,
    EVIDENCE_PACKING,
    INCLUDED,
    OVER_BUDGET,
    ContextChunk,
    chunk_priority,
    context_chunks,
    evidence_chunks,
    format_source,
    pack_chunks,
    pack_repository_context,
    size_penalty,
)
from szrag.context.tokens import TOKENIZER_SETTING, TokenCounter, forget_counters
from szrag.rank.retrieve import Source

CHARS = TokenCounter("chars", len)  # one token per character: exact, easy boundaries


@pytest.fixture(autouse=True)
def fresh_counters() -> Iterator[None]:
    forget_counters()
    yield
    forget_counters()


def chunk(
    key: str, score: float, text: str = "x", kind: str = "source", path: str | None = None
) -> ContextChunk:
    return ContextChunk(key=key, kind=kind, score=score, text=text, path=path)


def source(path: str, score: int, text: str = "body", heading: str | None = None) -> Source:
    return Source(
        path=path, start=1, end=3, type="javascript", heading=heading, text=text, score=score
    )


# --- priority ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "score", "length", "priority"),
    [
        ("source", 1000, 0, 1000),
        ("structure", 180, 0, 280),
        ("code", 500, 0, 750),
        ("unknown", 10, 0, 10),
        ("code", 500, 400, 750 - 5),  # 100 estimated tokens -> 5 points
        ("source", 0, 8000, -100),  # 2000 tokens -> 100, the cap
        ("source", 0, 40000, -100),  # far past the cap
        ("source", 0, 1, -0.05),  # one token -> 1/20 point
    ],
)
def test_priority_is_score_plus_kind_bonus_minus_size_penalty(
    kind: str, score: int, length: int, priority: float
) -> None:
    assert chunk_priority(kind, score, "x" * length) == pytest.approx(priority)


def test_size_penalty_is_capped_at_100() -> None:
    assert size_penalty(0) == 0
    assert size_penalty(20) == 1
    assert size_penalty(2000) == 100
    assert size_penalty(10**6) == 100


def test_chunks_are_taken_in_priority_order() -> None:
    packed = pack_chunks(
        [
            chunk("low", 10),
            chunk("code", 100, kind="code"),  # 350
            chunk("high", 300),
            chunk("structure", 180, kind="structure"),  # 280
        ],
        budget=100,
        counter=CHARS,
    )
    assert [item.key for item in packed.chunks] == ["code", "high", "structure", "low"]
    assert all(item.status == INCLUDED for item in packed.chunks)


def test_equal_priorities_keep_the_input_order() -> None:
    packed = pack_chunks([chunk(f"k{n}", 50) for n in range(5)], budget=100, counter=CHARS)
    assert [item.key for item in packed.chunks] == ["k0", "k1", "k2", "k3", "k4"]


def test_a_shorter_chunk_wins_a_tie_in_score() -> None:
    packed = pack_chunks(
        [chunk("long", 100, "x" * 400), chunk("short", 100, "x" * 4)], budget=10_000, counter=CHARS
    )
    assert [item.key for item in packed.chunks] == ["short", "long"]


def test_the_text_puts_sources_first_then_structure_then_code() -> None:
    packed = pack_chunks(
        [
            chunk("c", 900, "CODE", kind="code"),
            chunk("s", 100, "SOURCE"),
            chunk("t", 180, "STRUCTURE", kind="structure"),
        ],
        budget=100,
        counter=CHARS,
    )
    assert packed.text == "SOURCE\n\nSTRUCTURE\n\nCODE"


# --- duplicates and budget ---------------------------------------------------------------


def test_a_repeated_key_is_skipped() -> None:
    packed = pack_chunks(
        [chunk("same", 100, "first", path="a.js"), chunk("same", 50, "second", path="a.js")],
        budget=100,
        counter=CHARS,
    )
    assert [(item.key, item.status) for item in packed.chunks] == [
        ("same", INCLUDED),
        ("same", DUPLICATE),
    ]
    assert packed.text == "first"
    assert packed.tokens == 5
    assert packed.files == ("a.js",)


def test_a_chunk_that_fits_exactly_is_included() -> None:
    packed = pack_chunks(
        [chunk("a", 10, "x" * 60), chunk("b", 5, "y" * 40)], budget=100, counter=CHARS
    )
    assert [item.status for item in packed.chunks] == [INCLUDED, INCLUDED]
    assert packed.tokens == 100 == packed.budget


def test_a_chunk_one_token_over_is_skipped_not_truncated() -> None:
    packed = pack_chunks(
        [chunk("a", 10, "x" * 60), chunk("b", 5, "y" * 41)], budget=100, counter=CHARS
    )
    assert [item.status for item in packed.chunks] == [INCLUDED, OVER_BUDGET]
    assert packed.text == "x" * 60
    assert packed.tokens == 60


def test_the_boundary_with_the_estimate() -> None:
    # 400 characters are exactly 100 estimated tokens; 401 are 101
    fits = pack_chunks([chunk("a", 1, "x" * 400)], budget=100, counter=None)
    over = pack_chunks([chunk("a", 1, "x" * 401)], budget=100, counter=None)
    assert fits.tokens == 100 and fits.tokenizer == "estimate"
    assert over.tokens == 0 and over.chunks[0].status == OVER_BUDGET


def test_a_chunk_larger_than_the_whole_budget_is_skipped_and_smaller_ones_still_fit() -> None:
    packed = pack_chunks(
        [chunk("huge", 5000, "h" * 500), chunk("small", 1, "s" * 30), chunk("mid", 2, "m" * 60)],
        budget=100,
        counter=CHARS,
    )
    statuses = {item.key: item.status for item in packed.chunks}
    assert statuses == {"huge": OVER_BUDGET, "mid": INCLUDED, "small": INCLUDED}
    assert packed.tokens == 90
    assert "h" not in packed.text


def test_a_zero_budget_includes_nothing_and_a_negative_one_is_refused() -> None:
    assert pack_chunks([chunk("a", 1)], budget=0, counter=CHARS).text == ""
    with pytest.raises(ValueError, match="must not be negative"):
        pack_chunks([chunk("a", 1)], budget=-1, counter=CHARS)


def test_packing_is_deterministic() -> None:
    chunks = [chunk(f"k{n % 7}", n % 3, "x" * (n * 13 % 50), path=f"f{n}.js") for n in range(30)]
    first = pack_chunks(chunks, budget=200, counter=CHARS)
    assert pack_chunks(list(chunks), budget=200, counter=CHARS) == first


# --- sources, context, and the configured tokenizer --------------------------------------


def test_an_empty_retrieval_packs_to_nothing() -> None:
    for context in (None, CodebaseContext()):
        packed = pack_repository_context([], context)
        assert packed.text == "" and packed.tokens == 0 and packed.files == ()
        assert packed.code_contexts == 0 and packed.redactions == 0 and packed.chunks == ()
        assert packed.budget == 4000


def test_sources_are_formatted_with_their_header() -> None:
    assert format_source(source("docs/a.md", 5, "text", heading="Setup")) == (
        "FILE: docs/a.md\nLINES: 1-3\nTYPE: javascript\nSECTION: Setup\ntext"
    )
    assert (
        format_source(source("a.js", 5, "code")) == "FILE: a.js\nLINES: 1-3\nTYPE: javascript\ncode"
    )


def sample_context() -> CodebaseContext:
    return CodebaseContext(
        symbols=(SymbolMatch("server/users.js", "listUsers", "function", 9, 12, 140),),
        routes=(RouteMatch("server/app.js", "GET", "/api/users", 7, "listUsers", 140),),
        files=("server/users.js", "server/app.js"),
        dependencies=("server/db.js",),
        dependants=("server/app.js",),
        environment_variables=(EnvReference("server/db.js", "DATABASE_URL", 7),),
        code=(
            CodeEntry("server/users.js", 1040, "direct", ("listUsers",), "CODE: server/users.js"),
            CodeEntry("server/db.js", 920, "dependency", (), "CODE: server/db.js"),
        ),
    )


def test_sources_summary_and_code_entries_become_scored_chunks() -> None:
    chunks = context_chunks([source("server/users.js", 40)], sample_context())
    assert [(item.key, item.kind, item.score) for item in chunks] == [
        ("source:server/users.js:1-3", "source", 1040),
        ("structure", "structure", 180),
        ("code:server/users.js", "code", 1040),
        ("code:server/db.js", "code", 920),
    ]
    summary = chunks[1].text
    assert summary.startswith("CODEBASE STRUCTURE")
    assert "- listUsers (function) in server/users.js:9-12" in summary
    assert "- GET /api/users in server/app.js:7 (handler listUsers)" in summary
    assert "DEPENDENCIES:\n- server/db.js" in summary
    assert "- DATABASE_URL in server/db.js:7" in summary


def test_the_packed_result_reports_files_and_code_contexts() -> None:
    packed = pack_repository_context(
        [source("server/users.js", 40)], sample_context(), counter=CHARS
    )
    assert packed.files == ("server/users.js", "server/db.js")
    assert packed.code_contexts == 2
    assert packed.metadata()["chunks"] == 4
    assert packed.to_dict()["chunks"][0]["key"] == "code:server/users.js"


def test_secrets_are_redacted_before_counting() -> None:
    body = (
        "key = '''\n-----BEGIN PRIVATE KEY-----\n"
        + "QUJD" * 500
        + "\n-----END PRIVATE KEY-----\n'''"
    )
    leaky = source(
        "config/keys.py", 50, body + "\nTOKEN = 'ghp_FAKEfake0123456789FAKEfake0123456789'"
    )
    packed = pack_repository_context([leaky], None, budget=200, counter=CHARS)
    # the raw text is over 2000 characters; redacted, it fits the 200-token budget
    assert packed.chunks[0].status == INCLUDED
    assert "QUJD" not in packed.text and "ghp_" not in packed.text
    assert "[REDACTED:private_key]" in packed.text and "[REDACTED:github_token]" in packed.text
    assert packed.tokens == len(packed.text)
    assert packed.redactions == 2
    assert packed.redaction_kinds == ("github_token", "private_key")


def test_redactions_of_skipped_chunks_are_not_reported() -> None:
    packed = pack_chunks(
        [chunk("fits", 10, "a"), chunk("big", 1, "password = 'hunter2'" + "x" * 200)],
        budget=10,
        counter=CHARS,
    )
    assert packed.redactions == 0 and packed.redaction_kinds == ()


def test_the_default_counter_is_the_estimate_whatever_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKENIZER_SETTING, "no-such-encoding")  # the library does not read it
    assert pack_chunks([chunk("a", 1, "x" * 8)]).tokens == 2


# --- evidence-first packing (the default profile) ------------------------------------------


def evidence_context() -> CodebaseContext:
    return CodebaseContext(
        files=("server/users.js", "server/db.js", "server/app.js"),
        dependencies=("server/db.js",),
        code=(
            CodeEntry(
                "server/users.js",
                1040,
                "direct",
                ("listUsers",),
                "CODE: server/users.js (direct)",
                symbol_source="SOURCE (9-12):\nfunction listUsers() {}",
                structure="FUNCTIONS:\n- listUsers (9-12)",
            ),
            CodeEntry(
                "server/db.js",
                1270,  # structure scored above the sources: the spec packer let it win
                "dependency",
                (),
                "CODE: server/db.js (dependency)",
                structure="IMPORTS:\n- pg\n\nFUNCTIONS:\n- query (1-40)\n- connect (41-80)",
                via="server/users.js",
                connects=("query",),
            ),
        ),
    )


def test_evidence_packing_puts_sources_and_named_symbols_first() -> None:
    sources = [source("server/users.js", 40, "a" * 50), source("server/app.js", 30, "b" * 50)]
    packed = pack_repository_context(
        sources, evidence_context(), counter=CHARS, packing=EVIDENCE_PACKING, budget=10_000
    )
    kinds = [chunk.kind for chunk in packed.chunks]
    # the first file's named symbols come with its source, before the second file's
    assert kinds == ["source", "symbol", "source", "structure", "code", "related"]
    assert packed.text.startswith("FILE: server/users.js")
    assert "SYMBOLS: listUsers in server/users.js\nSOURCE (9-12):" in packed.text
    # a dependency is one line: its path and the names that tie it to the file it came from
    assert "RELATED: server/db.js (dependency of server/users.js): query" in packed.text
    assert "connect (41-80)" not in packed.text


def unit(path: str, start: int, text: str) -> Source:
    return Source(path, start, start + 9, "python", None, text, 10)


def test_a_found_files_units_are_weighed_by_the_files_rank_and_their_own() -> None:
    # 1 / (file rank * unit rank): the first file's second unit before the third file's
    # first, the first file's third (a further unit) after it; what fits is taken in order
    sources = [unit("a.py", 1, "a" * 40), unit("a.py", 20, "b" * 40)]
    sources += [unit("b.py", 1, "c" * 40), unit("c.py", 1, "d" * 40)]
    context = CodebaseContext(more_sources=(unit("a.py", 40, "e" * 40),))
    order = [
        chunk.key for chunk in evidence_chunks(sources, context) if chunk.key.startswith("source:")
    ]
    assert order == [
        "source:a.py:1-10", "source:a.py:20-29", "source:b.py:1-10", "source:c.py:1-10",
        "source:a.py:40-49",
    ]  # fmt: skip
    room = sum(len(format_source(item)) for item in sources[:3])
    packed = pack_repository_context(
        sources, context, counter=CHARS, packing=EVIDENCE_PACKING, budget=room
    )
    taken = [chunk.key for chunk in packed.chunks if chunk.status == INCLUDED]
    assert taken == ["source:a.py:1-10", "source:a.py:20-29", "source:b.py:1-10"]


def test_a_files_excerpts_are_written_together_under_one_header() -> None:
    # taken by weight (a.py's second unit after b.py's first), written by file and in line
    # order, the file's header paid for once, by the file's first chunk to go in
    sources = [unit("a.py", 20, "late"), unit("b.py", 1, "other")]
    context = CodebaseContext(more_sources=(unit("a.py", 1, "early"),))
    packed = pack_repository_context(
        sources, context, counter=CHARS, packing=EVIDENCE_PACKING, budget=10_000
    )
    assert packed.text == (
        "FILE: a.py\nTYPE: python\nLINES: 1-10\nearly\n\nLINES: 20-29\nlate"
        "\n\nFILE: b.py\nTYPE: python\nLINES: 1-10\nother"
    )
    header, first, later = (
        len("FILE: a.py\nTYPE: python"),
        len("LINES: 20-29\nlate"),
        len("LINES: 1-10\nearly"),
    )
    tokens = {chunk.key: chunk.tokens for chunk in packed.chunks}
    assert tokens["source:a.py:20-29"] == header + first
    assert tokens["source:a.py:1-10"] == later
    assert packed.tokens == sum(tokens.values())


def test_a_files_first_excerpt_must_fit_with_its_header() -> None:
    # room for b.py's excerpt alone, not with b.py's header: it is left out, and a further
    # excerpt of a file already written fits without a header of its own
    sources = [unit("a.py", 1, "one"), unit("b.py", 1, "two")]
    context = CodebaseContext(more_sources=(unit("a.py", 20, "three"),))
    first = len("FILE: a.py\nTYPE: python") + len("LINES: 1-10\none")
    room = first + len("LINES: 20-29\nthree") + len("LINES: 1-10\ntwo")
    packed = pack_repository_context(
        sources, context, counter=CHARS, packing=EVIDENCE_PACKING, budget=room
    )
    status = {chunk.key: chunk.status for chunk in packed.chunks if chunk.kind == "source"}
    assert status == {
        "source:a.py:1-10": INCLUDED,
        "source:b.py:1-10": OVER_BUDGET,
        "source:a.py:20-29": INCLUDED,
    }
    assert packed.tokens <= room
    assert "FILE: b.py" not in packed.text


def test_a_secret_in_a_files_header_is_redacted_once_for_all_its_excerpts() -> None:
    secret_dir = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    path = f"{secret_dir}/a.py"
    sources = [unit(path, 1, "one"), unit(path, 20, "two")]
    packed = pack_repository_context(
        sources, CodebaseContext(), counter=CHARS, packing=EVIDENCE_PACKING, budget=10_000
    )
    assert secret_dir not in packed.text
    assert packed.text.count("FILE: ") == 1
    assert "LINES: 1-10\none\n\nLINES: 20-29\ntwo" in packed.text


def test_two_files_whose_paths_redact_alike_keep_a_header_each() -> None:
    # both paths hold a token and redact to the same header: still two files, two headers
    first, second = ("ghp_" + letter * 36 for letter in "ab")
    sources = [unit(f"{first}/a.py", 1, "one"), unit(f"{second}/a.py", 1, "two")]
    context = CodebaseContext(more_sources=(unit(f"{first}/a.py", 20, "three"),))
    packed = pack_repository_context(
        sources, context, counter=CHARS, packing=EVIDENCE_PACKING, budget=10_000
    )
    assert first not in packed.text and second not in packed.text
    assert packed.text.count("FILE: ") == 2
    assert "LINES: 1-10\none\n\nLINES: 20-29\nthree" in packed.text
    assert packed.text.index("three") < packed.text.index("two")


def test_named_definitions_given_as_units_show_each_line_once() -> None:
    # the units holding a named definition go with their file's first unit; one the
    # file's sources already hold is not packed again
    sources = [unit("a.py", 1, "a" * 40), unit("b.py", 1, "c" * 40)]
    entry = CodeEntry(
        "a.py",
        1040,
        "direct",
        ("handler",),
        "CODE: a.py (direct)",
        symbol_source="SOURCE (1-30):\n" + "a" * 40,
        symbol_units=(unit("a.py", 1, "a" * 40), unit("a.py", 20, "f" * 40)),
    )
    context = CodebaseContext(code=(entry,))
    packed = pack_repository_context(
        sources, context, counter=CHARS, packing=EVIDENCE_PACKING, budget=10_000
    )
    judged = [(chunk.key, chunk.status) for chunk in packed.chunks if chunk.kind != "code"]
    assert judged == [
        ("source:a.py:1-10", INCLUDED),
        ("source:a.py:1-10", DUPLICATE),
        ("source:a.py:20-29", INCLUDED),
        ("source:b.py:1-10", INCLUDED),
    ]
    assert "SYMBOLS:" not in packed.text
    assert packed.text.count("a" * 40) == 1


def test_structure_never_displaces_a_retrieved_source() -> None:
    sources = [source("server/users.js", 40, "a" * 200), source("server/app.js", 30, "b" * 200)]
    named = [c for c in evidence_chunks(sources, evidence_context()) if c.kind == "symbol"]
    bodies = sum(len(format_source(item)) for item in sources)
    packed = pack_repository_context(
        sources,
        evidence_context(),
        counter=CHARS,
        packing=EVIDENCE_PACKING,
        budget=bodies + len(named[0].text),  # the first file's named symbols go with it
    )
    status = {chunk.key: chunk.status for chunk in packed.chunks}
    assert status["source:server/users.js:1-3"] == INCLUDED
    assert status["source:server/app.js:1-3"] == INCLUDED
    assert status["code:server/users.js"] == OVER_BUDGET
    # the spec packer, by contrast, spends the same budget on the higher-scored structure
    spec = pack_repository_context(sources, evidence_context(), counter=CHARS, budget=bodies)
    assert {c.key: c.status for c in spec.chunks}["source:server/app.js:1-3"] == OVER_BUDGET


def test_chunks_report_whether_they_carry_source_lines() -> None:
    packed = pack_repository_context(
        [source("server/users.js", 40)],
        evidence_context(),
        counter=CHARS,
        packing=EVIDENCE_PACKING,
    )
    carried = {chunk.kind: chunk.carries_source for chunk in packed.chunks}
    assert carried == {
        "source": True,
        "symbol": True,
        "structure": False,
        "code": False,
        "related": False,
    }


def test_counts_taken_as_a_run_match_counting_one_chunk_at_a_time() -> None:
    # a counter with a run form (an exact encoding counts in worker threads) must give each
    # chunk its own count, also around a chunk too long to count and one whose text shrinks
    # when its secret is redacted
    one_by_one = TokenCounter("bytes", lambda text: len(text.encode()))
    as_run = TokenCounter(
        "bytes", one_by_one.count, count_run=lambda texts: [len(t.encode()) for t in texts]
    )
    chunks = [
        chunk("a", 30, "short é"),
        chunk("huge", 90, "y" * 5000),
        chunk("secret", 50, 'API_KEY = "sk-live-0123456789abcdef0123456789"'),
        chunk("b", 10, "tail"),
    ]
    run = pack_chunks(chunks, budget=120, counter=as_run)
    single = pack_chunks(chunks, budget=120, counter=one_by_one)
    assert run == single
    assert [item.tokens for item in run.chunks if item.key in ("a", "b")] == [8, 4]
    assert any(item.key == "huge" and item.status == OVER_BUDGET for item in run.chunks)


def test_a_counter_giving_too_few_counts_is_an_error() -> None:
    short = TokenCounter("short", len, count_run=lambda texts: [len(t) for t in list(texts)[1:]])
    with pytest.raises(ValueError, match="gave 1 counts for 2 texts"):
        pack_chunks([chunk("a", 1, "aa"), chunk("b", 2, "bb")], budget=100, counter=short)


# --- in order: a chunk is redacted and counted only when it is judged -----------------------


def test_chunks_that_cannot_fit_are_judged_by_their_least_count_alone() -> None:
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return len(text)

    # a character counter whose bound is its count: exact, and known without counting
    counter = TokenCounter("chars", count, bound=len)
    chunks = [
        chunk("first", 5, "a" * 60),
        chunk("long", 4, "b" * 50),  # more than is left: judged by its length alone
        chunk("first", 3, "a" * 60),  # the same key again: nothing to judge
        chunk("short", 2, "c" * 30),  # fits what is left
        chunk("later", 1, "d" * 40),
    ]
    packed = pack_chunks(chunks, budget=100, counter=counter, in_order=True)
    judged = [(item.key, item.status, item.tokens) for item in packed.chunks]
    assert judged == [
        ("first", INCLUDED, 60),
        ("long", OVER_BUDGET, 50),
        ("first", DUPLICATE, 0),
        ("short", INCLUDED, 30),
        ("later", OVER_BUDGET, 40),
    ]
    assert counted == ["a" * 60, "c" * 30]
    assert packed.tokens == 90


def test_a_chunk_whose_least_count_fits_is_counted_exactly_and_redacted() -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    counter = TokenCounter("chars", len, bound=lambda text: len(text.split()))
    text = f"token = {secret}\n" + "x = 1\n" * 5
    packed = pack_chunks(
        [chunk("a", 2, text, path="app.py"), chunk("b", 1, "y" * 200)],
        budget=120,
        counter=counter,
        in_order=True,
    )
    assert [(item.key, item.status) for item in packed.chunks] == [
        ("a", INCLUDED),
        ("b", OVER_BUDGET),
    ]
    assert secret not in packed.text and packed.redactions == 1
    assert packed.tokens == len(packed.text)  # the redacted text's own count
    # "b" could count as few as one token (one word), so it was counted: 200 > 120 - tokens
    assert next(item for item in packed.chunks if item.key == "b").tokens == 200
