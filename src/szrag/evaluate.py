"""Retrieval quality: run a set of questions with known answering files and score a ranker.

A case file is JSON lines, one case per line::

    {"id": "sb-001", "question": "...", "files": ["server/webhook.js"], "root": "repos/slackbot",
     "class": "identifier"}

``root`` is relative to the case file (default: the evaluation's root). ``class`` is one of the
five query classes. A ``nomatch`` case has no files and succeeds when nothing is returned.
Metrics are over distinct files in rank order: hit@1, hit@5, hit@k, recall@k and MRR.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from szrag.errors import ConfigError
from szrag.index import Index, load_index
from szrag.retrieve import retrieve

QUERY_CLASSES = ("exact", "identifier", "conceptual", "docs", "nomatch")


@dataclass(frozen=True, slots=True)
class EvalCase:
    """One question and the files that answer it."""

    id: str
    question: str
    files: tuple[str, ...]
    root: Path
    query_class: str


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What the ranker returned for one case, and how good it was."""

    case: EvalCase
    retrieved: tuple[str, ...]
    rank: int | None  # 1-based rank of the first answering file
    recall: float
    seconds: float

    def hit(self, k: int) -> bool:
        """An answering file in the first ``k`` (for nomatch: nothing returned)."""
        if not self.case.files:
            return not self.retrieved
        return self.rank is not None and self.rank <= k

    @property
    def reciprocal_rank(self) -> float:
        """1/rank of the first answering file (nomatch: 1 when nothing returned)."""
        if not self.case.files:
            return 1.0 if not self.retrieved else 0.0
        return 1.0 / self.rank if self.rank else 0.0


@dataclass(frozen=True, slots=True)
class Metrics:
    """Aggregate figures over a group of cases."""

    cases: int
    hit_at_1: float
    hit_at_5: float
    hit_at_k: float
    recall_at_k: float
    mrr: float


@dataclass
class EvalReport:
    """The outcome of one evaluation run."""

    ranker: str
    k: int
    overall: Metrics
    per_class: dict[str, Metrics]
    results: list[CaseResult] = field(default_factory=list)
    median_ms: float = 0.0
    p95_ms: float = 0.0

    @property
    def failures(self) -> list[CaseResult]:
        """Cases whose answering files were not in the first k (or nomatch with results)."""
        return [result for result in self.results if not result.hit(self.k)]

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready summary with the failed cases."""
        return {
            "ranker": self.ranker,
            "k": self.k,
            "overall": _metrics_dict(self.overall),
            "per_class": {name: _metrics_dict(metrics) for name, metrics in self.per_class.items()},
            "latency_ms": {"median": round(self.median_ms, 2), "p95": round(self.p95_ms, 2)},
            "failures": [
                {
                    "id": result.case.id,
                    "class": result.case.query_class,
                    "question": result.case.question,
                    "expected": list(result.case.files),
                    "retrieved": list(result.retrieved),
                }
                for result in self.failures
            ],
        }


def _metrics_dict(metrics: Metrics) -> dict[str, float]:
    return {
        "cases": metrics.cases,
        "hit@1": round(metrics.hit_at_1, 3),
        "hit@5": round(metrics.hit_at_5, 3),
        "hit@k": round(metrics.hit_at_k, 3),
        "recall@k": round(metrics.recall_at_k, 3),
        "mrr": round(metrics.mrr, 3),
    }


def load_cases(path: Path, *, default_root: Path | None = None) -> list[EvalCase]:
    """Read and validate a JSON-lines case file; errors name the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read: {error.strerror}") from error
    cases: list[EvalCase] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{where}: invalid JSON: {error.msg}") from error
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: a case must be a JSON object")
        question = raw.get("question")
        files = raw.get("files", [])
        query_class = raw.get("class", "conceptual")
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"{where}: question must be a non-empty string")
        if not isinstance(files, list) or not all(isinstance(item, str) for item in files):
            raise ConfigError(f"{where}: files must be a list of paths")
        if query_class not in QUERY_CLASSES:
            raise ConfigError(f"{where}: class must be one of {', '.join(QUERY_CLASSES)}")
        if (query_class == "nomatch") != (not files):
            raise ConfigError(f"{where}: nomatch cases, and only they, have no files")
        case_id = str(raw.get("id") or f"line-{number}")
        if case_id in seen:
            raise ConfigError(f"{where}: duplicate id {case_id}")
        seen.add(case_id)
        root_value = raw.get("root")
        root = (
            (path.parent / root_value)
            if isinstance(root_value, str)
            else (default_root or path.parent)
        )
        cases.append(EvalCase(case_id, question, tuple(files), root.resolve(), query_class))
    if not cases:
        raise ConfigError(f"{path}: no cases")
    return cases


def _aggregate(results: Sequence[CaseResult], k: int) -> Metrics:
    count = len(results)
    if not count:
        return Metrics(0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return Metrics(
        cases=count,
        hit_at_1=sum(result.hit(1) for result in results) / count,
        hit_at_5=sum(result.hit(5) for result in results) / count,
        hit_at_k=sum(result.hit(k) for result in results) / count,
        recall_at_k=sum(result.recall for result in results) / count,
        mrr=sum(result.reciprocal_rank for result in results) / count,
    )


def score_case(
    case: EvalCase, retrieved: Sequence[str], k: int, seconds: float = 0.0
) -> CaseResult:
    """Judge one ranked list of paths against the case's answering files."""
    distinct = tuple(dict.fromkeys(retrieved))[:k]
    wanted = set(case.files)
    rank = next((number for number, path in enumerate(distinct, 1) if path in wanted), None)
    if wanted:
        recall = len(wanted & set(distinct)) / len(wanted)
    else:
        recall = 1.0 if not distinct else 0.0
    return CaseResult(case, distinct, rank, recall, seconds)


def evaluate(cases: Iterable[EvalCase], *, k: int = 8, ranker: str | None = None) -> EvalReport:
    """Run every case through ``retrieve`` with ``ranker`` and aggregate the metrics."""
    indexes: dict[Path, Index] = {}
    results: list[CaseResult] = []
    try:
        for case in cases:
            index = indexes.get(case.root)
            if index is None:
                if not case.root.is_dir():
                    raise ConfigError(f"case {case.id}: root {case.root} is not a directory")
                index = indexes[case.root] = load_index(case.root)
                index.keep_in_memory()
            started = time.perf_counter()
            sources = retrieve(case.question, k, index=index, ranker=ranker)
            elapsed = time.perf_counter() - started
            results.append(score_case(case, [source.path for source in sources], k, elapsed))
    finally:
        for index in indexes.values():
            index.close()
    timings = sorted(result.seconds * 1000 for result in results)
    per_class = {
        name: _aggregate([result for result in results if result.case.query_class == name], k)
        for name in QUERY_CLASSES
        if any(result.case.query_class == name for result in results)
    }
    return EvalReport(
        ranker=ranker or "profile",
        k=k,
        overall=_aggregate(results, k),
        per_class=per_class,
        results=results,
        median_ms=statistics.median(timings) if timings else 0.0,
        p95_ms=timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))] if timings else 0.0,
    )
