"""Routes under the prefixes their blueprints and routers are mounted at in other files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from szrag.cli import main
from szrag.code.mounts import resolve_target
from szrag.context.build import build_codebase_context
from szrag.index import build_index, load_index
from szrag.structure.context import get_code_context
from szrag.structure.queries import (
    IndexedPaths,
    all_routes,
    find_routes,
)


def _write(root: Path, files: dict[str, str]) -> Path:
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    return root


FLASK_APP = {
    "flaskr/__init__.py": (
        "from flask import Flask\n\n\n"
        "def create_app():\n"
        "    app = Flask(__name__)\n"
        "    from . import auth\n\n"
        '    app.register_blueprint(auth.bp, url_prefix="/auth")\n'
        "    return app\n"
    ),
    "flaskr/auth.py": (
        "from flask import Blueprint\n\n"
        'bp = Blueprint("auth", __name__)\n\n\n'
        '@bp.route("/login", methods=["GET", "POST"])\n'
        "def login():\n    return 'login'\n"
    ),
}

FASTAPI_APP = {
    "service/__init__.py": "",
    "service/main.py": (
        "from fastapi import FastAPI\n\n"
        "from .api import router\n\n"
        "app = FastAPI()\n"
        'app.include_router(router, prefix="/api")\n'
    ),
    "service/api.py": (
        "from fastapi import APIRouter\n\n"
        "router = APIRouter()\n\n\n"
        '@router.get("/items")\n'
        "def list_items():\n    return []\n"
    ),
}


def _served(root: Path) -> set[tuple[str, str, str]]:
    with build_index(root) as index:
        return {(route.file, route.method, route.path) for route in all_routes(index)}


def test_a_flask_blueprint_registered_in_another_file_serves_under_its_prefix(
    tmp_path: Path,
) -> None:
    root = str(_write(tmp_path, FLASK_APP))
    listed = CliRunner().invoke(main, ["routes", "--root", root, "--json"])
    assert listed.exit_code == 0, listed.output
    routes = {(item["path"], item["method"], item["route"]) for item in json.loads(listed.stdout)}
    assert ("flaskr/auth.py", "POST", "/auth/login") in routes
    assert ("flaskr/auth.py", "GET", "/login") not in routes
    assert ("flaskr/__init__.py", "USE", "/auth") in routes
    shown = CliRunner().invoke(main, ["routes", "--root", root])
    assert any(
        "/auth/login" in line and "flaskr/auth.py:6" in line for line in shown.stdout.split("\n")
    )

    with load_index(Path(root)) as index:
        best = find_routes("what does /auth/login do?", index)[0]
        assert (best.file, best.path, best.handler) == ("flaskr/auth.py", "/auth/login", "login")


def test_a_fastapi_router_included_from_another_file_serves_under_its_prefix(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path, FASTAPI_APP)
    assert ("service/api.py", "GET", "/api/items") in _served(root)
    with load_index(root) as index:
        best = find_routes("what does GET /api/items return?", index)[0]
        assert (best.file, best.method, best.path) == ("service/api.py", "GET", "/api/items")


def test_a_router_prefix_follows_the_mount_prefix_in_fastapi(tmp_path: Path) -> None:
    files = dict(FASTAPI_APP)
    files["service/api.py"] = files["service/api.py"].replace(
        "APIRouter()", 'APIRouter(prefix="/v2")'
    )
    assert ("service/api.py", "GET", "/api/v2/items") in _served(_write(tmp_path, files))


@pytest.mark.parametrize(
    ("registration", "served"),
    [
        ('app.register_blueprint(auth.bp, url_prefix="/auth")', "/auth/login"),  # replaces
        ("app.register_blueprint(auth.bp)", "/account/login"),  # the blueprint's own
    ],
)
def test_a_flask_registration_prefix_takes_the_place_of_the_blueprints_own(
    tmp_path: Path, registration: str, served: str
) -> None:
    files = {
        "flaskr/__init__.py": FLASK_APP["flaskr/__init__.py"].replace(
            'app.register_blueprint(auth.bp, url_prefix="/auth")', registration
        ),
        "flaskr/auth.py": FLASK_APP["flaskr/auth.py"].replace(
            'Blueprint("auth", __name__)', 'Blueprint("auth", __name__, url_prefix="/account")'
        ),
    }
    paths = {path for file, _, path in _served(_write(tmp_path, files)) if file == "flaskr/auth.py"}
    assert paths == {served}


def test_aliases_nesting_and_two_registrations(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "shop/__init__.py": (
                "from flask import Flask\n"
                "from .api import api as api_blueprint\n"
                "from .pages import bp\n\n"
                "app = Flask(__name__)\n"
                "app.register_blueprint(api_blueprint)\n"
                'app.register_blueprint(bp, url_prefix="/en")\n'
                'app.register_blueprint(bp, url_prefix="/fr", name="pages_fr")\n'
            ),
            "shop/api.py": (
                "from flask import Blueprint\n"
                "from . import users\n\n"
                'api = Blueprint("api", __name__, url_prefix="/api")\n'
                'api.register_blueprint(users.bp, url_prefix="/users")\n'
            ),
            "shop/users.py": (
                "from flask import Blueprint\n\n"
                'bp = Blueprint("users", __name__)\n\n\n'
                '@bp.get("/<int:user_id>")\n'
                "def show(user_id):\n    return str(user_id)\n"
            ),
            "shop/pages.py": (
                "from flask import Blueprint\n\n"
                'bp = Blueprint("pages", __name__)\n\n\n'
                '@bp.get("/about")\n'
                "def about():\n    return 'about'\n"
            ),
        },
    )
    served = _served(root)
    assert ("shop/users.py", "GET", "/api/users/<int:user_id>") in served  # in a blueprint
    assert {("shop/pages.py", "GET", "/en/about"), ("shop/pages.py", "GET", "/fr/about")} <= served


def test_a_local_blueprint_is_mounted_only_where_it_is_declared(tmp_path: Path) -> None:
    local = (
        "def test_{name}(app):\n"
        '    bp = flask.Blueprint("{name}", __name__)\n\n'
        '    @bp.route("/page")\n'
        "    def page():\n        return 'x'\n\n"
        '    app.register_blueprint(bp, url_prefix="/{name}")\n\n\n'
    )
    source = "import flask\n\n\n" + local.format(name="one") + local.format(name="two")
    served = _served(_write(tmp_path, {"tests/test_pages.py": source}))
    pages = sorted(path for _, method, path in served if method == "GET")
    assert pages == ["/one/page", "/two/page"]


def test_the_context_and_a_refresh_see_the_mounted_paths(tmp_path: Path) -> None:
    root = _write(tmp_path, FLASK_APP)
    with build_index(root) as index:
        context = build_codebase_context("how does /auth/login work?", index)
        assert [(item.file, item.path) for item in context.routes][:2] == [
            ("flaskr/auth.py", "/auth/login"),
            ("flaskr/auth.py", "/auth/login"),
        ]
        assert "GET /auth/login (6)" in get_code_context("flaskr/auth.py", index)
    init = root / "flaskr" / "__init__.py"
    init.write_text(init.read_text().replace('url_prefix="/auth"', 'url_prefix="/account"'))
    with load_index(root) as index:
        paths = {route.path for route in all_routes(index) if route.file == "flaskr/auth.py"}
        assert paths == {"/account/login"}


@pytest.mark.parametrize(
    ("path", "target", "expected"),
    [
        ("app/__init__.py", ".:auth.bp", ("app/auth.py", "bp")),
        ("app/main.py", ".api:router", ("app/api.py", "router")),
        ("app/main.py", "app.routers:items.router", ("app/routers/items.py", "router")),
        ("app/main.py", ":router", ("app/main.py", "router")),
        ("app/main.py", "fastapi:FastAPI", None),  # a package from outside
        ("app/main.py", ".:auth.bp.inner", None),  # not a plain name of the module
    ],
)
def test_resolve_target(path: str, target: str, expected: tuple[str, str] | None) -> None:
    known = frozenset(
        {
            "app/__init__.py",
            "app/auth.py",
            "app/api.py",
            "app/main.py",
            "app/routers/__init__.py",
            "app/routers/items.py",
        }
    )
    assert resolve_target(path, target, known) == expected


def test_mounts_resolve_against_the_index_as_against_every_path(tmp_path: Path) -> None:
    # the paths an index holds, asked one by one, resolve a target as the set of every
    # indexed path does, and are that set when listed
    files = {
        "app/__init__.py": "",
        "app/auth.py": "bp = 1\n",
        "app/api.py": "router = 1\n",
        "app/main.py": "app = 1\n",
        "app/routers/__init__.py": "",
        "app/routers/items.py": "router = 1\n",
    }
    with build_index(_write(tmp_path, files)) as index:
        asked = IndexedPaths(index)
        every = frozenset(entry.path for entry in index.file_entries())
        assert set(asked) == every == set(files)
        assert len(asked) == len(files)
        not_a_path: object = 3
        assert "app/auth.py" in asked and "app/nothing.py" not in asked
        assert not_a_path not in asked
        for target in (".:auth.bp", ".api:router", "app.routers:items.router", "x:y"):
            assert resolve_target("app/main.py", target, asked) == resolve_target(
                "app/main.py", target, every
            )
        assert resolve_target("app/main.py", "app.routers:items.router", asked) == (
            "app/routers/items.py",
            "router",
        )


def test_the_live_route_list_follows_the_index_generation(tmp_path: Path) -> None:
    from szrag.runtime.indexinfo import read_routes

    (tmp_path / "app.py").write_text(
        "from flask import Flask\napp = Flask(__name__)\n\n@app.get('/one')\ndef one():\n"
        "    return 'one'\n",
        encoding="utf-8",
    )
    build_index(tmp_path).close()
    first = read_routes(tmp_path)
    assert [route["route"] for route in first] == ["/one"]
    first[0]["route"] = "changed by the caller"  # a caller's copy: the kept list is not touched
    assert [route["route"] for route in read_routes(tmp_path)] == ["/one"]

    (tmp_path / "more.py").write_text(
        "from app import app\n\n@app.post('/two')\ndef two():\n    return 'two'\n",
        encoding="utf-8",
    )
    load_index(tmp_path).close()  # refreshed: a new generation
    assert [route["route"] for route in read_routes(tmp_path)] == ["/one", "/two"]
