"""Shared fixtures: isolated environment, fixture repositories copied to a temporary root, and a
real PostgreSQL cluster for the PostgreSQL store.

The cluster is made by initdb and started by pg_ctl in a temporary folder, as the ``postgres``
user when the tests run as root (PostgreSQL refuses to run as root), on a port and socket
directory of its own, with ``fsync=off``; each test gets a database of its own, and the
cluster is stopped at the end. No mock: the store's SQL runs on the server it will meet.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from szrag.base.settings import Settings
from szrag.base.variables import NAMES
from szrag.llm.testing import ScriptedProvider, serve

FIXTURES = Path(__file__).parent / "fixtures"

# Images are path-matched only; their bytes just have to look like images.
PNG_BYTES = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
RETRIEVAL_IMAGES = (
    "docs/images/architecture-diagram.png",
    "docs/images/calc-flow.jpg",
    "assets/dashboard.webp",
    "assets/git-workflow.gif",
    "assets/logo.png",
)


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test sees the developer's model keys or szrag settings: every variable szrag reads
    (``szrag.base.variables``, the one registry) is unset."""
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    yield


CopyFixture = Callable[[str], Path]


@pytest.fixture
def copy_fixture(tmp_path: Path) -> CopyFixture:
    """Copy ``tests/fixtures/<name>`` into a fresh temporary directory and return its path."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / name, target, symlinks=True)
        return target

    return copy


WriteFolders = Callable[[dict[str, dict[str, str]]], dict[str, Path]]


@pytest.fixture
def write_folders(tmp_path: Path) -> WriteFolders:
    """Writes folders of files (``{folder: {relative path: text}}``) into the test's temporary
    directory and returns each folder's path by name: several small repositories at once."""

    def write(folders: dict[str, dict[str, str]]) -> dict[str, Path]:
        made = {}
        for name, files in folders.items():
            for relative, text in files.items():
                path = tmp_path / name / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            made[name] = tmp_path / name
        return made

    return write


@pytest.fixture
def retrieval_repo(copy_fixture: CopyFixture) -> Path:
    """The Pagebot fixture repository with a few images added."""
    root = copy_fixture("retrieval_repo")
    for relative in RETRIEVAL_IMAGES:
        image = root / relative
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_bytes(PNG_BYTES)
    return root


# --- the scripted model provider, shared by every suite ------------------------------------


@pytest.fixture(scope="session")
def provider_server() -> Iterator[tuple[ScriptedProvider, str]]:
    """One scripted OpenAI-compatible provider on 127.0.0.1 for the whole session."""
    app = ScriptedProvider()
    with serve(app) as base_url:
        yield app, base_url


@pytest.fixture
def provider(provider_server: tuple[ScriptedProvider, str]) -> ScriptedProvider:
    """The scripted provider, with an empty script and no recorded requests."""
    app, _ = provider_server
    app.reset()
    return app


ProviderSettings = Callable[..., Settings]


@pytest.fixture
def provider_settings(provider_server: tuple[ScriptedProvider, str]) -> ProviderSettings:
    """``provider_settings(**overrides)``: settings that point the client at the scripted
    provider, with short timeouts and no retries or waits unless overridden."""
    _, base_url = provider_server

    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "ai_url": base_url,
            "ai_model": "test-model",
            "ai_api_key": "test-key",
            "connect_timeout": 2.0,
            "read_timeout": 2.0,
            "retries": 0,
            "retry_delay": 0.0,
            "retry_max_delay": 0.0,
        }
        values.update(overrides)
        return Settings(**values)

    return make


# --- a real PostgreSQL cluster ---------------------------------------------------------

SERVER_USER = "postgres"  # the account Debian's package makes, and the one initdb names


def binaries() -> Path | None:
    """The folder holding initdb and pg_ctl: on the PATH, else Debian's newest version."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda path: int(path.parent.parent.name) if path.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_server_user(command: list[str]) -> list[str]:
    """``command`` run as the cluster's owner: as ``postgres`` when this process is root."""
    if os.geteuid() != 0:
        return command
    runner = shutil.which("runuser")
    if runner:
        return [runner, "-u", SERVER_USER, "--", *command]
    return ["su", SERVER_USER, "-s", "/bin/sh", "-c", " ".join(map(_quoted, command))]


def _quoted(part: str) -> str:
    return "'" + part.replace("'", "'\\''") + "'"


@dataclass
class Cluster:
    """One running cluster: where it listens and how to reach its databases."""

    folder: Path
    bin: Path
    port: int

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SERVER_USER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *command: str) -> None:
        subprocess.run(
            _as_server_user([str(self.bin / command[0]), *command[1:]]),
            check=True,
            capture_output=True,
            text=True,
            cwd=self.folder,
        )

    def start(self) -> None:
        """Start the cluster: made by initdb the first time, started again on the same port
        and data after a ``stop()`` (a restart, as a database server's outage ends)."""
        if not (self.data / "PG_VERSION").exists():
            self._init()
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-o", options, "-w",
            "start",
        )  # fmt: skip

    def _init(self) -> None:
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            SERVER_USER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        )

    def stop(self, mode: str = "immediate") -> None:
        """Stop the server: ``immediate`` (a crash: with this cluster's settings the last
        commits may be lost) or ``fast`` (a clean shutdown, every session ended, as for a
        restart; nothing committed is lost)."""
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def create_database(self) -> str:
        """A new empty database's URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def running_cluster() -> Iterator[Cluster | str]:
    """A started cluster, stopped and removed at the end; or why there can be none."""
    found = binaries()
    if found is None:
        yield "PostgreSQL's initdb and pg_ctl are not installed (`make postgres` installs them)"
        return
    folder = Path(tempfile.mkdtemp(prefix="szrag-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, SERVER_USER, SERVER_USER)
    cluster = Cluster(folder, found, _free_port())
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """One cluster for the session; the tests that need it are skipped, saying why, only
    where PostgreSQL is not installed."""
    with running_cluster() as cluster:
        if isinstance(cluster, str):
            pytest.skip(cluster)
        yield cluster


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    """A cluster of the test's own, which it may stop and start again (the session's is
    shared by every other test)."""
    with running_cluster() as cluster:
        if isinstance(cluster, str):
            pytest.skip(cluster)
        yield cluster


@pytest.fixture(scope="session")
def new_database(postgres_cluster: Cluster) -> Iterator[Callable[[], str]]:
    """Makes a new, empty database of the cluster and gives its URL (dropped at the end)."""
    made: list[str] = []

    def make() -> str:
        made.append(postgres_cluster.create_database())
        return made[-1]

    yield make
    for url in made:
        postgres_cluster.drop_database(url)


@pytest.fixture
def pg_url(postgres_cluster: Cluster) -> Iterator[str]:
    """The URL of a new, empty database of the cluster, dropped after the test."""
    url = postgres_cluster.create_database()
    yield url
    postgres_cluster.drop_database(url)


# --- git remotes: bare repositories on disk, pushed to from a work tree, cloned over file:// ---


@dataclass
class GitRemote:
    """A bare repository (``bare``, reached at ``url``) and the work tree that pushes to it."""

    bare: Path
    work: Path

    @property
    def url(self) -> str:
        return self.bare.as_uri()

    def git(self, *arguments: str, cwd: Path | None = None) -> str:
        completed = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *arguments],
            cwd=cwd or self.work,
            capture_output=True,
            text=True,
            check=True,
        )
        return completed.stdout.strip()

    def push(self, files: dict[str, str], *, branch: str = "main", message: str = "change") -> str:
        """Commit ``files`` (relative path: text) on ``branch`` and push it; the new commit."""
        current = self.git("symbolic-ref", "--short", "HEAD")
        if current != branch:
            self.git("checkout", "-q", "-B", branch)
        for relative, text in files.items():
            path = self.work / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        self.git("push", "-q", "origin", branch)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def git_remote(tmp_path: Path) -> Callable[[str, dict[str, str]], GitRemote]:
    """Makes ``<tmp>/remotes/<name>.git`` with a first commit of ``files`` on ``main``; the
    remote's ``push`` commits more and pushes them, as someone working elsewhere would."""

    def make(name: str, files: dict[str, str]) -> GitRemote:
        bare = tmp_path / "remotes" / f"{name}.git"
        work = tmp_path / "pushers" / name
        bare.parent.mkdir(parents=True, exist_ok=True)
        work.mkdir(parents=True)
        init = ["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)]
        subprocess.run(init, check=True)
        remote = GitRemote(bare, work)
        remote.git("init", "-q", "--initial-branch=main")
        remote.git("remote", "add", "origin", remote.url)
        remote.push(files, message="first")
        return remote

    return make
