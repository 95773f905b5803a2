"""The default ranker on the shapes real questions failed on, each as a small repository.

Real-history questions are pull-request titles and commit subjects; where they used to get
nothing, too little, or release notes instead of code, these fixtures hold the same shape.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from szrag.index import build_index
from szrag.rank.retrieve import retrieve

FILLER = {
    f"pkg/other{n}.py": f"def unrelated_{n}(value):\n    return value * {n}\n" for n in range(12)
}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in {**FILLER, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def paths(root: Path, question: str, limit: int = 8) -> list[str]:
    with build_index(root) as index:  # the files, in rank order (a file may give units)
        return list(dict.fromkeys(source.path for source in retrieve(question, limit, index=index)))


PROXY = (
    "def proxies_from_environment(environ):\n"
    "    proxy = environ.get('HTTPS_PROXY') or environ.get('HTTP_PROXY')\n"
    "    return {'all': proxy} if proxy else {}\n"
)


@pytest.mark.parametrize(
    "question",
    [
        "Fix environment proxies (#6285)",  # an issue number the index never saw
        "fix(proxy): read environment proxies",  # a conventional prefix
        "fix: proxies from the environmnet for HTTPS",  # a typo
    ],
)
def test_words_the_index_never_saw_do_not_hide_a_strong_match(
    tmp_path: Path, question: str
) -> None:
    root = write(tmp_path, {"pkg/proxy.py": PROXY})
    assert paths(root, question)[0] == "pkg/proxy.py"


def test_a_question_about_something_absent_still_gets_nothing(tmp_path: Path) -> None:
    root = write(tmp_path, {"pkg/proxy.py": PROXY})
    assert paths(root, "how is the Kafka consumer group rebalanced?") == []
    assert paths(root, "qwzx plorbt vandermeer") == []


def test_the_requested_number_of_files_is_filled(tmp_path: Path) -> None:
    files = {
        f"pkg/cache{n}.py": "def cache_lookup(key):\n    return key\n" * (n + 1) for n in range(10)
    }
    files["pkg/best.py"] = "def cache_lookup_eviction(key):\n    evict(key)  # cache eviction\n"
    root = write(tmp_path, files)
    found = paths(root, "cache eviction lookup", limit=8)
    assert found[0] == "pkg/best.py"
    assert len(found) == 8  # weaker matches fill the list instead of being cut


def test_release_notes_give_way_to_the_code_unless_releases_are_asked_about(
    tmp_path: Path,
) -> None:
    notes = "# Changelog\n\n" + "".join(
        f"## 1.{n}.0\n- retry delay jitter backoff tweak {n}\n" for n in range(30)
    )
    root = write(
        tmp_path,
        {
            "CHANGELOG.md": notes,
            "docs/whatsnew/1.9.rst": "Retry delay jitter backoff changes.\n",
            "pkg/retry.py": "import random\n\n\ndef retry_delay(attempt):\n"
            "    # exponential backoff with jitter\n    return 2 ** attempt + random.random()\n",
        },
    )
    assert paths(root, "Add jitter to the retry backoff delay")[0] == "pkg/retry.py"
    assert paths(root, "which release added jitter to the retry backoff?")[0] in {
        "CHANGELOG.md",
        "docs/whatsnew/1.9.rst",
    }


def test_licences_and_community_files_give_way_to_the_code(tmp_path: Path) -> None:
    licence = "Permission is granted to use, copy, modify and distribute the software. " * 40
    root = write(
        tmp_path,
        {
            "LICENSE.txt": licence,
            "CODE_OF_CONDUCT.md": "Be kind when you modify and distribute the software.\n" * 20,
            "pkg/copying.py": "def copy_software(modify=False):\n    return distribute(modify)\n",
        },
    )
    assert paths(root, "copy and modify the software before distribute")[0] == "pkg/copying.py"
    assert paths(root, "what licence lets us distribute the software?")[0] == "LICENSE.txt"


def test_community_files_answer_only_questions_about_themselves(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "LICENSE.md": "This license is a service to the community; the software is provided as is."
            " No warranty of any service. " * 30,
            "CODE_OF_CONDUCT.md": "# Code of conduct\n\nWe pledge to keep a healthy, welcoming"
            " community for every member of the service.\n" * 10,
            "copying.py": "def copy_service_state(service):\n    return dict(service.state)\n",
            "src/health.js": "// is the service healthy? the health check answers\n"
            "function healthCheck(service) {\n  return { healthy: service.up };\n}\n",
        },
    )
    found = paths(root, "is the service healthy?")
    assert found and found[0] == "src/health.js"
    assert "LICENSE.md" not in found and "CODE_OF_CONDUCT.md" not in found
    assert "copying.py" in paths(root, "copy the service state")  # code, whatever its name
    assert paths(root, "under which license is the software provided?")[0] == "LICENSE.md"
    assert paths(root, "what does the code of conduct pledge?")[0] == "CODE_OF_CONDUCT.md"


def test_a_large_file_ranks_by_everything_it_holds(tmp_path: Path) -> None:
    padding = "".join(f"def step_{n}():\n    return {n}\n\n" for n in range(40))
    large = (
        "def parse_settings(text):\n    return tokens(text)\n\n"
        + padding
        + "def apply_defaults(settings):\n    return settings\n\n"
        + padding
        + "def validate_schema(settings):\n    return settings\n"
    )
    dense = "def parse_settings(text):\n    # parse settings, parse settings again\n" * 3
    root = write(tmp_path, {"pkg/config.py": large, "pkg/dense.py": dense})
    found = paths(root, "parse settings, apply defaults and validate the schema")
    assert found[0] == "pkg/config.py"


def test_prose_cannot_take_every_seat_while_code_matches(tmp_path: Path) -> None:
    docs = {
        f"docs/guide{n}.md": "# Routing\n\nRouting errors carry an error code. " * 10
        for n in range(8)
    }
    code = "function routeError(code) {\n  // routing error code\n  return { code }\n}\n"
    weak = {f"lib/handler{n}.js": f"function h{n}(error) {{ return error }}\n" for n in range(6)}
    root = write(tmp_path, {**docs, **weak, "lib/route.js": code})
    found = paths(root, "routing errors error code")
    assert found[0].endswith(".md") and "lib/route.js" in found[:3]
    # prose never holds more than half of the list while matching code waits
    assert len(found) == 8
    assert all(sum(p.endswith(".md") for p in found[:n]) <= (n + 1) // 2 for n in range(1, 9))
    alone = paths(write(tmp_path / "docs-only", docs), "routing errors error code")
    assert len(alone) == 8  # with no code to wait for, prose fills the list


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("web/LoginForm.vue", "<script setup>\nfunction submitLogin(password) {}\n</script>\n"),
        ("web/Login.svelte", "<script>\nfunction submitLogin(password) {}\n</script>\n"),
        ("server/login.go", "package server\n\nfunc SubmitLogin(password string) error {}\n"),
        ("src/login.rs", "pub fn submit_login(password: &str) -> bool { true }\n"),
        ("app/Login.java", "class Login { boolean submitLogin(String password) {} }\n"),
        ("Dockerfile", "FROM python:3.12\nRUN submit-login --password-file /run/pw\n"),
    ],
)
def test_every_common_source_type_is_indexed(tmp_path: Path, name: str, text: str) -> None:
    root = write(tmp_path, {name: text})
    assert paths(root, "where is submit login with the password?")[0] == name


def test_lock_files_vendored_code_and_bundles_stay_out(tmp_path: Path) -> None:
    needle = "function submitLogin(password) {}\n"
    root = write(
        tmp_path,
        {
            "vendor/lib/login.go": needle,
            "third_party/login.js": needle,
            "static/app.min.js": needle,
            "Cargo.lock": needle,
            "api/login_pb2.py": needle,
            "src/login.ts": needle,
        },
    )
    assert paths(root, "submit login password") == ["src/login.ts"]
    with build_index(root) as index:
        reasons = {skip.path: skip.reason for skip in index.skipped()}
    assert reasons["static/app.min.js"] == "generated or bundled"
