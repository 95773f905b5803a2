"""Keeping the index out of the repository's version control, without touching tracked files."""

from __future__ import annotations

from pathlib import Path

from szrag.index.store import INDEX_DIRECTORY

EXCLUDE_LINE = f"/{INDEX_DIRECTORY}/"


def exclude_index_from_git(root: Path) -> str | None:
    """Add ``/.rag/`` to ``.git/info/exclude`` when ``root`` is the top of a git work tree
    and nothing there ignores it yet; a note saying so, or None when nothing was done.

    ``info/exclude`` is git's own untracked list of ignores: no tracked file is edited, and
    the line can be removed like any other."""
    git = root / ".git"
    if not git.is_dir():  # not a repository, or a linked work tree (.git is a file)
        return None
    exclude = git / "info" / "exclude"
    try:
        current = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if any(
            line.strip() in (EXCLUDE_LINE, EXCLUDE_LINE.rstrip("/"), INDEX_DIRECTORY)
            for line in current.splitlines()
        ):
            return None
        exclude.parent.mkdir(parents=True, exist_ok=True)
        separator = "" if not current or current.endswith("\n") else "\n"
        with exclude.open("a", encoding="utf-8") as handle:
            handle.write(f"{separator}{EXCLUDE_LINE}\n")
    except OSError:
        return None  # a read-only repository: the index still works, git shows it
    return f"added {EXCLUDE_LINE} to .git/info/exclude so git ignores the index"
