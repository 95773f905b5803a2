"""The branch and commit of a Git checkout, read from ``.git`` without running git.

Handles a ``.git`` directory or a ``.git`` file pointing elsewhere (worktrees, submodules),
refs stored loose or in ``packed-refs``, a detached HEAD, and a branch with no commit yet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_MAX_PARENTS = 64


@dataclass(frozen=True)
class GitHead:
    """Where a checkout's HEAD points; either field may be None (detached, unborn)."""

    branch: str | None
    commit: str | None
    git_dir: Path


def find_git_dir(start: Path) -> Path | None:
    """The Git directory of the checkout holding ``start`` (searching upwards), or None."""
    current = start.resolve()
    for _ in range(_MAX_PARENTS):
        candidate = current / ".git"
        if candidate.is_dir() and (candidate / "HEAD").is_file():
            return candidate
        if candidate.is_file():
            text = _read(candidate)
            if text and text.startswith("gitdir:"):
                target = Path(text.removeprefix("gitdir:").strip())
                target = target if target.is_absolute() else (current / target)
                return target.resolve() if (target / "HEAD").is_file() else None
        if current.parent == current:
            return None
        current = current.parent
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _common_dir(git_dir: Path) -> Path:
    """Where refs shared by worktrees live."""
    pointer = _read(git_dir / "commondir")
    if not pointer:
        return git_dir
    common = Path(pointer)
    return (common if common.is_absolute() else git_dir / common).resolve()


def resolve_ref(git_dir: Path, ref: str) -> str | None:
    """The commit a ref such as ``refs/heads/main`` points to, or None when it has none."""
    if ".." in ref.split("/"):
        return None
    for base in dict.fromkeys((git_dir, _common_dir(git_dir))):
        value = _read(base / ref)
        if value and _SHA.fullmatch(value):
            return value
    packed = _read(_common_dir(git_dir) / "packed-refs")
    for line in (packed or "").splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1].strip() == ref and _SHA.fullmatch(parts[0]):
            return parts[0]
    return None


def read_git_head(start: Path) -> GitHead | None:
    """Branch and commit of the checkout holding ``start``; None outside a checkout."""
    git_dir = find_git_dir(start)
    if git_dir is None:
        return None
    head = _read(git_dir / "HEAD") or ""
    if head.startswith("ref:"):
        ref = head.removeprefix("ref:").strip()
        branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else ref
        return GitHead(branch=branch, commit=resolve_ref(git_dir, ref), git_dir=git_dir)
    return GitHead(branch=None, commit=head if _SHA.fullmatch(head) else None, git_dir=git_dir)
