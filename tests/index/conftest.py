"""Fixtures of the index tests: a real PostgreSQL cluster for the PostgreSQL store."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from postgres import Cluster, running_cluster  # noqa: E402


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """One cluster for the session (initdb, pg_ctl start; stopped at the end); the tests
    that need it are skipped, saying why, only where PostgreSQL is not installed."""
    with running_cluster() as cluster:
        if isinstance(cluster, str):
            pytest.skip(cluster)
        yield cluster


@pytest.fixture
def pg_url(postgres_cluster: Cluster) -> Iterator[str]:
    """The URL of a new, empty database of that cluster, dropped after the test."""
    url = postgres_cluster.create_database()
    yield url
    postgres_cluster.drop_database(url)
