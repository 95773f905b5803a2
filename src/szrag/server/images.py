"""Serving the repository's images at ``/<relative path>``, and nothing else from it.

Only a path the index lists as an image is served, with the bytes its store gives: a checkout's
index reads the file, only when it still resolves inside the repository (a symlink pointing
out is refused); a PostgreSQL store gives the bytes it was published with, so a replica
without a checkout serves them too. Anything else, ``..`` tricks, encoded
separators and the repository's other files included, is a plain 404 that says nothing about
what exists.
"""

from __future__ import annotations

import threading
from pathlib import PurePosixPath

from szrag.index.protocol import IndexStore

CONTENT_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


def content_type(path: str) -> str | None:
    """The content type of an image path, or None for a format that is not served."""
    return CONTENT_TYPES.get(PurePosixPath(path).suffix.lower())


def is_clean_relative(path: str) -> bool:
    """A relative POSIX path without empty, ``.`` or ``..`` parts or backslashes."""
    if not path or path.startswith("/") or "\\" in path or "\x00" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


class ImageCatalogue:
    """The images of an index, re-read whenever the index changes."""

    def __init__(self, index: IndexStore) -> None:
        self.index = index
        self._lock = threading.Lock()
        self._generation: str | None = None
        self._paths: frozenset[str] = frozenset()

    def paths(self) -> frozenset[str]:
        """Every image path the index lists."""
        generation = self.index.generation()
        with self._lock:
            if generation != self._generation:
                self._paths = frozenset(self.index.image_paths())
                self._generation = generation
            return self._paths

    def read(self, requested: str) -> bytes | None:
        """The bytes to serve for the URL path ``requested`` (without its leading ``/``), or
        None for anything that is not a listed image the store can give."""
        if not is_clean_relative(requested) or content_type(requested) is None:
            return None
        if requested not in self.paths():
            return None
        return self.index.image_data(requested)
