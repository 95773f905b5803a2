"""A question without a repository, searched in every repository: their sources on one scale.

Each repository ranks its own files by BM25 over its own chunks, so a term's weight (its
inverse document frequency) is that repository's: a word rare in one repository and common in
another counts for much where it is rare, even when the other repository is the one about it,
and the scores of two repositories do not compare. Each repository's retrieval is kept as it
is (its files, their order, their units); only its files' scores are put on a shared scale by
two factors, each computed from how many chunks of each repository hold each of the
question's terms (``TermCounts``, one read per repository), and the files of all the
repositories are then ordered by the rescaled score (``merge``):

* ``shared_weight``: the weight of the question's terms over every repository's chunks taken
  together, against their weight in the file's own repository (the inverse document
  frequencies of the terms it holds, summed), squared. On the real-history set
  (``eval/routing.py``, docs/PERFORMANCE.md) the plain ratio takes unscoped file hit@5 from
  0.560 to 0.630, its square to 0.677: a file's score is its chunks' BM25 plus a coverage
  bonus that is itself weighted by the repository's own frequencies, so one ratio corrects
  it by half;
* ``likelihood_weight``: how likely the repository is to have produced the question's words
  (query likelihood, each repository a language model of its chunks with Dirichlet smoothing
  towards all of them), as the square root of its per-word likelihood ratio against the
  likeliest repository: 1 for the likeliest, less for the others (0.677 -> 0.705; a quarter
  or three quarters instead of the half give 0.695 and 0.677).

Ties keep the configured order of the repositories, then each repository's own order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from szrag.answer.elsewhere import MergedSource
from szrag.rank.bm25 import idf
from szrag.rank.retrieve import Source

SMOOTHING = 100  # Dirichlet's mu, in chunks: the same choices from 10 to 1,000
SHARED_POWER = 2  # the shared weight's ratio, squared (see the module)
LIKELIHOOD_SHARE = 0.5  # the square root of the per-word likelihood ratio


@dataclass(frozen=True, slots=True)
class TermCounts:
    """How many chunks a repository (or all of them) holds, and how many hold each term."""

    chunks: int
    frequencies: Mapping[str, int]

    @staticmethod
    def together(counts: Sequence[TermCounts], terms: Sequence[str]) -> TermCounts:
        """The counts of several repositories as one corpus."""
        return TermCounts(
            sum(item.chunks for item in counts),
            {term: sum(item.frequencies.get(term, 0) for item in counts) for term in terms},
        )


@dataclass(frozen=True, slots=True)
class Searched:
    """One repository's retrieval for an unscoped question, with its term counts."""

    repository: str
    counts: TermCounts
    sources: tuple[Source, ...]


def shared_weight(terms: Sequence[str], own: TermCounts, every: TermCounts) -> float:
    """The question's terms weighted over every repository against their weight in its own,
    squared (1 when the repository holds none of them: nothing of its scores to rescale)."""
    present = [term for term in terms if own.frequencies.get(term)]
    local = sum(idf(own.chunks, own.frequencies[term]) for term in present)
    if not local:
        return 1.0
    shared = sum(idf(every.chunks, every.frequencies.get(term, 0)) for term in present)
    return float((shared / local) ** SHARED_POWER)


def log_likelihood(terms: Sequence[str], own: TermCounts, every: TermCounts) -> float:
    """The log-likelihood of the question's words in one repository, its chunks a language
    model smoothed towards all repositories' (words no repository holds left out)."""
    total = every.chunks or 1
    return sum(
        math.log(
            (own.frequencies.get(term, 0) + SMOOTHING * every.frequencies[term] / total)
            / (own.chunks + SMOOTHING)
        )
        for term in terms
        if every.frequencies.get(term)
    )


def likelihood_weight(likelihood: float, best: float, words: int) -> float:
    """The square root of a repository's per-word likelihood ratio against the likeliest
    repository's (``best``): 1 for the likeliest, below 1 for the others."""
    return math.exp(LIKELIHOOD_SHARE * (likelihood - best) / max(words, 1))


def merge(terms: Sequence[str], searched: Sequence[Searched], limit: int) -> list[MergedSource]:
    """The sources of the ``limit`` best files of every repository's retrieval, best first by
    their score on the shared scale (see the module), each naming its repository."""
    if not searched:
        return []
    every = TermCounts.together([item.counts for item in searched], terms)
    likelihoods = [log_likelihood(terms, item.counts, every) for item in searched]
    best = max(likelihoods)
    ranked: list[tuple[float, int, int, str, list[Source]]] = []
    for order, (item, likelihood) in enumerate(zip(searched, likelihoods, strict=True)):
        factor = shared_weight(terms, item.counts, every) * likelihood_weight(
            likelihood, best, len(terms)
        )
        for rank, (path, sources) in enumerate(files_of(item.sources).items()):
            ranked.append((-sources[0].score * factor, order, rank, path, sources))
    ranked.sort(key=lambda entry: entry[:3])
    return [
        MergedSource(searched[order].repository, source, round(-negated, 3))
        for negated, order, _, _, sources in ranked[:limit]
        for source in sources
    ]


def likeliest(terms: Sequence[str], searched: Sequence[Searched]) -> list[tuple[str, float]]:
    """Each repository with the log-likelihood of the question's words, likeliest first (ties
    in the configured order)."""
    every = TermCounts.together([item.counts for item in searched], terms)
    judged = [
        (-log_likelihood(terms, item.counts, every), order, item.repository)
        for order, item in enumerate(searched)
    ]
    judged.sort()
    return [(name, -negated) for negated, _, name in judged]


def files_of(sources: Sequence[Source]) -> dict[str, list[Source]]:
    """A retrieval's sources by file, in the order of each file's first source."""
    found: dict[str, list[Source]] = {}
    for source in sources:
        found.setdefault(source.path, []).append(source)
    return found
