"""Which files and images of a repository belong to the index.

The walk never leaves the root (symlinks pointing outside are skipped), never loops on a
symlinked directory, and reports every file it leaves out on purpose with the reason.
"""

from __future__ import annotations

import os
import re
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


_WILDCARDS = frozenset("*?[]\\!")


@dataclass(frozen=True, slots=True)
class _Layer:
    """The patterns of one ignore file, decided as git decides them.

    Git decides a path by the last pattern that matches it, a deeper ignore file over a
    shallower one, and never looks inside a directory it excluded. The walk prunes excluded
    directories, so here a pattern only counts when it matches the path itself (``build/``
    matches the directory ``build/``, not ``build/x.py``): pathspec's regexes also match a
    directory's contents, which is what made ``*`` / ``!*/`` / ``!*.js`` exclude everything.

    Generated ignore files run to thousands of lines, nearly all plain names (``build``,
    ``.DS_Store``) and extensions (``*.pyc``): those are looked up by the path's last name
    in dictionaries, and only the other patterns are tried as regular expressions.
    """

    prefix: str
    ignores: tuple[bool, ...]  # per pattern, in file order: does a match ignore the path?
    names: dict[tuple[str, bool], int]  # (last name, directory-only) -> last pattern index
    suffixes: dict[str, int]  # ".pyc" -> last pattern index of ``*.pyc``
    paths: dict[tuple[str, bool], int]  # ("docs/build", directory-only) -> last pattern index
    general: tuple[tuple[int, re.Pattern[str]], ...]  # the rest, end-anchored, last first

    @classmethod
    def of(cls, prefix: str, lines: list[str]) -> _Layer:
        ignores: list[bool] = []
        names: dict[tuple[str, bool], int] = {}
        suffixes: dict[str, int] = {}
        paths: dict[tuple[str, bool], int] = {}
        general: list[tuple[int, re.Pattern[str]]] = []
        for line in lines:
            pattern = pathspec.GitIgnoreSpec.from_lines([line]).patterns
            if len(pattern) != 1 or not isinstance(pattern[0], pathspec.RegexPattern):
                continue
            regex = pattern[0].regex
            if pattern[0].include is None or regex is None:
                continue
            number = len(ignores)
            ignores.append(bool(pattern[0].include))
            body = line.strip()
            body = body[1:] if body.startswith("!") else body
            directory_only = body.endswith("/")
            bare = body.rstrip("/")
            if bare and "/" not in bare and not _WILDCARDS & set(bare):
                names[(bare, directory_only)] = number
            elif bare and "/" in bare and not _WILDCARDS & set(bare):
                paths[(bare.lstrip("/"), directory_only)] = number  # anchored at this layer
            elif (
                not directory_only
                and bare.startswith("*.")
                and "/" not in bare
                and not _WILDCARDS & set(bare[1:])
            ):
                suffixes[bare[1:]] = number
            else:
                general.append((number, re.compile(f"(?:{regex.pattern})$")))
        return cls(prefix, tuple(ignores), names, suffixes, paths, tuple(reversed(general)))

    def decide(self, local: str) -> bool | None:
        """True: ignored, False: re-included, None: no pattern of this layer matches."""
        is_dir = local.endswith("/")
        name = local.rstrip("/").rsplit("/", 1)[-1]
        bare = local.rstrip("/")
        best = max(
            self.names.get((name, False), -1),
            self.names.get((name, True), -1) if is_dir else -1,
            self.paths.get((bare, False), -1),
            self.paths.get((bare, True), -1) if is_dir else -1,
        )
        if self.suffixes:
            dot = name.find(".")
            while dot != -1:
                best = max(best, self.suffixes.get(name[dot:], -1))
                dot = name.find(".", dot + 1)
        for number, regex in self.general:  # last first: stop at the first match
            if number <= best:
                break
            if regex.search(local) is not None:
                best = number
                break
        return self.ignores[best] if best >= 0 else None


@dataclass
class _IgnoreRules:
    """Gitignore-style rules collected on the way down, each anchored at its directory."""

    layers: tuple[_Layer, ...] = ()
    configured: _Layer | None = None  # the repository configuration's ignores: always win

    def descend(self, directory: Path, prefix: str) -> _IgnoreRules:
        lines: list[str] = []
        for name in IGNORE_FILE_NAMES:
            candidate = directory / name
            try:
                lines.extend(candidate.read_text(encoding="utf-8", errors="replace").splitlines())
            except OSError:  # missing, a directory, unreadable: no rules from it
                continue
        if not lines:
            return self
        return _IgnoreRules((*self.layers, _Layer.of(prefix, lines)), self.configured)

    def ignored(self, relative: str, is_dir: bool) -> bool:
        path = relative + "/" if is_dir else relative
        if self.configured is not None and self.configured.decide(path):
            return True
        decision = False
        for layer in self.layers:  # shallow to deep: a deeper file's match wins
            if layer.prefix and not relative.startswith(layer.prefix):
                continue
            found = layer.decide(path[len(layer.prefix) :])
            if found is not None:
                decision = found
        return decision


def _extension(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 or (dot == 0 and name.count(".") > 1) else ""


def collect(root: Path, config: RepoConfig) -> Collection:
    """Walk ``root`` and sort its files into indexed text, images and deliberate skips."""
    root = root.resolve()
    profile = config.profile
    base_rules = _IgnoreRules()
    if config.extra_ignores:
        base_rules = _IgnoreRules(configured=_Layer.of("", list(config.extra_ignores)))
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
        if (rules.layers or rules.configured) and rules.ignored(relative, is_dir):
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
