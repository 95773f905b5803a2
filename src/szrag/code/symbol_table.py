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

A question reads only what its words reach: the rows of each of its words (``by_token``,
``by_stem``: the rows sorted by word, with where each word's begin), the names those rows
belong to and the names it names, and those names' definitions (``by_name``), never a column
of every row or every definition.

The scores are ``symbol_score``'s and the order is ``find_symbols``'s (a test compares both on
real trees); numpy is imported only by the processes that keep views in memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from szrag.code.model import Definition, SymbolMatch, SymbolMatches
from szrag.code.scoring import (
    CONTAINER_TOKEN,
    FULL_NAME,
    NAME_TOKEN,
    WHOLE_NAME,
    WORD_RUN,
    SymbolQuestion,
    names_symbol,
    words_of_name,
)

IntArray = npt.NDArray[np.int64]
MaskArray = npt.NDArray[np.uint64]

_BITS = 64


@dataclass(frozen=True, slots=True)
class SymbolTable:
    """Every definition of one index generation, with its name's words as integer columns."""

    # every definition in ``IndexStore.definitions`` order; its file is ``definition_file``
    # (a pair with its path per definition took 15 MiB over 54,000 files)
    definitions: tuple[Definition, ...]
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
    # the definition names with other characters, by the first word run of each (a name
    # the question names holds each of its runs as a whole run of the question), and those
    # without one
    unusual: dict[str, tuple[int, ...]]
    runless: tuple[int, ...]
    paths: tuple[str, ...]  # the files of ``files``, by number
    by_token: Postings  # the rows of each word as a name's token,
    by_stem: Postings  # as a token's stem,
    by_name: Postings  # and the definitions of each name

    @classmethod
    def of(
        cls, defined: Iterable[tuple[str, Definition]], earlier: SymbolTable | None = None
    ) -> SymbolTable:
        """The table of ``defined``: (path, definition) of every code record's definitions,
        by path, each record's in its order (``IndexStore.definitions``). The words of a name
        ``earlier`` (the last generation's table) holds are taken from it, not worked out
        again: a refresh changes a few files' names."""
        definitions = tuple(defined)
        numbers: dict[str, int] = {}
        vocabulary: dict[str, int] = {}
        rows: list[tuple[int, int, int]] = []
        known = earlier.name_words() if earlier is not None else {}

        def number_of(name: str) -> int:
            found = numbers.get(name)
            if found is None:
                found = numbers[name] = len(numbers)
                words = known.get(name)
                for token, token_stem in words_of_name(name) if words is None else words:
                    token_word = vocabulary.setdefault(token, len(vocabulary))
                    rows.append(
                        (found, token_word, vocabulary.setdefault(token_stem, len(vocabulary)))
                    )
            return found

        own = [number_of(item.name) for _, item in definitions]
        classes = [number_of(item.container) if item.container else -1 for _, item in definitions]
        by_run: dict[str, list[int]] = {}
        unusual: dict[str, list[int]] = {}
        runless: list[int] = []
        for name in dict.fromkeys(item.name for _, item in definitions):
            lowered = name.lower()
            if WORD_RUN.fullmatch(lowered):
                by_run.setdefault(lowered, []).append(numbers[name])
            elif run := WORD_RUN.search(lowered):
                unusual.setdefault(run[0], []).append(numbers[name])
            else:
                runless.append(numbers[name])
        order = sorted(
            range(len(definitions)), key=lambda n: (definitions[n][0], definitions[n][1].line, n)
        )
        rank = np.empty(len(definitions), dtype=np.int64)
        rank[order] = np.arange(len(definitions), dtype=np.int64)
        columns = np.array(rows, dtype=np.int64).reshape(-1, 3)
        files: dict[str, int] = {}
        in_file = [files.setdefault(path, len(files)) for path, _ in definitions]
        return cls(
            tuple(item for _, item in definitions),
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
            {run: tuple(found) for run, found in unusual.items()},
            tuple(runless),
            tuple(files),
            Postings.of(columns[:, 1], len(vocabulary)),
            Postings.of(columns[:, 2], len(vocabulary)),
            Postings.of(np.array(own, dtype=np.int64), len(numbers)),
        )

    def name_words(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """Each name's words (``words_of_name``) as the table holds them."""
        words = list(self.vocabulary)  # by number: each was numbered as it was first met
        pairs = list(
            zip(
                map(words.__getitem__, self.row_token.tolist()),
                map(words.__getitem__, self.row_stem.tolist()),
                strict=True,
            )
        )
        found: dict[str, tuple[tuple[str, str], ...]] = {}
        row = 0
        for name, count in zip(self.names, self.token_count.tolist(), strict=True):
            found[name] = tuple(pairs[row : row + count])
            row += count
        return found

    def matches(self, asked: SymbolQuestion) -> SymbolMatches:
        """The definitions ``asked`` gives a positive ``symbol_score``, best first, ties by
        file and line (``find_symbols``): only the names the question's words or runs reach,
        and their definitions, are read."""
        rows, words = self._found(asked)
        named = self._named(asked)
        # the names reached, each given a place of its own: every other name scores nothing
        reached = np.union1d(self.row_name[rows], np.array(sorted(named), dtype=np.int64))
        local = np.searchsorted(reached, self.row_name[rows])
        masks, own = self._masks(asked, words, local, len(reached))
        whole = np.bincount(local, minlength=len(reached)) == self.token_count[reached]
        is_named = np.isin(reached, np.array(sorted(named), dtype=np.int64))
        base = NAME_TOKEN * own + np.where(
            is_named, FULL_NAME, np.where(whole & (own > 0), WHOLE_NAME, 0)
        )
        chosen = self.by_name.held(reached)  # their definitions, ascending
        mine = np.searchsorted(reached, self.definition_name[chosen])
        scores = base[mine]
        classes = self.definition_class[chosen]
        with_class = np.flatnonzero((classes >= 0) & (own[mine] > 0))
        if with_class.size:
            # a class no word reached has no bits: its mask is nothing
            of_class = classes[with_class]
            at = np.minimum(np.searchsorted(reached, of_class), len(reached) - 1)
            class_masks = np.where(
                (reached[at] == of_class)[:, None], masks[at], np.zeros_like(masks[at])
            )
            further = class_masks & ~masks[mine[with_class]]
            scores[with_class] += CONTAINER_TOKEN * _popcount(further)
        positive = np.flatnonzero(scores > 0)
        best = positive[np.lexsort((self.rank[chosen[positive]], -scores[positive]))]
        return TableMatches(self, chosen[best], scores[best])

    def _found(self, asked: SymbolQuestion) -> tuple[IntArray, IntArray]:
        """The rows whose token the question holds (written as code, else by its stem as a
        prose word), ascending, and the word found in each: the token, else the stem."""
        exact = np.array(
            sorted({self.vocabulary[key] for key in asked.exact if key in self.vocabulary}),
            dtype=np.int64,
        )
        stems = np.array(
            sorted({self.vocabulary[key] for key in asked.stems if key in self.vocabulary}),
            dtype=np.int64,
        )
        rows = np.union1d(self.by_token.held(exact), self.by_stem.held(stems))
        by_token = np.isin(self.row_token[rows], exact)
        return rows, np.where(by_token, self.row_token[rows], self.row_stem[rows])

    def _masks(
        self, asked: SymbolQuestion, words: IntArray, names: IntArray, count: int
    ) -> tuple[MaskArray, IntArray]:
        """Per name reached (``count`` of them), the question's words it holds as a bit mask
        (one bit per distinct word, as many 64-bit columns as the question needs), and how
        many they are; ``words`` are the words found and ``names`` the places of the names
        they were found in."""
        keys = np.array(
            sorted(self.vocabulary[key] for key in asked.keys if key in self.vocabulary),
            dtype=np.int64,
        )
        bit = np.searchsorted(keys, words)
        masks = np.zeros((count, max(1, -(-len(keys) // _BITS))), dtype=np.uint64)
        np.bitwise_or.at(
            masks,
            (names, bit // _BITS),
            np.left_shift(np.uint64(1), (bit % _BITS).astype(np.uint64)),
        )
        return masks, _popcount(masks)

    def _named(self, asked: SymbolQuestion) -> set[int]:
        """The names the question names (``names_symbol``)."""
        runs = set(WORD_RUN.findall(asked.lowered))
        tried = [
            number
            for run in runs
            for number in (*self.by_run.get(run, ()), *self.unusual.get(run, ()))
        ]
        return {
            number
            for number in (*tried, *self.runless)
            if names_symbol(asked.lowered, self.names[number])
        }


@dataclass(frozen=True, slots=True)
class Postings:
    """Row numbers grouped by a key: ``order`` lists the rows by key (in row order within
    one), and the rows of key ``k`` are ``order[starts[k]:starts[k + 1]]``."""

    order: IntArray
    starts: IntArray

    @classmethod
    def of(cls, keys: IntArray, size: int) -> Postings:
        """The rows of each of ``size`` keys, ``keys`` giving each row's."""
        order = np.argsort(keys, kind="stable").astype(np.int64)
        starts = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys, minlength=size), out=starts[1:])
        return cls(order, starts)

    def held(self, keys: IntArray) -> IntArray:
        """The rows of any of ``keys`` (distinct), ascending."""
        first = self.starts[keys]
        lengths = self.starts[keys + 1] - first
        # each key's run of ``order``, the runs laid end to end without a loop over keys
        before = np.cumsum(lengths) - lengths
        places = np.repeat(first - before, lengths) + np.arange(int(lengths.sum()))
        return np.sort(self.order[places])


class TableMatches(SymbolMatches):
    """A question's matches as numbers of a table's definitions and their scores, each made
    into a record when it is first read."""

    def __init__(self, table: SymbolTable, numbers: IntArray, scores: IntArray) -> None:
        super().__init__()
        self._table = table
        self._numbers = numbers
        self._scores = scores
        self._made: dict[int, SymbolMatch] = {}
        # each match's file number, sorted, and the matches' places in that order
        self._places: tuple[IntArray, IntArray] | None = None

    def __len__(self) -> int:
        return len(self._numbers)

    def best_by_file(self) -> dict[str, int]:
        files = self._table.definition_file[self._numbers]
        numbers, first = np.unique(files, return_index=True)
        order = np.argsort(first)
        paths = self._table.paths
        return {
            paths[number]: score
            for number, score in zip(
                numbers[order].tolist(), self._scores[first[order]].tolist(), strict=True
            )
        }

    def of_file(self, path: str) -> list[SymbolMatch]:
        number = self._table.files.get(path)
        if number is None:
            return []
        if self._places is None:  # the places of the matches by file, in their order within one
            files = self._table.definition_file[self._numbers]
            order = np.argsort(files, kind="stable")
            self._places = (files[order], order)
        held, order = self._places
        first, last = np.searchsorted(held, (number, number + 1)).tolist()
        return [self._at(place) for place in order[first:last].tolist()]

    def _at(self, place: int) -> SymbolMatch:
        made = self._made.get(place)
        if made is None:
            number = int(self._numbers[place])
            item = self._table.definitions[number]
            path = self._table.paths[int(self._table.definition_file[number])]
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
