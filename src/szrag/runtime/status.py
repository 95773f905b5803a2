"""What ``getStatus`` reports about the running process and the repository it serves."""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from szrag.runtime.git import read_git_head
from szrag.runtime.indexinfo import index_statistics
from szrag.runtime.logs import iso_time
from szrag.version import __version__

# Environment variable -> status field. Values identify a deployment; they are not secrets.
DEPLOYMENT_VARIABLES = {"DEPLOY_ENV": "target", "GIT_SHA": "gitSha", "RELEASE": "release"}


def deployment_fields(environ: Mapping[str, str]) -> dict[str, str]:
    """The deployment facts set in the environment (DEPLOY_ENV, GIT_SHA, RELEASE)."""
    return {
        field: environ[name].strip()[:200]
        for name, field in DEPLOYMENT_VARIABLES.items()
        if environ.get(name, "").strip()
    }


def repository_fields(root: Path) -> dict[str, Any]:
    """The repository's root, branch and commit."""
    head = read_git_head(root)
    result: dict[str, Any] = {"root": str(root.resolve())}
    if head is None:
        result["git"] = None
    else:
        result["git"] = {
            "branch": head.branch,
            "commit": head.commit,
            "detached": head.branch is None,
        }
    return result


def process_status(
    root: Path, *, started: float, started_monotonic: float, deployment: Mapping[str, str]
) -> dict[str, Any]:
    """The full status document."""
    return {
        "service": "szrag",
        "version": __version__,
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": platform.platform(terse=True),
        "pid": os.getpid(),
        "startedAt": iso_time(started),
        "uptimeSeconds": round(time.monotonic() - started_monotonic, 3),
        "repository": repository_fields(root),
        "index": index_statistics(root),
        "deployment": dict(deployment),
    }
