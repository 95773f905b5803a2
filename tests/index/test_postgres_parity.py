"""The PostgreSQL store answers as the SQLite store does on the same tree: every read of the
``IndexStore`` protocol, the bm25 ranker's chunks and scores (ties included), and retrieval."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from szrag.index import Index, build_index
from szrag.index.pg import PostgresIndex, publish
from szrag.index.pg.search import LEXEME_ENTRIES, KeptPostings, LexemePostings, phrase_of
from szrag.index.pg.vectors import MAX_LEXEME_BYTES
from szrag.index.protocol import IndexStore
from szrag.rank import bm25, ranker_named
from szrag.rank.model import Query
from szrag.rank.retrieve import retrieve, retrieve_images
from szrag.runtime.indexinfo import read_routes, routes_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LONG_TOKEN = "f00d" * (MAX_LEXEME_BYTES // 2)  # the hard tree's (conftest)

QUESTIONS = (
    "how does the deploy webhook verify signatures?",
    "where is verifyGithubSignature implemented",
    "What does server/lib/systemd.js do?",
    "security of slack requests and csrf auth",
    "architecture design flow of the scheduler",
    "README.md getting started",
    "which file restarts the service? deploy",
    "is it on",
    "qwxz vbnm",
    "the items controller in java and c#",
    "how are flask routes declared",
    "django urls patterns",
    "fastapi route for users",
    "which environment variables are read? DATABASE_URL",
    "where is ItemController defined",
    "go server handler",
    "rust struct implementation",
    "ruby class methods",
    "php controller",
    "typescript service",
    "svelte counter component",
    "vue item list",
    "deploy webhook signature",
    "the same deploy webhook signature in every copy",
    "what calls refresh_cache?",
    "where is restartService called",
    "metric counter 7 7 7",
    "café naïve straße",
    "token " + LONG_TOKEN,
    "imports and exports of the python package",
    "syntax error handling",
    "pyproject configuration of the app",
    "login session cookie",
    "how does the scheduler run jobs",
    "left pad",
    "docs security",
)
WEIGHTS = ((4.0, 2.0, 5.0, 1.0), (1.5, 0.3, 2.7, 0.9), (0.0, 0.0, 0.0, 1.0))


@pytest.fixture(scope="module")
def stores(
    tmp_path_factory: pytest.TempPathFactory,
    new_database: Callable[[], str],
    hard_tree: Callable[[Path], Path],
) -> Iterator[dict[str, tuple[Index, PostgresIndex]]]:
    """Per profile: the SQLite index of the tree and the same published to PostgreSQL."""
    url = new_database()
    opened: dict[str, tuple[Index, PostgresIndex]] = {}
    try:
        for profile in ("default", "slackzilla"):
            root = hard_tree(tmp_path_factory.mktemp(profile) / "repo")
            index = build_index(root, profile=profile)
            publish(index, url, f"repo-{profile}")
            opened[profile] = (index, PostgresIndex(url, f"repo-{profile}"))
        yield opened
    finally:
        for index, stored in opened.values():
            index.close()
            stored.close()


def _typed(store: IndexStore) -> IndexStore:
    return store  # mypy holds that PostgresIndex is an IndexStore


@pytest.mark.parametrize("profile", ["default", "slackzilla"])
@pytest.mark.parametrize("in_memory", [False, True])
def test_retrieval_is_the_same_from_either_store(
    stores: dict[str, tuple[Index, PostgresIndex]], profile: str, in_memory: bool
) -> None:
    sqlite, stored = stores[profile]
    sqlite.keep_in_memory(in_memory)
    stored.keep_in_memory(in_memory)
    try:
        for question in QUESTIONS:
            for ranker in ("bm25", "spec"):
                expected = retrieve(question, 12, index=sqlite, ranker=ranker)
                found = retrieve(question, 12, index=_typed(stored), ranker=ranker)
                assert [s.to_dict() for s in found] == [s.to_dict() for s in expected], (
                    question,
                    ranker,
                )
            assert retrieve_images(question, index=stored) == retrieve_images(
                question, index=sqlite
            )
            # a service short of memory drops a store's views: the next question builds them
            sqlite.drop_views()
            stored.drop_views()
    finally:
        sqlite.keep_in_memory(False)
        stored.keep_in_memory(False)


def test_the_bm25_rankers_chunks_and_scores_are_the_same(
    stores: dict[str, tuple[Index, PostgresIndex]],
) -> None:
    sqlite, stored = stores["default"]
    ranker = ranker_named("bm25")
    for question in QUESTIONS:
        query = Query.parse(question, sqlite.config.extensions)
        assert ranker.rank(stored, query, 20, fill=True) == ranker.rank(
            sqlite, query, 20, fill=True
        ), question


@pytest.mark.parametrize("in_memory", [False, True])
def test_full_text_scores_equal_fts5s_to_the_last_bit(
    stores: dict[str, tuple[Index, PostgresIndex]], in_memory: bool
) -> None:
    # kept in memory (a replica), each lexeme's postings are read once and kept: the second
    # round of questions is scored from them alone
    sqlite, stored = stores["default"]
    stored.keep_in_memory(in_memory)
    ties = 0
    try:
        for weights in WEIGHTS:
            expected_search, search = sqlite.full_text(weights), stored.full_text(weights)
            assert search.chunk_count() == expected_search.chunk_count()
            for _ in range(2 if in_memory else 1):
                for question in QUESTIONS:
                    terms = bm25.terms_of(expected_search, question)
                    assert bm25.terms_of(search, question) == terms
                    if not terms.present:
                        continue
                    for limit in (3, 400):
                        expected = expected_search.best(terms.present, limit, terms.frequencies)
                        assert search.best(terms.present, limit, terms.frequencies) == expected
                        scores = [score for _, score in expected]
                        ties += len(scores) - len(set(scores))
                    for chunk_id, _ in expected_search.best(terms.present, 10, terms.frequencies):
                        for term in terms.all:
                            held = expected_search.holds(term, chunk_id)
                            assert search.holds(term, chunk_id) == held
        if in_memory:  # the lexemes searched are kept, per set of weights
            kept = stored.built(f"pg.postings.{tuple(WEIGHTS[0])}")
            assert isinstance(kept, KeptPostings) and kept.get(phrase_of("deploy")[0]) is not None
    finally:
        stored.keep_in_memory(False)
    assert ties  # the identical files tie, and keep FTS5's order


def test_kept_postings_are_bounded_by_entries() -> None:
    def postings(size: int) -> LexemePostings:
        values = np.arange(size, dtype=np.float64)
        return LexemePostings(np.arange(size, dtype=np.int64), values, values)

    kept = KeptPostings(most_entries=10 + 3 * LEXEME_ENTRIES)
    kept.put("a", postings(4))
    kept.put("b", postings(4))
    assert kept.get("a") is not None  # a is now the most recently searched
    kept.put("c", postings(4))  # past the bound: b, the least recently searched, goes
    assert kept.get("b") is None and kept.get("a") is not None and kept.get("c") is not None
    kept.put("huge", postings(60))  # larger than the bound: used once, never kept
    assert kept.get("huge") is None and kept.get("a") is not None
    # a lexeme's own objects count too: many rare lexemes are bounded as well as a few
    # common ones (each of one chunk costs 1 + LEXEME_ENTRIES)
    rare = KeptPostings(most_entries=10 * (1 + LEXEME_ENTRIES))
    for number in range(100):
        rare.put(f"rare{number}", postings(1))
    assert sum(rare.get(f"rare{number}") is not None for number in range(100)) == 10


@pytest.mark.parametrize(
    "terms",
    [
        ["refresh_cache"],  # a phrase of two tokens
        ["verify-github", "deploy"],
        ["--", "deploy"],  # a term of no token, left out as FTS5 leaves it
        ["deploy", "deploy"],  # a phrase twice counts twice
        ["deploying", "deployed"],  # one stem, two phrases
        ["7"],  # more instances in a chunk than a tsvector keeps
        ["counter", "word399"],  # past the last position a tsvector keeps
        [LONG_TOKEN],
        ["東京", "café"],
        ["qwxz"],
    ],
)
@pytest.mark.parametrize("in_memory", [False, True])
def test_phrases_and_odd_terms_score_as_fts5(
    stores: dict[str, tuple[Index, PostgresIndex]], terms: list[str], in_memory: bool
) -> None:
    sqlite, stored = stores["default"]
    stored.keep_in_memory(in_memory)
    try:
        for weights in WEIGHTS:
            expected_search, search = sqlite.full_text(weights), stored.full_text(weights)
            expected = expected_search.best(terms, 50, {})
            for _ in range(2):  # read, then (in memory) from the kept postings
                assert search.best(terms, 50, {}) == expected, weights
            for term in terms:
                assert search.frequency(term) == expected_search.frequency(term), term
    finally:
        stored.keep_in_memory(False)
    if terms != ["qwxz"] and terms != ["--", "deploy"]:
        assert expected


def test_every_read_of_the_store_is_the_same(
    stores: dict[str, tuple[Index, PostgresIndex]],
) -> None:
    sqlite, stored = stores["default"]
    assert stored.meta() == sqlite.meta()
    assert stored.counts() == sqlite.counts()
    terms = ["webhook", "signature", "verify", "nothingatall"]
    assert stored.term_counts(terms) == sqlite.term_counts(terms)
    assert sqlite.term_counts(terms)[1]["webhook"] > 0
    assert stored.config == sqlite.config
    assert stored.file_entries() == sqlite.file_entries()
    assert stored.files() == sqlite.files()
    assert stored.files_by_path() == sqlite.files_by_path()
    assert stored.code_records() == sqlite.code_records()
    assert stored.definitions() == sqlite.definitions()
    assert stored.route_rows() == sqlite.route_rows()
    assert stored.environment_reads() == sqlite.environment_reads()
    assert sqlite.definitions() and sqlite.route_rows() and sqlite.environment_reads()
    words, prefixes = ["=verify", "", "deploy", "nothingatall"], ["sign", "webhook", "queu"]
    found = sqlite.definitions_by_words(words, prefixes)
    assert stored.definitions_by_words(words, prefixes) == found
    assert {row.word for row in found} > {"deploy", "signature"}
    holders = sqlite.code_files_holding(["webhook", "server", "signature", "nothingatall"])
    assert stored.code_files_holding(["webhook", "server", "signature", "nothingatall"]) == holders
    assert holders.in_tokens["webhook"] and holders.in_path["server"]
    assert stored.image_paths() == sqlite.image_paths()
    assert "docs/images/deploy-flow.png" in sqlite.image_paths()
    routes = read_routes(sqlite.root)  # the API's route list, from either store
    assert routes and routes_of(stored) == routes == routes_of(sqlite)
    for image in [*sqlite.image_paths(), "no/such/image.png"]:  # the bytes, with no checkout
        assert stored.image_data(image) == sqlite.image_data(image)
    assert stored.skipped() == sqlite.skipped()
    assert list(stored.chunk_words()) == list(sqlite.chunk_words())
    assert list(stored.chunk_words(by_path=True)) == list(sqlite.chunk_words(by_path=True))
    entries = sqlite.file_entries()
    ids = [entry.id for entry in entries]
    assert stored.first_chunks(ids[::-1]) == sqlite.first_chunks(ids[::-1])
    chunk_ids = [words.id for words in sqlite.chunk_words()]
    assert stored.chunk_texts(chunk_ids) == sqlite.chunk_texts(chunk_ids)
    assert stored.chunk_rows(chunk_ids) == sqlite.full_text((1.0,)).chunk_rows(chunk_ids)
    paths = [entry.path for entry in entries] + ["no/such/file.py"]
    assert stored.file_tokens(paths) == sqlite.file_tokens(paths)
    for path in paths:
        assert stored.get_file(path) == sqlite.get_file(path)
        assert stored.has_file(path) == sqlite.has_file(path)
        assert stored.chunks(path) == sqlite.chunks(path)
        assert stored.chunks(path, [(3, 9), (70, 75)]) == sqlite.chunks(path, [(3, 9), (70, 75)])
        assert stored.lines(path) == sqlite.lines(path)
        assert stored.lines(path, 5, 64) == sqlite.lines(path, 5, 64)
        assert stored.stored_units(path) == sqlite.stored_units(path)
        assert stored.chunk_at(path) == sqlite.chunk_at(path)
        assert stored.chunk_at(path, 61) == sqlite.chunk_at(path, 61)
        assert stored.dependencies(path) == sqlite.dependencies(path)
        assert stored.dependants(path) == sqlite.dependants(path)
    kept = [path for path in paths if stored.stored_units(path)]
    assert len(kept) > len(paths) // 2  # a published file's units are read, not cut again
    names = sqlite.conn.execute("SELECT DISTINCT name, kind FROM names").fetchall()
    assert names
    for name, kind in names:
        assert stored.named(name, kind) == sqlite.named(name, kind), (name, kind)
    lookups = [(name, kind) for name, kind in names[:40]] + [("nothing", "call")]
    assert sorted(stored.named_any(lookups)) == sorted(sqlite.named_any(lookups))
    # a misspelt name is looked up by its near spellings: thousands at once
    many = lookups + [(f"absent{number}", "definition") for number in range(3000)]
    assert sorted(stored.named_any(many)) == sorted(sqlite.named_any(many)) != []
    assert stored.named_any([]) == []
    keys = [name for name, _ in names[:40]] + ["absent"]
    assert stored.names_held(keys, "definition") == sqlite.names_held(keys, "definition") != []
    assert stored.names_held([], "call") == []
    assert stored.reads_from_any_thread and not stored.in_memory
    assert stored.location.endswith("(repository repo-default)")


def test_the_tree_needs_the_counts_a_tsvector_cannot_hold(
    stores: dict[str, tuple[Index, PostgresIndex]],
) -> None:
    _, stored = stores["default"]
    with stored.snapshot() as (conn, _):
        key = (stored.repository,)
        kept = conn.execute(
            "SELECT count(*) FROM szrag_chunk_terms WHERE repository = %s AND counts IS NOT NULL",
            key,
        ).fetchone()
        digests = conn.execute(
            "SELECT count(*) FROM szrag_vocabulary WHERE repository = %s AND term LIKE '~%%'",
            key,
        ).fetchone()
    assert kept is not None and kept[0] >= 2  # the repeated number, the long window
    assert digests is not None and digests[0] == 1  # the long token


def test_a_warm_question_finds_the_same_evidence_from_either_store(
    stores: dict[str, tuple[Index, PostgresIndex]],
) -> None:
    from szrag.answer.evidence import _find
    from szrag.base.public import to_public
    from szrag.context.plan import ContextPlan

    sqlite, stored = stores["default"]
    sqlite.keep_in_memory()
    stored.keep_in_memory()
    try:
        paths = [entry.path for entry in sqlite.file_entries()] + ["no/such/file.py"]
        assert stored.file_tokens(paths) == sqlite.file_tokens(paths)  # from the kept rows
        plan = ContextPlan.of(sqlite.config, {})
        for question in QUESTIONS:
            found = []
            for index in (sqlite, _typed(stored)):
                with index.reading():
                    evidence = _find(
                        question, index, limit=8, plan=plan, budget_for=None, expand=True
                    )
                found.append(
                    (
                        [item.to_dict() for item in evidence.sources],
                        to_public(evidence.context),
                        evidence.packed.text,
                    )
                )
            assert found[0] == found[1], question
    finally:
        sqlite.keep_in_memory(False)
        stored.keep_in_memory(False)
