"""A memo of pure functions over texts, bounded by the characters it keeps.

A long-running process (the server, ``szrag mcp``) packs the same chunks for question after
question; redacting and counting each one once is most of a warm answer's time. The memo
keeps the most recently used results while the texts it holds (keys and values) stay under a
character budget, so a few huge texts cannot hold memory that many small ones would share.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class TextMemo(Generic[V]):
    """``compute(key)`` remembered for keys whose text fits, least recently used out first."""

    def __init__(self, compute: Callable[..., V], *, max_chars: int, size: Callable[[V], int]):
        self._compute = compute
        self._size = size
        self._max_chars = max_chars
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def __call__(self, text: str, *extra: Hashable) -> V:
        key = (text, *extra)
        found = self._lookup(key)
        if found is not None:
            return found[0]
        value = self._compute(text, *extra)
        cost = len(text) + self._size(value)
        if cost * 4 > self._max_chars:  # a text this large would push out too many others
            return value
        with self._lock:
            if key not in self._entries:
                self._entries[key] = (value, cost)
                self._held += cost
            while self._held > self._max_chars:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._held -= dropped
        return value

    def known(self, text: str, *extra: Hashable) -> V | None:
        """The remembered result for ``text``, or None (for a memo whose results are never
        None): nothing is computed."""
        found = self._lookup((text, *extra))
        return None if found is None else found[0]

    def _lookup(self, key: Hashable) -> tuple[V, int] | None:
        """The entry for ``key``, now the most recently used, or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._entries.clear()
            self._held = 0
