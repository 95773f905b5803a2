"""The service's own checkouts of repositories that live elsewhere (a ``url`` in the service
file): cloned into its data folder, fetched, and moved to the branch's latest commit.

A clone is the service's disposable checkout, never someone's work: :func:`sync` clones
(``git clone --branch B --single-branch``) into a folder beside its final place and renames
it there once complete, so a half-made clone is never read and a failed one leaves nothing;
a clone that exists is fetched instead (the branch alone, tags left out) and checked out at
the fetched commit with ``checkout --force -B``, whatever was in its files. ``.rag/``, where
the index lives, is in the clone's ``info/exclude`` and is never touched. A folder where the
clone belongs that is no clone is refused, not replaced.

Git runs without a shell, with its standard input closed, a timeout, and
``GIT_TERMINAL_PROMPT=0`` (and ssh in batch mode) so that missing or bad credentials fail at
once instead of waiting for someone to type them. Its environment is the one the service was
given (``HOME``, ``SSH_AUTH_SOCK`` and credential helpers included), never read here. Errors
are :class:`~szrag.base.errors.RepositoryError` naming the repository and the URL without its
credentials (``shown_url``); git's own output is shown with every URL's user information
removed.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from szrag.base.errors import RepositoryError
from szrag.service.repositories import RepositorySpec, without_credentials

log = logging.getLogger("szrag.service.clones")

GIT_TIMEOUT_SECONDS = 300.0  # a clone of a large repository over a slow link, at most
_QUIET = {
    "GIT_TERMINAL_PROMPT": "0",  # bad credentials fail instead of prompting
    "GCM_INTERACTIVE": "never",
    "GIT_ASKPASS": "true",  # an askpass that answers nothing, so no window opens either
    "SSH_ASKPASS": "true",
}
_SSH = "ssh -o BatchMode=yes"


@dataclass(frozen=True, slots=True)
class Checkout:
    """Where a clone stands after :func:`sync`: its branch, its commit and whether this sync
    made the clone or moved it to a new commit."""

    branch: str
    commit: str
    moved: bool
    cloned: bool = False  # made by this sync


def git_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment git runs in: ``environ`` with prompts turned off."""
    env = {**environ, **_QUIET}
    env.setdefault("GIT_SSH_COMMAND", _SSH)
    return env


def is_clone(folder: Path) -> bool:
    """Whether ``folder`` holds a git checkout of its own."""
    return (folder / ".git").exists()


def sync(
    spec: RepositorySpec,
    environ: Mapping[str, str],
    *,
    timeout: float = GIT_TIMEOUT_SECONDS,
) -> Checkout:
    """Clone ``spec`` into ``spec.path`` when there is no clone yet, else fetch its branch and
    check out the fetched commit; RepositoryError saying why it could not."""
    if spec.url is None:
        raise RepositoryError(f"repository {spec.name!r} is a folder, not a URL to clone")
    env = git_environment(environ)
    if is_clone(spec.path):
        return _fetch(spec, spec.url, env, timeout)
    if spec.path.exists():
        raise RepositoryError(
            f"repository {spec.name!r}: {spec.path} is in the way of its clone and is no clone;"
            " move it away"
        )
    try:
        return _clone(spec, spec.url, env, timeout)
    except OSError as error:  # the data folder cannot be made or written
        raise RepositoryError(
            f"repository {spec.name!r}: cannot clone into {spec.path} ({error.strerror or error})"
        ) from error


def _clone(spec: RepositorySpec, url: str, env: dict[str, str], timeout: float) -> Checkout:
    spec.path.parent.mkdir(parents=True, exist_ok=True)
    making = spec.path.with_name(f".{spec.path.name}.cloning")
    shutil.rmtree(making, ignore_errors=True)  # an earlier attempt cut short
    branch = ["--branch", spec.branch] if spec.branch else []
    try:
        _git(
            spec,
            ["clone", "--quiet", "--single-branch", "--no-tags", *branch, "--", url, str(making)],
            env=env,
            timeout=timeout,
        )
        commit = _git(spec, ["rev-parse", "HEAD"], cwd=making, env=env, timeout=timeout)
        current = _git(
            spec, ["rev-parse", "--abbrev-ref", "HEAD"], cwd=making, env=env, timeout=timeout
        )
        making.rename(spec.path)
    except BaseException:
        shutil.rmtree(making, ignore_errors=True)
        raise
    log.info("cloned %s (%s) at %s", spec.name, spec.shown_url, commit[:12])
    return Checkout(current, commit, moved=True, cloned=True)


def _fetch(spec: RepositorySpec, url: str, env: dict[str, str], timeout: float) -> Checkout:
    folder = spec.path
    current = _git(
        spec, ["rev-parse", "--abbrev-ref", "HEAD"], cwd=folder, env=env, timeout=timeout
    )  # "HEAD" when detached
    branch = spec.branch or current
    before = _git(spec, ["rev-parse", "HEAD"], cwd=folder, env=env, timeout=timeout)
    _git(spec, ["remote", "set-url", "origin", url], cwd=folder, env=env, timeout=timeout)
    tracking = f"refs/remotes/origin/{branch}"
    _git(
        spec,
        ["fetch", "--quiet", "--no-tags", "origin", f"+refs/heads/{branch}:{tracking}"],
        cwd=folder,
        env=env,
        timeout=timeout,
    )
    after = _git(spec, ["rev-parse", tracking], cwd=folder, env=env, timeout=timeout)
    if after != before or current != branch:
        _git(
            spec,
            ["checkout", "--quiet", "--force", "-B", branch, tracking],
            cwd=folder,
            env=env,
            timeout=timeout,
        )
        log.info("fetched %s: %s -> %s", spec.name, before[:12], after[:12])
    return Checkout(branch, after, moved=after != before)


def _git(
    spec: RepositorySpec,
    arguments: Sequence[str],
    *,
    env: dict[str, str],
    timeout: float,
    cwd: Path | None = None,
) -> str:
    """git's standard output, stripped; RepositoryError with git's reason otherwise."""
    command = ["git", "-c", "core.hooksPath=/dev/null", *arguments]
    doing = f"git {arguments[0]}"
    try:
        completed = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise RepositoryError(
            f"repository {spec.name!r}: git is not installed (needed to clone {spec.shown_url})"
        ) from None
    except subprocess.TimeoutExpired:
        raise RepositoryError(
            f"repository {spec.name!r}: {doing} of {spec.shown_url} did not finish in {timeout:g} s"
        ) from None
    if completed.returncode != 0:
        reason = without_credentials(_reason(completed.stderr))
        if spec.url:
            reason = reason.replace(spec.url, spec.shown_url or "")
        raise RepositoryError(
            f"repository {spec.name!r}: {doing} of {spec.shown_url} failed ({reason})"
        )
    return completed.stdout.strip()


def _reason(stderr: str) -> str:
    """git's first fatal or error line (the specific one: later ones are generic advice),
    else its last line."""
    said = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in said:
        for prefix in ("fatal:", "error:"):
            if line.startswith(prefix):
                return line.removeprefix(prefix).strip()
    return said[-1] if said else "no message"
