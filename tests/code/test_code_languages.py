"""Golden records for every language fixture, and the query files behind them.

Each source under ``tests/fixtures/languages/<language>/`` has its expected code record next
to it as ``<name>.json``. After a deliberate change to the parsers, regenerate them with
``SZRAG_UPDATE_GOLDEN=1 pytest tests/code/test_code_languages.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from szrag.code import analyse_source
from szrag.code.components import COMPONENT_EXTENSIONS
from szrag.code.extract import _HANDLERS
from szrag.code.languages import EXTENSIONS, LANGUAGES, query, query_text

LANGUAGE_FIXTURES = Path(__file__).parent.parent / "fixtures" / "languages"
SOURCES = sorted(
    path
    for path in LANGUAGE_FIXTURES.rglob("*")
    if (path.suffix in EXTENSIONS or path.suffix in COMPONENT_EXTENSIONS) and path.is_file()
)


def golden_path(source: Path) -> Path:
    return source.with_name(source.name + ".json")


@pytest.mark.parametrize(
    "source", SOURCES, ids=lambda path: path.relative_to(LANGUAGE_FIXTURES).as_posix()
)
def test_fixture_matches_its_golden_record(source: Path) -> None:
    relative = source.relative_to(LANGUAGE_FIXTURES).as_posix()
    record = analyse_source(relative, source.read_text(encoding="utf-8"))
    assert record is not None
    golden = golden_path(source)
    if os.environ.get("SZRAG_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        pytest.skip("golden record rewritten")
    assert record == json.loads(golden.read_text(encoding="utf-8"))


def test_every_language_has_fixtures_and_every_fixture_a_golden() -> None:
    covered = {
        LANGUAGES[EXTENSIONS[source.suffix]].name
        for source in SOURCES
        if source.suffix in EXTENSIONS
    }
    assert covered == set(LANGUAGES)
    assert all(golden_path(source).exists() for source in SOURCES)


def test_fixtures_cover_the_syntax_the_issue_names() -> None:
    records = {
        source.name: analyse_source(source.name, source.read_text(encoding="utf-8"))
        for source in SOURCES
    }
    assert records["component.jsx"] and records["app.tsx"]
    assert {record["language"] for record in records.values() if record} == {
        "javascript",
        "typescript",
        "tsx",
        "python",
        "go",
        "rust",
        "java",
        "ruby",
        "php",
        "csharp",
        "c",
        "cpp",
        "kotlin",
        "swift",
    }
    partial = sorted(name for name, record in records.items() if record and record["partial"])
    assert partial == [
        "SyntaxError.cs",
        "SyntaxError.java",
        "SyntaxError.kt",
        "SyntaxError.swift",
        "broken.ts",
        "syntax_error.go",
        "syntax_error.js",
        "syntax_error.php",
        "syntax_error.py",
        "syntax_error.rb",
        "syntax_error.rs",
    ]
    # what each language's own app gives: routes with their frameworks' prefixes, env reads
    routes = {
        name: [(route["method"], route["path"]) for route in record["routes"]]
        for name, record in records.items()
        if record
    }
    assert routes["server.go"] == [("GET", "/api/items"), ("ANY", "/healthz"), ("ANY", "/metrics")]
    assert routes["main.rs"] == [
        ("GET", "/api/items"),
        ("GET", "/healthz"),
        ("POST", "/api/orders"),
    ]
    assert routes["ItemController.java"] == [("GET", "/api/items"), ("POST", "/api/items")]
    assert routes["app.rb"] == [("GET", "/api/items"), ("POST", "/api/orders")]
    assert routes["routes.php"] == [("GET", "/api/items"), ("POST", "/api/orders")]
    assert routes["ItemsController.cs"] == [
        ("GET", "/api/Items/list"),
        ("POST", "/api/Items"),
        ("GET", "/healthz"),
    ]
    env = {
        name: [item["name"] for item in record["environment_variables"]]
        for name, record in records.items()
        if record
    }
    assert env["server.go"] == ["PORT"] and env["main.rs"] == ["PORT", "API_KEY"]
    assert env["ItemController.java"] == ["DATABASE_URL"] and env["app.rb"] == ["API_KEY", "TOKEN"]
    assert env["routes.php"] == ["API_KEY", "DATABASE_URL"] and env["SyntaxError.cs"] == ["READY"]
    assert env["store.c"] == ["STORE_DIR"] and env["cart.cpp"] == ["CART_DISCOUNT"]
    assert env["Cache.kt"] == ["CACHE_DIR", "HOME"] and env["SyntaxError.kt"] == ["READY"]
    assert env["Cache.swift"] == ["CACHE_DIR"] and env["SyntaxError.swift"] == ["READY"]
    # a component's script block is parsed in place: its lines are the file's own
    component = records["ItemList.vue"]
    assert component is not None and component["language"] == "typescript"
    assert [(item["name"], item["line"]) for item in component["functions"]] == [("load", 14)]
    assert env["ItemList.vue"] == ["VITE_API_URL"]
    assert records["Counter.svelte"] and records["Counter.svelte"]["functions"][0]["line"] == 6


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_query_compiles_and_every_role_has_a_handler(language: str) -> None:
    compiled = query(language)
    names = {compiled.capture_name(index) for index in range(compiled.capture_count)}
    roles = {name for name in names if name in _HANDLERS}
    parameters = names - roles
    # Parameters belong to a role family, or only serve predicates.
    families = {role.split(".")[0] for role in roles} | {"name"}
    assert all(name.startswith("_") or name.split(".")[0] in families for name in parameters)
    for file_name in LANGUAGES[language].query_files:
        code = "\n".join(
            line for line in query_text(file_name).splitlines() if not line.startswith(";")
        )
        patterns = [block for block in re.split(r"\n\s*\n", code) if block.strip()]
        assert patterns
        for block in patterns:
            assert any(f"@{role}" in block for role in _HANDLERS), (
                f"{file_name}: no role in {block}"
            )


# an index keeps each file's definitions: extracted another way, an index must be rebuilt,
# which a new schema version asks for
DEFINITION_SAMPLES = (
    "typescript/declarations.ts",
    "typescript/service.ts",
    "javascript/anonymous.js",
    "javascript/callbacks.js",
    "go/handlers_test.go",
    "javascript/definitions.js",
    "python/definitions.py",
    "go/types.go",
    "rust/impls.rs",
    "java/Shapes.java",
    "php/enums.php",
    "csharp/ItemsController.cs",
    "ruby/app.rb",
    "ruby/report_spec.rb",
    "c/store.c",
    "cpp/cart.cpp",
    "kotlin/Cache.kt",
    "swift/Cache.swift",
    "cpp/cart.hpp",
)
DEFINITION_FINGERPRINTS = {22: "5ca40b4b4a6e4e12"}


def test_a_change_to_what_files_define_bumps_the_schema_version() -> None:
    import hashlib

    from szrag.index.store import SCHEMA_VERSION

    found = []
    for relative in DEFINITION_SAMPLES:
        source = LANGUAGE_FIXTURES / relative
        record = analyse_source(relative, source.read_text(encoding="utf-8"))
        assert record is not None
        found.append([relative, record["functions"], record["callbacks"]])
    fingerprint = hashlib.sha256(json.dumps(found).encode()).hexdigest()[:16]
    assert DEFINITION_FINGERPRINTS.get(SCHEMA_VERSION) == fingerprint, (
        "files define other things: bump index.store.SCHEMA_VERSION and record"
        f" {SCHEMA_VERSION + 1}: {fingerprint!r} in DEFINITION_FINGERPRINTS"
    )
