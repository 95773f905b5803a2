"""The second stage: once a file is chosen, which of its units answers the question.

The first stage ranks files by their 60-line windows across the whole corpus. Inside a
chosen file, each unit (``szrag.code.units``: a function, a method, a class's own lines, a
section) is scored by the question alone: BM25 over the file's units for the question's
words in the unit's lines, its definition's name and class counted again, a named
identifier matching the definition counted most, text the question quotes (a message, an
option) found verbatim in the unit counted as much as the best unit's words, and a small
share for overlapping the window the first stage chose (its corpus-wide judgement). The best unit is returned with
its real span, with up to two more of the same file that score close, within about a
window's lines; a context with room to spare takes the next ones (``more_units``).
"""

from __future__ import annotations

import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

from szrag.base.text import stem, symbol_key, tokens, tokens_by_line
from szrag.code.model import CodeRecord
from szrag.code.units import Unit, file_units
from szrag.index.protocol import IndexStore
from szrag.rank.words import named_symbols, query_terms, quoted_literals

K1 = 1.2
B = 0.5  # a longer unit is judged less harshly than a longer document: a change spreads
NAME_WEIGHT = 1.0  # a question word in the definition's own name counts once more
NAMED_SYMBOL = 4.0  # times the best body score: an identifier the question writes out
QUOTED_TEXT = 1.0  # times the best body score: a unit holding text the question quotes
WINDOW_SHARE = 0.25  # of the best score, for lying in the window the first stage chose
# A file answers with its best unit and, while they fit these lines (about a window's), up
# to two more scoring at least this share of the best: a change rarely sits in one function.
FILE_LINES = 80
FILE_UNITS = 3
CLOSE_SHARE = 0.3
PROSE_TYPES = frozenset({"markdown", "docs", "text"})


@dataclass(frozen=True, slots=True)
class FileUnits:
    """A file's lines and units, with each unit's word counts, made once per content."""

    lines: tuple[str, ...]
    units: tuple[Unit, ...]
    words: tuple[Counter[str], ...]  # stemmed word -> lines of the unit holding it
    name_words: tuple[frozenset[str], ...]
    name_keys: tuple[frozenset[str], ...]
    lengths: tuple[int, ...]  # non-blank lines


@dataclass(frozen=True, slots=True)
class ScoredUnit:
    """A unit and how well it answers the question."""

    unit: Unit
    score: float


KEPT_FILES = 1024  # files whose units a long-running face keeps, whatever the generation
# and the lines they may hold together: a file's units keep its lines and each unit's word
# counts, about 65 KB a file on the benchmarks' corpus, so 1,024 large files were 60 MiB
KEPT_LINES = 150_000


class _UnitCache:
    """Each file's units by content hash, the least recently used dropped past a bound (in
    files and in lines): a file unchanged by a refresh keeps the units made before it."""

    def __init__(self, max_lines: int = KEPT_LINES) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, str], FileUnits | None] = OrderedDict()
        self._lines = 0
        self._max_lines = max_lines

    def get(self, key: tuple[str, str]) -> tuple[bool, FileUnits | None]:
        with self._lock:
            if key not in self._kept:
                return False, None
            self._kept.move_to_end(key)
            return True, self._kept[key]

    def put(self, key: tuple[str, str], found: FileUnits | None) -> None:
        with self._lock:
            if key in self._kept:
                self._lines -= _held(self._kept.pop(key))
            self._kept[key] = found
            self._lines += _held(found)
            while len(self._kept) > 1 and (
                len(self._kept) > KEPT_FILES or self._lines > self._max_lines
            ):
                self._lines -= _held(self._kept.popitem(last=False)[1])


def _held(found: FileUnits | None) -> int:
    return len(found.lines) if found is not None else 0


def units_of(index: IndexStore, path: str, kind: str) -> FileUnits | None:
    """The units of the indexed file ``path`` (None when the index holds no lines of it)."""
    stored = index.files_by_path().get(path) if index.in_memory else index.get_file(path)
    if stored is None:
        return None
    cache: _UnitCache | None = index.carried("units.by_content", None)
    if cache is None:
        cache = _UnitCache()
        index.carry("units.by_content", cache)
    key = (path, stored.sha256)
    known, found = cache.get(key)
    if known:
        return found
    lines = index.lines(path)
    if lines:
        code = stored.code  # decoded at each read: once here
        record = CodeRecord.from_dict(code) if code else None
        definitions = record.functions if record is not None else ()
        found = _measured(lines, file_units(lines, definitions, prose=kind in PROSE_TYPES))
    cache.put(key, found)
    return found


def _stemmed_lines(lines: Sequence[str]) -> list[set[str]]:
    """The distinct stems of each line's words (a file repeats its words: each is stemmed
    once, and each line's set made once however many units hold the line)."""
    stems: dict[str, str] = {}
    stemmed: list[set[str]] = []
    for line_words in tokens_by_line("\n".join(lines)):
        found = set()
        for word in line_words:
            word_stem = stems.get(word)
            if word_stem is None:
                word_stem = stems[word] = stem(word)
            found.add(word_stem)
        stemmed.append(found)
    return stemmed


def _measured(lines: Sequence[str], units: Sequence[Unit]) -> FileUnits:
    by_line = _stemmed_lines(lines)
    words: list[Counter[str]] = []
    lengths: list[int] = []
    names: list[frozenset[str]] = []
    keys: list[frozenset[str]] = []
    for unit in units:
        # stem -> the unit's lines holding it
        words.append(Counter(chain.from_iterable(by_line[unit.start - 1 : unit.end])))
        lengths.append(sum(1 for line in lines[unit.start - 1 : unit.end] if line.strip()))
        name = unit.name or ""
        names.append(frozenset(stem(word) for word in tokens(name)))
        keys.append(frozenset(symbol_key(part) for part in name.split(".") if part))
    return FileUnits(
        tuple(lines), tuple(units), tuple(words), tuple(names), tuple(keys), tuple(lengths)
    )


def rank_units(
    found: FileUnits, question: str, window: tuple[int, int] | None = None
) -> list[ScoredUnit]:
    """The file's units best first for ``question`` (ties in file order)."""
    terms = list(dict.fromkeys(stem(term) for term in query_terms(question)))
    named = named_symbols(question)
    quoted = quoted_literals(question)
    count = len(found.units)
    average = sum(found.lengths) / count if count else 1.0
    weights = {}
    for term in terms:
        frequency = sum(1 for words in found.words if term in words)
        if frequency:
            weights[term] = math.log(1 + (count - frequency + 0.5) / (frequency + 0.5))
    raw: list[float] = []
    for place in range(count):
        words = found.words[place]
        norm = K1 * (1 - B + B * max(found.lengths[place], 1) / max(average, 1.0))
        score = 0.0
        for term, weight in weights.items():
            tf = words.get(term, 0)
            if tf:
                score += weight * tf * (K1 + 1) / (tf + norm)
            if term in found.name_words[place]:
                score += NAME_WEIGHT * weight
        raw.append(score)
    best = max(raw, default=0.0) or 1.0
    scored: list[ScoredUnit] = []
    for place, unit in enumerate(found.units):
        score = raw[place]
        if named & found.name_keys[place]:
            score += NAMED_SYMBOL * best
        if quoted and _holds_any(found.lines, unit, quoted):
            score += QUOTED_TEXT * best
        if window is not None:
            overlap = min(unit.end, window[1]) - max(unit.start, window[0]) + 1
            if overlap > 0:
                score += WINDOW_SHARE * best * overlap / (unit.end - unit.start + 1)
        scored.append(ScoredUnit(unit, score))
    order = sorted(range(count), key=lambda place: (-scored[place].score, place))
    return [scored[place] for place in order]


def chosen_units(
    found: FileUnits, question: str, window: tuple[int, int] | None = None
) -> list[ScoredUnit]:
    """The best unit of the file, then up to ``FILE_UNITS`` in all that score within
    ``CLOSE_SHARE`` of it, while they fit ``FILE_LINES`` lines."""
    ranked = rank_units(found, question, window)
    if not ranked:
        return []
    chosen = ranked[:1]
    used = _size(ranked[0].unit)
    for item in ranked[1:]:
        if len(chosen) >= FILE_UNITS or item.score <= 0:
            break
        if item.score < CLOSE_SHARE * ranked[0].score:
            break
        if used + _size(item.unit) <= FILE_LINES:
            chosen.append(item)
            used += _size(item.unit)
    return chosen


def more_units(
    found: FileUnits,
    question: str,
    window: tuple[int, int] | None,
    taken: Sequence[tuple[int, int]],
    lines: int,
) -> list[ScoredUnit]:
    """The file's next best units after those ``taken`` (their spans), best first, while
    they fit ``lines`` lines: what a context with room to spare shows of a chosen file."""
    spare: list[ScoredUnit] = []
    used = 0
    for item in rank_units(found, question, window):
        if (item.unit.start, item.unit.end) in taken:
            continue  # units no word matched come last, in file order: still the file's code
        if used + _size(item.unit) <= lines:
            spare.append(item)
            used += _size(item.unit)
    return spare


def _holds_any(lines: Sequence[str], unit: Unit, texts: Sequence[str]) -> bool:
    return any(text in line for line in lines[unit.start - 1 : unit.end] for text in texts)


def _size(unit: Unit) -> int:
    return unit.end - unit.start + 1


def unit_text(found: FileUnits, unit: Unit) -> str:
    """The lines of ``unit``."""
    return "\n".join(found.lines[unit.start - 1 : unit.end])
