"""Retrieval quality: run a set of questions with known answering files and score rankers.

A case file is JSON lines, one case per line::

    {"id": "sb-001", "question": "...", "files": ["server/webhook.js"], "root": "repos/slackbot",
     "class": "identifier", "dataset": "slackbot", "revision": "<commit>"}

``root`` is relative to the case file (default: the evaluation's root). ``class`` is one of
the query classes. Other keys (``commit``, ``rating`` of a case made from feedback) are kept
for the reader and ignored. A ``nomatch`` case has no files and succeeds when nothing is returned.
``revision`` (optional) is a commit of the git work tree at ``root``: the tree is checked
out there and the index refreshed before the case is asked, so a question from a
repository's history is asked against the code as it stood. ``dataset`` groups the figures
(default: the root's folder name).

Metrics are over distinct files in rank order: hit@1, hit@5, hit@k, recall@k and MRR. Every
ranker is judged in one pass over the cases, beside ``files``, a plain whole-file BM25
baseline that knows nothing of chunks, structure or code. With ``context``, each case also
packs the context a model would receive and records whether a gold file's own source lines
are in it (evidence recall) and how many tokens it used.

A case may also name the lines that answer it: ``"hunks": {"path": [[start, end], ...]}``
(1-based, inclusive; ``eval/prepare_history.py`` records the old side of the real change).
Such cases are judged at line level too: line-hit@1 and @5 (a source of the first one or
five files returned overlaps a gold hunk; a file's units count as one result, as its one
window does in the ``slackzilla`` profile) and, with ``context``, hunk
evidence (the packed context holds at least half of the non-trivial lines, 12 or more
characters stripped, of some gold hunk, read from the tree the case is asked against).
"""

from __future__ import annotations

import json
import math
import re
import statistics
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from szrag.base.config import RANKER_NAMES
from szrag.base.errors import ConfigError
from szrag.base.public import public, public_dict, rounded
from szrag.base.text import code_terms
from szrag.context import build_codebase_context, pack_repository_context
from szrag.context.plan import ContextPlan
from szrag.index import Index, load_index, refresh_index
from szrag.index.protocol import IndexStore
from szrag.rank.retrieve import DEFAULT_LIMIT, Source, retrieve

# "history": questions from repositories' history (eval/prepare_history.py); "feedback": questions
# people asked, with the files their feedback says answer them (szrag feedback export)
QUERY_CLASSES = ("exact", "identifier", "conceptual", "docs", "nomatch", "history", "feedback")
BASELINE = "files"  # the whole-file BM25 baseline, known to the harness only
EVAL_RANKERS = (*RANKER_NAMES, BASELINE)


@dataclass(frozen=True, slots=True)
class EvalCase:
    """One question and the files that answer it."""

    id: str
    question: str
    files: tuple[str, ...]
    root: Path
    query_class: str
    dataset: str = ""
    revision: str | None = None
    hunks: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()  # gold lines per file


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What the ranker returned for one case, and how good it was."""

    case: EvalCase
    retrieved: tuple[str, ...]
    rank: int | None  # 1-based rank of the first answering file
    recall: float
    seconds: float
    evidence: bool | None = None  # a gold file's source lines reached the packed context
    context_tokens: int | None = None
    line_rank: int | None = None  # 1-based place of the first file overlapping a gold hunk
    lines_judged: bool = False  # the ranker cites lines (the whole-file baseline does not)
    hunk_evidence: bool | None = None  # the packed context holds a gold hunk's lines

    def line_hit(self, k: int) -> bool | None:
        """A source of the first ``k`` files overlaps a gold hunk (None: not judged)."""
        if not self.lines_judged:
            return None
        return self.line_rank is not None and self.line_rank <= k

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
    evidence_recall: float | None = None  # over cases with answering files, when measured
    median_context_tokens: float | None = None
    line_cases: int = 0  # cases with gold hunks, over which the line figures are taken
    line_hit_at_1: float | None = None
    line_hit_at_5: float | None = None
    hunk_evidence: float | None = None

    def public_view(self) -> ShownMetrics:
        """The figures as a report shows them."""
        evidence = (
            EvidenceFigures(self.evidence_recall, self.median_context_tokens)
            if self.evidence_recall is not None
            else None
        )
        lines = (
            LineFigures(self.line_cases, self.line_hit_at_1, self.line_hit_at_5, self.hunk_evidence)
            if self.line_cases
            else None
        )
        return ShownMetrics(
            self.cases,
            self.hit_at_1,
            self.hit_at_5,
            self.hit_at_k,
            self.recall_at_k,
            self.mrr,
            evidence,
            lines,
        )


@dataclass
class EvalReport:
    """The outcome of one ranker over one set of cases."""

    ranker: str
    k: int
    overall: Metrics
    per_class: dict[str, Metrics]
    results: list[CaseResult] = field(default_factory=list)
    median_ms: float = 0.0
    p95_ms: float = 0.0
    per_dataset: dict[str, Metrics] = field(default_factory=dict)

    @property
    def failures(self) -> list[CaseResult]:
        """Cases whose answering files were not in the first k (or nomatch with results)."""
        return [result for result in self.results if not result.hit(self.k)]

    def public_view(self) -> ShownReport:
        """A JSON-ready summary with the failed cases."""
        return ShownReport(
            ranker=self.ranker,
            k=self.k,
            overall=self.overall,
            per_class=self.per_class,
            per_dataset=self.per_dataset,
            latency_ms=Latency(self.median_ms, self.p95_ms),
            failures=tuple(FailedCase.of(result) for result in self.failures),
        )

    def to_dict(self) -> dict[str, Any]:
        """The public form (:meth:`public_view`)."""
        return public_dict(self)


_FIGURE = rounded(3)


def _figure(name: str | None = None, **options: Any) -> dict[str, Any]:
    return public(name=name, convert=_FIGURE, **options)


def _maybe_figure(value: float | None) -> float | None:
    return None if value is None else _FIGURE(value)


@dataclass(frozen=True, slots=True)
class ShownMetrics:
    """Aggregate figures as a report shows them: the evidence figures when measured, the
    line figures over the cases with gold hunks when there are any."""

    cases: int
    hit_at_1: float = field(metadata=_figure("hit@1"))
    hit_at_5: float = field(metadata=_figure("hit@5"))
    hit_at_k: float = field(metadata=_figure("hit@k"))
    recall_at_k: float = field(metadata=_figure("recall@k"))
    mrr: float = field(metadata=_figure())
    evidence: EvidenceFigures | None = field(metadata=public(omit_none=True, spread=True))
    lines: LineFigures | None = field(metadata=public(omit_none=True, spread=True))


@dataclass(frozen=True, slots=True)
class EvidenceFigures:
    """Evidence recall of the packed context, and its median size in tokens."""

    evidence_recall: float = field(metadata=_figure())
    median_context_tokens: float | None


@dataclass(frozen=True, slots=True)
class LineFigures:
    """The line figures, over the cases with gold hunks (each shown when measured)."""

    line_cases: int
    line_hit_at_1: float | None = field(
        metadata=public(name="lineHit@1", omit_none=True, convert=_maybe_figure)
    )
    line_hit_at_5: float | None = field(
        metadata=public(name="lineHit@5", omit_none=True, convert=_maybe_figure)
    )
    hunk_evidence: float | None = field(metadata=public(omit_none=True, convert=_maybe_figure))


@dataclass(frozen=True, slots=True)
class Latency:
    """Median and 95th percentile of the time a case took, in milliseconds."""

    median: float = field(metadata=public(convert=rounded(2)))
    p95: float = field(metadata=public(convert=rounded(2)))


@dataclass(frozen=True, slots=True)
class FailedCase:
    """A case whose answering files were not found, as a report lists it."""

    id: str
    dataset: str
    query_class: str = field(metadata=public(name="class"))
    question: str
    expected: tuple[str, ...]
    retrieved: tuple[str, ...]

    @classmethod
    def of(cls, result: CaseResult) -> FailedCase:
        case = result.case
        return cls(
            case.id, case.dataset, case.query_class, case.question, case.files, result.retrieved
        )


@dataclass(frozen=True, slots=True)
class ShownReport:
    """An evaluation report as ``szrag eval --json`` shows it."""

    ranker: str
    k: int
    overall: Metrics
    per_class: dict[str, Metrics]
    per_dataset: dict[str, Metrics]
    latency_ms: Latency
    failures: tuple[FailedCase, ...]


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
        revision = raw.get("revision")
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"{where}: question must be a non-empty string")
        if not isinstance(files, list) or not all(isinstance(item, str) for item in files):
            raise ConfigError(f"{where}: files must be a list of paths")
        if query_class not in QUERY_CLASSES:
            raise ConfigError(f"{where}: class must be one of {', '.join(QUERY_CLASSES)}")
        if (query_class == "nomatch") != (not files):
            raise ConfigError(f"{where}: nomatch cases, and only they, have no files")
        if revision is not None and not (
            isinstance(revision, str) and re.fullmatch(r"[0-9a-fA-F]{7,64}", revision)
        ):
            raise ConfigError(f"{where}: revision must be a commit id")
        hunks = _hunks_of(raw.get("hunks", {}), where)
        case_id = str(raw.get("id") or f"line-{number}")
        if case_id in seen:
            raise ConfigError(f"{where}: duplicate id {case_id}")
        seen.add(case_id)
        root_value = raw.get("root")
        root = (
            (path.parent / root_value)
            if isinstance(root_value, str)
            else (default_root or path.parent)
        ).resolve()
        dataset = str(raw.get("dataset") or root.name)
        cases.append(
            EvalCase(case_id, question, tuple(files), root, query_class, dataset, revision, hunks)
        )
    if not cases:
        raise ConfigError(f"{path}: no cases")
    return cases


def _hunks_of(value: object, where: str) -> tuple[tuple[str, tuple[tuple[int, int], ...]], ...]:
    """``{"path": [[start, end], ...]}`` as a tuple; a clear error for any other shape."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: hunks must map paths to lists of [start, end]")
    hunks = []
    for path, spans in value.items():
        if not isinstance(spans, list) or not all(
            isinstance(span, list)
            and len(span) == 2
            and all(isinstance(end, int) and not isinstance(end, bool) for end in span)
            and 1 <= span[0] <= span[1]
            for span in spans
        ):
            raise ConfigError(
                f"{where}: hunks of {path} must be [start, end] pairs, 1 <= start <= end"
            )
        hunks.append((str(path), tuple((span[0], span[1]) for span in spans)))
    return tuple(hunks)


def line_rank(case: EvalCase, sources: Sequence[tuple[str, int, int]]) -> int | None:
    """The 1-based place, among the distinct files of ``(path, start, end)`` sources in rank
    order, of the first file whose sources overlap a gold hunk: a file's units (at most
    three, about a window's lines) are one result, as its single window was."""
    spans = dict(case.hunks)
    places: dict[str, int] = {}
    for path, start, end in sources:
        place = places.setdefault(path, len(places) + 1)
        if any(start <= last and first <= end for first, last in spans.get(path, ())):
            return place
    return None


MIN_HUNK_LINE = 12  # a stripped line shorter than this ("}", "return x") proves nothing


def hunk_lines(case: EvalCase) -> list[list[str]]:
    """Each gold hunk's lines worth finding, read from the tree the case is asked against:
    those of 12 or more characters stripped, or every non-blank line of a hunk that has none."""
    found: list[list[str]] = []
    for path, spans in case.hunks:
        try:
            lines = (case.root / path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for first, last in spans:
            stripped = [line.strip() for line in lines[first - 1 : last]]
            telling = [line for line in stripped if len(line) >= MIN_HUNK_LINE]
            chosen = telling or [line for line in stripped if line]
            if chosen:
                found.append(chosen)
    return found


def holds_hunk(hunks: Sequence[Sequence[str]], text: str) -> bool:
    """True when ``text`` holds at least half of the lines of one of ``hunks``."""
    present = {line.strip() for line in text.splitlines()}
    return any(2 * sum(line in present for line in hunk) >= len(hunk) for hunk in hunks)


def _share(
    results: Sequence[CaseResult], value: Callable[[CaseResult], bool | None]
) -> float | None:
    judged = [verdict for verdict in map(value, results) if verdict is not None]
    return sum(judged) / len(judged) if judged else None


def _aggregate(results: Sequence[CaseResult], k: int) -> Metrics:
    count = len(results)
    if not count:
        return Metrics(0, 0.0, 0.0, 0.0, 0.0, 0.0)
    judged = [result for result in results if result.evidence is not None]
    tokens = [result.context_tokens for result in results if result.context_tokens is not None]
    lined = [result for result in results if result.case.hunks]
    return Metrics(
        cases=count,
        hit_at_1=sum(result.hit(1) for result in results) / count,
        hit_at_5=sum(result.hit(5) for result in results) / count,
        hit_at_k=sum(result.hit(k) for result in results) / count,
        recall_at_k=sum(result.recall for result in results) / count,
        mrr=sum(result.reciprocal_rank for result in results) / count,
        evidence_recall=(
            sum(bool(result.evidence) for result in judged) / len(judged) if judged else None
        ),
        median_context_tokens=statistics.median(tokens) if tokens else None,
        line_cases=len(lined),
        line_hit_at_1=_share(lined, lambda result: result.line_hit(1)),
        line_hit_at_5=_share(lined, lambda result: result.line_hit(5)),
        hunk_evidence=_share(lined, lambda result: result.hunk_evidence),
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


# --- the whole-file baseline ----------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
BASELINE_K1 = 1.2
BASELINE_B = 0.75


def _file_terms(text: str) -> Counter[str]:
    return Counter(_WORD.findall(code_terms(text).lower()))


class WholeFileBM25:
    """Okapi BM25 over whole files (k1 1.2, b 0.75), identifiers split into words as well.

    It sees the same files as the rankers, read from the work tree; term counts are kept per
    content hash, so moving a tree from one commit to the next re-reads only what changed.
    """

    def __init__(self) -> None:
        self._by_hash: dict[str, tuple[Counter[str], int]] = {}
        self._files: dict[str, str] = {}  # path -> content hash
        self._frequency: Counter[str] = Counter()
        self._length = 0

    def sync(self, index: Index) -> None:
        """Follow the index: add, replace and drop files so the statistics match it."""
        current = {stored.path: stored.sha256 for stored in index.files()}
        for path, digest in list(self._files.items()):
            if current.get(path) != digest:
                self._drop(path)
        for path, digest in current.items():
            if path not in self._files:
                self._add(index.root, path, digest)

    def _add(self, root: Path, path: str, digest: str) -> None:
        entry = self._by_hash.get(digest)
        if entry is None:
            try:
                text = (root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return
            terms = _file_terms(text)
            entry = self._by_hash[digest] = (terms, sum(terms.values()))
        self._files[path] = digest
        self._frequency.update(entry[0].keys())
        self._length += entry[1]

    def _drop(self, path: str) -> None:
        terms, length = self._by_hash[self._files.pop(path)]
        self._frequency.subtract(terms.keys())
        self._length -= length

    def rank(self, question: str, limit: int) -> list[str]:
        """The ``limit`` best files for ``question``, best first (ties by path)."""
        count = len(self._files)
        if not count:
            return []
        average = self._length / count
        terms = list(dict.fromkeys(_WORD.findall(code_terms(question).lower())))
        weights = {
            term: math.log(
                1 + (count - self._frequency[term] + 0.5) / (self._frequency[term] + 0.5)
            )
            for term in terms
            if self._frequency[term] > 0
        }
        scores: dict[str, float] = {}
        for path, digest in self._files.items():
            tf, length = self._by_hash[digest]
            score = 0.0
            for term, weight in weights.items():
                found = tf.get(term)
                if found:
                    norm = BASELINE_K1 * (1 - BASELINE_B + BASELINE_B * length / average)
                    score += weight * found * (BASELINE_K1 + 1) / (found + norm)
            if score > 0:
                scores[path] = score
        return sorted(scores, key=lambda path: (-scores[path], path))[:limit]


# --- running ----------------------------------------------------------------------------------


def require_clean(root: Path) -> None:
    """ConfigError when the work tree at ``root`` holds changes git would lose: a case pinned
    to a revision checks it out by force and cleans the tree, which is only right for a tree
    kept for evaluation (``eval/prepare_history.py`` makes such trees), never for someone's
    own checkout with work in it."""
    completed = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
    )
    if completed.returncode != 0:
        message = completed.stderr.strip().splitlines()[-1:] or ["git failed"]
        raise ConfigError(f"{root}: cannot read its git status: {message[0]}")
    # a file that is gone from the work tree holds no work (a clone kept for evaluation
    # starts with no checkout at all); an edited or untracked one does
    changed = [
        line[3:]
        for line in completed.stdout.splitlines()
        if line[3:]
        and not line[3:].startswith(".rag/")
        and not ("D" in line[:2] and not (root / line[3:]).exists())
    ]
    if changed:
        shown = ", ".join(changed[:3]) + (
            f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        )
        raise ConfigError(
            f"{root} has uncommitted or untracked files ({shown}); cases pinned to a revision "
            "check the tree out by force and clean it, so evaluate over a clone kept for it, "
            "or commit or stash the work first"
        )


def check_out(root: Path, revision: str) -> None:
    """Move the git work tree at ``root`` to ``revision`` (a detached, forced checkout) and
    remove every file git does not track there but the index."""
    for arguments in (
        ["checkout", "--quiet", "--force", "--detach", revision],
        ["clean", "-ffdxq", "--exclude=/.rag"],
    ):
        completed = subprocess.run(
            ["git", "-C", str(root), *arguments], capture_output=True, text=True
        )
        if completed.returncode != 0:
            message = completed.stderr.strip().splitlines()[-1:] or ["git failed"]
            raise ConfigError(f"{root}: cannot check out {revision}: {message[0]}")


def has_evidence(files: Iterable[str], packed_chunks: Iterable[tuple[str | None, bool]]) -> bool:
    """True when an included chunk carries source lines of one of ``files``."""
    wanted = set(files)
    return any(path in wanted and lines for path, lines in packed_chunks)


@dataclass
class _Dataset:
    index: Index
    baseline: WholeFileBM25 | None = None
    reader: IndexStore | None = None  # where the cases are read from, when not ``index``


def evaluate_rankers(
    cases: Iterable[EvalCase],
    rankers: Sequence[str | None],
    *,
    k: int = 8,
    context: bool = False,
    budget: int | None = None,
    progress: Callable[[int, EvalCase], None] | None = None,
    read_through: Callable[[Index, EvalCase], IndexStore] | None = None,
) -> list[EvalReport]:
    """Run every case through each ranker (None: the profile's) in one pass; one report each.

    ``read_through``, given each case's freshly refreshed index, returns the store its
    questions are read from instead (another store the index is copied into, say).

    With ``context``, every ranker's sources are also packed (those of the first
    ``DEFAULT_LIMIT`` files, every unit of each, as an answer would use) and the evidence
    recall recorded.
    """
    for name in rankers:
        if name is not None and name not in EVAL_RANKERS:
            raise ConfigError(f"unknown ranker {name!r}: choose one of {', '.join(EVAL_RANKERS)}")
    opened: dict[Path, _Dataset] = {}
    results: list[list[CaseResult]] = [[] for _ in rankers]
    try:
        for number, case in enumerate(cases, 1):
            if progress is not None:
                progress(number, case)
            dataset = _open_for(case, opened, need_baseline=BASELINE in rankers)
            if read_through is not None:
                dataset.reader = read_through(dataset.index, case)
            for slot, name in enumerate(rankers):
                results[slot].append(_run_case(case, dataset, name, k, context, budget))
    finally:
        for dataset in opened.values():
            dataset.index.close()
    return [
        _report(name or "profile", k, found) for name, found in zip(rankers, results, strict=True)
    ]


def _open_for(case: EvalCase, opened: dict[Path, _Dataset], *, need_baseline: bool) -> _Dataset:
    dataset = opened.get(case.root)
    if dataset is None:
        if not case.root.is_dir():
            raise ConfigError(f"case {case.id}: root {case.root} is not a directory")
        if case.revision:
            require_clean(case.root)  # the first checkout of this tree in this run
            check_out(case.root, case.revision)
        index = load_index(case.root)
        index.keep_in_memory()
        dataset = opened[case.root] = _Dataset(index)
    elif case.revision:
        check_out(case.root, case.revision)
        refresh_index(dataset.index)
    if need_baseline:
        if dataset.baseline is None:
            dataset.baseline = WholeFileBM25()
        dataset.baseline.sync(dataset.index)
    return dataset


def _run_case(
    case: EvalCase,
    dataset: _Dataset,
    ranker: str | None,
    k: int,
    context: bool,
    budget: int | None,
) -> CaseResult:
    index = dataset.reader or dataset.index
    started = time.perf_counter()
    if ranker == BASELINE:
        assert dataset.baseline is not None
        paths = dataset.baseline.rank(case.question, max(k, DEFAULT_LIMIT))
        sources = []
    else:
        sources = retrieve(case.question, max(k, DEFAULT_LIMIT), index=index, ranker=ranker)
        paths = [source.path for source in sources]
    elapsed = time.perf_counter() - started
    result = score_case(case, paths, k, elapsed)
    if case.hunks and ranker != BASELINE:
        spans = [(source.path, source.start, source.end) for source in sources]
        result = replace(result, line_rank=line_rank(case, spans), lines_judged=True)
    if not context or ranker == BASELINE or not case.files:
        return result
    chosen = first_files(sources, DEFAULT_LIMIT)
    expanded = build_codebase_context(case.question, index, chosen)
    plan = ContextPlan.of(index.config, {}, budget=budget)
    packed = pack_repository_context(
        chosen, expanded, budget=plan.budget, counter=plan.counter(), packing=plan.packing
    )
    carried = [(chunk.path, chunk.carries_source) for chunk in packed.chunks if chunk.included]
    return replace(
        result,
        evidence=has_evidence(case.files, carried),
        context_tokens=packed.tokens,
        hunk_evidence=holds_hunk(hunk_lines(case), packed.text) if case.hunks else None,
    )


def first_files(sources: Sequence[Source], files: int) -> list[Source]:
    """The sources of the first ``files`` files among ``sources``: what an answer packs when it
    retrieves that many (each file with all its units, not the first sources counted alone)."""
    kept: set[str] = set()
    chosen = []
    for source in sources:
        if source.path not in kept:
            if len(kept) == files:
                continue
            kept.add(source.path)
        chosen.append(source)
    return chosen


def _report(ranker: str, k: int, results: list[CaseResult]) -> EvalReport:
    timings = sorted(result.seconds * 1000 for result in results)
    per_class = {
        name: _aggregate([result for result in results if result.case.query_class == name], k)
        for name in QUERY_CLASSES
        if any(result.case.query_class == name for result in results)
    }
    datasets = list(dict.fromkeys(result.case.dataset for result in results))
    per_dataset = {
        name: _aggregate([result for result in results if result.case.dataset == name], k)
        for name in datasets
    }
    return EvalReport(
        ranker=ranker,
        k=k,
        overall=_aggregate(results, k),
        per_class=per_class,
        results=results,
        median_ms=statistics.median(timings) if timings else 0.0,
        p95_ms=timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))] if timings else 0.0,
        per_dataset=per_dataset if len(per_dataset) > 1 else {},
    )


def evaluate(
    cases: Iterable[EvalCase],
    *,
    k: int = 8,
    ranker: str | None = None,
    context: bool = False,
    budget: int | None = None,
    read_through: Callable[[Index, EvalCase], IndexStore] | None = None,
) -> EvalReport:
    """Run every case through ``retrieve`` with ``ranker`` and aggregate the metrics."""
    return evaluate_rankers(
        cases, [ranker], k=k, context=context, budget=budget, read_through=read_through
    )[0]
