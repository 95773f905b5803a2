"""Every conversation store keeps the same promises: the protocol's behaviour run against the
SQLite file and a real PostgreSQL database (order, caller-chosen ids, owners, bounds, feedback
replaced by identity, repositories apart, several connections writing one conversation)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from szrag.base.errors import ConversationError, UnknownAnswer, UnknownConversation
from szrag.conversations import (
    ConversationLimits,
    ConversationMemory,
    Feedback,
    Rating,
    ShownSource,
    Turn,
    new_id,
    open_conversation_store,
)

START = 1_800_000_000.0
OpenStore = Callable[..., ConversationMemory]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def a_turn(
    conversation_id: str, question: str = "how is the webhook verified?", *, at: float
) -> Turn:
    return Turn(
        answer_id=new_id(),
        conversation_id=conversation_id,
        question=question,
        answer="In server/webhook.js.",
        outcome="answered",
        sources=(ShownSource("server/webhook.js", 1, 25), ShownSource("README.md", 3, 9)),
        commit="0123456789abcdef0123456789abcdef01234567",
        asked_at=at,
    )


def a_feedback(turn: Turn, rating: Rating, *, by: str, at: float, comment: str = "") -> Feedback:
    return Feedback(
        answer_id=turn.answer_id,
        conversation_id=turn.conversation_id,
        rating=rating,
        right_files=("server/webhook.js",),
        comment=comment or None,
        question=turn.question,
        sources=turn.sources,
        cited_files=("server/webhook.js",),
        commit=turn.commit,
        given_at=at,
        given_by=by,
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["sqlite", "postgresql"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[OpenStore]:
    """Opens stores on one location (each a connection of its own): a SQLite file, or a new
    PostgreSQL database of the test cluster."""
    location: str | Path = tmp_path / "conversations.db"
    if request.param == "postgresql":
        location = request.getfixturevalue("pg_url")
    opened: list[ConversationMemory] = []

    def make(limits: ConversationLimits | None = None) -> ConversationMemory:
        opened.append(open_conversation_store(location, limits, clock=clock))
        return opened[-1]

    yield make
    for store in opened:
        store.close()


def test_a_conversation_keeps_its_turns_in_order(open_store: OpenStore, clock: Clock) -> None:
    store = open_store()
    conversation = store.start(face="cli", owner="local:ann")
    assert conversation.repository == "" and conversation.started_at == START
    first = store.append(a_turn(conversation.id, "how is the webhook verified?", at=clock.now))
    clock.now += 5
    second = store.append(a_turn(conversation.id, "and where is that called?", at=clock.now))

    assert store.turns(conversation.id) == (first, second)
    assert store.turn(second.answer_id) == second
    assert store.get(conversation.id).updated_at == clock.now
    assert store.latest("cli") == store.get(conversation.id)
    assert store.latest("slack") is None
    assert store.turns("never-started") == ()
    assert store.repository_of(conversation.id) == ""
    assert store.repository_of("never-started") is None


def test_ids_owners_and_unknowns(open_store: OpenStore, clock: Clock) -> None:
    store = open_store()
    thread = store.start("slack:T01:C0123:1712.0001", face="slack", owner="slack")
    again = store.start("slack:T01:C0123:1712.0001", face="slack", owner="slack")
    assert again.id == thread.id and again.started_at == thread.started_at
    owned = store.start(face="api", owner="ann")
    turn = store.append(a_turn(owned.id, at=clock.now))

    assert store.get(owned.id, owner="ann") == owned
    with pytest.raises(UnknownConversation):
        store.get(owned.id, owner="bob")
    with pytest.raises(UnknownAnswer):
        store.turn(turn.answer_id, owner="bob")
    with pytest.raises(UnknownConversation):
        store.append(a_turn("never-started", at=clock.now))
    with pytest.raises(ConversationError, match="is taken"):
        store.append(dataclasses.replace(turn, question="again"))
    with pytest.raises(ConversationError, match="not an id"):
        store.get("no spaces allowed")
    assert store.turns(owned.id) == (turn,)  # the refused turn left nothing behind


def test_turns_age_and_number_of_conversations_are_bounded(
    open_store: OpenStore, clock: Clock
) -> None:
    limits = ConversationLimits(turns=3, max_age_seconds=3600, conversations=2)
    store = open_store(limits)
    first = store.start()
    kept = [store.append(a_turn(first.id, f"question {n}", at=clock.now + n)) for n in range(5)]
    assert store.turns(first.id) == tuple(kept[-3:])

    clock.now += 10
    second, third = store.start(), store.start()  # the cap: the one used least recently goes
    with pytest.raises(UnknownConversation):
        store.get(first.id)
    assert store.turns(first.id) == ()
    clock.now += 3601
    with pytest.raises(UnknownConversation, match="1 hours"):
        store.get(second.id)
    assert store.latest("library") is None
    fresh = store.start(third.id)  # an expired id starts afresh
    assert fresh.started_at == START + 10 and store.turns(fresh.id) == ()


def test_the_count_bound_is_kept_when_a_conversation_is_added(
    open_store: OpenStore, clock: Clock
) -> None:
    # finding the conversations past the bound walks all of them: a turn added to one kept
    # cannot pass the bound, so only starting a new conversation looks
    roomy = open_store(ConversationLimits(conversations=3))
    first, second = roomy.start(), roomy.start()
    clock.now += 1
    tight = open_store(ConversationLimits(conversations=1))
    tight.append(a_turn(first.id, at=clock.now))
    tight.start_with(a_turn(second.id, at=clock.now + 1))
    assert tight.get(first.id) and tight.get(second.id)  # continued: both still kept

    clock.now += 2
    third = tight.start()
    assert tight.get(third.id)
    for gone in (first, second):
        with pytest.raises(UnknownConversation):
            tight.get(gone.id)


def test_start_with_keeps_a_first_turn_in_one_transaction(open_store: OpenStore) -> None:
    store = open_store()
    turn = a_turn("api:first", at=START - 1)
    assert store.start_with(turn, face="api", owner="ann") == turn
    assert store.get("api:first", owner="ann").started_at == START - 1
    assert store.turns("api:first") == (turn,)


def test_feedback_is_replaced_by_identity_and_keeps_its_order(
    open_store: OpenStore, clock: Clock
) -> None:
    store = open_store()
    conversation = store.start(face="api")
    turn = store.append(a_turn(conversation.id, at=clock.now))
    store.add_feedback(a_feedback(turn, Rating.DOWN, by="ann", at=clock.now + 1))
    store.add_feedback(a_feedback(turn, Rating.UP, by="bob", at=clock.now + 2))
    changed = store.add_feedback(
        a_feedback(turn, Rating.UP, by="ann", at=clock.now + 3, comment="ok")
    )

    kept = store.feedback()
    assert [(item.given_by, item.rating) for item in kept] == [
        ("bob", Rating.UP),
        ("ann", Rating.UP),
    ]
    assert kept[1] == changed and kept[1].comment == "ok" and kept[1].sources == turn.sources
    assert kept[1].repository == ""


def test_repositories_share_a_store_apart(open_store: OpenStore, clock: Clock) -> None:
    store = open_store()
    mailer = store.for_repository("mailer", ConversationLimits(conversations=1))
    billing = store.for_repository("billing")
    ours = mailer.start("slack:T:C:1", face="slack")
    theirs = billing.start(face="slack")
    turn = mailer.append(a_turn(ours.id, at=clock.now))
    billing.append(a_turn(theirs.id, at=clock.now))
    mailer.add_feedback(a_feedback(turn, Rating.UP, by="ann", at=clock.now))

    assert ours.repository == "mailer" and theirs.repository == "billing"
    assert store.repository_of(ours.id) == "mailer" == billing.repository_of(ours.id)
    assert store.repository_of(theirs.id) == "billing"
    with pytest.raises(UnknownConversation):
        billing.get(ours.id)
    with pytest.raises(UnknownAnswer):
        billing.turn(turn.answer_id)
    with pytest.raises(UnknownConversation):
        billing.append(a_turn(ours.id, at=clock.now))
    with pytest.raises(ConversationError, match="repository mailer"):
        billing.start(ours.id)
    assert billing.turns(ours.id) == () and billing.latest("slack") == billing.get(theirs.id)
    assert [item.repository for item in mailer.feedback()] == ["mailer"]
    assert billing.feedback() == []

    clock.now += 1
    mailer.start()  # mailer keeps one conversation: its own older one goes, billing's stays
    assert store.repository_of(ours.id) is None
    assert billing.get(theirs.id).repository == "billing"


def test_two_connections_alternate_turns_of_one_conversation(
    open_store: OpenStore, clock: Clock
) -> None:
    here, there = open_store(), open_store()
    conversation = here.start(face="api", owner="ann")
    asked = []
    for number in range(6):
        store = here if number % 2 == 0 else there
        store.get(conversation.id, owner="ann")  # as a replica's admission does
        clock.now += 1
        asked.append(store.append(a_turn(conversation.id, f"question {number}", at=clock.now)))
    assert here.turns(conversation.id) == there.turns(conversation.id) == tuple(asked[-10:])
    there.add_feedback(a_feedback(asked[0], Rating.DOWN, by="ann", at=clock.now))
    here.add_feedback(a_feedback(asked[0], Rating.UP, by="ann", at=clock.now + 1))
    assert [item.rating for item in there.feedback()] == [Rating.UP]


def test_concurrent_appends_are_neither_lost_nor_mixed(open_store: OpenStore, clock: Clock) -> None:
    limits = ConversationLimits(turns=1000)
    stores = [open_store(limits), open_store(limits)]
    conversation = stores[0].start(face="api")
    per_writer, writers = 15, 4
    errors: list[BaseException] = []

    def write(number: int) -> None:
        store = stores[number % 2]
        try:
            for seq in range(per_writer):
                store.append(a_turn(conversation.id, f"writer {number} turn {seq}", at=clock.now))
        except BaseException as error:  # reported below, not lost in the thread
            errors.append(error)

    threads = [threading.Thread(target=write, args=(number,)) for number in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    kept = stores[1].turns(conversation.id)
    assert len(kept) == per_writer * writers
    for number in range(writers):  # each writer's turns in the order it kept them
        own = [turn.question for turn in kept if turn.question.startswith(f"writer {number} ")]
        assert own == [f"writer {number} turn {seq}" for seq in range(per_writer)]


def test_one_thread_started_at_once_by_two_connections_is_one_conversation(
    open_store: OpenStore, clock: Clock
) -> None:
    """A Slack event redelivered to two replicas: both keep their turn in one conversation."""
    stores = [open_store(), open_store()]
    barrier = threading.Barrier(2)
    kept: list[Turn] = []
    errors: list[BaseException] = []

    def first_answer(number: int) -> None:
        barrier.wait()
        try:
            turn = a_turn("slack:T01:C01:1712.0001", f"replica {number}", at=clock.now)
            kept.append(stores[number].start_with(turn, face="slack", owner="slack"))
        except BaseException as error:  # reported below, not lost in the thread
            errors.append(error)

    threads = [threading.Thread(target=first_answer, args=(number,)) for number in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    turns = stores[0].turns("slack:T01:C01:1712.0001")
    assert sorted(turn.question for turn in turns) == ["replica 0", "replica 1"]
    assert stores[1].latest("slack", owner="slack") == stores[0].get("slack:T01:C01:1712.0001")
