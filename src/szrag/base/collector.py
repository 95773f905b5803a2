"""Pausing the cyclic garbage collector's automatic passes while long-lived data is built.

Building the views of an index (``Index.derived``, a server's warm-up) makes a few million
long-lived objects, and each of the collector's full passes on the way walked all those made
so far: on the mixed corpus of the benchmarks five passes, a quarter to a third of a server's
warm-up (2.9-3.3 s to 1.8-2.4 s in one process) and of a one-shot ``szrag ask --no-ai``
(6.0 s to 4.2 s), two runs each on a busy machine, with the same peak memory. What the views
hold has no cycles; a long-running face collects and freezes them once they are built
(``service.watch.keep_out_of_collections``).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator


class _Paused:
    """The blocks under way, and whether the collector ran before the first began."""

    lock = threading.Lock()
    holders = 0
    was_enabled = False


@contextlib.contextmanager
def collections_paused() -> Iterator[None]:
    """No automatic pass of the cyclic collector while the block runs, and until the last of
    several such blocks (in any thread) ends; the collector is as it was afterwards, whatever
    the block raised. Other threads allocate unchecked meanwhile: the blocks last seconds."""
    with _Paused.lock:
        if _Paused.holders == 0:
            _Paused.was_enabled = gc.isenabled()
            gc.disable()
        _Paused.holders += 1
    try:
        yield
    finally:
        with _Paused.lock:
            _Paused.holders -= 1
            if _Paused.holders == 0 and _Paused.was_enabled:
                gc.enable()
