"""Feedback on kept answers, and the evaluation cases it becomes (``szrag.service.feedback``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from szrag.answer import Question
from szrag.base.errors import FeedbackError, UnknownAnswer
from szrag.commands import Identity
from szrag.conversations import Feedback, Rating, ShownSource, Turn
from szrag.service.evaluate import load_cases
from szrag.service.feedback import cited_files, feedback_cases, give_feedback, list_feedback
from szrag.service.host import Host, answer_question

QUESTION = "How does the webhook deploy work?"


def a_feedback(
    answer_id: str,
    rating: Rating,
    *,
    right: tuple[str, ...] = (),
    cited: tuple[str, ...] = ("server/webhook.js",),
    question: str = QUESTION,
    at: float = 1.0,
    commit: str | None = "0123456789abcdef0123456789abcdef01234567",
) -> Feedback:
    return Feedback(
        answer_id=answer_id,
        conversation_id="c",
        rating=rating,
        right_files=right,
        comment=None,
        question=question,
        sources=(ShownSource("server/webhook.js", 1, 25),),
        cited_files=cited,
        commit=commit,
        given_at=at,
        given_by="ann",
    )


def test_feedback_keeps_what_the_answer_showed_and_replaces_a_second_word(
    retrieval_repo: Path,
) -> None:
    host = Host.from_env(retrieval_repo)
    answer = answer_question(Question(QUESTION, with_ai=False, remember=True), host)
    answer_id = answer.answer_id or ""

    give_feedback(host, answer_id, "up", identity=Identity(user_id="ann"))
    changed = give_feedback(
        host,
        answer_id,
        Rating.DOWN,
        right_files=["server/auth.js", "./server/auth.js", str(retrieval_repo / "README.md")],
        comment="  the check is in auth  ",
        identity=Identity(user_id="ann"),
    )
    give_feedback(host, answer_id, "up", identity=Identity(user_id="bob"))

    assert changed.right_files == ("server/auth.js", "README.md")  # indexed form, distinct
    assert changed.comment == "the check is in auth"
    assert changed.question == QUESTION and changed.conversation_id == answer.conversation_id
    assert [f"{s.path}:{s.start}-{s.end}" for s in answer.sources] == [
        str(source) for source in changed.sources
    ]
    assert [(item.given_by, item.rating) for item in list_feedback(host)] == [
        ("ann", Rating.DOWN),
        ("bob", Rating.UP),
    ]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"rating": "meh"}, FeedbackError, "up or down, not 'meh'"),
        ({"comment": "x" * 2001}, FeedbackError, "longer than 2000"),
        (
            {"right_files": ["webhook.js", "nope.txt"]},
            FeedbackError,
            "did you mean server/webhook.js",
        ),
        ({"right_files": ["../outside.js"]}, FeedbackError, "outside the indexed root"),
        ({"right_files": [f"f{n}.js" for n in range(21)]}, FeedbackError, "at most 20"),
        ({"owner": "bob"}, UnknownAnswer, "no answer"),
    ],
)
def test_refused_feedback_says_why_and_keeps_nothing(
    retrieval_repo: Path, options: dict[str, object], error: type[Exception], message: str
) -> None:
    host = Host.from_env(retrieval_repo)
    answer = answer_question(
        Question(QUESTION, with_ai=False, remember=True, identity=Identity(user_id="ann")), host
    )
    rating = str(options.pop("rating", "down"))

    with pytest.raises(error, match=message):
        give_feedback(host, answer.answer_id or "", rating, **options)  # type: ignore[arg-type]
    assert list_feedback(host) == []


def test_the_cited_files_are_the_sources_the_answer_names() -> None:
    sources = (
        ShownSource("server/webhook.js", 1, 25),
        ShownSource("docs/security.md", 1, 9),
        ShownSource("server/webhook.js", 30, 40),
    )
    turn = Turn("a", "c", "q", "See docs/security.md:1-9.", "answered", sources, None, 1.0)

    assert cited_files(turn) == ("docs/security.md",)
    silent = Turn("a", "c", "q", "It is complicated.", "answered", sources, None, 1.0)
    assert cited_files(silent) == ("server/webhook.js", "docs/security.md")


def test_cases_follow_the_rating_and_the_right_files() -> None:
    exported = feedback_cases(
        [
            a_feedback("up1", Rating.UP),  # the cited files
            a_feedback("down1", Rating.DOWN, right=("server/auth.js",), question="who logs in?"),
            a_feedback("down2", Rating.DOWN),  # what was right is not known
            a_feedback("up2", Rating.UP, right=("docs/security.md",), question="secrets?"),
        ],
        root="../repo",
    )

    assert exported.left_out == 1
    assert [(case["id"], case["files"], case["rating"]) for case in exported.cases] == [
        ("feedback-up1", ["server/webhook.js"], "up"),
        ("feedback-down1", ["server/auth.js"], "down"),
        ("feedback-up2", ["docs/security.md"], "up"),
    ]
    assert all(case["root"] == "../repo" and "revision" not in case for case in exported.cases)


def test_the_same_question_and_files_make_one_case_the_latest(tmp_path: Path) -> None:
    twice = [
        a_feedback("old", Rating.UP, at=1.0, commit="a" * 40),
        a_feedback("other", Rating.UP, question="something else?", at=2.0),
        a_feedback("new", Rating.UP, at=3.0, commit="b" * 40),
    ]

    merged = feedback_cases(twice)
    pinned = feedback_cases(twice, pin=True)

    assert [case["id"] for case in merged.cases] == ["feedback-other", "feedback-new"]
    assert [case["revision"] for case in pinned.cases] == [  # each commit its own case
        "a" * 40,
        "0123456789abcdef0123456789abcdef01234567",
        "b" * 40,
    ]
    cases_file = tmp_path / "cases.jsonl"
    cases_file.write_text(pinned.jsonl())
    loaded = load_cases(cases_file, default_root=tmp_path)
    assert [(case.dataset, case.query_class, case.revision) for case in loaded] == [
        ("feedback", "feedback", "a" * 40),
        ("feedback", "feedback", "0123456789abcdef0123456789abcdef01234567"),
        ("feedback", "feedback", "b" * 40),
    ]
    assert json.loads(pinned.jsonl().splitlines()[0])["commit"] == "a" * 40
