from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

from szrag.base.config import SLACKZILLA, profile_named
from szrag.base.errors import QuestionError
from szrag.base.text import tokens
from szrag.code.units import MAX_UNIT_CHARS, MOST_UNIT_LINES
from szrag.index import Index, build_index, load_index, refresh_index
from szrag.rank.model import Query
from szrag.rank.retrieve import MAX_SOURCE_LENGTH, image_score, more_sources, retrieve_images
from szrag.rank.retrieve import retrieve as retrieve_with
from szrag.rank.spec import (
    SPEC_RULES,
    ScoreRules,
    calculate_score,
    heading_score,
    select_sources,
    topic_score,
)

# These tests pin down the spec ranker, whatever ranker the default profile prefers.
retrieve = functools.partial(retrieve_with, ranker="spec")

JS = frozenset({".js", ".md", ".json"})


def score(question: str, path: str, kind: str, text: str = "", heading: str | None = None) -> int:
    return calculate_score(
        question, path=path, file_type=kind, text=text, heading=heading, extensions=JS
    )


# --- every signal of the spec's table, one at a time -------------------------------------------


def test_exact_path_reference_scores_1000_plus_its_path_tokens() -> None:
    # "lib/x.js" names the file (+1000) and its tokens lib, js (x is too short) are in the path (+40),
    # and occur in the question only, not in the (empty) text.
    assert score("explain ./LIB/x.js", "lib/x.js", "css") == 1000 + 2 * 20


def test_docs_prefix_adds_25_even_without_a_match() -> None:
    assert score("zzz", "docs/a.css", "css") == 25
    assert score("zzz", "src/docs/a.css", "css") == 0


def test_each_token_in_the_path_adds_20() -> None:
    assert score("signal router", "app/signal/router.css", "css") == 40


def test_each_token_in_the_heading_adds_15() -> None:
    assert score("deploy steps", "a.css", "css", heading="Deploy Steps") == 30


def test_each_token_in_the_text_adds_5_as_a_substring() -> None:
    # "is" occurs inside "this", "sign" inside "signature": substring matching, as the original does
    assert score("is sign", "a.css", "css", text="This Signature") == 10


def test_how_questions_lift_markdown_by_8() -> None:
    for phrase in ("how does", "how do", "how is"):
        assert score(f"{phrase} zzz", "a.md", "markdown") == 8
    assert score("how zzz", "a.md", "markdown") == 0


def test_where_questions_lift_javascript_and_json_by_8() -> None:
    for phrase in ("where zzz", "which file zzz", "zzz implemented"):
        assert score(phrase, "a.js", "javascript") == 8
        assert score(phrase, "a.json", "json") == 8
        assert score(phrase, "a.md", "markdown") == 0


@pytest.mark.parametrize(
    ("question", "path"),
    [
        ("the design", "a-arch.css"),
        ("data flow", "diagram.css"),
        ("architecture", "architecture.css"),
        ("csrf", "security.css"),
        ("authentication", "auth.css"),
        ("github", "webhook.css"),
        ("deploy", "deploy.css"),
    ],
)
def test_topic_questions_lift_matching_paths_by_30(question: str, path: str) -> None:
    query = Query.parse(question, JS)
    assert topic_score(query, path, "css") == 30


def test_signals_add_up() -> None:
    total = score(
        "how does the deploy webhook work",
        "docs/deploy-webhook.md",
        "markdown",
        text="The deploy webhook verifies signatures",
        heading="Deploy webhook",
    )
    # path tokens deploy, webhook: 40; heading: 30; text: the, deploy, webhook: 15;
    # docs: 25; how does + markdown: 8; webhook/deploy topic: 30
    assert total == 40 + 30 + 15 + 25 + 8 + 30


def test_default_rules_only_lift_chunks_that_matched() -> None:
    rules = ScoreRules.of(profile_named("default"))
    assert calculate_score("zzz", path="docs/a.md", file_type="markdown", text="", rules=rules) == 0
    assert (
        calculate_score("zzz", path="docs/a.md", file_type="markdown", text="zzz", rules=rules)
        == 5 + 25
    )
    assert ScoreRules.of(SLACKZILLA) == SPEC_RULES


def test_heading_tokens_are_whole_tokens_not_substrings() -> None:
    query = Query.parse("sign", JS)
    assert heading_score(query, "Signatures") == 0
    assert heading_score(query, "How to sign") == 15


# --- retrieval over a real index: the five query classes ----------------------------------------


@pytest.fixture
def index(retrieval_repo: Path) -> Iterator[Index]:
    with build_index(retrieval_repo) as opened:
        yield opened


@pytest.fixture
def spec_index(retrieval_repo: Path) -> Iterator[Index]:
    with build_index(retrieval_repo, profile="slackzilla") as opened:
        yield opened


def test_exact_path_query_puts_that_file_first(index: Index, spec_index: Index) -> None:
    sources = retrieve("What does server/lib/systemd.js do?", index=index)
    assert sources[0].path == "server/lib/systemd.js"
    assert sources[0].score >= 1000
    assert all(source.score < 1000 for source in sources[1:])  # the rest fill the list
    named = retrieve("What does server/lib/systemd.js do?", index=spec_index)
    assert [source.path for source in named] == [
        "server/lib/systemd.js"
    ]  # the original's 85% of 1000+ excludes the rest


def test_identifier_query_finds_the_defining_file(index: Index) -> None:
    sources = retrieve("verifyGithubSignature", index=index)
    assert sources[0].path == "server/webhook.js"


def test_conceptual_query_finds_code_and_docs(index: Index) -> None:
    sources = retrieve("how does the deploy webhook verify signatures?", index=index)
    assert sources[0].path == "server/webhook.js"
    broad = [
        source.path
        for source in retrieve("what is the architecture of the deploy flow", index=index)
    ]
    assert broad[0] == "docs/architecture.md"


def test_documentation_query_prefers_markdown_sections(index: Index) -> None:
    sources = retrieve("How is replay of Slack requests prevented?", index=index)
    assert sources[0].path == "docs/security.md"
    # the section that answers, by its own heading, not the document's first window
    assert sources[0].heading == "Slack requests"
    assert sources[0].text.startswith("## Slack requests") and "replay" in sources[0].text
    assert sources[0].type == "markdown"


def test_no_match_returns_nothing_by_default_but_docs_under_the_spec_profile(
    index: Index, spec_index: Index
) -> None:
    assert retrieve("qwxz vbnm", index=index) == []
    spec_paths = [source.path for source in retrieve("qwxz vbnm", index=spec_index)]
    assert spec_paths == [
        "docs/architecture.md",
        "docs/security.md",
    ]  # +25 each, the original's noise


def test_result_shape_threshold_and_one_chunk_per_file(tmp_path: Path) -> None:
    long_doc = ["# Guide", *[f"alpha line {number}" for number in range(150)]]
    (tmp_path / "guide.md").write_text("\n".join(long_doc))
    (tmp_path / "weak.md").write_text("nothing relevant here but alpha\n")
    with build_index(tmp_path) as opened:
        sources = retrieve("alpha guide", index=opened)
    # guide.md's best sections (at most three), then the weaker file: the default profile
    # fills the list
    paths = [source.path for source in sources]
    assert list(dict.fromkeys(paths)) == ["guide.md", "weak.md"] and paths.count("guide.md") <= 3
    with build_index(tmp_path, profile="slackzilla") as opened:
        spec = retrieve("alpha guide", index=opened)
    assert [source.path for source in spec] == ["guide.md"]  # weak.md < 85% of the best
    source = sources[0]
    assert set(source.to_dict()) == {"path", "start", "end", "type", "heading", "text", "score"}
    assert source.heading == "Guide" and source.end - source.start + 1 <= MOST_UNIT_LINES
    assert (spec[0].start, spec[0].end, spec[0].heading) == (1, 60, "Guide")  # the window


def test_snippets_are_capped_at_3500_characters(tmp_path: Path) -> None:
    (tmp_path / "wide.md").write_text("\n".join("needle " + "x" * 200 for _ in range(60)))
    (tmp_path / "one.js").write_text("var needle=1;" * 1000)  # minified: one line
    with build_index(tmp_path, profile="slackzilla") as opened:
        (window,) = [
            source for source in retrieve("needle", index=opened) if source.path == "wide.md"
        ]
    assert len(window.text) == MAX_SOURCE_LENGTH
    with build_index(tmp_path) as opened:
        sources = retrieve("needle", index=opened)
    # units are cut to fit, so none is cut mid-line; but one line longer than the cap is
    wide = [source for source in sources if source.path == "wide.md"]
    assert wide and all(len(source.text) <= MAX_UNIT_CHARS for source in wide)
    assert all(source.text.endswith("x" * 200) for source in wide)
    (minified,) = [source for source in sources if source.path == "one.js"]
    assert (minified.start, minified.end, len(minified.text)) == (1, 1, MAX_SOURCE_LENGTH)


def test_ties_break_by_path_and_results_are_deterministic(tmp_path: Path) -> None:
    for name in ("c.md", "a.md", "b.md"):
        (tmp_path / name).write_text("same token words\n")
    with build_index(tmp_path) as opened:
        first = retrieve("token words", index=opened)
        second = retrieve("token words", index=opened)
        limited = retrieve("token words", 2, index=opened)
    assert [source.path for source in first] == ["a.md", "b.md", "c.md"]
    assert first == second
    assert [source.path for source in limited] == ["a.md", "b.md"]


def test_select_sources_with_nothing_ranked() -> None:
    assert select_sources([], 8) == []


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_empty_question_is_a_clear_error(index: Index, question: str) -> None:
    with pytest.raises(QuestionError, match="empty"):
        retrieve(question, index=index)
    with pytest.raises(QuestionError):
        retrieve_images(question, index=index)


def test_retrieve_opens_and_refreshes_the_index_itself(retrieval_repo: Path) -> None:
    assert retrieve("server/scheduler.js", root=retrieval_repo)[0].path == "server/scheduler.js"
    (retrieval_repo / "server/scheduler.js").write_text("function escalate() {}\n")
    assert [s.path for s in retrieve("escalate", root=retrieval_repo)] == ["server/scheduler.js"]


# --- images ---------------------------------------------------------------------------------------


def test_image_scores_direct_tokens_and_aliases() -> None:
    assert image_score(frozenset({"dashboard"}), "assets/dashboard.webp") == 10
    assert image_score(frozenset({"calculator"}), "docs/calc-flow.jpg") == 6
    # "g" is too short to be a path token, so the original's github -> g alias never fires
    assert image_score(frozenset({"github", "actions"}), "ci/g-act.png") == 6
    assert image_score(frozenset({"diagram", "architecture"}), "arch.png") == 12
    assert image_score(frozenset({"unrelated"}), "arch.png") == 0


def test_retrieve_images_records_and_order(index: Index) -> None:
    images = retrieve_images("architecture diagram of the github workflow", index=index)
    assert [image.to_dict() for image in images] == [
        {
            "path": "docs/images/architecture-diagram.png",
            "url": "/docs/images/architecture-diagram.png",
            "score": 20,
        },
        {"path": "assets/git-workflow.gif", "url": "/assets/git-workflow.gif", "score": 16},
    ]
    assert retrieve_images("calculator", index=index)[0].path == "docs/images/calc-flow.jpg"
    assert len(retrieve_images("dashboard logo calc architecture git", 2, index=index)) == 2
    assert retrieve_images("nothing matches", index=index) == []


def test_retrieve_images_scores_only_what_can_score_and_follows_the_index(
    tmp_path: Path,
) -> None:
    names = ["calc.png", "arch-overview.svg", "hook/webhook.gif", "z-dash.png", "a-dash.png"]
    names += [f"other/picture-{number}.png" for number in range(30)]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"\x89PNG\r\n")
    questions = ["the calculator", "architecture dashboard", "webhook picture", "png 7", "none"]
    with build_index(tmp_path) as opened:
        for question in questions:
            tokens_asked = frozenset(tokens(question))
            every = sorted((image_score(tokens_asked, path), path) for path in opened.image_paths())
            expected = sorted((item for item in every if item[0] > 0), key=lambda i: (-i[0], i[1]))
            found = retrieve_images(question, 40, index=opened)
            assert [(image.score, image.path) for image in found] == expected, question
        assert [image.path for image in retrieve_images("dash", index=opened)] == [
            "a-dash.png",
            "z-dash.png",
        ]
    (tmp_path / "b-dash.png").write_bytes(b"\x89PNG\r\n")
    with load_index(tmp_path) as opened:
        assert [image.path for image in retrieve_images("dash", index=opened)] == [
            "a-dash.png",
            "b-dash.png",
            "z-dash.png",
        ]


# --- the in-memory path ranks exactly like the SQLite path ---------------------------------------

PARITY_QUESTIONS = (
    "how does the deploy webhook verify signatures?",
    "where is verifyGithubSignature implemented",
    "What does server/lib/systemd.js do?",
    "security of slack requests and csrf auth",
    "architecture design flow of the scheduler",
    "is it on",
    "qwxz vbnm",
    "README.md getting started",
    "which file restarts the service? deploy",
)


@pytest.mark.parametrize("profile", ["default", "slackzilla"])
def test_memory_search_matches_sqlite_search(retrieval_repo: Path, profile: str) -> None:
    for number in range(12):  # more files and multi-chunk documents
        lines = [
            f"# Notes {number}",
            *[f"deploy note {i} on signature {number}" for i in range(90)],
        ]
        (retrieval_repo / f"docs/notes{number}.md").write_text("\n".join(lines))
    with build_index(retrieval_repo, profile=profile) as opened:
        expected = {question: retrieve(question, 20, index=opened) for question in PARITY_QUESTIONS}
        opened.keep_in_memory()
        for question in PARITY_QUESTIONS:
            assert retrieve(question, 20, index=opened) == expected[question], question
        # a change to the index is picked up by the in-memory arrays
        (retrieval_repo / "server/extra.js").write_text("function zebraCrossing() {}\n")
        refresh_index(opened)
        in_memory = retrieve("server extra zebra crossing", index=opened)
        assert "server/extra.js" in [source.path for source in in_memory]
        opened.keep_in_memory(False)
        assert retrieve("server extra zebra crossing", index=opened) == in_memory


def test_an_inconsistent_index_gives_a_clear_error(index: Index) -> None:
    from szrag.base.errors import IndexStoreError

    index.conn.execute("DELETE FROM chunk_texts")
    with pytest.raises(IndexStoreError, match="szrag index --rebuild"):
        retrieve("verifyGithubSignature", index=index)


# --- the further units a context may take -----------------------------------------------------


def test_a_changelog_gives_no_further_sections_unless_releases_are_asked(tmp_path: Path) -> None:
    sections = "".join(
        f"## 1.{n}.0\n\n- Fix the cache {'eviction' if n == 3 else 'warmup'} of worker pool {n}.\n"
        f"- Other change number {n} to the scheduler and its queue.\n\n"
        for n in range(12)
    )
    (tmp_path / "CHANGELOG.md").write_text(f"# Changes\n\n{sections}")
    (tmp_path / "cache.py").write_text(
        "def evict(cache, worker):\n    # eviction of a worker's cache entries\n    cache.pop(worker)\n"
    )
    with build_index(tmp_path) as index:
        for question, asks in (
            ("how does cache eviction work for a worker?", False),
            ("which release changed cache eviction for a worker?", True),
        ):
            sources = retrieve_with(question, index=index, ranker="bm25")
            assert "CHANGELOG.md" in {source.path for source in sources}
            further = {source.path for source in more_sources(index, question, sources)}
            assert ("CHANGELOG.md" in further) is asks
