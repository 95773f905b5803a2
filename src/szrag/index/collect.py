"""Which files and images of a repository belong to the index.

The walk never leaves the root (symlinks pointing outside are skipped), never loops on a
symlinked directory, and reports every file it leaves out on purpose with the reason.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from szrag.base.config import RepoConfig

IGNORE_FILE_NAMES = (".gitignore", ".ragignore")


class FileStat(NamedTuple):
    """The parts of a stat result that reveal a change (a tuple: a walk makes one a file)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    @classmethod
    def of(cls, result: os.stat_result) -> FileStat:
        """The change-revealing fields of ``result``."""
        return cls(result.st_size, result.st_mtime_ns, result.st_ctime_ns, result.st_ino)


class CollectedFile(NamedTuple):
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
    snapshot: WalkSnapshot | None = None  # the listings of this walk, to replay next time


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
                # `src/**` means what is inside src/ (pathspec's regex is the prefix `^src/`):
                # anchored at the end like the others it would match the directory alone
                inside = ".+" if bare.endswith("/**") else ""
                general.append((len(ignores), re.compile(f"(?:{regex.pattern}){inside}$")))
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

    def descend(self, directory: str, prefix: str, present: Iterable[str]) -> _IgnoreRules:
        """These rules and those of the ignore files named in ``present`` (the directory's
        ignore files: a file not listed is not tried)."""
        lines: list[str] = []
        for name in present:
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

    @property
    def judged(self) -> bool:
        """Whether any rule is in force (without one, nothing needs deciding)."""
        return bool(self.layers or self.configured)


class _LazyRules:
    """The rules in force in one directory, read and compiled only when a decision needs
    them: a walk that finds every listing unchanged reads no ignore file."""

    __slots__ = ("_directory", "_parent", "_prefix", "_present", "_rules")

    def __init__(
        self,
        parent: _LazyRules | _IgnoreRules,
        directory: str = "",
        prefix: str = "",
        present: tuple[str, ...] = (),
    ) -> None:
        self._parent = parent
        self._directory = directory
        self._prefix = prefix
        self._present = present
        self._rules: _IgnoreRules | None = parent if isinstance(parent, _IgnoreRules) else None

    def child(self, directory: str, prefix: str, present: tuple[str, ...]) -> _LazyRules:
        """The rules below ``directory``, which holds the ignore files ``present``."""
        return _LazyRules(self, directory, prefix, present) if present else self

    def get(self) -> _IgnoreRules:
        """The rules, read and compiled on first use."""
        if self._rules is None:
            parent = self._parent
            inherited = parent.get() if isinstance(parent, _LazyRules) else parent
            self._rules = inherited.descend(self._directory, self._prefix, self._present)
        return self._rules


def _extension(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 or (dot == 0 and name.count(".") > 1) else ""


# "mtime_ns:ctime_ns:inode" of a directory, "size:mtime_ns:ctime_ns:inode" of an ignore
# file: strings, which the kept JSON gives back as they were written
Signature = str
UNVOUCHED = "-"  # in ``Listing.stats``: a file whose stat the walk cannot vouch for


@dataclass(frozen=True, slots=True)
class Listing:
    """What one directory contributed to a walk, kept to skip listing it next time.

    ``entries`` are ``code/name/code/name...`` in listing order (a name holds no ``/``), the
    code being ``t`` text, ``i`` image or ``d`` directory, upper case for a symlink.
    ``signature`` is None when the listing cannot be trusted next time: modified too recently
    to tell a later change by its mtime (the walk's clock and the file system's may share a
    tick), or holding an entry that could not be read or was left out with a reason.
    ``stats``: the stat this walk saw of each file entry (text or image) as
    ``size:mtime:ctime:inode``, in entry order and ``/``-separated, ``-`` for one it cannot
    vouch for (changed too recently, as for ``signature``, or not statable): what
    ``unchanged`` compares a file with."""

    signature: Signature | None
    ignore_files: tuple[tuple[str, Signature | None], ...]
    entries: str
    virtualenvs: tuple[tuple[str, Signature | None], ...]  # folders left out as virtualenvs
    stats: str = ""


@dataclass
class WalkSnapshot:
    """Every listing of the last walk, by directory prefix (``""``: the root, ``"a/b/"``).

    A directory's mtime changes when an entry is added, removed or renamed, so a directory
    whose signature is unchanged (and whose ignore files and those above it are unchanged)
    holds the same entries with the same decisions, and only its files need a stat."""

    fingerprint: str
    listings: dict[str, Listing] = field(default_factory=dict)

    def to_json(self) -> str:
        """The snapshot as compact JSON, for the index to keep."""
        return json.dumps(
            {
                "fingerprint": self.fingerprint,
                "listings": {
                    prefix: [
                        listing.signature,
                        listing.ignore_files,
                        listing.entries,
                        listing.virtualenvs,
                        listing.stats,
                    ]
                    for prefix, listing in self.listings.items()
                },
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> WalkSnapshot | None:
        """The snapshot in ``text``, or None for anything malformed (the walk lists again)."""
        try:
            data = json.loads(text)
            listings = {
                str(prefix): Listing(
                    _text(signature),
                    tuple((str(name), _text(stat)) for name, stat in ignores) if ignores else (),
                    _entries(entries),
                    tuple((str(name), _text(sig)) for name, sig in venvs) if venvs else (),
                    _stats(more[0]) if more else "",  # a snapshot kept before stats: none
                )
                for prefix, (signature, ignores, entries, venvs, *more) in data["listings"].items()
            }
            return cls(str(data["fingerprint"]), listings)
        except (ValueError, TypeError, KeyError, AttributeError, IndexError):
            return None


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _entries(value: object) -> str:
    """``value`` when it is a well-formed ``entries`` string; ValueError otherwise."""
    text = str(value)
    parts = text.split("/") if text else []
    if len(parts) % 2 or not set(parts[::2]) <= _CODES or not all(parts[1::2]):
        raise ValueError("malformed listing entries")
    return text


def _stats(value: object) -> str:
    """``value`` as the stats of a listing's files; ValueError when it is no text (text
    that is not stats matches no file's stat, so it vouches for nothing)."""
    if not isinstance(value, str):
        raise ValueError("malformed listing stats")
    return value


_CODES = frozenset("tidTID")


_KINDS = {"t": "text", "i": "image"}


# How close to the walk's start a directory's mtime may be and still be trusted: a change
# in the same clock tick as the listing would leave the mtime as it was (git's racy entries).
_RACY_NS = 2_000_000_000


def walk_fingerprint(root: Path, config: RepoConfig) -> str:
    """What a snapshot's decisions depend on besides the files: a change lists everything."""
    return "|".join(
        (str(root.resolve()), config.fingerprint(), str(config.profile.honour_ignore_files))
    )


def collect(root: Path, config: RepoConfig, previous: WalkSnapshot | None = None) -> Collection:
    """Walk ``root`` and sort its files into indexed text, images and deliberate skips.

    With ``previous`` (the last walk's snapshot), a directory whose listing is unchanged is
    not listed again; ``Collection.snapshot`` is this walk's."""
    root = root.resolve()
    base_rules = _IgnoreRules()
    if config.extra_ignores:
        base_rules = _IgnoreRules(configured=_Layer.of("", list(config.extra_ignores)))
    fingerprint = walk_fingerprint(root, config)
    if previous is not None and previous.fingerprint != fingerprint:
        previous = None
    collection = Collection(snapshot=WalkSnapshot(fingerprint))
    root_stat = root.stat()
    visited: set[tuple[int, int]] = {(root_stat.st_dev, root_stat.st_ino)}
    walk = _Walk(root, config, collection, visited, previous, time.time_ns() - _RACY_NS)
    walk.directory(str(root), "", _LazyRules(base_rules), root_stat, False)
    collection.files.sort(key=lambda item: item.path)
    collection.images.sort(key=lambda item: item.path)
    return collection


def unchanged(root: Path, config: RepoConfig, snapshot: WalkSnapshot) -> bool:
    """Whether a walk of ``root`` now would find exactly what the walk that made ``snapshot``
    found, every file with the stat it had then, proven with one stat per directory, ignore
    file and file, and no listing, ignore rule or sort of any entry.

    A directory's signature (mtime, ctime, inode) shows an entry added, removed or renamed;
    a file's stat shows its content edited in place (ctime cannot be set back). Whatever the
    snapshot cannot vouch for gives False, for a full walk to decide: another configuration,
    a directory or file changed within the racy window of that walk, a listing holding a
    symlink (what it points at may move without any stat here changing), a directory not
    listed then. False is never a claim that something changed."""
    root = root.resolve()
    if snapshot.fingerprint != walk_fingerprint(root, config):
        return False
    listings = snapshot.listings
    pending = [(str(root).rstrip("/") + "/", "")]
    reached = 0
    while pending:
        base, prefix = pending.pop()
        listing = listings.get(prefix)
        if listing is None or listing.signature is None:
            return False
        if _directory_signature(base) != listing.signature:
            return False
        for name, signature in listing.ignore_files:
            if signature is None or _ignore_signature(base + name) != signature:
                return False
        for name, signature in listing.virtualenvs:
            if _directory_signature(base + name) != signature:
                return False
        if not _files_unchanged(base, prefix, listing, pending):
            return False
        reached += 1
    return reached == len(listings)


def _files_unchanged(
    base: str, prefix: str, listing: Listing, pending: list[tuple[str, str]]
) -> bool:
    """Whether every file of ``listing`` has the stat it had; its directories are added to
    ``pending`` to be proven in turn."""
    parts = listing.entries.split("/") if listing.entries else []
    stats = listing.stats.split("/") if listing.stats else []
    position = 0
    for code, name in zip(parts[::2], parts[1::2], strict=True):
        if code == "d":
            pending.append((base + name + "/", prefix + name + "/"))
            continue
        if code != "t" and code != "i":  # a symlink: listed again by a full walk
            return False
        if position >= len(stats):
            return False
        seen = stats[position]
        position += 1
        try:
            found = os.stat(base + name)
        except OSError:
            return False
        # an unvouched "-" equals no stat
        if f"{found.st_size}:{found.st_mtime_ns}:{found.st_ctime_ns}:{found.st_ino}" != seen:
            return False
    return position == len(stats)


def _signature(result: os.stat_result) -> Signature:
    return f"{result.st_mtime_ns}:{result.st_ctime_ns}:{result.st_ino}"


def _directory_signature(path: str) -> Signature | None:
    try:
        return _signature(os.stat(path))
    except OSError:
        return None


def _ignore_signature(path: str) -> Signature | None:
    found = _ignore_stat(path)
    return None if found is None else found[0]


def _ignore_stat(path: str) -> tuple[Signature, int] | None:
    """An ignore file's signature and its mtime."""
    try:
        result = os.stat(path)
    except OSError:
        return None
    signature = f"{result.st_size}:{result.st_mtime_ns}:{result.st_ctime_ns}:{result.st_ino}"
    return signature, result.st_mtime_ns


@dataclass
class _Walk:
    """One walk: the cheap decisions first (names and extensions from the listing, then the
    ignore rules), a stat only for what may be indexed or descended into; listings unchanged
    since ``previous`` are replayed instead of read."""

    root: Path
    config: RepoConfig
    collection: Collection
    visited: set[tuple[int, int]]
    previous: WalkSnapshot | None
    trusted_before: int  # a directory modified later than this (ns) is listed next time too

    def directory(
        self, directory: str, prefix: str, rules: _LazyRules, own: os.stat_result, stale: bool
    ) -> None:
        """Walk one directory. ``stale``: an ignore file above changed, so every decision
        below is made again."""
        listing = None if self.previous is None else self.previous.listings.get(prefix)
        if listing is not None and not stale and listing.signature == _signature(own):
            ignores = tuple(
                (name, _ignore_signature(os.path.join(directory, name)))
                for name, _ in listing.ignore_files
            )
            if ignores == listing.ignore_files and all(
                _directory_signature(os.path.join(directory, name)) == sig
                for name, sig in listing.virtualenvs
            ):
                self._replay(directory, prefix, rules, own.st_dev, listing)
                return
        self._list(directory, prefix, rules, own, stale, listing)

    def _replay(
        self, directory: str, prefix: str, rules: _LazyRules, device: int, listing: Listing
    ) -> None:
        assert self.collection.snapshot is not None
        rules = rules.child(directory, prefix, tuple(name for name, _ in listing.ignore_files))
        base = directory.rstrip("/") + "/"
        parts = listing.entries.split("/") if listing.entries else []
        stats: list[str] = []
        for code, name in zip(parts[::2], parts[1::2], strict=True):
            if code == "t":
                stats.append(self._file(base + name, prefix + name, "text", False))
            elif code == "d" or code == "D":
                self._descend(base + name, prefix + name, rules, device, code == "D", None, False)
            else:
                kind = _KINDS[code.lower()]
                stats.append(self._file(base + name, prefix + name, kind, code.isupper()))
        seen = "/".join(stats)
        self.collection.snapshot.listings[prefix] = (
            listing if seen == listing.stats else dataclasses.replace(listing, stats=seen)
        )

    def _list(
        self,
        directory: str,
        prefix: str,
        rules: _LazyRules,
        own: os.stat_result,
        stale: bool,
        listing: Listing | None,
    ) -> None:
        profile = self.config.profile
        device = own.st_dev
        try:
            with os.scandir(directory) as iterator:
                entries = sorted(iterator, key=lambda item: item.name)
        except OSError as error:
            self.collection.skipped.append(
                Skip(prefix.rstrip("/") or ".", f"unreadable directory ({error.strerror})")
            )
            return
        present = {entry.name for entry in entries}
        trusted = own.st_mtime_ns < self.trusted_before
        assert self.collection.snapshot is not None
        if (
            prefix
            and profile.detect_virtualenvs
            and "pyvenv.cfg" in present
            and os.path.isfile(os.path.join(directory, "pyvenv.cfg"))
        ):
            # became a virtualenv since its parent was listed: left out, as a fresh walk would
            self.collection.snapshot.listings[prefix] = Listing(
                _signature(own) if trusted else None, (), "", ()
            )
            return
        ignore_names = (
            tuple(name for name in IGNORE_FILE_NAMES if name in present)
            if profile.honour_ignore_files
            else ()
        )
        ignore_files = tuple(
            (name, self._trusted_stat(os.path.join(directory, name))) for name in ignore_names
        )
        # the rules changed here (or this directory is new): nothing below is replayed
        stale = stale or listing is None or listing.ignore_files != ignore_files
        rules = rules.child(directory, prefix, ignore_names)
        judged = rules.get().judged
        kept: list[str] = []
        stats: list[str] = []
        virtualenvs: list[tuple[str, Signature | None]] = []
        for entry in entries:
            name = entry.name
            relative = prefix + name
            if not _encodable(name):
                # SQLite, JSON and every face take UTF-8 text: such a name cannot be stored
                self.collection.skipped.append(Skip(printable_path(relative), UNDECODABLE_NAME))
                continue
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()  # from the listing, unless a link must be followed
            except OSError as error:
                self.collection.skipped.append(Skip(relative, f"cannot stat ({error.strerror})"))
                trusted = False
                continue
            if is_dir:
                if name in profile.ignored_directories:
                    continue
                if judged and rules.get().ignored(relative, True):
                    continue
                if profile.detect_virtualenvs and os.path.isfile(
                    os.path.join(entry.path, "pyvenv.cfg")
                ):
                    virtualenvs.append((name, _directory_signature(entry.path)))
                    continue  # a virtualenv, whatever its folder is called
                kept.extend(("D" if is_link else "d", name))
                inode = None if is_link else entry.inode()
                if not self._descend(entry.path, relative, rules, device, is_link, inode, stale):
                    trusted = False
                continue
            kind = self._kind(name)
            if kind is None or (judged and rules.get().ignored(relative, False)):
                continue
            code = kind[0]
            kept.extend((code.upper() if is_link else code, name))
            stats.append(self._file(entry.path, relative, kind, is_link))
        self.collection.snapshot.listings[prefix] = Listing(
            _signature(own) if trusted else None,
            ignore_files,
            "/".join(kept),
            tuple(virtualenvs),
            "/".join(stats),
        )

    def _trusted_stat(self, path: str) -> Signature | None:
        """An ignore file's signature, or None when it changed too recently to be trusted
        (its directory is then listed again next time, and everything below it)."""
        found = _ignore_stat(path)
        return found[0] if found is not None and found[1] < self.trusted_before else None

    def _descend(
        self,
        location: str,
        relative: str,
        rules: _LazyRules,
        device: int,
        link: bool,
        inode: int | None,
        stale: bool,
    ) -> bool:
        """Walk a subdirectory; False when it is left out with a reason (the listing that
        holds it is then listed again next time, to find the reason again)."""
        if link and not _inside(self.root, Path(location)):
            self.collection.skipped.append(Skip(relative, "symlink points outside the root"))
            return False
        try:
            result = os.stat(location)
        except OSError as error:
            self.collection.skipped.append(Skip(relative, f"cannot stat ({error.strerror})"))
            return False
        if not stat.S_ISDIR(result.st_mode):
            return False  # no longer a directory: listed again next time
        if link:
            device = result.st_dev
        key = (device, result.st_ino if inode is None else inode)
        if key in self.visited:
            return True
        self.visited.add(key)
        self.directory(location, relative + "/", rules, result, stale)
        return True

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

    def _file(self, location: str, relative: str, kind: str, link: bool) -> str:
        """Sort one file entry; the stat it was sorted by (``size:mtime:ctime:inode``), or
        ``UNVOUCHED`` when it cannot be vouched for next time (not a regular file, or changed
        within the racy window of this walk)."""
        collection = self.collection
        try:
            result = os.stat(location)  # follows links: what the link points at
        except FileNotFoundError:
            collection.skipped.append(Skip(relative, "broken symlink"))
            return UNVOUCHED
        except OSError as error:
            collection.skipped.append(Skip(relative, f"cannot stat ({error.strerror})"))
            return UNVOUCHED
        if link and not _inside(self.root, Path(location)):
            collection.skipped.append(Skip(relative, "symlink points outside the root"))
            return UNVOUCHED
        if not stat.S_ISREG(result.st_mode):
            return UNVOUCHED
        size, mtime, ctime = result.st_size, result.st_mtime_ns, result.st_ctime_ns
        found = CollectedFile(relative, location, FileStat(size, mtime, ctime, result.st_ino))
        # a file changed in the same clock tick as this stat may change again unseen
        trusted = mtime < self.trusted_before and ctime < self.trusted_before
        seen = f"{size}:{mtime}:{ctime}:{result.st_ino}" if trusted else UNVOUCHED
        if kind == "image":
            collection.images.append(found)
            return seen
        profile = self.config.profile
        if profile.generated_suffixes and relative.lower().endswith(profile.generated_suffixes):
            collection.skipped.append(Skip(relative, "generated or bundled"))
            return seen
        if size > self.config.max_file_bytes:
            collection.skipped.append(
                Skip(relative, f"too large ({size} bytes > {self.config.max_file_bytes})")
            )
            return seen
        collection.files.append(found)
        return seen


UNDECODABLE_NAME = "name is not valid UTF-8"


def _encodable(name: str) -> bool:
    """Whether a name read from the file system is UTF-8 text (Python keeps the bytes that
    are not as lone surrogates, which no UTF-8 encoder accepts)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_path(path: str) -> str:
    """A path with the bytes that are not UTF-8 written as ``\\xff`` escapes, to report it."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _inside(root: Path, path: Path) -> bool:
    try:
        return Path(os.path.realpath(path)).is_relative_to(root)
    except OSError:
        return False
