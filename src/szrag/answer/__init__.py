"""The answer pipeline: one admitted :class:`Question` through commands, retrieval, context
and the model.

The order is the spec's: a command named by the caller or inferred from the question runs
first; then retrieval of sources and images, the codebase context (skipped when the question
asks to run a command), packing within the token budget, and finally either a local answer or
the model with its tool loop. Every step records an activity as it happens.

A face builds a :class:`Question` and hands it to its host (``szrag.service.host.Host``): the host
admits it once (the command's permit, the conversation's owner) and audits the ask whatever
happens; :func:`answer` here does the rest. The :class:`~szrag.answer.results.Answer` it returns holds:

* with the model: the answer, response rounds, sources, images, command, activities and
  usage; when the model request failed, the same plus ``error`` (code, message), a failed
  ``ai`` activity and a local answer that says what went wrong; nothing is raised.
* ``with_ai=False``: a local answer and the packed repository context.
* no ``AI_API_KEY`` in the host's settings: a local answer that says how to configure a key,
  after a failed ``ai`` activity.

A conversation (``conversation_id``, or ``remember=True`` to start one): the kept turns are
read, a follow-up is searched with the questions it follows, the model gets the earlier turns
as messages (within the conversation token bound, oldest dropped first), and the new turn is
kept; the answer then carries ``answer_id`` and ``conversation_id``.

The listeners' ``on_activity`` receives each :class:`~szrag.base.activity.Activity` as it is
created; ``on_token(text, round)`` the model's text as it streams, with the 1-based number of
the model request it belongs to (a round that ends in tool calls is followed by a
``reasoning`` activity with ``metadata.kind == "intermediate"``). Local answers are not
streamed: they are complete in the result.

The names below are imported on first use, so a face that only builds a question pays for
none of the pipeline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from szrag.base.lazy import lazy_getattr

if TYPE_CHECKING:
    from szrag.answer.command import withheld_question
    from szrag.answer.evidence import Evidence, gather_evidence
    from szrag.answer.local import KEY_HELP, excerpt, local_answer
    from szrag.answer.model import smaller_budget, window_advice
    from szrag.answer.pipeline import answer, debug
    from szrag.answer.protocol import AnswerHost
    from szrag.answer.question import Admitted, Listeners, NamedCommand, Question

_HOMES = {
    "Admitted": "szrag.answer.question",
    "AnswerHost": "szrag.answer.protocol",
    "Evidence": "szrag.answer.evidence",
    "KEY_HELP": "szrag.answer.local",
    "Listeners": "szrag.answer.question",
    "NamedCommand": "szrag.answer.question",
    "Question": "szrag.answer.question",
    "answer": "szrag.answer.pipeline",
    "debug": "szrag.answer.pipeline",
    "excerpt": "szrag.answer.local",
    "gather_evidence": "szrag.answer.evidence",
    "local_answer": "szrag.answer.local",
    "smaller_budget": "szrag.answer.model",
    "window_advice": "szrag.answer.model",
    "withheld_question": "szrag.answer.command",
}

__getattr__ = lazy_getattr(__name__, _HOMES)

__all__ = [
    "KEY_HELP",
    "Admitted",
    "AnswerHost",
    "Evidence",
    "Listeners",
    "NamedCommand",
    "Question",
    "answer",
    "debug",
    "excerpt",
    "gather_evidence",
    "local_answer",
    "smaller_budget",
    "window_advice",
    "withheld_question",
]
