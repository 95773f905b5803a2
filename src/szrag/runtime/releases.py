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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from szrag.version import __version__

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
    body: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"version": self.version, "date": self.date, "title": self.title, "notes": self.body}


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


def read_release_info(
    root: Path, version: str | None = None, *, deployment: dict[str, str] | None = None
) -> dict[str, Any]:
    """Versions and release notes; with ``version``, that release's entry (or why it is absent)."""
    info: dict[str, Any] = {
        "service": {"name": "szrag", "version": __version__},
        "project": project_version(root),
    }
    if deployment:
        info["deployment"] = deployment
    history_path = find_history_file(root)
    entries: list[ReleaseEntry] = []
    if history_path is not None:
        try:
            with history_path.open("rb") as handle:
                raw = handle.read(MAX_HISTORY_BYTES)
            entries = parse_history(raw.decode("utf-8", "replace"))
        except OSError as error:
            info["historyError"] = f"{history_path.name}: {error.strerror or error}"
        info["history"] = {
            "file": history_path.name,
            "versions": [entry.version for entry in entries[:MAX_LISTED_VERSIONS]],
            "count": len(entries),
        }
    else:
        info["history"] = None
    if version is None:
        released = [entry for entry in entries if entry.version != "Unreleased"]
        info["latest"] = released[0].to_dict() if released else None
        return info
    match = next((entry for entry in entries if _same_version(entry.version, version)), None)
    info["requested"] = version
    info["found"] = match is not None
    if match is not None:
        info["release"] = match.to_dict()
    else:
        where = history_path.name if history_path else "no release history file"
        info["message"] = f"version {version} is not in {where}"
    return info
