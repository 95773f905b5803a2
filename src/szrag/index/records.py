"""Code records by path, each decoded when a question first reads it.

A question reads the records of the few files it finds and shows (their units' definitions,
their structure, what connects them), never every record of the index: ``records_by_path``
gives a mapping over the index that decodes a file's stored record on first read and keeps
the last decoded ones by path and content hash, shared by every reader of the index (the
second stage's units and the codebase context read the same records).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from szrag.index import store

if TYPE_CHECKING:
    from szrag.code.model import CodeRecord
    from szrag.index.protocol import IndexStore


KEPT_RECORDS = 4096  # decoded records a long-running face keeps, whatever the generation


class CodeRecords(Mapping[str, "CodeRecord"]):
    """The code records of one index generation by path, each decoded when first read: a
    question reads the records of the few files it shows, not every record of the index.
    The decoded records are kept by content (the least recently read dropped past
    ``KEPT_RECORDS``), so a file a refresh left as it was keeps its record. Each read looks
    the file up in the index as it is then: a caller wanting one generation holds
    ``index.reading()``, as a question does."""

    def __init__(self, index: IndexStore, kept: _KeptRecords) -> None:
        self._index = index
        self._kept = kept

    def __getitem__(self, path: str) -> CodeRecord:
        stored = self._index.get_file(path)
        if stored is None or stored.packed_code is None:
            raise KeyError(path)
        key = (path, stored.sha256)
        record = self._kept.get(key)
        if record is None:
            code = stored.code
            if code is None:
                raise KeyError(path)
            from szrag.code.model import CodeRecord  # a refresh alone needs none

            record = self._kept.put(key, CodeRecord.from_dict(code))
        return record

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        stored = self._index.get_file(path)
        return stored is not None and stored.packed_code is not None  # nothing decoded

    def __iter__(self) -> Iterator[str]:
        files = self._index.files_by_path()
        return (path for path, stored in files.items() if stored.packed_code is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _KeptRecords:
    """Decoded records by (path, content hash), the least recently read dropped past a
    bound; shared by the threads of a server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: OrderedDict[tuple[str, str], CodeRecord] = OrderedDict()

    def get(self, key: tuple[str, str]) -> CodeRecord | None:
        with self._lock:
            found = self._records.get(key)
            if found is not None:
                self._records.move_to_end(key)
            return found

    def put(self, key: tuple[str, str], record: CodeRecord) -> CodeRecord:
        with self._lock:
            kept = self._records.setdefault(key, record)  # another thread may have been first
            while len(self._records) > KEPT_RECORDS:
                self._records.popitem(last=False)
            return kept


def records_by_path(index: IndexStore) -> CodeRecords:
    """The parsed code records by path, each decoded when read (``CodeRecords``; made for
    each caller, so the index never holds what holds it)."""
    kept: _KeptRecords | None = index.carried("code.records.kept", None)
    if kept is None:
        kept = _KeptRecords()
        index.carry("code.records.kept", kept)
    return CodeRecords(index, kept)


def route_records(rows: Iterable[tuple[str, str]]) -> dict[str, CodeRecord]:
    """A record holding only its routes for each of ``rows`` (path, routes as stored,
    ``IndexStore.route_rows``): routes are stored apart from the records, so listing or
    mounting them decodes no record."""
    from szrag.code.model import CodeRecord

    return {
        path: CodeRecord.from_dict({"routes": store.stored_json(found)}) for path, found in rows
    }
