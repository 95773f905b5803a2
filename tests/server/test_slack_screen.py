"""Which Events API callbacks the bot answers, where, and with what question."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from szrag.server.slack_threads import (
    KeyedLocks,
    SeenEvents,
    ThreadAsk,
    plain_question,
    screen,
    thread_key,
)

BOT = "UBOT"
KNOWN = {thread_key("T1", "C7", "100.1")}


def callback(event_id: str = "Ev1", **event: Any) -> dict[str, Any]:
    base = {"user": "U42", "channel": "C7", "ts": "100.2", "text": "a question"}
    return {
        "team_id": "T1",
        "event_id": event_id,
        "authorizations": [{"user_id": BOT, "is_bot": True}],
        "event": {**base, **event},
    }


def decide(
    body: dict[str, Any], *, replies: str = "all", seen: SeenEvents | None = None
) -> ThreadAsk | None:
    return screen(body, replies=replies, is_known=KNOWN.__contains__, seen=seen or SeenEvents())


@pytest.mark.parametrize(
    ("event", "replies", "thread"),
    [
        ({"type": "app_mention", "ts": "100.5"}, "all", "100.5"),  # top level: its own thread
        ({"type": "app_mention", "thread_ts": "100.1"}, "all", "100.1"),
        ({"type": "app_mention", "thread_ts": "300.1"}, "mentions", "300.1"),
        ({"type": "message", "thread_ts": "100.1"}, "all", "100.1"),
        ({"type": "message", "thread_ts": "100.1", "subtype": "thread_broadcast"}, "all", "100.1"),
        ({"type": "message", "thread_ts": "100.1"}, "mentions", None),
        ({"type": "message", "thread_ts": "300.1"}, "all", None),  # not the bot's thread
        ({"type": "message"}, "all", None),  # a top-level message
        ({"type": "message", "thread_ts": "100.2"}, "all", None),  # a thread's first message
        ({"type": "message", "thread_ts": "100.1", "text": f"<@{BOT}> hi"}, "all", None),
        ({"type": "message", "thread_ts": "100.1", "bot_id": "B1"}, "all", None),
        ({"type": "message", "thread_ts": "100.1", "user": BOT}, "all", None),
        ({"type": "app_mention", "bot_id": "B2"}, "all", None),
        ({"type": "message", "thread_ts": "100.1", "subtype": "message_changed"}, "all", None),
        ({"type": "message", "thread_ts": "100.1", "user": None}, "all", None),
        ({"type": "reaction_added"}, "all", None),
    ],
)
def test_what_is_answered_and_in_which_thread(
    event: dict[str, Any], replies: str, thread: str | None
) -> None:
    ask = decide(callback(**event), replies=replies)

    assert (ask.thread_ts if ask else None) == thread
    if ask is not None:
        assert ask.key == f"slack:T1:C7:{thread}" and ask.identity.user_id == "U42"
        assert ask.identity.team_id == "T1" and ask.identity.channel_id == "C7"


def test_each_event_and_each_message_is_answered_once() -> None:
    seen = SeenEvents()
    first = callback("Ev1", type="app_mention")

    assert decide(first, seen=seen) is not None
    assert decide(first, seen=seen) is None  # Slack's redelivery
    # the same message as the other event type (a mention in a thread comes as both)
    assert decide(callback("Ev2", type="message", thread_ts="100.1"), seen=seen) is None
    assert decide(callback("Ev3", type="app_mention", ts="100.3"), seen=seen) is not None


def test_what_is_not_answered_is_not_remembered() -> None:
    seen = SeenEvents()
    ignored = callback("Ev1", type="message", thread_ts="100.1", text=f"<@{BOT}> q")

    assert decide(ignored, seen=seen) is None
    assert decide(callback("Ev2", type="app_mention", thread_ts="100.1"), seen=seen) is not None


def test_seen_events_forget_the_oldest_past_their_size() -> None:
    seen = SeenEvents(size=3)
    for key in "abcd":
        assert seen.claim(key)

    assert seen.claim("a")  # forgotten
    assert not seen.claim("d")
    assert not seen.claim("x", "c") and seen.claim("x")  # nothing of a refused claim is kept


@pytest.mark.parametrize(
    ("text", "question"),
    [
        (f"<@{BOT}> how does it work?", "how does it work?"),
        (f"<@{BOT}|szrag>   spaced   out", "spaced out"),
        (f"ask <@{BOT}> about <@U99>", "ask about @U99"),
        (
            "see <#C1|general> and <https://x.example/a|the docs>",
            "see #general and the docs (https://x.example/a)",
        ),
        ("<https://x.example> &lt;b&gt; &amp; co", "https://x.example <b> & co"),
        ("<!here> anyone?", "@here anyone?"),
        ("line one\nline two", "line one\nline two"),
    ],
)
def test_a_message_becomes_a_plain_question(text: str, question: str) -> None:
    assert plain_question(text, BOT) == question


def test_without_the_bots_id_a_leading_mention_is_dropped() -> None:
    assert plain_question("<@UXYZ> what now?", None) == "what now?"


def test_a_thread_lock_is_dropped_once_nobody_holds_it() -> None:
    locks = KeyedLocks()
    order: list[str] = []
    entered = threading.Event()

    def second() -> None:
        entered.set()
        with locks.hold("k"):
            order.append("second")

    with locks.hold("k"):
        thread = threading.Thread(target=second)
        thread.start()
        entered.wait(5)
        order.append("first")
    thread.join(5)

    assert order == ["first", "second"]
    assert locks._locks == {}
