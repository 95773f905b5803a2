"""In-memory search arrays for long-running processes (server, evaluation, benchmarks).

The SQLite path scans every chunk's word list per question, which suits one-shot commands.
A process that answers many questions builds these arrays once per index generation and then
scores every chunk with a handful of vectorised operations. Both paths give identical results
(tests compare them); chunk order is (path, position) so a stable sort keeps the spec's tie-break.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from szrag.base.text import tokens
from szrag.index.protocol import IndexStore

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_TOKEN_CACHE_SIZE = 512


@dataclass(frozen=True, slots=True)
class FileFlags:
    """Per-file booleans that the question-dependent bonuses select from."""

    docs: BoolArray
    markdown: BoolArray
    types: dict[str, BoolArray]
    path_contains: dict[str, BoolArray]


class MemorySearch:
    """Chunks, their words and their files as arrays, for one index generation."""

    def __init__(self, index: IndexStore, generation: str, path_words: tuple[str, ...]) -> None:
        self.generation = generation
        files = index.file_entries()  # by path
        self.file_paths = [entry.path for entry in files]
        self.file_lower = [entry.path_lower for entry in files]
        self.file_types = [entry.type for entry in files]
        position = {entry.id: number for number, entry in enumerate(files)}
        self.file_by_lower = {path: number for number, path in enumerate(self.file_lower)}

        path_token_files: dict[str, list[int]] = {}
        for number, path in enumerate(self.file_paths):
            for token in tokens(path):
                path_token_files.setdefault(token, []).append(number)
        self.path_token_files = {
            key: np.array(value, dtype=np.int64) for key, value in path_token_files.items()
        }

        kinds = np.array(self.file_types, dtype=object)
        self.flags = FileFlags(
            docs=np.array([path.startswith("docs/") for path in self.file_lower], dtype=bool),
            markdown=kinds == "markdown",
            types={kind: kinds == kind for kind in set(self.file_types)},
            path_contains={
                word: np.array([word in path for path in self.file_lower], dtype=bool)
                for word in path_words
            },
        )

        vocabulary: dict[str, int] = {}
        flat = array("l")
        lengths = array("l")
        chunk_ids = array("q")
        chunk_files = array("l")
        self.chunk_rows: list[tuple[int, int, int, str | None]] = []  # seq, start, end, heading
        heading_chunks: dict[str, list[int]] = {}
        rows = index.chunk_words(by_path=True)
        for number, (chunk_id, file_id, seq, start, end, heading, words) in enumerate(rows):
            ids = [vocabulary.setdefault(word, len(vocabulary)) for word in words.split()]
            flat.extend(ids)
            lengths.append(len(ids))
            chunk_ids.append(chunk_id)
            chunk_files.append(position[file_id])
            self.chunk_rows.append((seq, start, end, heading))
            if heading:
                for token in tokens(heading):
                    heading_chunks.setdefault(token, []).append(number)
        self.chunk_count = len(chunk_ids)
        self.chunk_ids = (
            np.frombuffer(chunk_ids, dtype=np.int64) if chunk_ids else np.zeros(0, np.int64)
        )
        self.chunk_files = np.array(chunk_files, dtype=np.int64)
        self.heading_chunks = {
            key: np.array(value, dtype=np.int64) for key, value in heading_chunks.items()
        }

        word_ids = np.array(flat, dtype=np.int64)
        owners = np.repeat(
            np.arange(self.chunk_count, dtype=np.int64), np.array(lengths, dtype=np.int64)
        )
        order = np.argsort(word_ids, kind="stable")
        self.postings = owners[order]
        counts = np.bincount(word_ids, minlength=len(vocabulary))
        self.posting_starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.vocabulary_text = "\n".join(vocabulary) + "\n"
        starts = np.zeros(len(vocabulary), dtype=np.int64)
        if vocabulary:
            word_lengths = np.fromiter((len(word) + 1 for word in vocabulary), dtype=np.int64)
            starts[1:] = np.cumsum(word_lengths)[:-1]
        self.word_starts = starts
        self._token_masks: dict[str, BoolArray] = {}

    def chunks_containing(self, token: str) -> BoolArray:
        """Which chunks contain ``token`` anywhere in their text (cached per token)."""
        cached = self._token_masks.get(token)
        if cached is not None:
            return cached
        mask = np.zeros(self.chunk_count, dtype=bool)
        offsets = [match.start() for match in re.finditer(re.escape(token), self.vocabulary_text)]
        if offsets:
            words = np.unique(np.searchsorted(self.word_starts, offsets, side="right") - 1)
            begin = self.posting_starts[words]
            size = self.posting_starts[words + 1] - begin
            total = int(size.sum())
            if total:
                shift = np.repeat(begin - np.concatenate(([0], np.cumsum(size)[:-1])), size)
                mask[self.postings[shift + np.arange(total)]] = True
        if len(self._token_masks) >= _TOKEN_CACHE_SIZE:
            self._token_masks.pop(next(iter(self._token_masks)))
        self._token_masks[token] = mask
        return mask
