"""Which files and images of a repository belong to the index.

The walk never leaves the root (symlinks pointing outside are skipped), never loops on a
symlinked directory, and reports every file it leaves out on purpose with the reason.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

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
    """A file selected for the index: its relative POSIX path, where it is and its stat."""

    path: str
    location: str  # the path to open; a Path is made only for the files that are read
    stat: FileStat

    @property
    def absolute(self) -> Path:
        """Where the file is, as a Path."""
        return Path(self.location)


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
_UNNAMED = re.compile(r"\(\?P<\w+>")  # named groups, which may not repeat in one pattern


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
    any_general: re.Pattern[str] | None  # all of them in one: most paths match none

    @classmethod
    def of(cls, prefix: str, lines: list[str]) -> _Layer:
        ignores: list[bool] = []
        names: dict[tuple[str, bool], int] = {}
        suffixes: dict[str, int] = {}
        paths: dict[tuple[str, bool], int] = {}
        general: list[tuple[int, re.Pattern[str]]] = []
        for line in lines:
            body = line.strip()
            if not body or body.startswith("#"):
                continue  # blank lines and comments hold no pattern
            include = not body.startswith("!")
            body = body[1:] if not include else body
            directory_only = body.endswith("/")
            bare = body.rstrip("/")
            plain = bool(bare) and not _WILDCARDS & set(bare)
            if plain and "/" not in bare:
                names[(bare, directory_only)] = len(ignores)
            elif plain:
                paths[(bare.lstrip("/"), directory_only)] = len(ignores)  # anchored at this layer
            elif (
                not directory_only
                and bare.startswith("*.")
                and "/" not in bare
                and not _WILDCARDS & set(bare[1:])
            ):
                suffixes[bare[1:]] = len(ignores)
            else:
                # only these need a regular expression: compiling one per line of a generated
                # ignore file was most of a freshness check's time
                import pathspec

                pattern = pathspec.GitIgnoreSpec.from_lines([line]).patterns
                if len(pattern) != 1 or not isinstance(pattern[0], pathspec.RegexPattern):
                    continue
                regex = pattern[0].regex
                if pattern[0].include is None or regex is None:
                    continue
                include = bool(pattern[0].include)
                general.append((len(ignores), re.compile(f"(?:{regex.pattern})$")))
            ignores.append(include)
        joined = "|".join(_UNNAMED.sub("(?:", regex.pattern) for _, regex in general)
        any_general = re.compile(joined) if general else None
        return cls(
            prefix, tuple(ignores), names, suffixes, paths, tuple(reversed(general)), any_general
        )

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
        if (
            self.any_general is not None
            and best < self.general[0][0]
            and self.any_general.search(local) is not None
        ):
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

    def descend(self, directory: str, prefix: str, present: set[str]) -> _IgnoreRules:
        """These rules and those of the ignore files among ``present`` (the directory's
        entries: a file not listed is not tried)."""
        lines: list[str] = []
        for name in IGNORE_FILE_NAMES:
            if name not in present:
                continue
            try:
                with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                    lines.extend(f.read().splitlines())
            except OSError:  # a directory, unreadable, just removed: no rules from it
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
    base_rules = _IgnoreRules()
    if config.extra_ignores:
        base_rules = _IgnoreRules(configured=_Layer.of("", list(config.extra_ignores)))
    collection = Collection()
    root_stat = root.stat()
    visited: set[tuple[int, int]] = {(root_stat.st_dev, root_stat.st_ino)}
    walk = _Walk(root, config, collection, visited)
    walk.directory(str(root), "", base_rules, root_stat.st_dev)
    collection.files.sort(key=lambda item: item.path)
    collection.images.sort(key=lambda item: item.path)
    return collection


@dataclass
class _Walk:
    """One walk: the cheap decisions first (names and extensions from the listing, then the
    ignore rules), a stat only for what may be indexed or descended into through a link."""

    root: Path
    config: RepoConfig
    collection: Collection
    visited: set[tuple[int, int]]

    def directory(self, directory: str, prefix: str, rules: _IgnoreRules, device: int) -> None:
        profile = self.config.profile
        try:
            with os.scandir(directory) as iterator:
                entries = sorted(iterator, key=lambda item: item.name)
        except OSError as error:
            self.collection.skipped.append(
                Skip(prefix.rstrip("/") or ".", f"unreadable directory ({error.strerror})")
            )
            return
        if profile.honour_ignore_files:
            rules = rules.descend(directory, prefix, {entry.name for entry in entries})
        judged = bool(rules.layers or rules.configured)
        for entry in entries:
            name = entry.name
            relative = prefix + name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()  # from the listing, unless a link must be followed
            except OSError as error:
                self.collection.skipped.append(Skip(relative, f"cannot stat ({error.strerror})"))
                continue
            if is_dir:
                if name in profile.ignored_directories:
                    continue
                if judged and rules.ignored(relative, True):
                    continue
                if profile.detect_virtualenvs and os.path.isfile(
                    os.path.join(entry.path, "pyvenv.cfg")
                ):
                    continue  # a virtualenv, whatever its folder is called
                self._descend(entry, relative, rules, device, is_link)
                continue
            kind = self._kind(name)
            if kind is None or (judged and rules.ignored(relative, False)):
                continue
            self._file(entry, relative, kind, is_link)

    def _descend(
        self, entry: os.DirEntry[str], relative: str, rules: _IgnoreRules, device: int, link: bool
    ) -> None:
        if link:
            if not _inside(self.root, Path(entry.path)):
                self.collection.skipped.append(Skip(relative, "symlink points outside the root"))
                return
            try:
                result = os.stat(entry.path)
            except OSError as error:
                self.collection.skipped.append(Skip(relative, f"cannot stat ({error.strerror})"))
                return
            key = (result.st_dev, result.st_ino)
            device = result.st_dev
        else:
            key = (device, entry.inode())  # the listing's inode: no stat for a plain folder
        if key in self.visited:
            return
        self.visited.add(key)
        self.directory(entry.path, relative + "/", rules, device)

    def _kind(self, name: str) -> str | None:
        """``image``, ``text`` (a file the profile indexes) or None, from the name alone."""
        profile = self.config.profile
        if name in profile.ignored_files:
            return None
        ext = _extension(name)
        if ext in profile.image_extensions:
            return "image"
        if ext not in profile.extensions and name not in profile.file_names:
            return None
        if name.endswith(".env"):
            return None
        return "text"

    def _file(self, entry: os.DirEntry[str], relative: str, kind: str, link: bool) -> None:
        collection = self.collection
        try:
            result = os.stat(entry.path)  # follows links: what the link points at
        except FileNotFoundError:
            collection.skipped.append(Skip(relative, "broken symlink"))
            return
        except OSError as error:
            collection.skipped.append(Skip(relative, f"cannot stat ({error.strerror})"))
            return
        if link and not _inside(self.root, Path(entry.path)):
            collection.skipped.append(Skip(relative, "symlink points outside the root"))
            return
        if not stat.S_ISREG(result.st_mode):
            return
        found = CollectedFile(relative, entry.path, FileStat.of(result))
        if kind == "image":
            collection.images.append(found)
            return
        profile = self.config.profile
        if profile.generated_suffixes and relative.lower().endswith(profile.generated_suffixes):
            collection.skipped.append(Skip(relative, "generated or bundled"))
            return
        if result.st_size > self.config.max_file_bytes:
            collection.skipped.append(
                Skip(relative, f"too large ({result.st_size} bytes > {self.config.max_file_bytes})")
            )
            return
        collection.files.append(found)


def _inside(root: Path, path: Path) -> bool:
    try:
        return Path(os.path.realpath(path)).is_relative_to(root)
    except OSError:
        return False
