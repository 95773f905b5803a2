"""What earlier turns give a new question: words for retrieval and messages for the model.

Retrieval: a follow-up leans on what was asked before ("and where is that called from?"
names nothing itself), so a question that is short (at most two content terms) or brief and
anaphoric (at most three content terms, with ``it``, ``that``, ``those``... or opening with
``and``, ``also``, ``what about``...) is searched together with the question before it, and
with the one before that while those are follow-ups too (three questions at most). Any other
question is searched as it is, and a question without earlier turns always is: retrieval
outside a conversation is unchanged.

The model: earlier turns become user and assistant messages before the question, newest kept
first within a token budget (the oldest are dropped first). A turn the model did not write
(retrieval alone, a failed request) is given as the sources it showed, not as its long
listing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from szrag.context.plan import MESSAGE_OVERHEAD
from szrag.conversations.model import Turn
from szrag.rank.words import query_terms

SHORT_TERMS = 2  # a question with at most this many content terms is a follow-up
BRIEF_TERMS = 3  # ... and one with at most this many that points back ("that", "it")
MAX_QUERY_QUESTIONS = 3  # the follow-up and at most two questions before it
MAX_QUERY_CHARS = 8000
ANAPHORA = frozenset(
    {"it", "its", "it's", "itself", "that", "this", "these", "those", "them", "they"}
    | {"their", "there", "here", "one", "ones", "same", "above", "previous", "earlier"}
    | {"former", "latter", "else", "such", "he", "she", "his", "her"}
)
OPENERS = frozenset({"and", "also", "but", "so", "then", "or", "plus", "why"})
OPENING_PAIRS = frozenset({("what", "about"), ("how", "about"), ("what", "else"), ("how", "come")})
_WORD = re.compile(r"[a-z][a-z']*")


def follows_up(question: str) -> bool:
    """Whether ``question`` reads as a follow-up that needs the question before it."""
    terms = query_terms(question)
    if len(terms) <= SHORT_TERMS:
        return True
    if len(terms) > BRIEF_TERMS:
        return False
    words = _WORD.findall(question.lower())
    if not words:
        return False
    opens = words[0] in OPENERS or tuple(words[:2]) in OPENING_PAIRS
    return opens or not ANAPHORA.isdisjoint(words)


def followed_questions(question: str, turns: Sequence[Turn]) -> tuple[str, ...]:
    """The earlier questions a follow-up is searched with, newest first (none when
    ``question`` is no follow-up or there are no turns)."""
    if not turns or not follows_up(question):
        return ()
    found: list[str] = []
    size = len(question)
    for turn in reversed(turns[-(MAX_QUERY_QUESTIONS - 1) :]):
        earlier = turn.question.strip()
        if size + len(earlier) + 1 > MAX_QUERY_CHARS:
            break
        found.append(earlier)
        size += len(earlier) + 1
        if not follows_up(earlier):
            break
    return tuple(found)


def retrieval_query(question: str, turns: Sequence[Turn]) -> str:
    """What retrieval searches for ``question`` after ``turns``: the question itself, or (a
    follow-up) the question and the questions it follows, newest first, one per line."""
    return "\n".join((question, *followed_questions(question, turns)))


@dataclass(frozen=True, slots=True)
class History:
    """The earlier turns as chat messages, oldest first, and what they cost."""

    messages: tuple[dict[str, str], ...]
    turns: int  # how many turns the messages carry
    dropped: int  # how many kept turns did not fit the budget
    tokens: int

    @classmethod
    def empty(cls) -> History:
        return cls((), 0, 0, 0)


def prior_answer(turn: Turn) -> str:
    """A turn's answer as the model is reminded of it."""
    if turn.model_answered:
        return turn.answer
    shown = ", ".join(str(source) for source in turn.sources) or "none"
    return f"(No written answer was given; the sources shown were: {shown}.)"


def history_messages(turns: Sequence[Turn], count: Callable[[str], int], budget: int) -> History:
    """The messages of as many of the newest ``turns`` as fit in ``budget`` tokens (counted
    with ``count``); when not even the newest fits whole, its question with its answer cut."""
    chosen: list[tuple[str, str]] = []
    used = 0
    for turn in reversed(turns):
        question, answer = turn.question, prior_answer(turn)
        cost = count(question) + count(answer) + 2 * MESSAGE_OVERHEAD
        if used + cost > budget:
            if not chosen:
                cut = _cut(answer, count, budget - count(question) - 2 * MESSAGE_OVERHEAD)
                if cut:
                    chosen.append((question, cut))
                    used += count(question) + count(cut) + 2 * MESSAGE_OVERHEAD
            break
        chosen.append((question, answer))
        used += cost
    messages: list[dict[str, str]] = []
    for question, answer in reversed(chosen):
        messages += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer},
        ]
    return History(tuple(messages), len(chosen), len(turns) - len(chosen), used)


CUT_MARK = " [...]"
MIN_CUT_TOKENS = 32  # a shorter remnant of an answer is not worth giving


def _cut(text: str, count: Callable[[str], int], budget: int) -> str:
    """``text`` shortened to fit ``budget`` tokens, marked as cut; "" when too little fits."""
    if budget < MIN_CUT_TOKENS:
        return ""
    size = len(text)
    for _ in range(8):
        size = int(size * 0.9 * budget / max(1, count(text[:size] + CUT_MARK)))
        if size <= 0:
            return ""
        candidate = text[:size].rstrip() + CUT_MARK
        if count(candidate) <= budget:
            return candidate
    return ""
