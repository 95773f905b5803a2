"""Release information: the service's version, the repository's project version, and the
entries of its release history file (CHANGELOG.md and the like) when there is one.

A history file is read as Markdown: every heading that names a version (``## [1.2.0] -
2024-05-01``, ``# v1.2.0``, ``## 1.2.0 (2024-05-01)``) or ``Unreleased`` starts an entry that
runs to the next such heading.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from szrag.base.public import public, public_dict
from szrag.version import __version__

_OMIT_NONE = public(omit_none=True)

HISTORY_FILES = tuple(
    f"{stem}{suffix}"
    for stem in ("CHANGELOG", "CHANGES", "HISTORY", "RELEASES", "RELEASE_NOTES", "NEWS")
    for suffix in (".md", ".rst", ".txt", "")
)
HISTORY_FOLDERS = ("docs", "doc")  # docs/changelog.rst and the like
MAX_BODY_CHARS = 4000
MAX_HISTORY_BYTES = 2 * 1024 * 1024
MAX_LISTED_VERSIONS = 20

_HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")
_VERSION = re.compile(r"(?<![\w.])\[?v?(\d+\.\d+(?:\.\d+)?(?:[-+][0-9A-Za-z.\-]+)?)\]?(?![\w.])")
_UNRELEASED = re.compile(r"\bunreleased\b", re.IGNORECASE)
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_UNDERLINE = re.compile(r"^([=\-~^*+#`'\".])\1{2,}\s*$")  # reStructuredText section titles


@dataclass(frozen=True)
class ReleaseEntry:
    """One release in a history file."""

    version: str
    date: str | None
    title: str
    body: str = field(metadata=public(name="notes"))


@dataclass(frozen=True, slots=True)
class ServiceVersion:
    """The service answering, and its version."""

    name: str
    version: str


@dataclass(frozen=True, slots=True)
class HistoryFile:
    """The release history file found: its name, the versions it lists first, how many."""

    file: str
    versions: tuple[str, ...]
    count: int


@dataclass(frozen=True, slots=True)
class LatestRelease:
    """The latest release of the history (Unreleased is none), when no version was asked."""

    latest: ReleaseEntry | None


@dataclass(frozen=True, slots=True)
class RequestedRelease:
    """The release asked for: its entry when found, else why not."""

    requested: str
    found: bool
    release: ReleaseEntry | None = field(default=None, metadata=_OMIT_NONE)
    message: str | None = field(default=None, metadata=_OMIT_NONE)


@dataclass(frozen=True, slots=True)
class ReleaseInfo:
    """Versions and release notes, as ``getReleaseInfo`` reports them."""

    service: ServiceVersion
    project: Mapping[str, Any] | None  # name, version and the file they were read from
    deployment: Mapping[str, str] | None = field(metadata=public(omit_empty=True))
    history_error: str | None = field(metadata=_OMIT_NONE)
    history: HistoryFile | None
    release: LatestRelease | RequestedRelease = field(metadata=public(spread=True))


def _heading_version(title: str) -> str | None:
    if _UNRELEASED.search(title):
        return "Unreleased"
    match = _VERSION.search(_DATE.sub(" ", title))
    return match.group(1) if match else None


def parse_history(text: str) -> list[ReleaseEntry]:
    """The release entries of a Markdown history, in file order (newest first by custom)."""
    entries: list[ReleaseEntry] = []
    current: tuple[str, str | None, str] | None = None
    body: list[str] = []
    in_fence = False

    def flush() -> None:
        if current is not None:
            version, date, title = current
            notes = "\n".join(body).strip()
            if date is None:  # "Released 2024-11-13" on the lines under the title
                found = _DATE.search("\n".join(notes.splitlines()[:3]))
                date = found.group(1) if found else None
            entries.append(ReleaseEntry(version, date, title, notes[:MAX_BODY_CHARS]))

    lines = text.splitlines()
    skip = False
    for number, line in enumerate(lines):
        if skip:  # the underline of a reStructuredText title
            skip = False
            continue
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        title: str | None = None
        if not in_fence:
            heading = _HEADING.match(line)
            following = lines[number + 1] if number + 1 < len(lines) else ""
            if heading:
                title = heading.group(2)
            elif line.strip() and _UNDERLINE.match(following):
                title, skip = line.strip(), True
        version = _heading_version(title) if title else None
        if title and version:
            flush()
            date = _DATE.search(title)
            current = (version, date.group(1) if date else None, title.strip())
            body = []
        elif current is not None:
            body.append(line)
            skip = False
    flush()
    return entries


def find_history_file(root: Path) -> Path | None:
    """The release history file at the top of ``root`` (names compared case-insensitively)."""
    try:
        names = {path.name.lower(): path for path in root.iterdir() if path.is_file()}
    except OSError:
        return None
    for name in HISTORY_FILES:
        if name.lower() in names:
            return names[name.lower()]
    for folder in HISTORY_FOLDERS:
        try:
            inside = sorted(path for path in (root / folder).iterdir() if path.is_file())
        except OSError:
            continue
        for path in inside:
            if path.name.lower().startswith(("changelog", "changes", "history", "news")):
                return path
    return None


def project_version(root: Path) -> dict[str, Any] | None:
    """Name and version of the project at ``root`` from pyproject.toml or package.json."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (OSError, ValueError):
            project = {}
        if isinstance(project, dict) and project.get("version"):
            return {
                "name": project.get("name"),
                "version": str(project["version"]),
                "source": "pyproject.toml",
            }
    package = root / "package.json"
    if package.is_file():
        try:
            data = json.loads(package.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        if isinstance(data, dict) and data.get("version"):
            return {
                "name": data.get("name"),
                "version": str(data["version"]),
                "source": "package.json",
            }
    return None


def _same_version(a: str, b: str) -> bool:
    return a.strip().lower().removeprefix("v") == b.strip().lower().removeprefix("v")


def release_info(
    root: Path, version: str | None = None, *, deployment: Mapping[str, str] | None = None
) -> ReleaseInfo:
    """Versions and release notes; with ``version``, that release's entry (or why it is absent)."""
    history_path = find_history_file(root)
    entries: list[ReleaseEntry] = []
    history_error = None
    history = None
    if history_path is not None:
        try:
            with history_path.open("rb") as handle:
                raw = handle.read(MAX_HISTORY_BYTES)
            entries = parse_history(raw.decode("utf-8", "replace"))
        except OSError as error:
            history_error = f"{history_path.name}: {error.strerror or error}"
        listed = tuple(entry.version for entry in entries[:MAX_LISTED_VERSIONS])
        history = HistoryFile(history_path.name, listed, len(entries))
    release: LatestRelease | RequestedRelease
    if version is None:
        released = [entry for entry in entries if entry.version != "Unreleased"]
        release = LatestRelease(released[0] if released else None)
    else:
        match = next((entry for entry in entries if _same_version(entry.version, version)), None)
        where = history_path.name if history_path else "no release history file"
        release = RequestedRelease(
            version,
            match is not None,
            match,
            None if match is not None else f"version {version} is not in {where}",
        )
    return ReleaseInfo(
        service=ServiceVersion("szrag", __version__),
        project=project_version(root),
        deployment=deployment,
        history_error=history_error,
        history=history,
        release=release,
    )


def read_release_info(
    root: Path, version: str | None = None, *, deployment: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """:func:`release_info` in its public form."""
    return public_dict(release_info(root, version, deployment=deployment))
