"""FTS5's tokens of one chunk as a PostgreSQL ``tsvector``, and their counts read back.

Each token FTS5 indexed becomes a lexeme, byte for byte (no PostgreSQL parser or dictionary
touches it), at a position of its own: the four columns (path, heading, symbols, body) follow
one another with one unused position between them, so a phrase never spans two, and each
position carries its column as the weight A, B, C or D. Counting a lexeme's positions by
weight gives back how often FTS5 saw it in each column, which is what its ``bm25`` sums.

A tsvector keeps at most 256 positions of a lexeme and none past 16,383; a chunk that needs
more (a data file repeating one number, a very long window) keeps its exact counts beside
(``counts``), and a token longer than tsvector allows is stored, and looked up, as a digest.
A phrase (a term FTS5 splits into several tokens) is counted from the positions kept, so in
such a chunk it may count fewer instances than FTS5 does; the bm25 ranker's terms are single
words, one token each, and are always counted exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

WEIGHTS = "ABCD"  # path, heading, symbols, body: the chunk_terms columns in order
MAX_POSITION = 16383  # a tsvector's last position (later ones are stored as it)
MAX_POSITIONS = 256  # positions a tsvector keeps of one lexeme
MAX_LEXEME_BYTES = 1024  # a longer token is kept as a digest (tsvector allows 2,047 bytes)
DIGEST_MARK = "~"  # never part of a token of the unicode61 tokenizer
_SHORT_TOKEN = MAX_LEXEME_BYTES // 4  # characters of a token that cannot pass the bound


def lexeme(token: str) -> str:
    """The lexeme that stands for an FTS5 token, in the tsvector and in a tsquery alike."""
    data = token.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_LEXEME_BYTES:
        return token
    return DIGEST_MARK + hashlib.sha256(data).hexdigest()


def quoted(text: str) -> str:
    """``text`` as one quoted lexeme of a tsvector or tsquery literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass(frozen=True, slots=True)
class ChunkVector:
    """What a chunk's row holds of its tokens: the tsvector literal, and the exact count of
    each lexeme by column when the tsvector cannot hold them all (else None)."""

    text: str
    counts: dict[str, list[int]] | None


def chunk_vector(sizes: Sequence[int], instances: Iterable[tuple[str, int, int]]) -> ChunkVector:
    """The tsvector of one chunk whose columns hold ``sizes`` tokens, from FTS5's
    ``instances`` of it: (token, column number, offset in that column)."""
    bases: list[int] = []
    running = 1  # positions count from one
    for size in sizes:
        bases.append(running)
        running += size + 1
    # A publish turns millions of instances into tsvectors: one dictionary step each, the
    # lexeme worked out once per token, and counts only for a chunk that needs them.
    places: dict[str, list[tuple[int, int]]] = {}
    for token, column, offset in instances:
        held = places.get(token)
        if held is None:
            held = places[token] = []
        held.append((bases[column] + offset, column))
    exact = True
    parts: list[str] = []
    for token, held in places.items():
        name = token if len(token) <= _SHORT_TOKEN else lexeme(token)
        held.sort()
        kept = [place for place in held if place[0] < MAX_POSITION][: MAX_POSITIONS - 1]
        exact = exact and len(kept) == len(held)
        shown = ",".join(f"{position}{WEIGHTS[column]}" for position, column in kept)
        parts.append(f"{quoted(name)}:{shown}" if shown else quoted(name))
    if exact:
        return ChunkVector(" ".join(parts), None)
    counts: dict[str, list[int]] = {}
    for token, held in places.items():
        found = counts.setdefault(
            token if len(token) <= _SHORT_TOKEN else lexeme(token), [0] * len(WEIGHTS)
        )
        for _, column in held:
            found[column] += 1
    return ChunkVector(" ".join(parts), counts)


def column_counts(weights: Sequence[str]) -> list[int]:
    """A lexeme's instances in each column, from the weights of its positions."""
    found = [0] * len(WEIGHTS)
    for weight in weights:
        found[WEIGHTS.index(weight)] += 1
    return found


Positions = Mapping[int, int]  # position -> column, of one lexeme in one chunk


def positions_of(positions: Sequence[int], weights: Sequence[str]) -> dict[int, int]:
    """A lexeme's positions in one chunk with the column of each."""
    return {
        position: WEIGHTS.index(weight) for position, weight in zip(positions, weights, strict=True)
    }


def phrase_counts(tokens: Sequence[Positions]) -> list[int]:
    """How often the phrase of these tokens (each one's positions) occurs in each column:
    every place where each token follows the one before, as FTS5 matches a phrase."""
    found = [0] * len(WEIGHTS)
    if not tokens:
        return found
    for position, column in tokens[0].items():
        if all(position + step in token for step, token in enumerate(tokens[1:], 1)):
            found[column] += 1
    return found
