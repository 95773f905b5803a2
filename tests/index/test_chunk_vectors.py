"""A chunk's tsvector and exact counts, against the plain reading of what they must hold:
each instance at its column's base plus its offset, a lexeme's positions sorted and cut at
tsvector's bounds, exact counts only when something was cut."""

from __future__ import annotations

import random

from szrag.index.pg.vectors import (
    MAX_LEXEME_BYTES,
    MAX_POSITION,
    MAX_POSITIONS,
    WEIGHTS,
    chunk_vector,
    lexeme,
    quoted,
)


def expected(
    sizes: list[int], instances: list[tuple[str, int, int]]
) -> tuple[str, dict[str, list[int]] | None]:
    bases = [sum(size + 1 for size in sizes[:column]) for column in range(len(sizes))]
    places: dict[str, list[tuple[int, int]]] = {}
    counts: dict[str, list[int]] = {}
    for token, column, offset in instances:
        places.setdefault(lexeme(token), []).append((bases[column] + offset + 1, column))
        counts.setdefault(lexeme(token), [0] * len(WEIGHTS))[column] += 1
    parts, exact = [], True
    for name, held in places.items():
        kept = [place for place in sorted(held) if place[0] < MAX_POSITION][: MAX_POSITIONS - 1]
        exact = exact and len(kept) == len(held)
        shown = ",".join(f"{position}{WEIGHTS[column]}" for position, column in kept)
        parts.append(f"{quoted(name)}:{shown}" if shown else quoted(name))
    return " ".join(parts), None if exact else counts


def test_vectors_hold_what_the_instances_say() -> None:
    rng = random.Random(7)
    tokens = [
        "a",
        "deploy",
        "it's",
        "back\\slash",
        "é" * 300,
        "z" * 256,
        "x" * (MAX_LEXEME_BYTES + 1),
    ]
    for trial in range(600):
        sizes = [rng.randint(0, 30) for _ in range(4)]
        if trial % 10 == 0:  # a body longer than a tsvector's positions reach
            sizes[3] = rng.randint(MAX_POSITION, MAX_POSITION + 500)
        instances = [
            (rng.choice(tokens), column, offset)
            for column in range(4)
            for offset in range(sizes[column])
            if rng.random() < 0.6
        ]
        if trial % 7 == 0:  # one token more often than a tsvector keeps
            sizes[3] = max(sizes[3], MAX_POSITIONS + 50)
            instances += [("a", 3, offset) for offset in range(MAX_POSITIONS + 50)]
        rng.shuffle(instances)
        vector = chunk_vector(sizes, instances)
        assert (vector.text, vector.counts) == expected(sizes, instances), trial
