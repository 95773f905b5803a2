"""Which files and images of a repository belong to the index.

The walk never leaves the root (symlinks pointing outside are skipped), never loops on a
symlinked directory, and reports every file it leaves out on purpose with the reason.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from szrag.config import RepoConfig

IGNORE_FILE_NAMES = (".gitignore", ".ragignore")


@dataclass(frozen=True, slots=True)
class FileStat:
    """The parts of a stat result that reveal a change."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    @classmethod
    def of(cls, result: os.stat_result) -> FileStat:
        """The change-revealing fields of ``result``."""
        return cls(result.st_size, result.st_mtime_ns, result.st_ctime_ns, result.st_ino)


@dataclass(frozen=True, slots=True)
class CollectedFile:
    """A file selected for the index: its relative POSIX path and stat."""

    path: str
    absolute: Path
    stat: FileStat


@dataclass(frozen=True, slots=True)
class Skip:
    """A file left out of the index on purpose, and why."""

    path: str
    reason: str


@dataclass
class Collection:
    """The outcome of one walk over a repository."""

    files: list[CollectedFile] = field(default_factory=list)
    images: list[CollectedFile] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)


@dataclass
class _IgnoreRules:
    """Gitignore-style rules collected on the way down, each anchored at its directory."""

    layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()

    def descend(self, directory: Path, prefix: str) -> _IgnoreRules:
        lines: list[str] = []
        for name in IGNORE_FILE_NAMES:
            candidate = directory / name
            try:
                lines.extend(candidate.read_text(encoding="utf-8", errors="replace").splitlines())
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                continue
            except OSError:
                continue
        if not lines:
            return self
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return _IgnoreRules((*self.layers, (prefix, spec)))

    def ignored(self, relative: str, is_dir: bool) -> bool:
        for prefix, spec in self.layers:
            if prefix and not relative.startswith(prefix):
                continue
            local = relative[len(prefix) :]
            if spec.match_file(local + "/" if is_dir else local):
                return True
        return False


def _extension(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 or (dot == 0 and name.count(".") > 1) else ""


def collect(root: Path, config: RepoConfig) -> Collection:
    """Walk ``root`` and sort its files into indexed text, images and deliberate skips."""
    root = root.resolve()
    profile = config.profile
    base_rules = _IgnoreRules()
    if config.extra_ignores:
        base_rules = _IgnoreRules((("", pathspec.GitIgnoreSpec.from_lines(config.extra_ignores)),))
    collection = Collection()
    root_stat = root.stat()
    visited: set[tuple[int, int]] = {(root_stat.st_dev, root_stat.st_ino)}
    for entry_path, relative, result in _walk(
        root, root, "", base_rules, config, collection, visited
    ):
        name = entry_path.name
        ext = _extension(name)
        if name in profile.ignored_files:
            continue
        if ext in profile.image_extensions:
            collection.images.append(CollectedFile(relative, entry_path, FileStat.of(result)))
            continue
        if ext not in profile.extensions and name not in profile.file_names:
            continue
        if name.endswith(".env"):
            continue
        if profile.generated_suffixes and name.lower().endswith(profile.generated_suffixes):
            collection.skipped.append(Skip(relative, "generated or bundled"))
            continue
        if result.st_size > config.max_file_bytes:
            collection.skipped.append(
                Skip(relative, f"too large ({result.st_size} bytes > {config.max_file_bytes})")
            )
            continue
        collection.files.append(CollectedFile(relative, entry_path, FileStat.of(result)))
    collection.files.sort(key=lambda item: item.path)
    collection.images.sort(key=lambda item: item.path)
    return collection


def _walk(
    root: Path,
    directory: Path,
    prefix: str,
    rules: _IgnoreRules,
    config: RepoConfig,
    collection: Collection,
    visited: set[tuple[int, int]],
) -> Iterator[tuple[Path, str, os.stat_result]]:
    profile = config.profile
    if profile.honour_ignore_files:
        rules = rules.descend(directory, prefix)
    try:
        with os.scandir(directory) as iterator:
            entries = sorted(iterator, key=lambda item: item.name)
    except OSError as error:
        collection.skipped.append(
            Skip(prefix.rstrip("/") or ".", f"unreadable directory ({error.strerror})")
        )
        return
    for entry in entries:
        relative = prefix + entry.name
        absolute = Path(entry.path)
        try:
            is_link = entry.is_symlink()
            result = os.stat(entry.path)  # follows links: what the link points at
        except FileNotFoundError:
            collection.skipped.append(Skip(relative, "broken symlink"))
            continue
        except OSError as error:
            collection.skipped.append(Skip(relative, f"cannot stat ({error.strerror})"))
            continue
        is_dir = stat.S_ISDIR(result.st_mode)
        if is_dir and entry.name in profile.ignored_directories:
            continue
        if is_dir and profile.detect_virtualenvs and (absolute / "pyvenv.cfg").is_file():
            continue  # a virtualenv, whatever its folder is called
        if rules.layers and rules.ignored(relative, is_dir):
            continue
        if is_link and not _inside(root, absolute):
            collection.skipped.append(Skip(relative, "symlink points outside the root"))
            continue
        if is_dir:
            key = (result.st_dev, result.st_ino)
            if key in visited:
                continue
            visited.add(key)
            yield from _walk(root, absolute, relative + "/", rules, config, collection, visited)
        elif stat.S_ISREG(result.st_mode):
            yield absolute, relative, result


def _inside(root: Path, path: Path) -> bool:
    try:
        return Path(os.path.realpath(path)).is_relative_to(root)
    except OSError:
        return False
