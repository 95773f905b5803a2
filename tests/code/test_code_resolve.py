"""Import and path resolution against the set of indexed paths, without the disk."""

from __future__ import annotations

from typing import Any

import pytest

from szrag.code import resolve_edges
from szrag.code.resolve import resolve_python_import

KNOWN = frozenset(
    {
        "server/index.js",
        "server/config.js",
        "server/lib/logger.js",
        "server/lib/util.jsx",
        "server/lib/esm.mjs",
        "server/lib/common.cjs",
        "server/routes/index.js",
        "server/views/index.tsx",
        "web/src/api.ts",
        "web/src/App.tsx",
        "web/src/worker.mts",
        "web/src/hooks/index.ts",
        "web/src/data.json",
        "config/commands.json",
        "index.js",
        "src/szrag/__init__.py",
        "src/szrag/text.py",
        "src/szrag/code/__init__.py",
        "src/szrag/code/graph.py",
        "src/szrag/code/model.py",
        "src/szrag/index/__init__.py",
        "src/szrag/index/build.py",
        "src/szrag/index/handle.py",
        "src/szrag/json.py",
        "tests/test_text.py",
        "tools/release.py",
        "tools/helpers.py",
        "app/__init__.py",
        "app/db.py",
        "app/settings.py",
        "app/routers/__init__.py",
        "app/routers/items.py",
        "stubs/thing.pyi",
    }
)


def script(path: str, source: str, kind: str = "import") -> list[tuple[str, str]]:
    record: dict[str, Any] = {
        "language": "javascript",
        "imports": [{"source": source, "line": 1, "names": [], "kind": kind}],
    }
    return resolve_edges(path, record, KNOWN)


def python(path: str, source: str, names: tuple[str, ...] = (), kind: str = "from") -> list[str]:
    record: dict[str, Any] = {
        "language": "python",
        "imports": [{"source": source, "line": 1, "names": list(names), "kind": kind}],
    }
    return [target for target, _kind in resolve_edges(path, record, KNOWN)]


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        ("server/index.js", "./config", "server/config.js"),
        ("server/index.js", "./config.js", "server/config.js"),
        ("server/index.js", "./lib/util", "server/lib/util.jsx"),
        ("server/index.js", "./lib/esm", "server/lib/esm.mjs"),
        ("server/index.js", "./lib/common", "server/lib/common.cjs"),
        ("server/index.js", "./routes", "server/routes/index.js"),
        ("server/index.js", "./views", "server/views/index.tsx"),
        ("server/lib/logger.js", "../config", "server/config.js"),
        ("server/lib/logger.js", "..", "server/index.js"),
        ("server/index.js", "..", "index.js"),
        ("web/src/App.tsx", "./api", "web/src/api.ts"),
        ("web/src/App.tsx", "./api.js", "web/src/api.ts"),
        ("web/src/App.tsx", "./worker.mjs", "web/src/worker.mts"),
        ("web/src/App.tsx", "./hooks", "web/src/hooks/index.ts"),
        ("web/src/App.tsx", "./data.json", "web/src/data.json"),
        ("server/index.js", "express", None),
        ("server/index.js", "@scope/pkg", None),
        ("server/index.js", "/abs/path", None),
        ("server/index.js", "../../outside", None),
        ("server/index.js", "./missing", None),
    ],
)
def test_script_imports(path: str, source: str, expected: str | None) -> None:
    assert script(path, source) == ([(expected, "import")] if expected else [])


@pytest.mark.parametrize("kind", ["require", "dynamic", "reexport"])
def test_every_import_kind_resolves(kind: str) -> None:
    assert script("server/index.js", "./config", kind) == [("server/config.js", "import")]


@pytest.mark.parametrize(
    ("path", "source", "names", "kind", "expected"),
    [
        # src layout: the package lives under src/, imported from anywhere
        ("tests/test_text.py", "szrag.text", (), "module", ["src/szrag/text.py"]),
        (
            "src/szrag/index/build.py",
            "szrag.code",
            ("analyse_source",),
            "from",
            ["src/szrag/code/__init__.py"],
        ),
        ("src/szrag/index/build.py", "szrag", ("text",), "from", ["src/szrag/text.py"]),
        (
            "src/szrag/index/build.py",
            "szrag.code",
            ("graph", "model"),
            "from",
            ["src/szrag/code/graph.py", "src/szrag/code/model.py"],
        ),
        (
            "src/szrag/index/build.py",
            "szrag.code",
            ("graph", "helper"),
            "from",
            ["src/szrag/code/graph.py", "src/szrag/code/__init__.py"],
        ),
        # relative imports
        ("src/szrag/index/build.py", ".handle", ("Index",), "from", ["src/szrag/index/handle.py"]),
        ("src/szrag/index/build.py", ".", ("handle",), "from", ["src/szrag/index/handle.py"]),
        ("src/szrag/index/build.py", "..", ("text",), "from", ["src/szrag/text.py"]),
        (
            "src/szrag/index/build.py",
            "..code.graph",
            ("find_symbols",),
            "from",
            ["src/szrag/code/graph.py"],
        ),
        (
            "src/szrag/index/__init__.py",
            ".build",
            ("build_index",),
            "from",
            ["src/szrag/index/build.py"],
        ),
        ("src/szrag/index/build.py", "....", ("x",), "from", []),
        ("app/routers/items.py", "..", ("db",), "from", ["app/db.py"]),
        # a script's own folder is a root; a package's folder is not
        ("tools/release.py", "helpers", (), "module", ["tools/helpers.py"]),
        ("src/szrag/index/build.py", "json", (), "module", []),
        # absolute imports of a top-level package next to the code
        ("app/routers/items.py", "app.settings", ("load_settings",), "from", ["app/settings.py"]),
        ("app/routers/items.py", "app", ("db",), "from", ["app/db.py"]),
        ("app/routers/items.py", "app.routers", (), "module", ["app/routers/__init__.py"]),
        ("tools/release.py", "stubs.thing", (), "module", ["stubs/thing.pyi"]),
        ("app/db.py", "os", (), "module", []),
        ("app/db.py", "fastapi", ("APIRouter",), "from", []),
        ("app/db.py", ".", ("*",), "from", ["app/__init__.py"]),
    ],
)
def test_python_imports(
    path: str, source: str, names: tuple[str, ...], kind: str, expected: list[str]
) -> None:
    assert python(path, source, names, kind) == expected


def test_path_references_resolve_from_the_files_directory() -> None:
    record = {
        "language": "javascript",
        "path_references": [
            {"path": "../config/commands.json", "line": 3},
            {"path": "../../../etc/passwd", "line": 4},
            {"path": "missing.json", "line": 5},
        ],
    }
    assert resolve_edges("server/config.js", record, KNOWN) == [("config/commands.json", "path")]
    # the same literal from one directory deeper names a file that is not indexed
    assert resolve_edges("server/lib/logger.js", record, KNOWN) == []


def test_edges_are_unique_and_never_point_at_the_file_itself() -> None:
    record = {
        "language": "javascript",
        "imports": [
            {"source": "./config", "line": 1, "names": [], "kind": "require"},
            {"source": "./config.js", "line": 9, "names": [], "kind": "dynamic"},
            {"source": "./index", "line": 2, "names": [], "kind": "import"},
        ],
        "path_references": [{"path": "config.js", "line": 4}],
    }
    assert resolve_edges("server/index.js", record, KNOWN) == [
        ("server/config.js", "import"),
        ("server/config.js", "path"),
    ]


def test_known_paths_may_be_any_collection_and_bad_records_are_skipped() -> None:
    record: dict[str, Any] = {
        "language": "javascript",
        "imports": [{"source": "./config", "line": 1}, {"line": 2}, "junk"],
        "path_references": [{"line": 3}],
    }
    assert resolve_edges("server/index.js", record, sorted(KNOWN)) == [
        ("server/config.js", "import")
    ]
    assert resolve_edges("server/index.js", {}, KNOWN) == []


def test_resolving_against_a_frozen_set_gives_what_a_plain_set_gives() -> None:
    # a frozenset lets resolution skip bases no indexed file lies under; a set is tried fully
    known = {
        "src/app/__init__.py",
        "src/app/core.py",
        "src/app/sub/__init__.py",
        "src/app/sub/tool.pyi",
        "scripts/run.py",
        "scripts/helpers.py",
        "lib.py",
        "pkg/mod.pyi",
    }
    imports = [
        ("scripts/run.py", "helpers", (), "import"),
        ("scripts/run.py", "app.core", (), "import"),
        ("scripts/run.py", "app", ("core", "sub", "missing"), "from"),
        ("src/app/core.py", ".sub", ("tool",), "from"),
        ("src/app/core.py", "..", ("app",), "from"),
        ("src/app/sub/tool.pyi", "lib", (), "import"),
        ("src/app/sub/tool.pyi", "pkg", ("mod",), "from"),
        ("lib.py", "os.path", ("join",), "from"),
        ("lib.py", "pkg.mod", (), "import"),
    ]
    for path, source, names, kind in imports:
        assert resolve_python_import(path, source, names, kind, frozenset(known)) == (
            resolve_python_import(path, source, names, kind, set(known))
        ), (path, source)
    assert resolve_python_import("scripts/run.py", "app", ("core",), "from", frozenset(known)) == [
        "src/app/core.py"
    ]


def test_one_import_from_files_of_different_folders_resolves_for_each() -> None:
    # with a memo, resolutions are remembered per folder: never across folders
    memo: dict[Any, list[str]] = {}
    known = frozenset(
        {"a/__init__.py", "a/util.py", "a/x.py", "a/y.py", "b/__init__.py", "b/util.py"}
        | {"b/z.py", "util.py", "tool.py"}
    )

    def record(*imports: tuple[str, list[str], str]) -> dict[str, Any]:
        return {
            "language": "python",
            "imports": [
                {"source": source, "names": names, "kind": kind, "line": 1}
                for source, names, kind in imports
            ],
        }

    relative = record((".", ["util"], "from"))
    assert resolve_edges("a/x.py", relative, known, memo) == [("a/util.py", "import")]
    assert resolve_edges("a/y.py", relative, known, memo) == [("a/util.py", "import")]
    assert resolve_edges("b/z.py", relative, known, memo) == [("b/util.py", "import")]
    absolute = record(("util", [], "import"))
    assert resolve_edges("a/x.py", absolute, known, memo) == [("util.py", "import")]
    assert resolve_edges("tool.py", absolute, known, memo) == [("util.py", "import")]
    # the file itself is left out of what its folder resolved
    assert resolve_edges("util.py", absolute, known, memo) == []
    named = record((".", ["x"], "from"))
    assert resolve_edges("a/y.py", named, known, memo) == [("a/x.py", "import")]
    assert resolve_edges("a/x.py", named, known, memo) == []
    assert resolve_edges("a/y.py", named, known - {"a/x.py"}, {}) == [("a/__init__.py", "import")]


def test_a_damaged_record_resolves_without_the_memo() -> None:
    known = frozenset({"pkg/__init__.py", "pkg/mod.py"})
    record: dict[str, Any] = {
        "language": "python",
        "imports": [
            {"source": "pkg", "names": [["junk"]], "kind": "import", "line": 1},
            {"source": "pkg.mod", "names": [], "kind": ["junk"], "line": 2},
        ],
    }
    memo: dict[Any, list[str]] = {}
    assert resolve_edges("main.py", record, known, memo) == [
        ("pkg/__init__.py", "import"),
        ("pkg/mod.py", "import"),
    ]
