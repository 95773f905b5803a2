"""Symbol scores for every definition at once, for processes that answer many questions.

``graph.symbol_score`` reads one name at a time. Most questions share a word with a thousand
or more of a large repository's definitions (one asking about ``test`` shares it with eleven
thousand in the benchmarks' corpus), and scoring them one by one in Python was most of a warm
answer's codebase context. A long-running face instead keeps, per index generation, every
distinct name's tokens and their stems as integer columns, and scores a question with numpy:

- each token of a name is found when the question writes it as code, else when its stem is one
  of the question's prose stems, and what is found is that string (``SymbolQuestion.words_in``);
- the distinct strings a name holds are bits of a mask, so a method's further class words are
  the bits of its class's mask that its own mask lacks;
- whether the question names a definition is only ever true for a name that is one of the
  question's runs of word characters or has other characters, so those few are checked one by
  one (``graph.names_symbol``).

The scores are ``symbol_score``'s and the order is ``find_symbols``'s (a test compares both on
real trees); numpy is imported only by the processes that keep views in memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from szrag.code.model import CodeRecord, Definition, SymbolMatch, SymbolMatches
from szrag.code.scoring import (
    CONTAINER_TOKEN,
    FULL_NAME,
    NAME_TOKEN,
    WHOLE_NAME,
    SymbolQuestion,
    names_symbol,
    words_of_name,
)

IntArray = npt.NDArray[np.int64]
MaskArray = npt.NDArray[np.uint64]

_RUN = re.compile(r"[\w$]+")
_BITS = 64


@dataclass(frozen=True, slots=True)
class SymbolTable:
    """Every definition of one index generation, with its name's words as integer columns."""

    definitions: tuple[tuple[str, Definition], ...]
    names: tuple[str, ...]  # the distinct names of definitions and of their classes
    vocabulary: dict[str, int]  # every token and stem of those names
    row_name: IntArray  # one row per token of a name: the name's number,
    row_token: IntArray  # the token's word,
    row_stem: IntArray  # and its stem's word
    token_count: IntArray  # per name, its rows
    definition_name: IntArray  # per definition: its name's number,
    definition_class: IntArray  # its class's name's number (-1 for none),
    rank: IntArray  # its place in (file, line) order, ties in index order,
    definition_file: IntArray  # and its file's number
    files: dict[str, int]  # the number of each file holding definitions
    by_run: dict[str, tuple[int, ...]]  # a definition name of word characters, lowercased
    unusual: tuple[int, ...]  # the definition names with other characters

    @classmethod
    def of(cls, records: Iterable[tuple[str, CodeRecord]]) -> SymbolTable:
        definitions = tuple((path, item) for path, record in records for item in record.functions)
        numbers: dict[str, int] = {}
        vocabulary: dict[str, int] = {}
        rows: list[tuple[int, int, int]] = []

        def number_of(name: str) -> int:
            found = numbers.get(name)
            if found is None:
                found = numbers[name] = len(numbers)
                for token, token_stem in words_of_name(name):
                    token_word = vocabulary.setdefault(token, len(vocabulary))
                    rows.append(
                        (found, token_word, vocabulary.setdefault(token_stem, len(vocabulary)))
                    )
            return found

        own = [number_of(item.name) for _, item in definitions]
        classes = [number_of(item.container) if item.container else -1 for _, item in definitions]
        by_run: dict[str, list[int]] = {}
        unusual: list[int] = []
        for name in dict.fromkeys(item.name for _, item in definitions):
            lowered = name.lower()
            if _RUN.fullmatch(lowered):
                by_run.setdefault(lowered, []).append(numbers[name])
            else:
                unusual.append(numbers[name])
        order = sorted(
            range(len(definitions)), key=lambda n: (definitions[n][0], definitions[n][1].line, n)
        )
        rank = np.empty(len(definitions), dtype=np.int64)
        rank[order] = np.arange(len(definitions), dtype=np.int64)
        columns = np.array(rows, dtype=np.int64).reshape(-1, 3)
        files: dict[str, int] = {}
        in_file = [files.setdefault(path, len(files)) for path, _ in definitions]
        return cls(
            definitions,
            tuple(numbers),
            vocabulary,
            columns[:, 0].copy(),
            columns[:, 1].copy(),
            columns[:, 2].copy(),
            np.bincount(columns[:, 0], minlength=len(numbers)),
            np.array(own, dtype=np.int64),
            np.array(classes, dtype=np.int64),
            rank,
            np.array(in_file, dtype=np.int64),
            files,
            {run: tuple(found) for run, found in by_run.items()},
            tuple(unusual),
        )

    def matches(self, asked: SymbolQuestion) -> SymbolMatches:
        """The definitions ``asked`` gives a positive ``symbol_score``, best first, ties by
        file and line (``find_symbols``)."""
        rows, words = self._found(asked)
        names = self.row_name[rows]
        masks, own = self._masks(asked, words, names)
        whole = np.bincount(names, minlength=len(self.names)) == self.token_count
        named = self._named(asked)
        base = NAME_TOKEN * own + np.where(
            named, FULL_NAME, np.where(whole & (own > 0), WHOLE_NAME, 0)
        )
        scores = base[self.definition_name]
        with_class = np.flatnonzero((self.definition_class >= 0) & (own[self.definition_name] > 0))
        if with_class.size:
            further = (
                masks[self.definition_class[with_class]] & ~masks[self.definition_name[with_class]]
            )
            scores[with_class] += CONTAINER_TOKEN * _popcount(further)
        positive = np.flatnonzero(scores > 0)
        best = positive[np.lexsort((self.rank[positive], -scores[positive]))]
        return TableMatches(self, best, scores[best])

    def _found(self, asked: SymbolQuestion) -> tuple[IntArray, IntArray]:
        """The rows whose token the question holds (written as code, else by its stem as a
        prose word), and the word found in each: the token, else the stem."""
        as_code = np.zeros(len(self.vocabulary), dtype=np.bool_)
        as_code[[self.vocabulary[key] for key in asked.exact if key in self.vocabulary]] = True
        as_prose = np.zeros(len(self.vocabulary), dtype=np.bool_)
        as_prose[[self.vocabulary[key] for key in asked.stems if key in self.vocabulary]] = True
        by_token = as_code[self.row_token]
        rows = np.flatnonzero(by_token | as_prose[self.row_stem])
        return rows, np.where(by_token[rows], self.row_token[rows], self.row_stem[rows])

    def _masks(
        self, asked: SymbolQuestion, words: IntArray, names: IntArray
    ) -> tuple[MaskArray, IntArray]:
        """Per name, the question's words it holds as a bit mask (one bit per distinct word,
        as many 64-bit columns as the question needs), and how many they are; ``words`` are
        the words found and ``names`` the names they were found in."""
        keys = np.array(
            sorted(self.vocabulary[key] for key in asked.keys if key in self.vocabulary),
            dtype=np.int64,
        )
        bit = np.searchsorted(keys, words)
        masks = np.zeros((len(self.names), max(1, -(-len(keys) // _BITS))), dtype=np.uint64)
        np.bitwise_or.at(
            masks,
            (names, bit // _BITS),
            np.left_shift(np.uint64(1), (bit % _BITS).astype(np.uint64)),
        )
        return masks, _popcount(masks)

    def _named(self, asked: SymbolQuestion) -> npt.NDArray[np.bool_]:
        """Per name, whether the question names it (``names_symbol``)."""
        named = np.zeros(len(self.names), dtype=np.bool_)
        tried = [
            number
            for run in set(_RUN.findall(asked.lowered))
            for number in self.by_run.get(run, ())
        ]
        for number in (*tried, *self.unusual):
            if names_symbol(asked.lowered, self.names[number]):
                named[number] = True
        return named


class TableMatches(SymbolMatches):
    """A question's matches as numbers of a table's definitions and their scores, each made
    into a record when it is first read."""

    def __init__(self, table: SymbolTable, numbers: IntArray, scores: IntArray) -> None:
        super().__init__()
        self._table = table
        self._numbers = numbers
        self._scores = scores
        self._made: dict[int, SymbolMatch] = {}
        self._places: dict[int, list[int]] | None = None  # by file number, best first

    def __len__(self) -> int:
        return len(self._numbers)

    def best_by_file(self) -> dict[str, int]:
        files = self._table.definition_file[self._numbers]
        numbers, first = np.unique(files, return_index=True)
        order = np.argsort(first)
        paths = list(self._table.files)
        return {
            paths[number]: score
            for number, score in zip(
                numbers[order].tolist(), self._scores[first[order]].tolist(), strict=True
            )
        }

    def of_file(self, path: str) -> list[SymbolMatch]:
        if self._places is None:
            places: dict[int, list[int]] = {}
            for place, number in enumerate(self._table.definition_file[self._numbers].tolist()):
                places.setdefault(number, []).append(place)
            self._places = places
        number = self._table.files.get(path)
        if number is None:
            return []
        return [self._at(place) for place in self._places.get(number, ())]

    def _at(self, place: int) -> SymbolMatch:
        made = self._made.get(place)
        if made is None:
            path, item = self._table.definitions[int(self._numbers[place])]
            score = int(self._scores[place])
            made = SymbolMatch(
                path, item.name, item.kind, item.line, item.end_line, score, item.container
            )
            self._made[place] = made
        return made


def _popcount(masks: MaskArray) -> IntArray:
    """The set bits of each row of ``masks``."""
    counts: IntArray = np.bitwise_count(masks).sum(axis=1, dtype=np.int64)
    return counts
