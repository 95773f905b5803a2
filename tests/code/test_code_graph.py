"""The structure graph through a real index built from the fixture applications."""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from szrag.base.errors import PathError
from szrag.base.text import tokens
from szrag.code.model import EnvReference, SymbolMatch
from szrag.code.scoring import (
    FULL_NAME,
    NAME_TOKEN,
    WHOLE_NAME,
    SymbolQuestion,
    extract_environment_variables,
    names_in,
    names_symbol,
    path_in,
    route_score,
    symbol_score,
)
from szrag.index import Index, build_index, load_index
from szrag.structure.context import (
    get_code_context,
    splice,
)
from szrag.structure.queries import (
    all_routes,
    find_environment_variable,
    find_routes,
    find_symbols,
    get_dependants,
    get_dependencies,
)

CopyFixture = Callable[[str], Path]


@pytest.fixture
def express(copy_fixture: CopyFixture) -> Iterator[Index]:
    with build_index(copy_fixture("express_app")) as index:
        yield index


@pytest.fixture
def python_app(copy_fixture: CopyFixture) -> Iterator[Index]:
    with build_index(copy_fixture("python_app")) as index:
        yield index


# ---- scoring ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "name", "container", "expected"),
    [
        ("how does verifyGithubSignature work", "verifyGithubSignature", None, 160),
        ("how is the github signature verified", "verifyGithubSignature", None, 65),
        ("what calls createApp?", "createApp", None, 140),
        ("what calls createapp", "createApp", None, 100),  # no camel case left to split
        ("where is the target", "get", None, 0),
        ("nothing related", "verifyGithubSignature", None, 0),
        ("the #flush method", "#flush", None, 120),
        # a one-word name is named only when written as code; as a plain word it is one word
        ("get the queue", "get", None, 25),
        ("what does `get` return?", "get", None, 120),
        ("what does queue.get() return?", "get", "Queue", 130),
        # inflections match; the class counts for words the name has not matched already
        ("how are blueprints registered?", "register", "Blueprint", 35),
        ("how are blueprints registered?", "blueprints", "Request", 25),
        ("how are blueprints registered?", "register_blueprint", "App", 45),
        ("how are blueprints registered?", "register_blueprint", "Blueprint", 45),
        ("how are blueprints registered?", "__init__", "Blueprint", 0),  # the class alone
        # words written as code match as written
        ("how does select_sources use it", "source", None, 0),
        ("how does select_sources use it", "sources_block", None, 20),
    ],
)
def test_symbol_score(question: str, name: str, container: str | None, expected: int) -> None:
    assert symbol_score(SymbolQuestion.of(question), name, container) == expected


def test_a_name_and_its_class_outrank_a_one_word_name_and_a_named_symbol_comes_first(
    tmp_path: Path,
) -> None:
    package = tmp_path / "shop"
    package.mkdir()
    (package / "carts.py").write_text(
        "class Cart:\n"
        "    def check(self):\n        return self.total()\n\n"
        "    def total(self):\n        return 0\n\n\n"
        "def check_cart(cart):\n    return cart.check()\n"
    )
    (package / "orders.py").write_text(
        "class Order:\n"
        "    @property\n    def carts(self):\n        return []\n\n"
        "    def checked(self):\n        return True\n"
    )
    with build_index(tmp_path) as index:
        ranked = [match.qualified_name for match in find_symbols("how are carts checked?", index)]
        # two words of the name, then a word of the name and one of its class, then one word
        assert ranked[:2] == ["check_cart", "Cart.check"]
        assert set(ranked[2:]) == {"Cart", "Order.carts", "Order.checked"}
        named = find_symbols("what does `carts` return?", index)
        assert named[0].qualified_name == "Order.carts" and named[0].score > FULL_NAME
        assert find_symbols("when is Cart.check called?", index)[0].qualified_name == "Cart.check"
        assert find_symbols("who calls check_cart?", index)[0].name == "check_cart"


@pytest.mark.parametrize(
    ("question", "method", "path", "expected"),
    [
        ("what does /health return", "GET", "/health", 120),
        ("what does GET /health return", "GET", "/health", 140),
        ("the health endpoint", "GET", "/health", 20),
        ("what does /healthz return", "GET", "/health", 0),
        ("POST /webhooks/github", "POST", "/github", 40),
        ("and/or", "GET", "/", 0),
        ("what is served at / ?", "GET", "/", 100),
    ],
)
def test_route_score(question: str, method: str, path: str, expected: int) -> None:
    assert route_score(question.lower(), tokens(question), method, path) == expected


def test_whole_word_helpers() -> None:
    assert names_in("call start() now", "start") and not names_in("restart it", "start")
    assert path_in("see `/items/{item_id}`", "/items/{item_id}") and not path_in("", "")


def test_a_name_stands_in_a_question_as_a_pattern_would_find_it() -> None:
    # the reference: the patterns the helpers once compiled for every name
    def whole(question: str, name: str) -> bool:
        word = re.escape(name.lower())
        return re.search(rf"(?<![\w$]){word}(?![\w$])", question) is not None

    def as_code(question: str, name: str) -> bool:
        if not name or not whole(question, name):
            return False
        if len(tokens(name)) > 1 or not name.isalpha():
            return True
        word = re.escape(name.lower())
        code = rf"`{word}`|(?<![\w$]){word}\(|[\w)\]]\.{word}(?![\w$])"
        return re.search(code, question) is not None

    chooser = random.Random(3)
    names = ["a", "ab", "b", "ab_", "$a", "a.b", "ba", "abab", "#a", "\u00e9"]
    for _ in range(20_000):
        question = "".join(
            chooser.choice("ab_$.()[]` \u00e91") for _ in range(chooser.randrange(14))
        )
        name = chooser.choice(names)
        assert names_in(question, name) == whole(question, name), (question, name)
        assert names_symbol(question, name) == as_code(question, name), (question, name)


def test_extract_environment_variables() -> None:
    question = "Is GITHUB_WEBHOOK_SECRET set, and PORT? Check PORT, not Port or DB or X_Y."
    assert extract_environment_variables(question) == ["GITHUB_WEBHOOK_SECRET", "PORT", "X_Y"]


def test_splice_joins_overlapping_windows_without_repeats() -> None:
    windows = [(1, "a\nb\nc"), (3, "c\nd"), (10, "x\ny"), (11, "y\nz")]
    assert splice(windows) == [(1, 4, "a\nb\nc\nd"), (10, 12, "x\ny\nz")]


# ---- edges --------------------------------------------------------------------------------


def test_dependencies_come_from_stored_edges(express: Index) -> None:
    assert get_dependencies("server/index.js", express) == [
        "server/config.js",
        "server/lib/deploy.js",
        "server/lib/logger.js",
        "server/metrics.js",
        "server/middleware/auth.js",
        "server/routes/admin.js",
        "server/routes/slack.js",
        "server/routes/webhook.js",
    ]
    assert get_dependencies("server/lib/deploy.js", express) == [
        "scripts/deploy.sh",
        "server/lib/logger.js",
        "server/lib/slack.js",
    ]
    assert get_dependencies("server/config.js", express) == ["config/commands.json"]
    assert get_dependencies("docs/deploy.md", express) == []


def test_dependants_are_importers_only(express: Index) -> None:
    assert get_dependants("server/lib/logger.js", express) == [
        "server/index.js",
        "server/lib/deploy.js",
        "server/lib/slack.js",
        "server/routes/webhook.js",
    ]
    assert get_dependants("server/lib/github.js", express) == ["server/routes/webhook.js"]
    assert get_dependants("scripts/deploy.sh", express) == []  # referred to, not imported
    assert get_dependants("server/index.js", express) == []


def test_python_edges_cover_absolute_relative_and_package_imports(python_app: Index) -> None:
    assert get_dependencies("app/main.py", python_app) == [
        "app/admin.py",
        "app/db.py",
        "app/routers/items.py",
        "app/routers/webhooks.py",
        "app/settings.py",
    ]
    assert get_dependencies("app/routers/webhooks.py", python_app) == ["app/auth.py", "app/db.py"]
    assert get_dependencies("app/settings.py", python_app) == ["app/data/seed.json"]
    assert get_dependants("app/settings.py", python_app) == [
        "app/auth.py",
        "app/db.py",
        "app/main.py",
        "app/services/inventory.py",
    ]


def test_paths_are_normalised_and_unknown_paths_are_errors(express: Index) -> None:
    absolute = express.root / "server" / "lib" / "github.js"
    assert get_dependants(str(absolute), express) == ["server/routes/webhook.js"]
    assert get_dependants("./server\\lib\\github.js", express) == ["server/routes/webhook.js"]
    with pytest.raises(PathError, match=r"server/nope\.js is not in the index"):
        get_dependencies("server/nope.js", express)
    with pytest.raises(PathError, match="outside the indexed root"):
        get_dependants("../elsewhere.js", express)
    with pytest.raises(PathError, match="outside the indexed root"):
        get_dependants("/etc/passwd", express)
    with pytest.raises(PathError, match="no path"):
        get_dependencies("  ", express)


def test_edges_follow_refreshes(express: Index) -> None:
    root = express.root
    (root / "server" / "lib" / "audit.js").write_text(
        'const logger = require("./logger");\n'
        "function audit(event) {\n  logger.info(event);\n}\n"
        "module.exports = { audit };\n"
    )
    with load_index(root) as index:
        assert "server/lib/audit.js" in get_dependants("server/lib/logger.js", index)
        assert [match.file for match in find_symbols("the audit function", index)] == [
            "server/lib/audit.js"
        ]
    (root / "server" / "lib" / "audit.js").unlink()
    with load_index(root) as index:
        assert "server/lib/audit.js" not in get_dependants("server/lib/logger.js", index)
        assert find_symbols("the audit function", index) == []


# ---- symbols, routes, variables -----------------------------------------------------------


def test_find_symbols_ranks_the_named_function_first(express: Index) -> None:
    matches = find_symbols("How does verifyGithubSignature check the webhook?", express)
    assert matches[0] == SymbolMatch(
        file="server/lib/github.js",
        name="verifyGithubSignature",
        kind="function",
        line=9,
        end_line=18,
        score=160,
    )
    assert all(match.score > 0 for match in matches)
    scores = [match.score for match in matches]
    assert scores == sorted(scores, reverse=True)
    assert {"verifySlackRequest", "createWebhookRouter"} <= {match.name for match in matches}


def test_find_symbols_includes_methods_and_class_fields(express: Index) -> None:
    names = {
        (match.name, match.kind) for match in find_symbols("DeployQueue drain rollback", express)
    }
    assert {("DeployQueue", "class"), ("drain", "arrow"), ("rollback", "method")} <= names


def test_find_symbols_breaks_ties_by_file_and_line(python_app: Index) -> None:
    matches = find_symbols("item", python_app)
    tied = [(match.file, match.line) for match in matches if match.score == matches[0].score]
    assert tied == sorted(tied)
    # the question is the whole name, in a word
    assert matches[0].name == "Item" and matches[0].score == NAME_TOKEN + WHOLE_NAME


def test_find_routes_scores_exact_paths_and_tokens(express: Index) -> None:
    matches = find_routes("what does GET /healthz return?", express)
    assert (matches[0].file, matches[0].method, matches[0].path, matches[0].score) == (
        "server/metrics.js",
        "GET",
        "/healthz",
        140,
    )
    assert find_routes("zebra", express) == []


def test_find_routes_scores_as_every_route_scored(express: Index) -> None:
    routes = all_routes(express)
    paths = [route.path for route in routes]
    questions = [f"what does {path} do" for path in paths] + ["get post users", "/", "the api"]
    questions += [" ".join(path.strip("/").split("/")) for path in paths]
    for question in questions:
        lowered, query = question.lower(), tokens(question)
        scored = [
            dataclasses.replace(route, score=route_score(lowered, query, route.method, route.path))
            for route in routes
        ]
        expected = sorted(
            (route for route in scored if route.score > 0),
            key=lambda match: (-match.score, match.file, match.line),
        )
        assert find_routes(question, express) == expected, question
    assert sum(bool(find_routes(question, express)) for question in questions) > len(paths)


def test_all_routes_lists_registrations_chains_and_pathname_checks(express: Index) -> None:
    found = {(route.file, route.method, route.path) for route in all_routes(express)}
    assert {
        ("server/index.js", "USE", "/webhooks"),
        ("server/index.js", "GET", "/health"),
        ("server/routes/webhook.js", "POST", "/github"),
        ("server/routes/slack.js", "POST", "/commands"),
        ("server/routes/admin.js", "GET", "/queue"),
        ("server/routes/admin.js", "DELETE", "/queue"),
        ("server/metrics.js", "GET", "/healthz"),
        ("server/metrics.js", "GET", "/metrics"),
    } <= found


def test_python_routes(python_app: Index) -> None:
    routes = {
        (route.file, route.method, route.path, route.handler) for route in all_routes(python_app)
    }
    assert {
        ("app/main.py", "GET", "/health", "health"),
        ("app/main.py", "USE", "/items", "items.router"),
        # the routers are mounted in app/main.py: include_router(items.router, prefix="/items")
        ("app/routers/items.py", "DELETE", "/items/{item_id}", "delete_item"),
        ("app/routers/webhooks.py", "POST", "/webhooks/github", "github_webhook"),
        ("app/admin.py", "POST", "/reseed", "reseed"),
    } <= routes


def test_find_environment_variable_is_case_insensitive(express: Index) -> None:
    references = find_environment_variable("github_webhook_secret", express)
    assert references == [EnvReference("server/config.js", "GITHUB_WEBHOOK_SECRET", 19)]
    assert find_environment_variable("NOT_SET_ANYWHERE", express) == []
    admin = {reference.file for reference in find_environment_variable("ADMIN_TOKEN", express)}
    assert admin == {"server/config.js", "server/middleware/auth.js"}


def test_python_environment_variables(python_app: Index) -> None:
    files = [
        reference.file
        for reference in find_environment_variable("GITHUB_WEBHOOK_SECRET", python_app)
    ]
    assert files == ["app/routers/webhooks.py", "app/settings.py"]


# ---- code context -------------------------------------------------------------------------


def test_code_context_lists_the_structure(express: Index) -> None:
    context = get_code_context("server/metrics.js", express)
    assert context.split("\n\n") == [
        "IMPORTS:\n- http",
        "FUNCTIONS:\n- createMetricsServer (7-25)\n- sendJson (27-30)",
        "ROUTES:\n- GET /healthz (12)\n- GET /metrics (16)",
    ]
    config = get_code_context("server/config.js", express)
    assert "ENVIRONMENT VARIABLES:\n- PORT (15)\n- METRICS_PORT (16)" in config
    assert get_code_context("docs/deploy.md", express) == ""


def test_code_context_with_a_symbol_adds_its_source(express: Index) -> None:
    context = get_code_context("server/lib/github.js", express, "verifyGithubSignature")
    source = context.split("SOURCE (1-25):\n", 1)[1]  # 24 lines and the empty last one
    assert source.splitlines()[8] == "function verifyGithubSignature(secret, rawBody, signature) {"
    assert get_code_context("server/lib/github.js", express, "noSuchSymbol").count("SOURCE") == 0


def test_code_context_splices_overlapping_chunks(express: Index) -> None:
    body = "\n".join(f"  step{number}();" for number in range(1, 121))
    text = "// long\n" * 30 + f"function longTask() {{\n{body}\n}}\n" + "// tail\n" * 100
    (express.root / "server" / "long.js").write_text(text)
    with load_index(express.root) as index:
        match = next(match for match in find_symbols("longTask", index) if match.name == "longTask")
        assert (match.line, match.end_line) == (31, 152)
        context = get_code_context("server/long.js", index, match)
    header, source = context.split("SOURCE ", 1)[1].split("\n", 1)
    assert header == "(1-180):"  # chunks 1-60 ... 121-180 cover lines 31-152
    lines = source.split("\n")
    assert len(lines) == 180
    steps = [line for line in lines if "step" in line]
    assert steps == [f"  step{number}();" for number in range(1, 121)]


def test_code_context_ignores_a_symbol_match_of_another_file(express: Index) -> None:
    other = SymbolMatch("server/index.js", "createApp", "function", 12, 24, 100)
    assert "SOURCE" not in get_code_context("server/lib/github.js", express, other)
