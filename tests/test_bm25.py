from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from szrag.base.errors import ConfigError
from szrag.base.text import chunk_code_terms, code_terms, create_chunks, near_spellings, words
from szrag.index import Index, build_index, refresh_index
from szrag.rank.bm25 import PATH_MENTION_BONUS, SCORE_SCALE, Terms, _spelled_by
from szrag.rank.model import Query, named_lines
from szrag.rank.retrieve import retrieve
from szrag.rank.words import named_symbols, query_terms


def test_code_terms_split_identifiers_and_keep_them_whole() -> None:
    text = code_terms("verifyGithubSignature(x_hub_sig, HTTPServer)")
    split, runs = text.split("\n")
    assert split == "verify Github Signature(x hub sig, HTTP Server)"
    assert runs.split() == ["verifygithubsignature", "x", "hub", "sig", "httpserver"]


def test_file_level_terms_equal_chunk_level_terms() -> None:
    content = "\r\n".join(
        f"const valueNumber{n} = read_setting_{n}(HTTPServer)" for n in range(130)
    )
    chunks = create_chunks(content, "a.js")
    joined = [" ".join(words(chunk.text)) for chunk in chunks]
    assert chunk_code_terms(content, chunks, joined) == [code_terms(chunk.text) for chunk in chunks]


def test_query_terms_drop_question_words_and_keep_content() -> None:
    assert query_terms("How does the deploy webhook verify signatures?") == [
        "deploy",
        "webhook",
        "verify",
        "signatures",
    ]
    assert query_terms("where is verifyGithubSignature implemented?") == [
        "verify",
        "github",
        "signature",
        "verifygithubsignature",
    ]
    assert query_terms("how is it done?") == []


@pytest.fixture
def index(retrieval_repo: Path) -> Iterator[Index]:
    with build_index(retrieval_repo) as opened:
        yield opened


def paths(question: str, index: Index) -> list[str]:
    """The files found, best first (a file answering with several units listed once)."""
    found = retrieve(question, index=index, ranker="bm25")
    return list(dict.fromkeys(source.path for source in found))


def test_identifier_and_split_identifier_queries(index: Index) -> None:
    assert paths("where is verifyGithubSignature", index)[0] == "server/webhook.js"
    assert paths("page on call", index)[0] == "server/scheduler.js"


def test_conceptual_and_documentation_queries(index: Index) -> None:
    assert paths("how does the deploy webhook verify signatures?", index)[0] == "server/webhook.js"
    assert paths("How is replay of Slack requests prevented?", index)[0] == "docs/security.md"
    assert paths("what is the architecture of the deploy flow", index)[0] == "docs/architecture.md"


def test_named_path_always_comes_first(index: Index) -> None:
    found = retrieve(
        "What does server/lib/systemd.js do with the webhook?", index=index, ranker="bm25"
    )
    assert found[0].path == "server/lib/systemd.js"
    assert found[0].score > found[-1].score or len(found) == 1


@pytest.mark.parametrize(
    "question",
    ["qwxz vbnm", "how is the kafka consumer group rebalanced?", "what is it?"],
)
def test_no_real_match_returns_nothing(index: Index, question: str) -> None:
    assert paths(question, index) == []


def test_an_identifier_whose_words_the_index_holds_is_no_unknown_word() -> None:
    terms = Terms(
        all=("common", "js", "commonjs", "ts", "1513"),
        present=("common", "js"),
        selective=("common", "js"),
        weights={"common": 2.0, "js": 1.0},
    )
    # ``CommonJS`` unknown whole is known by its words; a number names no topic
    assert terms.unknown_words == ["ts"]
    assert not terms.mostly_unknown


@pytest.mark.parametrize(
    "question",
    [
        # identifiers unknown whole, known by their words, beside casual words
        "make GithubSignature and DeployWebhook play nice for folks",
        # the words no file holds counted once, not again against what the files hold
        "deploy webhook rejects signatures when the pager rotation changes",
        "signature mismatch in webhook when scheduler rotation and README setup differ",
    ],
)
def test_an_on_topic_question_in_its_own_words_finds_the_code(index: Index, question: str) -> None:
    assert "server/webhook.js" in paths(question, index)[:3]


def test_query_terms_take_a_letters_accent_off_as_the_index_does() -> None:
    assert query_terms("wie prüft der Server die Signatur?") == [
        "wie",
        "pruft",
        "der",
        "server",
        "die",
        "signatur",
    ]
    assert query_terms("vérifie le déploiement") == ["verifie", "le", "deploiement"]


@pytest.mark.parametrize(
    "question",
    [
        "wie prüft der deploy webhook die Signatur?",
        "comment le webhook de déploiement vérifie-t-il la signature ?",
        "¿cómo verifica el deploy webhook la firma?",
        "como o webhook de deploy verifica a assinatura?",
        "come fa il webhook di deploy a verificare la firma?",
        "hoe controleert de deploy webhook de handtekening?",
    ],
)
def test_a_question_in_another_language_finds_the_code_it_names(
    index: Index, question: str
) -> None:
    assert paths(question, index)[0] == "server/webhook.js"


@pytest.mark.parametrize(
    "question",
    [
        "wie wird die Kafka Consumer-Gruppe neu verteilt?",
        "¿dónde se configura el store de Redux en el frontend de React?",
        # English, with words other languages use as function words: they are words here
        "how do I set up DI with the os module for a DoS test?",
        "how do I run sin and del on a dataframe?",
    ],
)
def test_an_off_topic_question_in_another_language_finds_nothing(
    index: Index, question: str
) -> None:
    assert paths(question, index) == []


def test_a_line_a_stack_trace_names_gives_its_unit_first(index: Index) -> None:
    trace = (
        "why does the signature check fail after a valid signature?\n"
        "Error: spawn systemctl ENOENT\n"
        "    at /srv/pagebot/server/webhook.js:20:11\n"
        "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)"
    )
    first = retrieve(trace, index=index, ranker="bm25")[0]
    assert first.path == "server/webhook.js"  # named by where it was deployed
    assert first.start <= 20 <= first.end  # not verifyGithubSignature, which the words name


def test_a_line_the_question_names_gives_its_unit_first(tmp_path: Path) -> None:
    functions = "".join(
        f"def step_{n}(request):\n" + "".join(f"    request.send({n}, {m})\n" for m in range(12))
        for n in range(8)
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/client.py").write_text(functions)
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/site-packages/pkg/client.py", line 70, in step_5\n'
        "    request.send(5, 4)\n"
        "ConnectionError: the request could not be sent"
    )
    with build_index(tmp_path) as built:
        for question, line in (
            (traceback, 70),
            ("what does pkg/client.py:20 send?", 20),
            ("https://github.com/acme/pkg/blob/main/pkg/client.py#L100 sends what?", 100),
        ):
            first = retrieve(question, index=built, ranker="bm25")[0]
            assert first.path == "pkg/client.py"
            assert first.start <= line <= first.end, question


def test_a_name_one_slip_from_its_spelling_is_found() -> None:
    near = near_spellings("restartservce")
    assert "restartservice" in near  # a letter left out
    assert "restartservce" not in near
    assert "restartsevrce" in near_spellings("restartservce")  # two swapped
    assert "pageoncall" in near_spellings("pageoncal")  # a letter added
    assert "pageoncall" in near_spellings("pageoncell")  # a letter changed
    assert near_spellings("getx") == set()  # too short to guess


@pytest.mark.parametrize(
    ("question", "path", "line"),
    [
        ("what does restartServce do?", "server/lib/systemd.js", 3),
        ("where is verifyGithubSignatrue defined?", "server/webhook.js", 4),
        ("why does `handleDeployWebhok` answer 401?", "server/webhook.js", 14),
    ],
)
def test_a_misspelt_name_finds_its_definition(
    index: Index, question: str, path: str, line: int
) -> None:
    first = retrieve(question, index=index, ranker="bm25")[0]
    assert first.path == path and first.start <= line <= first.end


def test_a_name_spelt_right_is_not_read_as_a_slip(index: Index) -> None:
    # pageOnCall is defined: its near spellings are not looked up, nothing else is lifted
    assert paths("what does pageOnCall do?", index)[0] == "server/scheduler.js"


def test_a_very_long_term_is_not_read_as_words_one_after_another() -> None:
    words = {"ab", "abab"}
    assert _spelled_by("ab" * 10, words)
    assert not _spelled_by("ab" * 4000, words)  # no identifier: a pasted blob


def test_a_traces_dependency_frame_names_no_file_of_the_repository(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/server.js").write_text("function handle(req) {\n  return route(req)\n}\n")
    (tmp_path / "lib/utils.js").write_text("function merge(a, b) {\n  return a\n}\n")
    trace = (
        "why does it crash?\n"
        "    at merge (/app/node_modules/express/lib/utils.js:2:5)\n"
        "    at handle (/app/lib/server.js:2:10)"
    )
    with build_index(tmp_path) as built:
        assert named_lines(built, Query.parse(trace, built.config.extensions)) == {
            "lib/server.js": frozenset({2})
        }
        assert paths(trace, built)[0] == "lib/server.js"


def test_a_named_line_goes_to_the_file_the_path_names_longest(tmp_path: Path) -> None:
    for folder in ("server", "app/server"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "webhook.js").write_text("function hook() {\n  return 1\n}\n")
    with build_index(tmp_path) as built:
        query = Query.parse("/srv/app/server/webhook.js:2", built.config.extensions)
        assert named_lines(built, query) == {"app/server/webhook.js": frozenset({2})}


def test_a_file_name_alone_names_the_one_file_of_that_name(tmp_path: Path) -> None:
    for folder in ("api", "web"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "index.js").write_text("function start() {\n  return 1\n}\n")
    (tmp_path / "api/routes.js").write_text("function route(req) {\n  return req\n}\n")
    with build_index(tmp_path) as built:
        query = Query.parse(
            "what does routes.js:2 return? and index.js:1?", built.config.extensions
        )
        # routes.js is one file; index.js two, so it names neither
        assert named_lines(built, query) == {"api/routes.js": frozenset({2})}
        found = retrieve("what does routes.js return?", index=built, ranker="bm25")
        assert found[0].path == "api/routes.js" and found[0].score > PATH_MENTION_BONUS
        # written otherwise, a file's name is another thing's: Routes.js, a product
        other = retrieve("which Routes.js version do we need?", index=built, ranker="bm25")
        assert all(source.score < PATH_MENTION_BONUS for source in other)
        # a second routes.js: the name alone names neither, once the index knows it
        (tmp_path / "web/routes.js").write_text("function page() {\n  return 2\n}\n")
        refresh_index(built)
        assert named_lines(built, query) == {}


def test_a_path_written_from_an_include_folder_names_the_one_file_ending_so(
    tmp_path: Path,
) -> None:
    for folder in ("include/fmt", "src", "test/fmt"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "include/fmt/fmt-c.h").write_text("int fmt_vformat(const char* f);\n")
    (tmp_path / "include/fmt/format.h").write_text("int format(const char* f);\n")
    (tmp_path / "test/fmt/format.h").write_text("int format_test(const char* f);\n")
    (tmp_path / "src/os.cc").write_text("int windows_clang(int x) {\n  return x;\n}\n")
    with build_index(tmp_path) as built:
        # as C and C++ write it, from the folder the build includes
        found = retrieve(
            "Make fmt/fmt-c.h compile with Clang on Windows", index=built, ranker="bm25"
        )
        assert found[0].path == "include/fmt/fmt-c.h" and found[0].score > PATH_MENTION_BONUS
        query = Query.parse("what is at fmt/fmt-c.h:1?", built.config.extensions)
        assert named_lines(built, query) == {"include/fmt/fmt-c.h": frozenset({1})}
        # two files end in fmt/format.h: the path names neither
        query = Query.parse("what is at fmt/format.h:1?", built.config.extensions)
        assert named_lines(built, query) == {}


@pytest.mark.parametrize(
    "question",
    [
        "where is restartService called?",
        "wo wird restartService aufgerufen?",
        "où restartService est-elle appelée ?",
        "¿dónde se llama a restartService?",
        "onde restartService é chamado?",
        "dove viene chiamata restartService?",
        "waar wordt restartService aangeroepen?",
    ],
)
def test_where_a_name_is_called_gives_its_call_sites_in_any_language(
    index: Index, question: str
) -> None:
    first = retrieve(question, index=index, ranker="bm25")[0]
    assert first.path == "server/webhook.js" and first.start <= 20 <= first.end


def test_how_a_name_is_defined_gives_its_definition_in_any_language(index: Index) -> None:
    assert paths("wie wird restartService definiert?", index)[0] == "server/lib/systemd.js"


def test_refresh_keeps_the_full_text_index_in_step(retrieval_repo: Path, index: Index) -> None:
    assert paths("pageOnCall", index)[0] == "server/scheduler.js"
    (retrieval_repo / "server/scheduler.js").write_text("function escalateIncident() {}\n")
    refresh_index(index)
    assert "server/scheduler.js" not in paths("pageOnCall", index)
    assert paths("escalate incident", index) == ["server/scheduler.js"]
    (retrieval_repo / "server/scheduler.js").unlink()
    refresh_index(index)
    assert paths("escalate incident", index) == []
    # a CRLF file with several chunks leaves no term behind when it goes
    crlf = "\r\n".join(f"zanzibarPenguin line {n}" for n in range(100))
    (retrieval_repo / "docs/crlf.md").write_text(crlf, newline="")
    refresh_index(index)
    assert paths("zanzibar penguin", index) == ["docs/crlf.md"]
    (retrieval_repo / "docs/crlf.md").unlink()
    refresh_index(index)
    assert paths("zanzibar penguin", index) == []
    leftover = index.conn.execute(
        "SELECT count(*) FROM chunk_terms WHERE chunk_terms MATCH 'zanzibar'"
    ).fetchone()[0]
    assert leftover == 0


def test_named_symbols_are_identifier_shaped_mentions() -> None:
    assert named_symbols("what calls restartService and `deploy` or run() with default_jobs?") == {
        "restartservice",
        "deploy",
        "run",
        "defaultjobs",
    }
    assert named_symbols("how is the kafka consumer group rebalanced?") == set()


def test_unknown_ranker_is_a_clear_error(index: Index) -> None:
    with pytest.raises(ConfigError, match="unknown ranker 'magic'"):
        retrieve("anything", index=index, ranker="magic")


def test_import_neighbours_of_the_leading_file_are_lifted(tmp_path: Path) -> None:
    (tmp_path / "handler.js").write_text(
        'const { check } = require("./helper")\n'
        "function rotateLedger(entry) { return check(entry) && rotate(entry) }\n"
        "module.exports = { rotateLedger }\n"
    )
    helper = (
        "function check(entry) { return entry.ledger !== undefined }\nmodule.exports = { check }\n"
    )
    (tmp_path / "helper.js").write_text(helper)
    (tmp_path / "unrelated.js").write_text(helper.replace("check", "inspect"))
    for number in range(12):  # enough other files for term rarity to mean something
        (tmp_path / f"other{number}.js").write_text(
            f"function other{number}() {{ return {number} }}\n"
        )
    with build_index(tmp_path) as opened:
        assert opened.dependencies("handler.js") == ["helper.js"]
        found = retrieve("rotate ledger entries", index=opened, ranker="bm25")
    ranked = [source.path for source in found]
    assert ranked[:2] == ["handler.js", "helper.js"]
    assert "unrelated.js" not in ranked[:2]


def test_a_file_named_by_its_stem_is_preferred(tmp_path: Path) -> None:
    body = "function post(entry) { return entry }\n// keeps the books\n"
    (tmp_path / "src/accounting/books").mkdir(parents=True)
    (tmp_path / "src/accounting/books/ledger.js").write_text(body)
    (tmp_path / "ledger_store.js").write_text(body)  # a shorter path would otherwise win
    for number in range(12):
        (tmp_path / f"filler{number}.js").write_text(f"const value{number} = {number}\n")
    with build_index(tmp_path) as opened:
        assert paths("where is the ledger module?", opened)[0] == "src/accounting/books/ledger.js"


def test_a_named_mixed_case_path_keeps_its_own_score(index: Index) -> None:
    named = retrieve(
        "what does README.md say about the deploy webhook?", index=index, ranker="bm25"
    )
    assert named[0].path == "README.md"
    # the mention adds to the text match (a score of its own), never replaces it
    assert named[0].score > PATH_MENTION_BONUS * SCORE_SCALE


def _term_counts(index: Index) -> list[tuple[str, int, int]]:
    index.conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.term_counts USING fts5vocab(main, chunk_terms, row)"
    )
    return index.conn.execute(
        "SELECT term, doc, cnt FROM temp.term_counts ORDER BY term"
    ).fetchall()


@pytest.mark.parametrize(
    "content",
    [
        # lines that end in a carriage return of their own, and one inside a line
        "".join(f"quetzalLine{n} = read_value_{n}\r\r\nkeep\rgoing {n}\n" for n in range(70)),
        # many definitions across overlapping windows
        "".join(f"def quetzal_handler_{n}(request):\n    return n{n}\n\n" for n in range(90)),
        "",
    ],
)
def test_a_changed_or_removed_file_leaves_no_term_behind(
    retrieval_repo: Path, index: Index, content: str
) -> None:
    before = _term_counts(index)
    target = retrieval_repo / "server/quetzal.py"
    target.write_text(content, newline="")
    refresh_index(index)
    assert _term_counts(index) != before or not content
    target.write_text(content + "\n# edited\n", newline="")  # changed: old terms go first
    refresh_index(index)
    target.unlink()
    refresh_index(index)
    assert _term_counts(index) == before


def test_a_ranked_file_carries_its_other_matching_windows_scored_against_its_best(
    tmp_path: Path,
) -> None:
    from szrag.rank import Query
    from szrag.rank.bm25 import Bm25Ranker

    filler = "\n".join(f"value_{number} = {number}" for number in range(70))
    text = (
        "def rotate_signing_keys():\n    return 'rotate signing keys now'\n\n"
        + filler
        + "\n\ndef rotate_tokens():\n    return 'rotate'\n\n"
        + filler
        + "\n\ndef signing_keys():\n    return 'signing keys'\n"
    )
    (tmp_path / "keys.py").write_text(text, "utf-8")
    with build_index(tmp_path) as index:
        query = Query.parse("rotate signing keys", index.config.extensions)
        (chunk,) = Bm25Ranker().rank(index, query, 3, fill=True)
        assert chunk.start == 1  # the window holding every word
        assert chunk.windows[0] == (chunk.start, chunk.end, 1.0)
        others = chunk.windows[1:]  # the windows (overlapping) of the other two functions
        assert len(others) >= 2 and all(0 < share <= 1 for _, _, share in others)
        assert all(start > chunk.start for start, _, _ in others)
        shown = retrieve("rotate signing keys", 3, index=index)
        assert shown[0].heading is not None and "rotate_signing_keys" in shown[0].heading
