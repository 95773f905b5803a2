"""Fixtures of the index tests: a real PostgreSQL cluster for the PostgreSQL store.

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

import pytest

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
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-o", options, "-w",
            "start",
        )  # fmt: skip

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

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
