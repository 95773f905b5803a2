"""Feedback from Slack: the thumbs on an answer, and the form asking which files were right.

A click on ``szrag_feedback_up`` or ``szrag_feedback_down`` (the answer id as the button's
value) keeps the clicker's rating of that answer in the conversation store; a thumbs down
then opens a form (``views.open``) where the files that would have answered the question can
be named, one per line, with a comment. Its submission replaces the rating with one that
carries those files; a path the index does not hold is shown in the form as an error, with
the indexed paths it may mean. The feedback is the same as ``POST /api/feedback`` and
``szrag feedback`` keep (:func:`szrag.service.feedback.give_feedback`).

Anyone who can see an answer may rate it (Slack signed the click); each person's rating of an
answer replaces what they said before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from szrag.base.public import public, public_dict
from szrag.commands import Identity
from szrag.conversations import Feedback
from szrag.service.feedback import MAX_COMMENT_CHARS, give_feedback
from szrag.service.host import Host

RIGHT_FILES_VIEW = "szrag_right_files"
FILES_BLOCK, FILES_INPUT = "right_files", "paths"
COMMENT_BLOCK, COMMENT_INPUT = "comment", "text"
_SEPARATORS = re.compile(r"[\s,]+")


def keep_feedback(
    host: Host,
    answer_id: str,
    rating: str,
    *,
    right_files: Sequence[str] = (),
    comment: str | None = None,
    identity: Identity,
) -> Feedback:
    """Keep ``identity``'s rating of the answer ``answer_id`` (whoever asked it: the click
    came signed from a person who sees the answer); ConversationError when the answer is no
    longer kept, the rating is not one or a right file is not indexed."""
    return give_feedback(
        host, answer_id, rating, right_files=right_files, comment=comment, identity=identity
    )


def feedback_thanks(rating: str, right_files: Sequence[str] = ()) -> str:
    """The private reply to a rating."""
    if right_files:
        named = ", ".join(f"`{path}`" for path in right_files[:5])
        more = f" and {len(right_files) - 5} more" if len(right_files) > 5 else ""
        return f":pray: Thanks: {named}{more} kept as the right files for this question."
    if rating == "up":
        return ":pray: Thanks: your :+1: is kept with this answer."
    return ":pray: Thanks: your :-1: is kept with this answer."


@dataclass(frozen=True, slots=True)
class FormContext:
    """What the right-files form carries for its answer (its ``private_metadata``): the
    answer, and the channel and thread to thank in."""

    answer_id: str
    channel: str
    thread_ts: str | None = field(metadata=public(name="thread"))


def right_files_view(answer_id: str, *, channel: str, thread_ts: str | None) -> dict[str, Any]:
    """The form asking which files would have answered the question."""
    metadata = json.dumps(public_dict(FormContext(answer_id, channel, thread_ts)))
    return {
        "type": "modal",
        "callback_id": RIGHT_FILES_VIEW,
        "private_metadata": metadata,
        "title": {"type": "plain_text", "text": "Which file was right?"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Skip"},
        "blocks": [
            {
                "type": "input",
                "block_id": FILES_BLOCK,
                "label": {"type": "plain_text", "text": "Files that answer the question"},
                "hint": {"type": "plain_text", "text": "Paths in the repository, one per line."},
                "element": {
                    "type": "plain_text_input",
                    "action_id": FILES_INPUT,
                    "multiline": True,
                    "placeholder": {"type": "plain_text", "text": "src/gateway.js"},
                },
            },
            {
                "type": "input",
                "block_id": COMMENT_BLOCK,
                "optional": True,
                "label": {"type": "plain_text", "text": "What was wrong?"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": COMMENT_INPUT,
                    "multiline": True,
                    "max_length": MAX_COMMENT_CHARS,
                },
            },
        ],
    }


@dataclass(frozen=True, slots=True)
class RightFiles:
    """What the form was submitted with, and where the thanks go."""

    answer_id: str
    right_files: tuple[str, ...]
    comment: str | None
    channel: str | None
    thread_ts: str | None
    error_block: str = FILES_BLOCK  # where Slack shows a refusal


def right_files_from(view: Mapping[str, Any]) -> RightFiles:
    """The submitted form ``view`` read back."""
    try:
        metadata = json.loads(str(view.get("private_metadata") or "{}"))
    except ValueError:
        metadata = {}
    if not isinstance(metadata, dict):
        metadata = {}
    values = (view.get("state") or {}).get("values") or {}
    paths = _value(values, FILES_BLOCK, FILES_INPUT)
    comment = _value(values, COMMENT_BLOCK, COMMENT_INPUT).strip() or None
    return RightFiles(
        answer_id=str(metadata.get("answerId") or ""),
        right_files=tuple(path for path in _SEPARATORS.split(paths) if path),
        comment=comment,
        channel=str(metadata["channel"]) if metadata.get("channel") else None,
        thread_ts=str(metadata["thread"]) if metadata.get("thread") else None,
    )


def _value(values: Mapping[str, Any], block: str, action: str) -> str:
    entry = (values.get(block) or {}).get(action) or {}
    return str(entry.get("value") or "")
