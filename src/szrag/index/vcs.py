"""Keeping the index out of the repository's version control, without touching tracked files."""

from __future__ import annotations

from pathlib import Path

from szrag.index.store import INDEX_DIRECTORY


def git_directories(root: Path) -> tuple[Path, Path] | None:
    """The top of the git work tree holding ``root`` and the git directory whose
    ``info/exclude`` applies to it (a linked work tree's is the main repository's), or None
    outside git."""
    for top in (root, *root.parents):
        dot_git = top / ".git"
        if dot_git.is_dir():
            return top, dot_git
        if dot_git.is_file():  # a linked work tree or a submodule: "gitdir: <path>"
            try:
                line = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if not line.startswith("gitdir:"):
                return None
            own = (top / line.removeprefix("gitdir:").strip()).resolve()
            common = own / "commondir"
            try:
                shared = (own / common.read_text(encoding="utf-8").strip()).resolve()
            except OSError:
                shared = own  # a submodule's git directory is its own
            return top, shared
    return None


def exclude_index_from_git(root: Path) -> str | None:
    """Add the index directory (``/.rag/``, or ``/sub/.rag/`` for an index built in a
    subfolder) to ``info/exclude`` when ``root`` is in a git work tree and nothing there
    ignores it yet; a note saying so, or None when nothing was done.

    ``info/exclude`` is git's own untracked list of ignores: no tracked file is edited, and
    the line can be removed like any other."""
    found = git_directories(root.resolve())
    if found is None:
        return None
    top, git = found
    inside = root.resolve().relative_to(top).as_posix()
    line = f"/{INDEX_DIRECTORY}/" if inside == "." else f"/{inside}/{INDEX_DIRECTORY}/"
    exclude = git / "info" / "exclude"
    try:
        current = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        # an unanchored `.rag/` already leaves out every index directory
        covering = {line, line.rstrip("/"), INDEX_DIRECTORY, f"{INDEX_DIRECTORY}/"}
        if any(existing.strip() in covering for existing in current.splitlines()):
            return None
        exclude.parent.mkdir(parents=True, exist_ok=True)
        separator = "" if not current or current.endswith("\n") else "\n"
        with exclude.open("a", encoding="utf-8") as handle:
            handle.write(f"{separator}{line}\n")
    except OSError:
        return None  # a read-only repository: the index still works, git shows it
    return f"added {line} to {exclude_shown(git, top)} so git ignores the index"


def exclude_shown(git: Path, top: Path) -> str:
    """Where the exclude file is, as a note names it."""
    if git == top / ".git":
        return ".git/info/exclude"
    return str(git / "info" / "exclude")


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
    # a subfolder of a checkout is under version control too
    has_vcs = any(
        (folder / name).exists() for folder in (root, *root.parents) for name in _VCS_DIRECTORIES
    )
    has_project = any((root / name).is_file() for name in _PROJECT_FILES)
    if not has_vcs and not has_project:
        return f"{root} has no version control and no project file: is it the repository's root?"
    return None
