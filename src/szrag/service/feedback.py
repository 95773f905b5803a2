"""Feedback on answers, and the evaluation cases it becomes.

Every kept answer has an id (``answerId``); feedback names it with a rating (``up`` or
``down``), optionally the files that were right ("the right file was ...": indexed paths,
checked against the index, near misses suggested) and a comment. It is kept in the conversation
store with what it is about, copied from the turn: the question, the sources shown (paths and
lines), the files the answer cited, the commit. One identity's feedback on one answer replaces
what it said before; feedback outlives the turn it refers to.

``feedback_cases`` turns feedback into cases of the format ``szrag eval`` reads, in the
dataset ``feedback`` (class ``feedback``):

* a rating with right files expects those files (``down``: the answer missed them; ``up``:
  these were the ones that mattered);
* an ``up`` without right files expects the files the answer cited: the sources shown whose
  path the answer names, or every source shown when it names none (a local answer lists them
  all);
* a ``down`` without right files says what was wrong but not what was right: it gives no case
  and is counted as left out.

A case carries the repository of the service it was about as ``repository`` (none for a
server of one repository) and the commit it was answered at as ``commit``; with ``pin`` the
commit is also the case's ``revision``, which ``szrag eval`` checks out (forcibly, cleaning untracked files) in the
case's root before asking: pin only for a root that is a disposable clone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from szrag.base.errors import FeedbackError, PathError
from szrag.commands.model import Identity
from szrag.conversations import Feedback, Rating, Turn
from szrag.service.host import Host
from szrag.service.service import Service
from szrag.structure.queries import indexed_path

MAX_COMMENT_CHARS = 2000
MAX_RIGHT_FILES = 20
DATASET = "feedback"
CASE_CLASS = "feedback"


def parse_rating(value: object) -> Rating:
    """``up`` or ``down`` (any case); FeedbackError otherwise."""
    text = value.strip().lower() if isinstance(value, str) else ""
    try:
        return Rating(text)
    except ValueError:
        raise FeedbackError(f"the rating must be up or down, not {str(value)[:40]!r}") from None


def give_feedback(
    host: Host,
    answer_id: str,
    rating: Rating | str,
    *,
    right_files: Iterable[str] = (),
    comment: str | None = None,
    identity: Identity | None = None,
    owner: str | None = None,
) -> Feedback:
    """Keep ``identity``'s feedback on the answer ``answer_id`` of ``host``'s store.

    ``right_files`` are checked against the host's index (a path it does not hold is a
    FeedbackError that suggests the indexed paths it may mean); ``owner``, when given, must
    own the answer's conversation (else the answer is unknown, as for the API's callers)."""
    chosen = parse_rating(rating)
    text = (comment or "").strip() or None
    if text is not None and len(text) > MAX_COMMENT_CHARS:
        raise FeedbackError(f"the comment is longer than {MAX_COMMENT_CHARS} characters")
    wanted = [str(path) for path in right_files]
    if len(wanted) > MAX_RIGHT_FILES:
        raise FeedbackError(f"name at most {MAX_RIGHT_FILES} right files, not {len(wanted)}")
    store = host.conversations
    turn = store.turn(answer_id, owner=owner)
    files = _indexed(wanted, host)
    feedback = Feedback(
        answer_id=turn.answer_id,
        conversation_id=turn.conversation_id,
        rating=chosen,
        right_files=files,
        comment=text,
        question=turn.question,
        sources=turn.sources,
        cited_files=cited_files(turn),
        commit=turn.commit,
        given_at=store.clock(),
        given_by=(identity or Identity.local()).user_id,
    )
    return store.add_feedback(feedback)


def list_feedback(host: Host) -> list[Feedback]:
    """Every feedback kept for ``host``'s repository, oldest first."""
    return host.conversations.feedback()


def _indexed(paths: Sequence[str], host: Host) -> tuple[str, ...]:
    """``paths`` as the index holds them, distinct; FeedbackError naming every one it lacks."""
    if not paths:
        return ()
    found: list[str] = []
    problems: list[str] = []
    with host.opened_index() as index:
        for path in paths:
            try:
                found.append(indexed_path(path, index))
            except PathError as error:
                problems.append(error.message)
    if problems:
        raise FeedbackError("; ".join(problems))
    return tuple(dict.fromkeys(found))


def cited_files(turn: Turn) -> tuple[str, ...]:
    """The files of the sources ``turn``'s answer names by path, in the order shown; every
    source's file when it names none."""
    shown = list(dict.fromkeys(source.path for source in turn.sources))
    named = [path for path in shown if path in turn.answer]
    return tuple(named or shown)


@dataclass(frozen=True, slots=True)
class FeedbackCases:
    """Evaluation cases made from feedback, and how much feedback gave none."""

    cases: tuple[dict[str, Any], ...]
    left_out: int  # a down without right files: nothing to expect

    def jsonl(self) -> str:
        """The cases as a JSON-lines case file (``szrag eval`` reads it)."""
        return "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in self.cases)


def feedback_cases(
    feedback: Iterable[Feedback], *, root: str | None = None, pin: bool = False
) -> FeedbackCases:
    """The evaluation cases ``feedback`` gives (see the module); ``root`` is written into
    each case (relative to the case file, or absolute). The same question expecting the same
    files (at the same commit, when pinned) gives one case: the latest feedback's."""
    chosen: dict[tuple[Any, ...], Feedback] = {}
    left_out = 0
    for item in sorted(feedback, key=lambda entry: entry.given_at):
        files = item.expected_files
        if not files:
            left_out += 1
            continue
        key = (item.repository, item.question.strip(), files, item.commit if pin else None)
        chosen.pop(key, None)  # the latest feedback stands, in its own place
        chosen[key] = item
    cases: list[dict[str, Any]] = []
    taken: set[str] = set()
    for item in chosen.values():
        case_id = f"{DATASET}-{item.answer_id}"
        number = 1
        while case_id in taken:
            number += 1
            case_id = f"{DATASET}-{item.answer_id}-{number}"
        taken.add(case_id)
        case: dict[str, Any] = {
            "id": case_id,
            "question": item.question,
            "files": list(item.expected_files),
            "class": CASE_CLASS,
            "dataset": DATASET,
            "rating": item.rating.value,
        }
        if root is not None:
            case["root"] = root
        if item.repository:
            case["repository"] = item.repository
        if item.commit:
            case["commit"] = item.commit
            if pin:
                case["revision"] = item.commit
        cases.append(case)
    return FeedbackCases(tuple(cases), left_out)


def export_feedback(host: Host, *, out: Path | None = None, pin: bool = False) -> FeedbackCases:
    """The cases of every feedback on ``host``'s repository, their ``root`` relative to the
    folder of ``out`` (the case file to be written) or absolute without one."""
    return feedback_cases(list_feedback(host), root=_case_root(host.root, out), pin=pin)


def service_feedback(service: Service) -> list[Feedback]:
    """Every feedback ``service``'s store keeps, repository by repository in the order
    configured, each repository's oldest first (no index is opened)."""
    store = service.conversations
    return [item for name in service.names() for item in store.for_repository(name).feedback()]


def export_service_feedback(
    service: Service, *, out: Path | None = None, pin: bool = False
) -> FeedbackCases:
    """The cases of every feedback ``service`` keeps, each with its ``repository`` and that
    repository's folder as its ``root`` (relative to the folder of ``out`` when given)."""
    cases: list[dict[str, Any]] = []
    left_out = 0
    for name in service.names():
        kept = service.conversations.for_repository(name).feedback()
        made = feedback_cases(kept, root=_case_root(service.spec(name).path, out), pin=pin)
        cases.extend(made.cases)
        left_out += made.left_out
    return FeedbackCases(tuple(cases), left_out)


def _case_root(root: Path, out: Path | None) -> str:
    """``root`` as a case names it: relative to the case file's folder, or absolute."""
    resolved = root.resolve()
    if out is None:
        return resolved.as_posix()
    return Path(os.path.relpath(resolved, out.resolve().parent)).as_posix()
