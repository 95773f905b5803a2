"""analyse_source as the index calls it: which files it reads, and what a record looks like."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from szrag.code import analyse_source
from szrag.code.languages import grammar, language_of, query
from szrag.code.model import CodeRecord, Definition, Import

SERVER = """\
const express = require("express");
const app = express();
app.get("/health", (req, res) => res.json({ ok: process.env.READY }));
module.exports = app;
"""


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("server/app.js", "javascript"),
        ("web/App.JSX", "javascript"),
        ("lib/index.mjs", "javascript"),
        ("lib/index.cjs", "javascript"),
        ("src/main.ts", "typescript"),
        ("src/main.mts", "typescript"),
        ("src/main.cts", "typescript"),
        ("src/App.tsx", "tsx"),
        ("pkg/mod.py", "python"),
        ("pkg/mod.pyi", "python"),
        ("README.md", None),
        ("package.json", None),
        ("styles/site.css", None),
        ("Makefile", None),
        ("archive.js.map", None),
    ],
)
def test_language_is_decided_by_extension(path: str, language: str | None) -> None:
    assert language_of(path) == language


@pytest.mark.parametrize("path", ["README.md", "package.json", "site.css", "notes.txt"])
def test_non_code_files_have_no_record(path: str) -> None:
    assert analyse_source(path, "const looksLikeCode = require('./x');\n") is None


def test_record_is_json_ready_and_round_trips() -> None:
    record = analyse_source("server/app.js", SERVER)
    assert record is not None
    assert json.loads(json.dumps(record)) == record
    assert set(record) >= {
        "language",
        "partial",
        "imports",
        "exports",
        "functions",
        "calls",
        "environment_variables",
        "routes",
        "path_references",
    }
    assert CodeRecord.from_dict(record).to_dict() == record


def test_from_dict_tolerates_missing_and_unknown_keys() -> None:
    stored = {
        "language": "javascript",
        "imports": [{"source": "./x", "line": 2, "names": ["a"], "kind": "require", "extra": 1}],
        "functions": [{"name": "f", "kind": "function", "line": 1, "end_line": 3}, "not a dict"],
    }
    record = CodeRecord.from_dict(stored)
    assert record.imports == (Import("./x", 2, ("a",), "require"),)
    assert record.functions == (Definition("f", "function", 1, 3),)
    assert record.routes == () and record.partial is False


def test_a_record_as_written_and_one_with_other_fields_decode_alike() -> None:
    written = {
        "language": "python",
        "imports": [{"source": "os", "line": 1, "names": ["path"], "kind": "import"}],
        "exports": [{"name": "f", "line": 3}],
        "functions": [
            {"name": "f", "kind": "function", "line": 3, "end_line": 4, "container": None}
        ],
    }
    other = {  # an older or damaged record: a field missing here, an unknown one there
        "language": "python",
        "imports": [{"source": "os", "line": 1, "names": ["path"]}],
        "exports": [{"name": "f", "line": 3, "default": False}],
        "functions": [{"name": "f", "kind": "function", "line": 3, "end_line": 4}],
    }
    assert CodeRecord.from_dict(written) == CodeRecord.from_dict(other)
    record = CodeRecord.from_dict(written)
    assert record.imports == (Import("os", 1, ("path",), "import"),)
    assert isinstance(record.imports[0].names, tuple)


def test_syntax_errors_keep_what_was_read_and_mark_partial() -> None:
    text = "import os\n\ndef ok():\n    return os.getenv('HOME')\n\ndef broken(:\n    pass\n"
    record = analyse_source("mod.py", text)
    assert record is not None and record["partial"] is True
    assert [item["name"] for item in record["functions"]] == ["ok", "broken"]
    assert record["environment_variables"] == [{"name": "HOME", "line": 4}]


@pytest.mark.parametrize(
    ("path", "text"),
    [("noise.js", "))) ]]] }}} @@@ ###"), ("noise.py", ")))) :::: ]]]]")],
)
def test_text_that_is_not_code_at_all_has_no_record(path: str, text: str) -> None:
    assert analyse_source(path, text) is None


def test_empty_file_has_an_empty_record() -> None:
    record = analyse_source("empty.ts", "")
    assert record is not None
    assert record["language"] == "typescript" and record["partial"] is False
    assert record["functions"] == [] and record["imports"] == []


def test_lines_stay_right_after_non_ascii_text() -> None:
    text = '// ✓ café — naïve\nconst s = "日本語";\nfunction after() { return process.env.UNICODE_OK }\n'
    record = analyse_source("unicode.js", text)
    assert record is not None
    assert record["functions"][0]["line"] == 3
    assert record["environment_variables"] == [{"name": "UNICODE_OK", "line": 3}]


def test_grammar_and_query_are_built_once_per_process() -> None:
    assert grammar("python") is grammar("python")
    assert query("tsx") is query("tsx")


def test_parallel_calls_give_the_same_records() -> None:
    texts = [SERVER.replace("/health", f"/health{number}") for number in range(16)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        records = list(pool.map(lambda text: analyse_source("app.js", text), texts))
    assert [record["routes"][0]["path"] for record in records if record] == [
        f"/health{number}" for number in range(16)
    ]


def test_truncated_sources_never_break_the_parser() -> None:
    # Files caught mid-edit: every fixture cut at several points still gives a record or None.
    fixtures = Path(__file__).parent.parent / "fixtures" / "languages"
    sources = [path for path in sorted(fixtures.rglob("*")) if language_of(path.name)]
    assert sources
    for source in sources:
        text = source.read_text(encoding="utf-8")
        for cut in range(1, len(text), max(1, len(text) // 7)):
            record = analyse_source(source.name, text[:cut])
            assert record is None or json.loads(json.dumps(record)) == record


def test_blueprint_and_router_prefixes_are_part_of_their_routes() -> None:
    source = (
        "from flask import Blueprint\n"
        "from fastapi import APIRouter\n\n"
        'bp = Blueprint("auth", __name__, url_prefix="/auth")\n'
        'router = APIRouter(prefix="/users")\n'
        'plain = Blueprint("plain", __name__)\n\n'
        '@bp.route("/login", methods=["GET", "POST"])\n'
        "def login():\n    return 'x'\n\n"
        '@router.get("")\n'
        "def list_users():\n    return []\n\n"
        '@router.get("/{user_id}")\n'
        "def get_user(user_id):\n    return {}\n\n"
        '@plain.route("/about")\n'
        "def about():\n    return 'a'\n"
    )
    record = analyse_source("app/auth.py", source)
    assert record is not None
    assert [(route["method"], route["path"], route["handler"]) for route in record["routes"]] == [
        ("GET", "/auth/login", "login"),
        ("POST", "/auth/login", "login"),
        ("GET", "/users", "list_users"),
        ("GET", "/users/{user_id}", "get_user"),
        ("GET", "/about", "about"),
    ]
