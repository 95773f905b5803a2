"""The second stage: once a file is chosen, which of its units answers the question.

The first stage ranks files by their 60-line windows across the whole corpus. Inside a
chosen file, each unit (``szrag.code.units``: a function, a method, a class's own lines, a
section) is scored by the question alone: BM25 over the file's units for the question's
words in the unit's lines, its definition's name and class counted again, a named
identifier matching the definition counted most, text the question quotes (a message, an
option) found verbatim in the unit counted as much as the best unit's words, and a small
share for overlapping the windows the first stage found in the file (its corpus-wide
judgement), the window it chose counting most and each other as its score allows. The
best unit is returned with its real span, with up to two more of the same file that score
close, within about a window's lines; a context with room to spare takes the next ones
(``more_units``).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from szrag.base.text import (
    MIN_TOKEN,
    TOKEN_CHARACTERS,
    TOKEN_CLASS,
    stem,
    symbol_key,
    token_text,
    tokens,
)
from szrag.code.scoring import lookup_prefix
from szrag.code.units import MAX_UNIT_LINES, PROSE_TYPES, Unit, file_units
from szrag.index.protocol import IndexStore
from szrag.index.records import records_by_path
from szrag.rank.model import Window
from szrag.rank.words import named_symbols, query_terms, quoted_literals

K1 = 1.2
B = 0.5  # a longer unit is judged less harshly than a longer document: a change spreads
NAME_WEIGHT = 1.0  # a question word in the definition's own name counts once more
# times the best body score: an identifier the question writes out. Above the 1.25 that
# words and windows can give, so its definition comes first, but not so far above that no
# unit using it comes close enough to be shown beside it
NAMED_SYMBOL = 2.0
QUOTED_TEXT = 1.0  # times the best body score: a unit holding text the question quotes
NAMED_LINE = 2.0  # a unit holding a line the question names, as a named definition
WINDOW_SHARE = 0.25  # of the best score, at most, for lying in a window the first stage found
# A file answers with its best unit and, while they fit these lines (about a window's), up
# to two more scoring at least this share of the best: a change rarely sits in one function.
FILE_LINES = 80
FILE_UNITS = 3
CLOSE_SHARE = 0.3
# Units of a few lines each (a header's inline functions and macros) are shown past the
# count, while all of them stay within a screenful
SCREEN_LINES = MAX_UNIT_LINES


@dataclass(frozen=True, slots=True)
class FileCut:
    """A file's lines and the units they are cut into, made once per content. The lines are
    kept as one text with where each begins: a server keeps the cuts of 150,000 lines, and a
    string of its own per line took twice the memory of the text."""

    text: str  # the lines joined by newlines
    offsets: array[int]  # where each line begins in ``text``
    units: tuple[Unit, ...]

    @classmethod
    def of(cls, lines: Sequence[str], units: Sequence[Unit]) -> FileCut:
        """The cut of a file of ``lines`` into ``units``."""
        return cls("\n".join(lines), _offsets(lines), tuple(units))

    @property
    def line_count(self) -> int:
        return len(self.offsets)

    def span(self, first: int, last: int) -> str:
        """Lines ``first``-``last`` (1-based, inclusive, within the file) joined by newlines."""
        count = len(self.offsets)
        first, last = max(first, 1), min(last, count)
        if first > last:
            return ""
        end = self.offsets[last] - 1 if last < count else len(self.text)
        return self.text[self.offsets[first - 1] : end]


def _offsets(lines: Sequence[str]) -> array[int]:
    """Where each of ``lines`` begins once they are joined by newlines."""
    sizes = [len(line) + 1 for line in lines[:-1]]
    return array("q", itertools.accumulate(sizes, initial=0) if lines else ())


@dataclass(frozen=True, slots=True)
class FileUnits(FileCut):
    """A file's cut with what ranking its units reads: each unit's name words and length,
    and the lines holding each word the file is asked about (found when first asked)."""

    name_words: tuple[frozenset[str], ...]
    name_keys: tuple[frozenset[str], ...]
    lengths: tuple[int, ...]  # non-blank lines
    # where a word is looked for: an ASCII text lowercased (``cased``: a word also ends where
    # the text has a camelCase boundary), else the lines' token text (``text.token_text``)
    lowered: str
    cased: bool
    # where each line begins in ``lowered`` (the cut's ``offsets`` unless the token text
    # changed a length): machine integers, a fifth of the memory of a tuple of ints
    starts: array[int]
    first_lines: tuple[int, ...]  # each unit's first line (units follow one another)
    named: dict[str, tuple[int, ...]]  # each word of the units' names: the units it names
    held: dict[str, tuple[int, ...]] = field(default_factory=dict, compare=False)
    # the last questions' scores before the window's share, and the best unit's words' score:
    # a question ranks a file's units for its sources, then again for a context's further ones
    scored: dict[str, tuple[tuple[float, ...], float]] = field(default_factory=dict, compare=False)

    def lines_holding(self, term: str) -> tuple[int, ...]:
        """The (1-based) lines holding a word whose stem is ``term``, in order.

        A word's stem begins with the word's own letters but for a last ``y`` (``entries``
        gives ``entry``), so only the words beginning with those letters are stemmed, found
        where they stand in the file's token text: a question's few words, not every word
        of the file, and no line split into words."""
        known = self.held.get(term)
        if known is not None:
            return known
        probe = lookup_prefix(term)
        if not probe:
            return ()  # no word's stem is empty
        starting = _words_starting(probe)
        found: list[int] = []
        text, starts = self.lowered, self.starts
        original = self.text if self.cased else None  # where the camelCase boundaries are
        last = len(starts) - 1
        match = starting.search(text)
        while match is not None:
            at = match.start()
            if (
                at
                and text[at - 1] in TOKEN_CHARACTERS
                and not (original is not None and _CAMEL_BOUNDARY.match(original, at - 1))
            ):  # inside a word, not its start
                match = starting.search(text, at + 1)
                continue
            word = match[0]
            if original is not None:  # the word ends where a camelCase boundary is
                boundary = _CAMEL_BOUNDARY.search(original, at, at + len(word))
                if boundary is not None:
                    word = word[: boundary.start() + 1 - at]
            if len(word) >= MIN_TOKEN and stem(word) == term:
                line = bisect.bisect_right(starts, at) - 1
                found.append(line + 1)
                if line >= last:
                    break
                match = starting.search(text, starts[line + 1])  # one word settles a line
            else:
                match = starting.search(text, at + len(word))
        if len(self.held) >= HELD_WORDS:  # a long-running server asks a file many words
            self.held.clear()
        held = self.held[term] = tuple(found)  # the same for any thread that works it out
        return held

    def term_counts(self, term: str) -> list[int]:
        """For each unit, how many of its lines hold a word whose stem is ``term``."""
        counts = [0] * len(self.units)
        for place, lines in self.term_places(term).items():
            counts[place] = lines
        return counts

    def term_places(self, term: str) -> dict[int, int]:
        """The units (by place) with a line holding a word whose stem is ``term``, and how
        many such lines each has: found from those lines, not by looking at every unit."""
        places: dict[int, int] = {}
        units, first_lines = self.units, self.first_lines
        for line in self.lines_holding(term):
            place = bisect.bisect_right(first_lines, line) - 1
            if place >= 0 and line <= units[place].end:  # not a blank line between units
                places[place] = places.get(place, 0) + 1
        return places


@dataclass(frozen=True, slots=True)
class ScoredUnit:
    """A unit and how well it answers the question."""

    unit: Unit
    score: float


KEPT_FILES = 1024  # files whose units a long-running face keeps, whatever the generation
# and the lines they may hold together: a file's units keep its lines twice (as read and
# lowercased) and the lines of each word it was asked about
KEPT_LINES = 150_000
HELD_WORDS = 512  # words whose lines a file keeps; past them it starts again


_CAMEL_BOUNDARY = re.compile(r"[a-z][A-Z]")  # the token text spaces its capital


@functools.lru_cache(maxsize=4096)
def _words_starting(probe: str) -> re.Pattern[str]:
    """``probe`` in a token text and the rest of the word it stands in: a word of its own
    when nothing of a word goes before it. A literal first, so the search skips ahead as
    ``str.find`` does."""
    return re.compile(rf"{re.escape(probe)}{TOKEN_CLASS}*")


class _UnitCache:
    """Each file's units by content hash, the least recently used dropped past a bound (in
    files and in lines): a file unchanged by a refresh keeps the units made before it."""

    def __init__(self, max_lines: int = KEPT_LINES) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, str], FileCut | None] = OrderedDict()
        self._lines = 0
        self._max_lines = max_lines

    def get(self, key: tuple[str, str]) -> tuple[bool, FileCut | None]:
        with self._lock:
            if key not in self._kept:
                return False, None
            self._kept.move_to_end(key)
            return True, self._kept[key]

    def put(self, key: tuple[str, str], found: FileCut | None) -> None:
        with self._lock:
            if key in self._kept:
                self._lines -= _held(self._kept.pop(key))
            self._kept[key] = found
            self._lines += _held(found)
            while len(self._kept) > 1 and (
                len(self._kept) > KEPT_FILES or self._lines > self._max_lines
            ):
                self._lines -= _held(self._kept.popitem(last=False)[1])


def _held(found: FileCut | None) -> int:
    return found.line_count if found is not None else 0


def units_of(index: IndexStore, path: str, kind: str) -> FileUnits | None:
    """The units of the indexed file ``path``, measured for ranking (None when the index
    holds no lines of it)."""
    found = _cut_of(index, path, kind, measure=True)
    assert found is None or isinstance(found, FileUnits)
    return found


def cut_of(index: IndexStore, path: str, kind: str) -> FileCut | None:
    """The lines and units of the indexed file ``path`` without the word counts ranking
    needs: what citing or showing a unit reads (None when the index holds no lines of it)."""
    return _cut_of(index, path, kind, measure=False)


def kept_lines(index: IndexStore, path: str, first: int, last: int) -> list[str] | None:
    """Lines ``first``-``last`` of the indexed file ``path`` (as ``IndexStore.lines`` gives
    them) when its cut is kept, else None: nothing is read or cut for them."""
    stored = index.get_file(path)
    cache: _UnitCache | None = index.carried("units.by_content", None)
    if stored is None or cache is None:
        return None
    _, found = cache.get((path, stored.sha256))
    if found is None:
        return None
    first, last = max(first, 1), min(last, found.line_count)
    return found.span(first, last).split("\n") if first <= last else []


def _cut_of(index: IndexStore, path: str, kind: str, *, measure: bool) -> FileCut | None:
    stored = index.get_file(path)
    if stored is None:
        return None
    cache: _UnitCache | None = index.carried("units.by_content", None)
    if cache is None:
        cache = _UnitCache()
        index.carry("units.by_content", cache)
    key = (path, stored.sha256)
    known, found = cache.get(key)
    if known and (found is None or not measure or isinstance(found, FileUnits)):
        return found
    lines: Sequence[str] | None = None
    if found is None:
        lines = index.lines(path)
        if lines:
            found = FileCut.of(lines, _units(index, path, kind, lines))
    if found is not None and measure:
        found = _measure(found, lines)
    cache.put(key, found)
    return found


def _units(index: IndexStore, path: str, kind: str, lines: Sequence[str]) -> Sequence[Unit]:
    """The file's units as the index cut them when it was written, else cut now."""
    stored = index.stored_units(path)
    if stored is not None:
        return stored
    record = records_by_path(index).get(path)  # decoded once for every reader
    definitions = record.unit_definitions if record is not None else ()
    return file_units(lines, definitions, prose=kind in PROSE_TYPES)


def _measured(lines: Sequence[str], units: Sequence[Unit]) -> FileUnits:
    return _measure(FileCut.of(lines, units), lines)


def _measure(cut: FileCut, lines: Sequence[str] | None = None) -> FileUnits:
    """The cut measured for ranking; ``lines``: its lines, when the caller has them."""
    if lines is None:
        lines = cut.text.split("\n") if cut.offsets else []  # while measuring only
    units = cut.units
    # non-blank lines before each line, so a unit's length is a difference, not a count
    before = list(itertools.accumulate(map(bool, map(str.strip, lines)), initial=0))
    last = len(lines)
    lengths: list[int] = []
    names: list[frozenset[str]] = []
    keys: list[frozenset[str]] = []
    by_name: dict[str, tuple[frozenset[str], frozenset[str]]] = {}  # a long one's parts
    for unit in units:
        low, high = min(max(unit.start - 1, 0), last), min(unit.end, last)
        lengths.append(before[high] - before[low] if low < high else 0)
        name = unit.name or ""
        known = by_name.get(name)
        if known is None:
            known = by_name[name] = (
                frozenset(stem(word) for word in tokens(name)),
                frozenset(symbol_key(part) for part in name.split(".") if part),
            )
        names.append(known[0])
        keys.append(known[1])
    cased = cut.text.isascii()
    if cased:  # the same length: each line begins where it does in the text
        lowered, starts = cut.text.lower(), cut.offsets
    else:  # a character may lowercase into two (the dotted capital I)
        lowered = token_text(cut.text)
        same = len(lowered) == len(cut.text)
        starts = cut.offsets if same else _offsets(lowered.split("\n") if lines else [])
    named: dict[str, list[int]] = {}
    for place, words in enumerate(names):
        for word in words:
            named.setdefault(word, []).append(place)
    return FileUnits(
        cut.text,
        cut.offsets,
        units,
        tuple(names),
        tuple(keys),
        tuple(lengths),
        lowered,
        cased,
        starts,
        tuple(unit.start for unit in units),
        {word: tuple(places) for word, places in named.items()},
    )


def rank_units(
    found: FileUnits,
    question: str,
    windows: Sequence[Window] = (),
    lines: AbstractSet[int] = frozenset(),
) -> list[ScoredUnit]:
    """The file's units best first for ``question`` (ties in file order). ``windows``: the
    file's windows the first stage found, each with its score as a share of the best's; a
    unit gains the most any of them gives it, as much of ``WINDOW_SHARE`` as the window's
    share and as the part of the unit it covers. A unit holding one of ``lines`` (the
    question names them: a stack trace's frame, ``server/webhook.js:20``) gains as a definition
    the question names does."""
    asked, best = _question_scores(found, question)
    if lines:
        asked = tuple(
            score + NAMED_LINE * best
            if any(unit.start <= line <= unit.end for line in lines)
            else score
            for score, unit in zip(asked, found.units, strict=True)
        )
    units = found.units
    lifted = [0.0] * len(units)
    if windows:
        ends = [unit.end for unit in units]  # units follow one another down the file
        for first, last, share in windows:
            place = bisect.bisect_left(ends, first)
            while place < len(units) and units[place].start <= last:
                unit = units[place]
                overlap = min(unit.end, last) - max(unit.start, first) + 1
                if overlap > 0:
                    covered = share * overlap / (unit.end - unit.start + 1)
                    lifted[place] = max(lifted[place], covered)
                place += 1
    scored = [
        ScoredUnit(unit, asked[place] + WINDOW_SHARE * best * lifted[place])
        for place, unit in enumerate(units)
    ]
    order = sorted(range(len(scored)), key=lambda place: (-scored[place].score, place))
    return [scored[place] for place in order]


SCORED_QUESTIONS = 4  # questions whose scores a file keeps


def _question_scores(found: FileUnits, question: str) -> tuple[tuple[float, ...], float]:
    """Each unit's score for ``question`` but the window's share, and the best unit's score
    for the question's words (what the shares are of)."""
    known = found.scored.get(question)
    if known is not None:
        return known
    terms = list(dict.fromkeys(stem(term) for term in query_terms(question)))
    named = named_symbols(question)
    quoted = quoted_literals(question)
    count = len(found.units)
    average = sum(found.lengths) / count if count else 1.0
    counts = {term: found.term_places(term) for term in terms}  # lines per unit holding it
    weights = {}
    for term, held in counts.items():
        frequency = len(held)
        if frequency:
            weights[term] = math.log(1 + (count - frequency + 0.5) / (frequency + 0.5))
    # each term adds to the units it reaches, in the question's order, its words then its
    # name's share: every unit's sum is made in the order a unit-by-unit loop makes it
    raw = [0.0] * count
    norms: dict[int, float] = {}
    for term, weight in weights.items():
        for place, tf in counts[term].items():
            norm = norms.get(place)
            if norm is None:
                length = max(found.lengths[place], 1)
                norm = norms[place] = K1 * (1 - B + B * length / max(average, 1.0))
            raw[place] += weight * tf * (K1 + 1) / (tf + norm)
        for place in found.named.get(term, ()):
            raw[place] += NAME_WEIGHT * weight
    best = max(raw, default=0.0) or 1.0
    asked: list[float] = []
    for place, unit in enumerate(found.units):
        score = raw[place]
        if named & found.name_keys[place]:
            score += NAMED_SYMBOL * best
        if quoted and _holds_any(found, unit, quoted):
            score += QUOTED_TEXT * best
        asked.append(score)
    if len(found.scored) >= SCORED_QUESTIONS:
        found.scored.clear()
    result = found.scored[question] = (tuple(asked), best)
    return result


def chosen_units(
    found: FileUnits,
    question: str,
    windows: Sequence[Window] = (),
    lines: AbstractSet[int] = frozenset(),
) -> list[ScoredUnit]:
    """The best unit of the file, then up to ``FILE_UNITS`` in all that score within
    ``CLOSE_SHARE`` of it, while they fit ``FILE_LINES`` lines; past those, more scoring as
    close while all of them fit ``SCREEN_LINES`` (units of a few lines each)."""
    ranked = rank_units(found, question, windows, lines)
    if not ranked:
        return []
    chosen = ranked[:1]
    used = _size(ranked[0].unit)
    for item in ranked[1:]:
        if item.score <= 0 or item.score < CLOSE_SHARE * ranked[0].score:
            break
        past_count = len(chosen) >= FILE_UNITS
        if used + _size(item.unit) <= (SCREEN_LINES if past_count else FILE_LINES):
            chosen.append(item)
            used += _size(item.unit)
        elif past_count:
            break  # the screenful is full
    return chosen


def more_units(
    found: FileUnits,
    question: str,
    taken: Sequence[tuple[int, int]],
    lines: int,
) -> list[ScoredUnit]:
    """The file's next best units after those ``taken`` (their spans), best first, while
    they fit ``lines`` lines: what a context with room to spare shows of a chosen file."""
    spare: list[ScoredUnit] = []
    used = 0
    for item in rank_units(found, question):
        if (item.unit.start, item.unit.end) in taken:
            continue  # units no word matched come last, in file order: still the file's code
        if used + _size(item.unit) <= lines:
            spare.append(item)
            used += _size(item.unit)
    return spare


def _holds_any(found: FileCut, unit: Unit, texts: Sequence[str]) -> bool:
    """Whether a line of ``unit`` holds one of ``texts`` (none of which spans lines)."""
    lines = found.span(unit.start, unit.end)
    return any("\n" not in text and text in lines for text in texts)


def _size(unit: Unit) -> int:
    return unit.end - unit.start + 1


def unit_text(found: FileCut, unit: Unit) -> str:
    """The lines of ``unit``."""
    return found.span(unit.start, unit.end)
