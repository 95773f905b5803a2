"""Slack threads over real HTTP: signed Events API callbacks and slash commands into a real
szrag server, whose bot talks to a local stand-in for Slack's Web API (SZRAG_SLACK_API_URL)
and whose answers come from the scripted model provider.

Each Web API call is recorded; the three-turn thread is written as a transcript to
``.artifacts/slack-thread-transcript.txt``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from szrag.conversations import ConversationStore, Rating
from szrag.llm.testing import ScriptedProvider, text_reply
from szrag.server import ServerSettings
from szrag.server.slack_blocks import FEEDBACK_BLOCK, FEEDBACK_DOWN, FEEDBACK_UP, SECTION_LIMIT
from szrag.server.testing import (
    CaptureServer,
    SlackApiServer,
    WebCall,
    serve_asgi,
    slack_headers,
    transcript,
)

StartServer = Callable[..., str]

SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test-token"
BOT = "UBOT"
ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT = ROOT / ".artifacts" / "slack-thread-transcript.txt"


# Slack's side ------------------------------------------------------------------------------


@pytest.fixture
def slack_api() -> Iterator[tuple[SlackApiServer, str]]:
    """The Web API stand-in (the bot is not in channel CGONE); it and its base URL."""
    app = SlackApiServer(token=BOT_TOKEN, bot_user=BOT, absent=("CGONE",))
    with serve_asgi(app, lifespan="off") as base_url:
        yield app, base_url


@pytest.fixture
def start_slack(
    start_server: StartServer, slack_api: tuple[SlackApiServer, str]
) -> Callable[..., str]:
    """``start_slack(**environ)``: a szrag server configured from Slack's environment
    variables, its Web API pointed at the stand-in; its base URL."""

    def start(**environ: str) -> str:
        settings = ServerSettings.from_env(
            {
                "SLACK_SIGNING_SECRET": SECRET,
                "SLACK_BOT_TOKEN": BOT_TOKEN,
                "SZRAG_SLACK_API_URL": f"{slack_api[1]}/api",
                **environ,
            }
        )
        return start_server(
            slack_signing_secret=settings.slack_signing_secret,
            slack_bot_token=settings.slack_bot_token,
            slack_api_url=settings.slack_api_url,
            slack_thread_replies=settings.slack_thread_replies,
        )

    return start


@pytest.fixture
def base(start_slack: Callable[..., str]) -> str:
    return start_slack()


def send(base: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    response = httpx.post(f"{base}/slack/events", content=body, headers=headers, timeout=10.0)
    assert response.status_code == 200, response.text
    return response


def send_event(base: str, event: dict[str, Any], event_id: str, *, retry: int = 0) -> None:
    body = json.dumps(
        {
            "token": "unused",
            "team_id": "T1",
            "api_app_id": "A1",
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(time.time()),
            "authorizations": [
                {"team_id": "T1", "user_id": BOT, "is_bot": True, "is_enterprise_install": False}
            ],
            "event": event,
        }
    ).encode()
    headers = slack_headers(SECRET, body, content_type="application/json")
    if retry:
        headers["X-Slack-Retry-Num"] = str(retry)
        headers["X-Slack-Retry-Reason"] = "http_timeout"
    send(base, body, headers)


def mention(
    text: str, ts: str, *, thread_ts: str | None = None, user: str = "U42"
) -> dict[str, Any]:
    event = {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT}> {text}",
        "ts": ts,
        "channel": "C7",
        "event_ts": ts,
    }
    return {**event, "thread_ts": thread_ts} if thread_ts else event


def reply(text: str, ts: str, thread_ts: str, *, user: str = "U42", **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "channel_type": "channel",
        "user": user,
        "text": text,
        "ts": ts,
        "thread_ts": thread_ts,
        "channel": "C7",
        "event_ts": ts,
        **extra,
    }


def slash(base: str, text: str, response_url: str, *, channel: str = "C7") -> httpx.Response:
    body = urlencode(
        {
            "team_id": "T1",
            "channel_id": channel,
            "user_id": "U42",
            "user_name": "grace",
            "command": "/sz-ask",
            "text": text,
            "response_url": response_url,
            "trigger_id": "1.2.3",
        }
    ).encode()
    return send(base, body, slack_headers(SECRET, body))


def click(base: str, payload: dict[str, Any]) -> httpx.Response:
    body = urlencode({"payload": json.dumps(payload)}).encode()
    return send(base, body, slack_headers(SECRET, body))


# Reading what the bot did ------------------------------------------------------------------


def is_answer(call: WebCall) -> bool:
    """A call that delivers an answer's last message (it carries the feedback buttons)."""
    return call.ok and any(block.get("block_id") == FEEDBACK_BLOCK for block in call.blocks)


def answers(api: SlackApiServer, count: int) -> list[WebCall]:
    """Wait for ``count`` answers; every call so far."""
    return api.wait_until(lambda calls: sum(map(is_answer, calls)) >= count)


def answer_id(call: WebCall) -> str:
    [actions] = [block for block in call.blocks if block.get("block_id") == FEEDBACK_BLOCK]
    ids = {element["value"] for element in actions["elements"]}
    assert [element["action_id"] for element in actions["elements"]] == [
        FEEDBACK_UP,
        FEEDBACK_DOWN,
    ]
    [found] = ids
    return str(found)


def store(root: Path) -> ConversationStore:
    return ConversationStore.for_root(root)


def turn_messages(provider: ScriptedProvider, number: int) -> list[dict[str, Any]]:
    """The messages of the model request that answered question ``number`` (1-based)."""
    return list(provider.requests[number - 1].json["messages"])


# /sz-ask in the channel --------------------------------------------------------------------


def test_sz_ask_posts_the_question_then_updates_it_with_the_answer_starting_a_thread(
    base: str,
    slack_api: tuple[SlackApiServer, str],
    capture: tuple[CaptureServer, str],
    provider: ScriptedProvider,
    web_repo: Path,
) -> None:
    api, _ = slack_api
    recorder, url = capture
    provider.script(text_reply("Each client has a bucket of ten tokens (`src/gateway.js`)."))

    acknowledged = slash(base, "How does the gateway rate limit clients?", f"{url}/hook")

    assert acknowledged.text == ""  # the channel message is the thinking reply
    calls = answers(api, 1)
    thinking, update = calls
    assert (thinking.method, thinking.arguments["channel"]) == ("chat.postMessage", "C7")
    assert "thread_ts" not in thinking.arguments and thinking.token == BOT_TOKEN
    assert thinking.texts() == [
        "*Q:* How does the gateway rate limit clients?",
        ":hourglass_flowing_sand: Thinking…",
    ]
    assert update.method == "chat.update" and update.arguments["ts"] == thinking.reply["ts"]
    assert update.texts()[0] == "*Q:* How does the gateway rate limit clients?"
    assert "bucket of ten tokens" in update.texts()[1]
    # the thread is a conversation under the posted message's ts, holding the turn
    key = f"slack:T1:C7:{thinking.reply['ts']}"
    [turn] = store(web_repo).turns(key)
    assert turn.answer_id == answer_id(update)
    assert turn.question == "How does the gateway rate limit clients?"
    assert recorder.received == []


def test_sz_ask_answers_through_response_url_where_the_bot_is_not_in_the_channel(
    base: str,
    slack_api: tuple[SlackApiServer, str],
    capture: tuple[CaptureServer, str],
    provider: ScriptedProvider,
) -> None:
    api, _ = slack_api
    recorder, url = capture
    provider.script(text_reply("Ten tokens per client."))

    slash(base, "How many tokens does a client get?", f"{url}/hook", channel="CGONE")

    thinking, answer = recorder.wait_for(2)
    assert thinking.json["response_type"] == "ephemeral"
    assert "Thinking about" in thinking.json["text"]
    assert answer.json["response_type"] == "in_channel"
    shown = json.dumps(answer.json["blocks"])
    assert "Ten tokens per client." in shown and FEEDBACK_UP in shown
    [refused] = api.calls
    assert refused.method == "chat.postMessage" and refused.reply["error"] == "not_in_channel"


def test_sz_ask_with_a_secret_output_command_never_posts_to_the_channel(
    base: str, slack_api: tuple[SlackApiServer, str], capture: tuple[CaptureServer, str]
) -> None:
    api, _ = slack_api
    recorder, url = capture

    acknowledged = slash(base, "run /sz-hash sha256 hunter2", f"{url}/hook")

    assert acknowledged.json()["response_type"] == "ephemeral"
    [posted] = recorder.wait_for(1)
    assert posted.json["response_type"] == "ephemeral"
    assert "hunter2" not in posted.body.decode()
    assert api.calls == []


# Events: mentions and replies ---------------------------------------------------------------


def test_a_mention_starts_a_thread_under_the_message(
    base: str, slack_api: tuple[SlackApiServer, str], provider: ScriptedProvider, web_repo: Path
) -> None:
    api, _ = slack_api
    provider.script(text_reply("It answers 429 with Retry-After."))

    send_event(base, mention("what does an empty bucket answer?", "1700.0001"), "Ev1")

    thinking, update = answers(api, 1)
    assert thinking.method == "chat.postMessage" and thinking.arguments["thread_ts"] == "1700.0001"
    assert thinking.texts() == [":hourglass_flowing_sand: Thinking…"]
    assert update.method == "chat.update" and update.arguments["ts"] == thinking.reply["ts"]
    assert "429 with Retry-After" in update.texts()[0]
    # the question the model saw is the message without the bot's mention
    assert turn_messages(provider, 1)[-1]["content"].count("<@") == 0
    [turn] = store(web_repo).turns("slack:T1:C7:1700.0001")
    assert turn.question == "what does an empty bucket answer?"


def test_three_turns_in_a_thread_give_the_model_the_earlier_turns(
    base: str,
    slack_api: tuple[SlackApiServer, str],
    capture: tuple[CaptureServer, str],
    provider: ScriptedProvider,
    web_repo: Path,
) -> None:
    api, _ = slack_api
    _, url = capture
    first = "How does the gateway rate limiting work?"
    second = "and how fast does it refill?"
    third = "what does a client get when the bucket is empty?"
    replies = [
        "Every client gets a token bucket of ten requests, kept in `src/gateway.js`.",
        "The bucket refills at one token per second, up to ten.",
        "An empty bucket answers 429 with a `Retry-After: 1` header.",
    ]
    provider.script(*(text_reply(text) for text in replies))
    steps: list[tuple[str, int]] = []

    slash(base, first, f"{url}/hook")
    calls = answers(api, 1)
    steps.append((f"/sz-ask {first}   (U42 in #C7, a slash command)", len(calls)))
    root = calls[0].reply["ts"]

    send_event(base, reply(second, "1800.0002", root), "Ev2")
    calls = answers(api, 2)
    steps.append((f"reply in the thread {root}: {second}   (U42, a message event)", len(calls)))

    # A reply that mentions the bot comes twice, as a message and as an app_mention event
    said = reply(f"<@{BOT}> {third}", "1800.0003", root, user="U77")
    send_event(base, said, "Ev3")
    send_event(base, {**said, "type": "app_mention"}, "Ev4")
    calls = answers(api, 3)
    steps.append(
        (f"reply in the thread {root}: @szrag {third}   (U77; message and app_mention)", len(calls))
    )

    # the model received the earlier turns as messages, oldest first
    assert [m["role"] for m in turn_messages(provider, 1)] == ["system", "user"]
    second_request = turn_messages(provider, 2)
    assert second_request[1:3] == [
        {"role": "user", "content": first},
        {"role": "assistant", "content": replies[0]},
    ]
    third_request = turn_messages(provider, 3)
    assert third_request[1:5] == [
        {"role": "user", "content": first},
        {"role": "assistant", "content": replies[0]},
        {"role": "user", "content": second},
        {"role": "assistant", "content": replies[1]},
    ]
    assert third in third_request[5]["content"] and "<@" not in third_request[5]["content"]
    # each answer went into the thread; the mention seen twice was answered once
    assert len(provider.requests) == 3 and provider.remaining == 0
    followups = [call for call in calls if call.method == "chat.postMessage"][1:]
    assert [call.arguments["thread_ts"] for call in followups] == [root, root]
    turns = store(web_repo).turns(f"slack:T1:C7:{root}")
    assert [turn.question for turn in turns] == [first, second, third]

    lines = [
        "szrag in a Slack thread: three turns",
        "====================================",
        "",
        "Slack's Web API was a local stand-in; every call the bot made is listed after the",
        "message that caused it. Model requests (roles of the messages sent):",
        "",
    ]
    for number in (1, 2, 3):
        roles = ", ".join(m["role"] for m in turn_messages(provider, number))
        lines.append(f"  turn {number}: {roles}")
    lines.append("")
    start = 0
    for said_text, end in steps:
        lines += [f">>> {said_text}", ""]
        lines.append(transcript(calls[start:end]))
        start = end
    TRANSCRIPT.parent.mkdir(exist_ok=True)
    TRANSCRIPT.write_text("\n".join(lines), encoding="utf-8")


def test_a_redelivered_event_is_acknowledged_and_answered_once(
    base: str, slack_api: tuple[SlackApiServer, str], provider: ScriptedProvider
) -> None:
    api, _ = slack_api
    provider.script(text_reply("Ten tokens."), text_reply("Port 3000."))
    event = mention("how many tokens?", "1700.0005")

    send_event(base, event, "EvR")
    send_event(base, event, "EvR", retry=1)
    send_event(base, event, "EvR", retry=2)
    answers(api, 1)
    # a later question is answered: the redeliveries had their turn before it and took none
    send_event(base, mention("which port?", "1700.0006"), "EvS")
    calls = answers(api, 2)

    threads = [call.arguments["thread_ts"] for call in calls if call.method == "chat.postMessage"]
    assert threads == ["1700.0005", "1700.0006"]
    assert len(provider.requests) == 2


def test_the_bots_own_messages_other_bots_and_edits_are_not_answered(
    base: str, slack_api: tuple[SlackApiServer, str], provider: ScriptedProvider
) -> None:
    api, _ = slack_api
    provider.script(text_reply("First."), text_reply("Second."))
    send_event(base, mention("first question", "1700.0010"), "EvA")
    answers(api, 1)

    send_event(base, reply("Thinking…", "1700.0011", "1700.0010", user=BOT, bot_id="BBOT"), "EvB")
    send_event(
        base,
        reply("I am another bot", "1700.0012", "1700.0010", user="UOTHER", bot_id="BOTHER"),
        "EvC",
    )
    send_event(
        base,
        reply("bot message", "1700.0013", "1700.0010", subtype="bot_message", bot_id="B9"),
        "EvD",
    )
    send_event(base, reply("edited", "1700.0014", "1700.0010", subtype="message_changed"), "EvE")
    send_event(base, reply("from the bot user", "1700.0015", "1700.0010", user=BOT), "EvF")
    send_event(base, reply("second question", "1700.0016", "1700.0010"), "EvG")
    calls = answers(api, 2)

    assert len(provider.requests) == 2
    assert provider.requests[1].json["messages"][-1]["content"].count("second question") == 1
    assert sum(call.method == "chat.postMessage" for call in calls) == 2


def test_replies_in_threads_the_bot_did_not_start_are_left_alone(
    base: str, slack_api: tuple[SlackApiServer, str], provider: ScriptedProvider
) -> None:
    api, _ = slack_api
    provider.script(text_reply("Answered."))

    send_event(base, reply("talking among ourselves", "1700.0021", "1700.0020"), "EvH")
    send_event(base, {**reply("top level", "1700.0022", "1700.0022")}, "EvI")
    send_event(base, mention("now I ask", "1700.0023"), "EvJ")
    calls = answers(api, 1)

    assert [call.method for call in calls] == ["chat.postMessage", "chat.update"]
    assert calls[0].arguments["thread_ts"] == "1700.0023"
    assert len(provider.requests) == 1


def test_with_mentions_only_a_reply_must_mention_the_bot(
    start_slack: Callable[..., str],
    slack_api: tuple[SlackApiServer, str],
    provider: ScriptedProvider,
) -> None:
    api, _ = slack_api
    base = start_slack(SZRAG_SLACK_THREAD_REPLIES="mentions")
    provider.script(text_reply("One."), text_reply("Two."))
    send_event(base, mention("first", "1700.0030"), "EvK")
    answers(api, 1)

    send_event(base, reply("a plain reply", "1700.0031", "1700.0030"), "EvL")
    said = reply(f"<@{BOT}> a reply that mentions", "1700.0032", "1700.0030")
    send_event(base, said, "EvM")
    send_event(base, {**said, "type": "app_mention"}, "EvN")
    answers(api, 2)

    assert len(provider.requests) == 2
    assert "a reply that mentions" in provider.requests[1].json["messages"][-1]["content"]
    assert "a plain reply" not in json.dumps(provider.requests[1].json["messages"])


def test_a_long_answer_is_split_between_words_within_block_kit_limits(
    base: str, slack_api: tuple[SlackApiServer, str], provider: ScriptedProvider
) -> None:
    api, _ = slack_api
    words = [f"w{number}" for number in range(9000)]
    paragraphs = [" ".join(words[start : start + 600]) for start in range(0, len(words), 600)]
    long = "\n\n".join(paragraphs)  # about 55,000 characters, one 3,900-character line each
    provider.script(text_reply(long, pieces=20))

    send_event(base, mention("explain everything", "1700.0040"), "EvL")
    calls = answers(api, 1)

    delivered = [call for call in calls if call.method in ("chat.update", "chat.postMessage")][1:]
    assert all(call.ok for call in calls)  # the stand-in refuses what Slack would refuse
    assert delivered[0].method == "chat.update" and len(delivered) >= 5
    assert all(call.arguments["thread_ts"] == "1700.0040" for call in delivered[1:])
    sections = [
        block["text"]["text"]
        for call in delivered
        for block in call.blocks
        if block["type"] == "section"
    ]
    assert all(len(text) <= SECTION_LIMIT for text in sections)
    shown = [word for text in sections for word in text.split()]
    assert shown == words  # in order, none cut or lost
    assert is_answer(delivered[-1]) and not any(map(is_answer, delivered[:-1]))


def test_a_secret_output_command_asked_in_a_thread_stays_with_the_asker(
    base: str, slack_api: tuple[SlackApiServer, str], provider: ScriptedProvider, web_repo: Path
) -> None:
    api, _ = slack_api
    provider.script(text_reply("Started."), text_reply("Here is your hash."))
    send_event(base, mention("start a thread", "1700.0050"), "EvO")
    answers(api, 1)

    send_event(base, reply("run /sz-hash sha256 hunter2", "1700.0051", "1700.0050"), "EvP")
    calls = answers(api, 2)

    later = calls[2:]
    assert {call.method for call in later} == {"chat.postEphemeral"}
    assert all(call.arguments["user"] == "U42" for call in later)
    assert all(call.arguments["thread_ts"] == "1700.0050" for call in later)
    assert "hunter2" not in json.dumps(
        [call.arguments for call in calls if call.method != "chat.postEphemeral"]
    )
    [_, kept] = store(web_repo).turns("slack:T1:C7:1700.0050")
    assert "hunter2" not in kept.question + kept.answer
    assert "hunter2" not in json.dumps(provider.requests[1].json)  # nor reached the model


# Feedback --------------------------------------------------------------------------------------


def action_payload(
    call: WebCall, action_id: str, *, thread_ts: str | None = None, user: str = "U42"
) -> dict[str, Any]:
    """A click on a button of the message ``call`` delivered (in the thread ``thread_ts``)."""
    ts = call.arguments.get("ts") or call.reply["ts"]
    return {
        "type": "block_actions",
        "user": {"id": user, "username": "grace", "team_id": "T1"},
        "api_app_id": "A1",
        "token": "unused",
        "container": {
            "type": "message",
            "message_ts": ts,
            "channel_id": "C7",
            "is_ephemeral": False,
            "thread_ts": thread_ts,
        },
        "trigger_id": "1.2.3",
        "team": {"id": "T1", "domain": "example"},
        "channel": {"id": "C7", "name": "general"},
        "message": {"type": "message", "ts": ts, "thread_ts": thread_ts},
        "response_url": "http://127.0.0.1:9/unused",
        "actions": [
            {
                "action_id": action_id,
                "block_id": FEEDBACK_BLOCK,
                "value": answer_id(call),
                "type": "button",
                "action_ts": "1700.9",
            }
        ],
    }


def test_thumbs_up_keeps_the_rating_and_thanks_the_clicker_privately(
    base: str, slack_api: tuple[SlackApiServer, str], provider: ScriptedProvider, web_repo: Path
) -> None:
    api, _ = slack_api
    provider.script(text_reply("See `src/gateway.js`."))
    send_event(base, mention("where is the bucket?", "1700.0060"), "EvQ")
    [*_, answered] = answers(api, 1)

    click(base, action_payload(answered, FEEDBACK_UP, thread_ts="1700.0060", user="U77"))
    calls = api.wait_until(lambda calls: calls[-1].method == "chat.postEphemeral")

    thanks = calls[-1]
    assert thanks.arguments["user"] == "U77" and thanks.arguments["thread_ts"] == "1700.0060"
    assert "Thanks" in thanks.arguments["text"]
    [kept] = store(web_repo).feedback()
    assert kept.answer_id == answer_id(answered) and kept.rating is Rating.UP
    assert kept.given_by == "U77" and kept.question == "where is the bucket?"
    assert kept.cited_files == ("src/gateway.js",)


def test_thumbs_down_asks_which_file_was_right(
    base: str, slack_api: tuple[SlackApiServer, str], provider: ScriptedProvider, web_repo: Path
) -> None:
    api, _ = slack_api
    provider.script(text_reply("Look in the README."))
    send_event(base, mention("where is the bucket refilled?", "1700.0070"), "EvT")
    [*_, answered] = answers(api, 1)

    click(base, action_payload(answered, FEEDBACK_DOWN, thread_ts="1700.0070"))
    calls = api.wait_until(lambda calls: calls[-1].method == "views.open")
    view = calls[-1].arguments["view"]
    assert view["callback_id"] == "szrag_right_files"
    [kept] = store(web_repo).feedback()
    assert kept.rating is Rating.DOWN and kept.right_files == ()

    submitted = {
        "type": "view_submission",
        "team": {"id": "T1"},
        "user": {"id": "U42", "username": "grace", "team_id": "T1"},
        "api_app_id": "A1",
        "token": "unused",
        "trigger_id": "1.2.4",
        "view": {
            **view,
            "id": "V1",
            "state": {
                "values": {
                    "right_files": {
                        "paths": {"type": "plain_text_input", "value": "src/gateway.js"}
                    },
                    "comment": {"text": {"type": "plain_text_input", "value": "not the README"}},
                }
            },
        },
    }
    response = click(base, submitted)

    assert response.text == ""  # the form closes
    [kept] = store(web_repo).feedback()
    assert kept.rating is Rating.DOWN and kept.right_files == ("src/gateway.js",)
    assert kept.comment == "not the README"
    calls = api.wait_until(
        lambda calls: (
            calls[-1].method == "chat.postEphemeral" and "kept as" in calls[-1].arguments["text"]
        )
    )
    assert calls[-1].arguments["thread_ts"] == "1700.0070"


def test_a_right_file_the_index_does_not_hold_is_shown_in_the_form(
    base: str, slack_api: tuple[SlackApiServer, str], provider: ScriptedProvider, web_repo: Path
) -> None:
    api, _ = slack_api
    provider.script(text_reply("Look in the README."))
    send_event(base, mention("where is the bucket refilled?", "1700.0075"), "EvU")
    [*_, answered] = answers(api, 1)
    click(base, action_payload(answered, FEEDBACK_DOWN, thread_ts="1700.0075"))
    view = api.wait_until(lambda calls: calls[-1].method == "views.open")[-1].arguments["view"]
    values = {"right_files": {"paths": {"type": "plain_text_input", "value": "src/gatway.js"}}}
    submitted = {
        "type": "view_submission",
        "team": {"id": "T1"},
        "user": {"id": "U42", "username": "grace", "team_id": "T1"},
        "api_app_id": "A1",
        "token": "unused",
        "view": {**view, "id": "V1", "state": {"values": values}},
    }

    refused = click(base, submitted).json()

    assert refused["response_action"] == "errors"
    assert "src/gatway.js" in refused["errors"]["right_files"]
    assert "src/gateway.js" in refused["errors"]["right_files"]  # the path it may mean
    [kept] = store(web_repo).feedback()
    assert kept.right_files == ()  # the thumbs down stands as it was


def test_feedback_on_an_unknown_answer_says_so(
    base: str, slack_api: tuple[SlackApiServer, str]
) -> None:
    api, _ = slack_api
    fake = WebCall(
        "chat.update",
        BOT_TOKEN,
        {
            "ts": "1700.0080",
            "blocks": [
                {
                    "type": "actions",
                    "block_id": FEEDBACK_BLOCK,
                    "elements": [
                        {"action_id": FEEDBACK_UP, "value": "0123456789abcdef"},
                        {"action_id": FEEDBACK_DOWN, "value": "0123456789abcdef"},
                    ],
                }
            ],
        },
        {"ok": True},
    )

    click(base, action_payload(fake, FEEDBACK_UP))
    [said] = api.wait_until(lambda calls: len(calls) == 1)

    assert (
        said.method == "chat.postEphemeral"
        and "no answer 0123456789abcdef" in said.arguments["text"]
    )


# Settings -----------------------------------------------------------------------------------


def test_the_slack_settings_from_the_environment() -> None:
    from szrag.base.errors import ConfigError

    settings = ServerSettings.from_env(
        {
            "SZRAG_SLACK_API_URL": "https://gateway.example/slack/api",
            "SZRAG_SLACK_THREAD_REPLIES": "Mentions",
        }
    )
    assert settings.slack_api_url == "https://gateway.example/slack/api/"
    assert settings.slack_thread_replies == "mentions"
    defaults = ServerSettings.from_env({})
    assert (defaults.slack_api_url, defaults.slack_thread_replies) == (
        "https://slack.com/api/",
        "all",
    )
    with pytest.raises(ConfigError, match="SZRAG_SLACK_THREAD_REPLIES must be all or mentions"):
        ServerSettings.from_env({"SZRAG_SLACK_THREAD_REPLIES": "some"})
    with pytest.raises(ConfigError, match="SZRAG_SLACK_API_URL"):
        ServerSettings.from_env({"SZRAG_SLACK_API_URL": "slack.com/api"})


def test_slacks_url_verification_is_answered_with_its_challenge(base: str) -> None:
    body = json.dumps(
        {"type": "url_verification", "token": "unused", "challenge": "c-123"}
    ).encode()

    response = send(base, body, slack_headers(SECRET, body, content_type="application/json"))

    assert response.json() == {"challenge": "c-123"}


def test_a_web_api_that_cannot_be_reached_is_a_slack_api_failure() -> None:
    import socket

    from szrag.base.errors import SlackApiFailed
    from szrag.server.slack_web import SlackWeb

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    web = SlackWeb(BOT_TOKEN, f"http://127.0.0.1:{port}/api/", timeout=2)

    with pytest.raises(SlackApiFailed) as raised:
        web.post("C7", text="hello")

    assert raised.value.error == "unreachable" and raised.value.code == "slack_api"


def test_a_refusal_carries_slacks_error_code(slack_api: tuple[SlackApiServer, str]) -> None:
    from szrag.base.errors import SlackApiFailed
    from szrag.server.slack_web import SlackWeb

    web = SlackWeb("xoxb-wrong", f"{slack_api[1]}/api/")

    with pytest.raises(SlackApiFailed, match=r"Slack refused chat\.postMessage: invalid_auth"):
        web.post("C7", text="hello")
