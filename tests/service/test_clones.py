"""The service's clones of remote repositories: cloned over ``file://`` from real bare
repositories, fetched and moved to the pushed commit, failures clear and free of credentials."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from szrag.base.errors import RepositoryError
from szrag.service.clones import git_environment, is_clone, sync
from szrag.service.repositories import RepositorySpec, shown_url, without_credentials

MakeRemote = Callable[[str, dict[str, str]], Any]  # the git_remote fixture (conftest.py)
FILES = {"src/app.py": "def serve():\n    return 'hello'\n"}
ENVIRON = {"PATH": "/usr/local/bin:/usr/bin:/bin"}


def spec_of(url: str, folder: Path, branch: str | None = None) -> RepositorySpec:
    return RepositorySpec("app", folder, url, branch)


def test_a_clone_is_made_then_fetched_to_each_pushed_commit(
    git_remote: MakeRemote, tmp_path: Path
) -> None:
    remote = git_remote("app", FILES)
    folder = tmp_path / "data" / "app"
    spec = spec_of(remote.url, folder)

    first = sync(spec, ENVIRON)
    assert first.cloned and first.moved and first.branch == "main"
    assert first.commit == remote.git("rev-parse", "HEAD")
    assert (folder / "src/app.py").read_text() == FILES["src/app.py"]
    assert not list(folder.parent.glob(".*cloning"))  # made beside, renamed into place

    unchanged = sync(spec, ENVIRON)
    assert not unchanged.moved and not unchanged.cloned and unchanged.commit == first.commit

    (folder / ".rag").mkdir()
    (folder / ".rag" / "index.db").write_text("kept")  # the index lives in the clone
    (folder / "src/app.py").write_text("edited by nobody should")
    pushed = remote.push({"src/app.py": "def serve():\n    return 'bye'\n", "README.md": "# A\n"})
    moved = sync(spec, ENVIRON)
    assert moved.moved and moved.commit == pushed
    assert "bye" in (folder / "src/app.py").read_text()
    assert (folder / "README.md").is_file()
    assert (folder / ".rag" / "index.db").read_text() == "kept"


def test_a_named_branch_is_cloned_and_other_branches_are_ignored(
    git_remote: MakeRemote, tmp_path: Path
) -> None:
    remote = git_remote("app", FILES)
    release = remote.push({"RELEASE.md": "v1\n"}, branch="release")
    spec = spec_of(remote.url, tmp_path / "app", branch="release")

    cloned = sync(spec, ENVIRON)
    assert cloned.branch == "release" and cloned.commit == release
    assert (tmp_path / "app" / "RELEASE.md").is_file()

    remote.push({"src/other.py": "x = 1\n"}, branch="main")
    assert not sync(spec, ENVIRON).moved  # a push to main does not move the release clone
    assert not (tmp_path / "app" / "src/other.py").exists()


def test_a_clone_that_fails_says_why_and_leaves_nothing(tmp_path: Path) -> None:
    missing = (tmp_path / "nowhere.git").as_uri()
    folder = tmp_path / "data" / "app"

    with pytest.raises(RepositoryError) as raised:
        sync(spec_of(missing, folder), ENVIRON)

    assert "repository 'app': git clone of " + missing in raised.value.message
    assert "does not appear to be a git repository" in raised.value.message
    assert not folder.exists() and not list((tmp_path / "data").glob(".*"))


def test_an_unknown_branch_fails_clearly(git_remote: MakeRemote, tmp_path: Path) -> None:
    remote = git_remote("app", FILES)

    with pytest.raises(RepositoryError, match=r"git clone of .* failed .*nightly"):
        sync(spec_of(remote.url, tmp_path / "app", branch="nightly"), ENVIRON)


def test_credentials_in_a_url_are_never_shown(tmp_path: Path) -> None:
    url = "https://deploy:s3cr3t-token@127.0.0.1:9/team/app.git"  # nothing listens on port 9

    with pytest.raises(RepositoryError) as raised:
        sync(spec_of(url, tmp_path / "app"), ENVIRON, timeout=30)

    assert "s3cr3t-token" not in raised.value.message and "deploy" not in raised.value.message
    assert "https://127.0.0.1:9/team/app.git" in raised.value.message
    assert shown_url(url) == "https://127.0.0.1:9/team/app.git"
    assert shown_url("git@github.com:team/app.git") == "git@github.com:team/app.git"
    assert without_credentials("fatal: https://a:b@host/x and http://t@h/y") == (
        "fatal: https://host/x and http://h/y"
    )


def test_git_never_waits_for_someone_to_type_credentials() -> None:
    env = git_environment({"HOME": "/home/someone"})

    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["HOME"] == "/home/someone"
    assert "BatchMode=yes" in env["GIT_SSH_COMMAND"]


def test_a_folder_in_the_way_that_is_no_clone_is_refused_not_replaced(
    git_remote: MakeRemote, tmp_path: Path
) -> None:
    remote = git_remote("app", FILES)
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")

    with pytest.raises(RepositoryError, match="in the way of its clone"):
        sync(spec_of(remote.url, folder), ENVIRON)

    assert (folder / "notes.txt").read_text() == "mine" and not is_clone(folder)


@pytest.fixture
def refusing_server() -> Iterator[str]:
    """A loopback HTTP server that asks every request for credentials (401, Basic)."""

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/team/app.git"
    finally:
        server.shutdown()
        server.server_close()


def test_bad_credentials_fail_at_once_instead_of_prompting(
    refusing_server: str, tmp_path: Path
) -> None:
    url = refusing_server.replace("http://", "http://deploy:wrong-token@")

    with pytest.raises(RepositoryError) as raised:
        sync(spec_of(url, tmp_path / "app"), ENVIRON, timeout=30)

    assert "git clone of " + refusing_server in raised.value.message
    assert "Authentication failed" in raised.value.message
    assert "wrong-token" not in raised.value.message and "deploy" not in raised.value.message
    assert not (tmp_path / "app").exists()


def test_a_remote_that_never_answers_is_given_up_after_the_timeout(tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/app.git"

        with pytest.raises(RepositoryError, match=r"git clone of .* did not finish in 1 s"):
            sync(spec_of(url, tmp_path / "app"), ENVIRON, timeout=1)

    assert not (tmp_path / "app").exists()


def test_a_data_folder_that_cannot_be_made_is_a_clear_error(
    git_remote: MakeRemote, tmp_path: Path
) -> None:
    remote = git_remote("app", FILES)
    (tmp_path / "data").write_text("a file where the data folder belongs")

    with pytest.raises(RepositoryError, match=r"cannot clone into .*data/app"):
        sync(spec_of(remote.url, tmp_path / "data" / "app"), ENVIRON)
