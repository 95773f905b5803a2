"""Evidence from the other repositories of a service: a question asked of none is answered by
the repository of the best file of all (``Service.route``), and the files of the other
repositories that the merged ranking put among the best are offered beside its own, each
named by its repository, within a share of the context budget."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from szrag.base.activity import COMPLETED, ActivityRecorder, plural
from szrag.base.public import public
from szrag.base.redact import redact
from szrag.rank.retrieve import Source

if TYPE_CHECKING:  # evidence.py holds these sources: it imports this module
    from szrag.answer.evidence import Evidence

ELSEWHERE_FILES = 3  # the other repositories' files offered, at most
ELSEWHERE_SHARE = 4  # they take at most a quarter of the context budget


@dataclass(frozen=True, slots=True)
class MergedSource:
    """A source of an unscoped search: the repository it is from, the source as that
    repository retrieved it, and its file's score on the scale shared by all of them."""

    repository: str
    source: Source = field(metadata=public(spread=True))
    shared_score: float

    def redacted(self) -> MergedSource:
        """This source with the secrets in its text replaced."""
        return replace(self, source=self.source.redacted())

    @property
    def cited(self) -> str:
        """Where it is, as an answer cites it: ``repository:path:start-end``."""
        return f"{self.repository}:{self.source.path}:{self.source.start}-{self.source.end}"


def offered_elsewhere(
    merged: Sequence[MergedSource], chosen: str, files: int
) -> list[MergedSource]:
    """The sources of the first ``files`` files of other repositories than ``chosen`` among
    the merged ranking's (which holds the best files of all, best first)."""
    kept: list[tuple[str, str]] = []
    offered = []
    for item in merged:
        if item.repository == chosen:
            continue
        key = (item.repository, item.source.path)
        if key not in kept:
            if len(kept) == files:
                continue
            kept.append(key)
        offered.append(item)
    return offered


def elsewhere_reserve(
    offered: Sequence[MergedSource], budget: int, count: Callable[[str], int]
) -> int:
    """The tokens of the context budget the other repositories' sources take: what their
    blocks weigh, at most a share of ``budget``."""
    if not offered:
        return 0
    return min(budget // ELSEWHERE_SHARE, count(elsewhere_text(offered)))


def elsewhere_text(offered: Sequence[MergedSource]) -> str:
    """The other repositories' sources as the model reads them, redacted."""
    blocks = []
    for item in offered:
        source = item.source
        heading = f" ({source.heading})" if source.heading else ""
        blocks.append(f"--- {item.cited}{heading}\n{redact(source.text, path=source.path)}")
    return "\n\n".join(blocks)


async def join_elsewhere(
    evidence: Evidence,
    offered: Sequence[MergedSource],
    reserve: int,
    count: Callable[[str], int],
    recorder: ActivityRecorder,
) -> Evidence:
    """``evidence`` with the other repositories' sources that fit ``reserve`` tokens, whole
    (a source that does not fit is left out, the next ones still tried), with an activity."""
    if not offered:
        return evidence
    taken: list[MergedSource] = []
    used = 0
    for item in offered:
        weight = count(elsewhere_text([item]))
        if used + weight <= reserve:
            taken.append(item)
            used += weight
    repositories = list(dict.fromkeys(item.repository for item in taken))
    files = {(item.repository, item.source.path) for item in taken}
    left_out = len(offered) - len(taken)
    message = (
        f"Other repositories: {plural(len(files), 'file')} of {', '.join(repositories)} "
        f"beside this repository's ({used} tokens)"
        if taken
        else "Other repositories: nothing fit beside this repository's sources"
    )
    if left_out:
        message += f"; {plural(left_out, 'source')} left out to stay in {reserve}"
    await recorder.record(
        "context",
        COMPLETED,
        message,
        metadata={
            "repositories": repositories,
            "sources": len(taken),
            "tokens": used,
            "budget": reserve,
        },
    )
    shown = tuple(item.redacted() for item in taken)
    return dataclasses.replace(evidence, elsewhere=shown, elsewhere_text=elsewhere_text(taken))
