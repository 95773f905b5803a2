"""What ``getStatus`` reports about the running process and the repository it serves."""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from szrag.base.public import public
from szrag.runtime.git import read_git_head
from szrag.runtime.indexinfo import IndexStatistics, NoIndex, index_statistics, statistics_of
from szrag.runtime.logs import iso_time
from szrag.version import __version__

if TYPE_CHECKING:
    from szrag.index.protocol import IndexStore

# Environment variable -> status field. Values identify a deployment; they are not secrets.
DEPLOYMENT_VARIABLES = {"DEPLOY_ENV": "target", "GIT_SHA": "gitSha", "RELEASE": "release"}


def deployment_fields(environ: Mapping[str, str]) -> dict[str, str]:
    """The deployment facts set in the environment (DEPLOY_ENV, GIT_SHA, RELEASE)."""
    return {
        field: environ[name].strip()[:200]
        for name, field in DEPLOYMENT_VARIABLES.items()
        if environ.get(name, "").strip()
    }


@dataclass(frozen=True, slots=True)
class GitFacts:
    """The checkout's branch (None when detached) and commit."""

    branch: str | None
    commit: str | None
    detached: bool


@dataclass(frozen=True, slots=True)
class RepositoryFacts:
    """The repository's root and, in a Git checkout, its branch and commit."""

    root: str
    git: GitFacts | None


@dataclass(frozen=True, slots=True)
class Status:
    """What ``getStatus`` reports of this process, the repository it serves and its index."""

    service: str
    version: str
    python: str
    implementation: str
    platform: str
    pid: int
    started_at: float = field(metadata=public(convert=iso_time))  # epoch seconds
    uptime_seconds: float
    repository: RepositoryFacts
    index: IndexStatistics | NoIndex
    deployment: Mapping[str, str]  # DEPLOYMENT_VARIABLES' fields that are set


def repository_fields(root: Path) -> RepositoryFacts:
    """The repository's root, branch and commit."""
    head = read_git_head(root)
    git = None if head is None else GitFacts(head.branch, head.commit, head.branch is None)
    return RepositoryFacts(str(root.resolve()), git)


def process_status(
    root: Path,
    *,
    started: float,
    started_monotonic: float,
    deployment: Mapping[str, str],
    index: IndexStore | None = None,
) -> Status:
    """The full status document (the index's facts from ``index`` when given, the store a
    server answers from, else from the SQLite file under ``root``)."""
    return Status(
        service="szrag",
        version=__version__,
        python=platform.python_version(),
        implementation=sys.implementation.name,
        platform=platform.platform(terse=True),
        pid=os.getpid(),
        started_at=started,
        uptime_seconds=round(time.monotonic() - started_monotonic, 3),
        repository=repository_fields(root),
        index=statistics_of(index) if index is not None else index_statistics(root),
        deployment=dict(deployment),
    )
