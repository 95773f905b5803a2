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


_VCS_DIRECTORIES = (".git", ".hg", ".svn", ".jj", ".fossil")
_PROJECT_FILES = (
    "pyproject.toml", "setup.py", "setup.cfg", "package.json", "go.mod", "Cargo.toml",
    "pom.xml", "build.gradle", "build.gradle.kts", "Gemfile", "composer.json", "mix.exs",
    "Package.swift", "CMakeLists.txt", "Makefile", "deno.json", "pubspec.yaml", "README.md",
    "README", "README.rst",
)  # fmt: skip
MANY_FILES = 20_000  # more than most repositories hold: the root may be a home or a disk


def root_warning(root: Path, files: int) -> str | None:
    """Why ``root`` may not be the repository meant, or None: it has no version control and
    no project file, or it holds more files than a repository usually does."""
    if files == 0:
        return f"{root} holds no file szrag indexes: is it the repository's root?"
    if files > MANY_FILES:
        return f"{root} holds {files} indexable files: is it the repository's root?"
    has_vcs = any((root / name).exists() for name in _VCS_DIRECTORIES)
    has_project = any((root / name).is_file() for name in _PROJECT_FILES)
    if not has_vcs and not has_project:
        return f"{root} has no version control and no project file: is it the repository's root?"
    return None
