"""build_codebase_context over real indexes of small fixture applications."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from szrag.base.errors import QuestionError
from szrag.base.text import tokens
from szrag.code.model import EnvReference, SymbolMatch
from szrag.context import (
    MAX_CODE_CONTEXTS,
    MAX_RELATIONSHIP_ROOTS,
    build_codebase_context,
    pack_repository_context,
)
from szrag.context.build import (
    MAX_CANDIDATES,
    CodeFiles,
    best_first,
    candidate_score,
    code_candidates,
    dependant_score,
    dependency_score,
    mentions_path,
    retrieved_score,
    stored_candidates,
    symbol_source,
)
from szrag.context.model import DEPENDANT, DEPENDENCY, DIRECT
from szrag.context.pack import EVIDENCE_PACKING
from szrag.index import Index, build_index
from szrag.index.store import StoredChunk, StoredFile
from szrag.rank.retrieve import Source, retrieve

CopyFixture = Callable[[str], Path]

# --- scoring ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "path", "file_words", "score"),
    [
        ("zzz", "server/app.js", "", 0),
        ("server routes", "server/app.js", "", 30),  # "server" in the path
        ("server routes", "server/routes/app.js", "", 60),
        ("query rows", "lib/db.js", "query rows other", 4),  # 2 per token in the file
        ("server rows", "server/db.js", "server rows", 30 + 4),  # both signals count
        ("what does lib/db.js do", "lib/db.js", "", 150 + 3 * 30),  # mention + lib, db, js
        ("explain LIB\\DB.JS", "lib/db.js", "", 150 + 3 * 30),  # case and slash tolerant
    ],
)
def test_candidate_score(question: str, path: str, file_words: str, score: int) -> None:
    query = frozenset(tokens(question))
    assert candidate_score(question, query, path, frozenset(tokens(file_words))) == score


@pytest.mark.parametrize(
    ("root", "dependency", "dependant"),
    [
        (1053, 933, 903),
        (300, 180, 150),
        (221, 101, 90),
        (200, 100, 90),
        (32, 100, 90),
        (0, 100, 90),
    ],
)
def test_relationship_scores_follow_the_root_with_a_floor(
    root: int, dependency: int, dependant: int
) -> None:
    assert dependency_score(root) == dependency
    assert dependant_score(root) == dependant


def test_retrieved_files_score_1000_plus_their_retrieval_score() -> None:
    source = Source("a.md", 1, 2, "markdown", None, "", 42)
    assert retrieved_score(source) == 1042


def test_mentions_path_needs_the_whole_path() -> None:
    assert mentions_path("see ./server/app.js please", "server/app.js")
    assert not mentions_path("see app.js", "server/app.js")


def test_best_first_breaks_ties_by_path() -> None:
    assert best_first({"b.js": 5, "a.js": 5, "c.js": 9}) == ["c.js", "a.js", "b.js"]
    chooser = random.Random(3)
    for _ in range(200):
        scores = {
            f"{chooser.choice('abc')}/{chooser.randint(0, 40)}.py": chooser.randint(-5, 5)
            for _ in range(chooser.randint(0, 60))
        }
        assert best_first(scores) == sorted(scores, key=lambda path: (-scores[path], path))


def stored(path: str, kind: str, words: str) -> StoredFile:
    return StoredFile.of((0, path, 0, 0, 0, 0, "", kind), tokens(words))


def test_code_candidates_are_code_files_with_a_positive_score_best_12() -> None:
    files = [stored(f"src/gadget_{n:02}.js", "javascript", "") for n in range(15)]
    files += [
        stored("docs/gadget.md", "markdown", "gadget"),  # not code
        stored("src/other.py", "python", "unrelated"),  # no match
        stored("src/tool.ts", "typescript", "gadget gadget"),
    ]
    chosen = code_candidates("gadget", files)
    assert CodeFiles.of(reversed(files)).counted("gadget") == chosen  # ties by path, not order
    assert len(chosen) == MAX_CANDIDATES
    assert chosen[0] == ("src/gadget_00.js", 30)
    assert ("src/tool.ts", 2) not in chosen  # 13th best: below the 12 path matches
    assert all(path.endswith(".js") for path, _ in chosen)


def test_code_candidates_score_each_file_as_candidate_score_does() -> None:
    # counted token by token from postings: the same scores and order as file by file
    files = [
        stored("server/app.js", "javascript", "server routes app listen"),
        stored("server/routes/users.js", "javascript", "router users get post"),
        stored("lib/db.js", "javascript", "query rows pool server"),
        stored("lib/db/index.ts", "typescript", "query pool"),
        stored("app/views.py", "python", "render template users rows"),
        stored("docs/server.md", "markdown", "server routes"),  # not code
        stored("tests/test_views.py", "python", "users rows server"),
    ]
    for question in (
        "how do server routes query rows?",
        "what does lib/db.js do",
        "users views and the router",
        "explain LIB\\DB\\INDEX.TS",
        "nothing matches zzz",
    ):
        query = frozenset(tokens(question))
        scores = {
            file.path: candidate_score(question, query, file.path, file.tokens)
            for file in files
            if file.type in ("javascript", "typescript", "python")
        }
        expected = [(path, scores[path]) for path in best_first(scores) if scores[path] > 0]
        assert code_candidates(question, files) == expected[:MAX_CANDIDATES], question
        assert CodeFiles.of(files).counted(question) == expected[:MAX_CANDIDATES], question


@pytest.mark.parametrize("fixture", ["express_app", "python_app", "context_app_js", "languages"])
def test_candidates_read_from_the_store_are_the_views(
    copy_fixture: CopyFixture, fixture: str
) -> None:
    # a one-shot counts the files holding the question's tokens from the file-terms table
    with build_index(copy_fixture(fixture)) as index:
        files = index.files()
        words = sorted({token for file in files for token in file.tokens})
        paths = [file.path for file in files]
        chooser = random.Random(len(fixture))
        questions = [" ".join(chooser.sample(words, chooser.randint(1, 9))) for _ in range(60)]
        questions += [f"what does {path} do" for path in chooser.sample(paths, 5)]
        questions += [f"explain {paths[0].upper()} and {words[0]}", "nothing matches zzqx"]
        matched = 0
        for question in questions:
            expected = code_candidates(question, files)
            assert stored_candidates(question, index) == expected, question
            matched += bool(expected)
    assert matched > 50


def test_code_files_updated_from_another_generation_are_the_code_files_built_afresh() -> None:
    before = [
        stored("server/app.js", "javascript", "server routes app listen"),
        stored("lib/db.js", "javascript", "query rows pool server"),
        stored("docs/server.md", "markdown", "server routes"),  # not code
        stored("app/views.py", "python", "render template users rows"),
    ]
    earlier = CodeFiles.of(before)
    assert earlier.updated(before) is earlier  # nothing changed: the same views
    after = [
        before[0],
        stored("lib/db.js", "javascript", "query pool cache"),  # lost rows and server, new cache
        before[2],
        stored("app/views.py", "python", "render template users rows listen"),
    ]
    updated = earlier.updated(after)
    assert updated == CodeFiles.of(after)
    assert "rows" in updated.by_token and list(updated.by_token["rows"]) == [2]
    assert list(updated.by_token["listen"]) == [0, 2] and list(updated.by_token["cache"]) == [1]
    assert list(earlier.by_token["rows"]) == [1, 2]  # the other generation's views are kept
    renamed = [*after[:3], stored("app/pages.py", "python", "render")]
    assert earlier.updated(renamed) == CodeFiles.of(renamed)  # other paths: built afresh
    for question in ("where is the query cache", "how do server routes listen", "users rows"):
        assert updated.counted(question) == CodeFiles.of(after).counted(question), question


def chunk(start: int, end: int) -> StoredChunk:
    text = "\n".join(f"line {number}" for number in range(start, end + 1))
    return StoredChunk(0, "a.js", start, end, "javascript", None, text)


def symbol(name: str, line: int, end_line: int) -> SymbolMatch:
    return SymbolMatch("a.js", name, "function", line, end_line, 100)


def test_symbol_source_splices_overlapping_chunks_without_repeating_lines() -> None:
    chunks = [chunk(1, 60), chunk(41, 100), chunk(81, 140), chunk(121, 180)]
    text = symbol_source(chunks, [symbol("a", 50, 55)])  # in chunks 1-60 and 41-100
    assert text.startswith("SOURCE (1-100):\nline 1\n")
    assert text.count("line 50\n") == 1
    assert text.endswith("line 100")


def test_symbol_source_gives_one_block_per_run_of_lines() -> None:
    chunks = [chunk(1, 60), chunk(41, 100), chunk(81, 140), chunk(121, 180)]
    text = symbol_source(chunks, [symbol("a", 5, 10), symbol("b", 150, 170), symbol("c", 8, 9)])
    assert [line for line in text.split("\n") if line.startswith("SOURCE")] == [
        "SOURCE (1-60):",
        "SOURCE (121-180):",
    ]
    assert symbol_source(chunks, []) == ""


# --- the fixture applications --------------------------------------------------------------


@dataclass(frozen=True)
class App:
    """A fixture application and the names its question asks about."""

    fixture: str
    question: str
    symbol: str
    symbol_file: str
    definition: str
    route_file: str
    env_file: str
    env_line: int
    unrelated: str


JS = App(
    fixture="context_app_js",
    question="How does listUsers answer GET /api/users, and where is DATABASE_URL read?",
    symbol="listUsers",
    symbol_file="server/routes/users.js",
    definition="async function listUsers(request, response) {",
    route_file="server/app.js",
    env_file="server/lib/db.js",
    env_line=7,
    unrelated="server/lib/mailer.js",
)
PY = App(
    fixture="context_app_py",
    question="How does list_users answer GET /api/users, and where is DATABASE_URL read?",
    symbol="list_users",
    symbol_file="shelf/api.py",
    definition="def list_users() -> dict[str, list[dict[str, object]]]:",
    route_file="shelf/api.py",
    env_file="shelf/db.py",
    env_line=10,
    unrelated="shelf/mailer.py",
)


@pytest.fixture(params=[JS, PY], ids=["javascript", "python"])
def app(request: pytest.FixtureRequest) -> App:
    value: App = request.param
    return value


@pytest.fixture
def index(app: App, copy_fixture: CopyFixture) -> Iterator[Index]:
    with build_index(copy_fixture(app.fixture)) as opened:
        yield opened


def test_a_question_naming_a_symbol_a_route_and_a_variable(app: App, index: Index) -> None:
    # the spec ranker's scores are what the context's own scores are checked against
    sources = retrieve(app.question, index=index, ranker="spec")
    context = build_codebase_context(app.question, index, sources)

    assert (context.symbols[0].name, context.symbols[0].file) == (app.symbol, app.symbol_file)
    route = context.routes[0]
    assert (route.method, route.path, route.file) == ("GET", "/api/users", app.route_file)
    assert context.environment_variables[0] == EnvReference(
        app.env_file, "DATABASE_URL", app.env_line
    )

    assert {app.symbol_file, app.route_file, app.env_file} <= set(context.files)
    # a weak match may fill the retrieved list, but never above the files the question names
    related = {app.symbol_file, app.route_file, app.env_file}
    if app.unrelated in context.files:
        assert context.scores[app.unrelated] < min(context.scores[path] for path in related)
    assert context.scores[app.symbol_file] == max(context.scores.values())
    assert set(context.direct_files) | set(context.related_files) == set(context.files)

    entry = next(entry for entry in context.code if entry.path == app.symbol_file)
    assert entry.symbols == (app.symbol,) and entry.relation == DIRECT
    assert "FUNCTIONS:" in entry.text and "SOURCE (" in entry.text
    assert entry.text.count(app.definition) == 1
    assert [item.score for item in context.code] == sorted(
        (item.score for item in context.code), reverse=True
    )

    packed = pack_repository_context(sources, context)
    assert f"- DATABASE_URL in {app.env_file}:{app.env_line}" in packed.text
    assert f"- GET /api/users in {app.route_file}:" in packed.text
    assert app.definition in packed.text
    assert 0 < packed.tokens <= packed.budget
    assert packed.code_contexts == len(context.code)
    assert app.symbol_file in packed.files


def test_a_named_definition_is_given_as_the_units_holding_it(app: App, index: Index) -> None:
    assert index.config.profile.units  # the default profile answers with units
    sources = retrieve(app.question, index=index)
    context = build_codebase_context(app.question, index, sources)
    entry = next(entry for entry in context.code if entry.path == app.symbol_file)
    symbol = next(item for item in context.symbols if item.name == app.symbol)
    assert entry.symbol_units, "the definition's units"
    assert all(unit.path == app.symbol_file for unit in entry.symbol_units)
    assert any(unit.start <= symbol.line <= unit.end for unit in entry.symbol_units)
    assert any(app.definition in unit.text for unit in entry.symbol_units)
    packed = pack_repository_context(
        sources, context, packing=EVIDENCE_PACKING, budget=index.config.profile.context_budget
    )
    assert packed.text.count(app.definition) == 1
    # a file retrieval did not return has no units packed: its definitions stay one chunk
    elsewhere = build_codebase_context(app.question, index, ())
    entry = next(entry for entry in elsewhere.code if entry.path == app.symbol_file)
    assert entry.symbol_source and not entry.symbol_units


def test_metadata_lists_findings_groups_scores_and_counts(app: App, index: Index) -> None:
    context = build_codebase_context(app.question, index, retrieve(app.question, index=index))
    metadata = context.metadata()
    assert metadata["symbols"][0]["location"].startswith(f"{app.symbol_file}:")
    assert metadata["counts"] == {
        "symbols": len(context.symbols),
        "routes": len(context.routes),
        "files": len(context.files),
        "dependencies": len(context.dependencies),
        "dependants": len(context.dependants),
        "environmentVariables": len(context.environment_variables),
        "codeContexts": len(context.code),
    }
    assert metadata["scores"] == dict(context.scores)
    assert metadata["directFiles"] == list(context.direct_files)
    assert {item["path"] for item in metadata["codeContexts"]} <= set(context.files)
    assert "text" not in metadata["codeContexts"][0]
    assert context.to_dict()["codeContexts"][0]["text"].startswith("CODE: ")


def test_the_question_alone_finds_structure_without_retrieval(app: App, index: Index) -> None:
    context = build_codebase_context(app.question, index, [])
    assert context.symbols[0].name == app.symbol
    assert app.symbol_file in context.direct_files


def test_a_path_named_in_the_question_is_selected(app: App, index: Index) -> None:
    context = build_codebase_context(f"what is in {app.unrelated}?", index, [])
    assert context.files[0] == app.unrelated
    assert context.scores[app.unrelated] >= 150


def test_an_empty_question_is_refused(index: Index) -> None:
    with pytest.raises(QuestionError):
        build_codebase_context("  ", index, [])


def test_a_question_matching_nothing_gives_an_empty_context(index: Index) -> None:
    context = build_codebase_context("zzzz qqqq", index, [])
    assert context.files == () and context.code == () and context.structure_text() == ""
    packed = pack_repository_context([], context)
    assert packed.text == "" and packed.tokens == 0


def test_a_retrieved_document_is_direct_but_has_no_code_entry(index: Index) -> None:
    readme = Source("README.md", 1, 3, "markdown", "Shelf", "A small lending library", 60)
    context = build_codebase_context("lending library", index, [readme])
    assert context.scores["README.md"] == 1060
    assert "README.md" in context.direct_files
    assert all(entry.path != "README.md" for entry in context.code)


def test_a_retrieved_path_missing_from_the_index_is_tolerated(index: Index) -> None:
    ghost = Source("gone.js", 1, 3, "javascript", None, "", 10)
    context = build_codebase_context("zzzz", index, [ghost])
    assert context.files == ("gone.js",)
    assert context.code == ()


# --- limits ---------------------------------------------------------------------------------


@pytest.fixture
def parts_repo(tmp_path: Path) -> Iterator[Index]:
    """14 parts that mention "gadget"; each imports its own helper and has its own user."""
    root = tmp_path / "parts"
    (root / "src" / "helpers").mkdir(parents=True)
    (root / "src" / "users").mkdir()
    for n in range(14):
        (root / "src" / f"part_{n:02}.js").write_text(
            f'// gadget part\nconst help = require("./helpers/help_{n:02}")\n'
            f"function run{n}() {{ return help() }}\nmodule.exports = {{ run{n} }}\n"
        )
        (root / "src" / "helpers" / f"help_{n:02}.js").write_text("module.exports = () => 1\n")
        (root / "src" / "users" / f"use_{n:02}.js").write_text(
            f'const part = require("../part_{n:02}")\nmodule.exports = part\n'
        )
    with build_index(root) as opened:
        yield opened


def test_only_the_best_direct_files_are_relationship_roots(parts_repo: Index) -> None:
    context = build_codebase_context("gadget", parts_repo, [])
    assert context.direct_files == tuple(f"src/part_{n:02}.js" for n in range(MAX_CANDIDATES))
    roots = range(MAX_RELATIONSHIP_ROOTS)
    assert context.dependencies == tuple(f"src/helpers/help_{n:02}.js" for n in roots)
    assert context.dependants == tuple(f"src/users/use_{n:02}.js" for n in roots)
    # a part scores 2 (one file token); its relations take the floors 100 and 90
    assert context.scores["src/part_00.js"] == 2
    assert context.scores["src/helpers/help_00.js"] == 100
    assert context.scores["src/users/use_00.js"] == 90
    relations = {entry.path: entry.relation for entry in context.code}
    assert relations["src/helpers/help_00.js"] == DEPENDENCY
    assert relations["src/users/use_00.js"] == DEPENDANT


def test_code_entries_are_the_best_20_by_score(parts_repo: Index) -> None:
    context = build_codebase_context("gadget", parts_repo, [])
    assert len(context.files) == MAX_CANDIDATES + 2 * MAX_RELATIONSHIP_ROOTS
    assert len(context.code) == MAX_CODE_CONTEXTS
    scores = [entry.score for entry in context.code]
    assert scores == sorted(scores, reverse=True)
    assert [entry.path for entry in context.code] == list(context.files[:MAX_CODE_CONTEXTS])


NAMED_PATHS = (
    "a.py",
    "lib/a.py",
    "src/Router.ts",
    "src/router.tsx",
    "x/y/z/very_long_module_name.py",
    "docs/index.js",
    "b/c",
    "README.py",
)


@pytest.mark.parametrize(
    "question",
    [
        "what does a.py do",
        "see LIB/A.PY and src\\router.ts",
        "is x/y/z/very_long_module_name.py or very_long_module_name.py imported",
        "which of src/router.tsx, docs/index.js, b/c and readme.py",
        "nothing named here",
        "a.py",
        "",
        "ab/c" + "d" * 300 + " src/Router.ts",
    ],
)
def test_named_paths_are_the_paths_a_question_holds(question: str) -> None:
    files = CodeFiles.of(stored(path, "python", "word") for path in NAMED_PATHS)
    asked = question.lower().replace("\\", "/")
    expected = [number for number, path in enumerate(files.lowered) if path in asked]
    assert files.named(question) == expected
    assert [files.paths[number] for number in expected] == [
        path for path in NAMED_PATHS if mentions_path(question, path)
    ]
