"""Rules a query cannot express: route methods from req.method, router objects, paths."""

from __future__ import annotations

from typing import Any

import pytest

from szrag.code import analyse_source
from szrag.code.paths import is_reference, join, parent_of


def routes(text: str, path: str = "server.js") -> list[tuple[str, str, str | None]]:
    record = analyse_source(path, text)
    assert record is not None
    return [(route["method"], route["path"], route["handler"]) for route in record["routes"]]


def references(text: str, path: str) -> list[str]:
    record: dict[str, Any] | None = analyse_source(path, text)
    assert record is not None
    return [reference["path"] for reference in record["path_references"]]


def handler(body: str) -> str:
    return (
        f"http.createServer((req, res) => {{\n  const url = new URL(req.url, base);\n{body}\n}});\n"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('if (url.pathname === "/a") { return a(req, res); }', [("ALL", "/a", "a")]),
        ('if ("/a" == url.pathname) a();', [("ALL", "/a", "a")]),
        (
            'if (req.method === "POST" && url.pathname === "/a") { hook(); }',
            [("POST", "/a", "hook")],
        ),
        (
            'if ((url.pathname === "/a") && request.method == "put") { put(); }',
            [("PUT", "/a", "put")],
        ),
        (
            'if (url.pathname === "/a") {\n if (req.method !== "DELETE") return res.end();\n remove();\n}',
            [("DELETE", "/a", "remove")],
        ),
        (
            'if (url.pathname === "/a") {\n if (req.method === "GET") return list();\n'
            ' if (req.method === "POST") return add();\n}',
            [("GET", "/a", None), ("POST", "/a", None)],
        ),
        (
            'if (url.pathname === "/a") {\n switch (req.method) {\n case "GET": return list();\n'
            ' case "HEAD": return head();\n }\n}',
            [("GET", "/a", None), ("HEAD", "/a", None)],
        ),
        (
            'if (req.method === "GET") {\n if (url.pathname.startsWith("/files/")) send();\n}',
            [("GET", "/files/", "send")],
        ),
        (
            'if (["/x", "/y"].includes(url.pathname)) { res.end(); page(); }',
            [("ALL", "/x", "page"), ("ALL", "/y", "page")],
        ),
        ('const { pathname } = url;\nif (pathname === "/p") p();', [("ALL", "/p", "p")]),
        ('const api = url.pathname.startsWith("/api");', []),
        ('const home = url.pathname === "/" ? "home" : "page";', []),
        ('if (url.pathname.startsWith("/")) any();', []),
        ('if (url.hash === "/a") a();', []),
        ("if (url.pathname === variable) a();", []),
    ],
)
def test_pathname_checks_and_inferred_methods(
    body: str, expected: list[tuple[str, str, str | None]]
) -> None:
    assert routes(handler(body)) == expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ('app.get("/a", h);', [("GET", "/a", "h")]),
        ('router.post("/a", auth, controller.create);', [("POST", "/a", "controller.create")]),
        ('apiRouter.use("/v1", v1Routes);', [("USE", "/v1", "v1Routes")]),
        ('this.app.head("/a", h);', [("HEAD", "/a", "h")]),
        ('server.options("*", cors());', [("OPTIONS", "*", "cors")]),
        ('app.get("env");', []),
        ('app.get("/only-a-path");', []),
        ('map.get("/a", fallback);', []),
        ('params.delete("/a", 1);', []),
        ('app.get(prefix + "/a", h);', []),
        ('app.get("relative", h);', []),
        (
            'router.route("/r").get(show).put(update).patch(patch);',
            [("GET", "/r", "show"), ("PUT", "/r", "update"), ("PATCH", "/r", "patch")],
        ),
        ('router.route("/r").get(show).then(x);', [("GET", "/r", "show")]),
    ],
)
def test_route_registrations(call: str, expected: list[tuple[str, str, str | None]]) -> None:
    assert routes(call) == expected


def test_python_route_decorators_need_a_path() -> None:
    text = (
        "@cache.get('key')\ndef cached(): ...\n\n"
        "@router.get('')\ndef root(): ...\n\n"
        "@app.route('/both', methods=('GET', 'post'))\ndef both(): ...\n"
    )
    assert routes(text, "views.py") == [
        ("GET", "", "root"),
        ("GET", "/both", "both"),
        ("POST", "/both", "both"),
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (".", ".."),
        ("..", "../.."),
        ("../..", "../../.."),
        ("a/b", "a"),
        ("a", "."),
        ("file.py", "."),
    ],
)
def test_parent_of(value: str, expected: str) -> None:
    assert parent_of(value) == expected


def test_join_treats_absolute_literals_by_the_call() -> None:
    assert join(".", "../x.json") == "../x.json"
    assert join("a", "./b/../c") == "a/c"
    assert join(".", "/etc/passwd") is None
    assert join(".", "/public", absolute_is_relative=True) == "public"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("x.json", True), ("../x", True), (".", False), ("../..", False), ("self.js", False)],
)
def test_is_reference(value: str, expected: bool) -> None:
    assert is_reference(value, "self.js") is expected


def test_javascript_path_variables_are_followed() -> None:
    text = (
        'const ROOT = path.join(__dirname, "..");\n'
        'const DATA = path.join(ROOT, "data");\n'
        'const file = path.join(DATA, "seed.json");\n'
        "const dir = __dirname;\n"
        'read(path.resolve(__dirname, "/abs/path"));\n'
    )
    assert references(text, "server/config.js") == ["../data", "../data/seed.json"]


def test_python_path_variables_are_followed() -> None:
    text = (
        "from pathlib import Path\n"
        "HERE = Path(__file__).parent\n"
        "ROOT = HERE.parent\n"
        "STATIC = ROOT / 'static'\n"
        "INDEX = STATIC / 'index.html'\n"
        "LOCAL = HERE / name\n"
    )
    assert references(text, "pkg/web.py") == ["../static", "../static/index.html"]


def test_absurd_parent_counts_are_ignored() -> None:
    text = "from pathlib import Path\nX = Path(__file__).parents[1000000000] / 'x'\n"
    assert references(text, "pkg/mod.py") == []
