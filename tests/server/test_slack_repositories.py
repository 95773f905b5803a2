"""Slack on a server of several repositories, over real HTTP: signed slash commands and
Events API callbacks into a real szrag server serving a service file, whose bot talks to the
local stand-in for Slack's Web API. A question is about its thread's repository, its
``in:NAME`` word's, its channel's (``slack_channels``), or the one it is routed to."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from szrag.base.settings import Settings
from szrag.commands import Allowlist
from szrag.conversations import ConversationMemory, Rating, open_conversation_store
from szrag.server import ServerSettings, create_app
from szrag.server.slack_blocks import FEEDBACK_BLOCK, FEEDBACK_UP
from szrag.server.slack_scope import IN_WORD
from szrag.server.testing import SlackApiServer, WebCall, serve_asgi, slack_headers
from szrag.service.repositories import read_service_file

SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test-token"
BOT = "UBOT"
BILLING_CHANNEL = "CBILL"
FILES = {
    "mailer": {
        "src/welcome.py": "def send_welcome_email(user):\n"
        "    # the welcome e-mail every new user receives\n"
        "    return smtp_deliver(user.email, template='welcome')\n",
    },
    "billing": {
        "src/invoice.py": "def render_invoice(order):\n"
        "    # an invoice with its tax lines\n"
        "    return pdf(order.lines, tax=vat_rate(order.country))\n",
    },
}


@pytest.fixture
def folders(write_folders: Callable[..., dict[str, Path]]) -> dict[str, Path]:
    return write_folders(FILES)


@pytest.fixture
def slack_api() -> Iterator[tuple[SlackApiServer, str]]:
    app = SlackApiServer(token=BOT_TOKEN, bot_user=BOT)
    with serve_asgi(app, lifespan="off") as base_url:
        yield app, base_url


def service_store(folders: dict[str, Path], repository: str) -> ConversationMemory:
    """What the service keeps of ``repository``: its view of the one store beside the file."""
    home = folders["mailer"].parent / ".szrag"
    return open_conversation_store(home / "conversations.db").for_repository(repository)


def serving(tmp_path: Path, slack_api_url: str) -> contextlib.AbstractContextManager[str]:
    """A server of ``mailer`` (first) and ``billing`` (the channel CBILL's); its URL."""
    service_file = tmp_path / "szrag.toml"
    service_file.write_text(
        '[[repositories]]\nname = "mailer"\npath = "mailer"\n\n'
        '[[repositories]]\nname = "billing"\npath = "billing"\n'
        f'slack_channels = ["{BILLING_CHANNEL}"]\n',
        encoding="utf-8",
    )
    settings = ServerSettings(
        watch=False,
        sse_ping_seconds=5.0,
        slack_signing_secret=SECRET,
        slack_bot_token=BOT_TOKEN,
        slack_api_url=f"{slack_api_url}/api",
    )
    app = create_app(
        plan=read_service_file(service_file),
        environ={"SZRAG_AUDIT_LOG": "off"},
        settings=settings,
        answer_settings=Settings(ai_api_key=None),
        allowlist=Allowlist(),
        live_tools=False,
    )
    return serve_asgi(app)


@pytest.fixture
def base(
    folders: dict[str, Path], tmp_path: Path, slack_api: tuple[SlackApiServer, str]
) -> Iterator[str]:
    with serving(tmp_path, slack_api[1]) as base_url:
        yield base_url


def send(base: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    response = httpx.post(f"{base}/slack/events", content=body, headers=headers, timeout=30.0)
    assert response.status_code == 200, response.text
    return response


def slash(base: str, text: str, *, channel: str = "C7") -> httpx.Response:
    body = urlencode(
        {
            "team_id": "T1",
            "channel_id": channel,
            "user_id": "U42",
            "user_name": "grace",
            "command": "/sz-ask",
            "text": text,
            "response_url": "http://127.0.0.1:9/unused",
            "trigger_id": "1.2.3",
        }
    ).encode()
    return send(base, body, slack_headers(SECRET, body))


def send_event(base: str, event: dict[str, Any], event_id: str) -> None:
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
    send(base, body, slack_headers(SECRET, body, content_type="application/json"))


def mention(text: str, ts: str, *, channel: str = "C7") -> dict[str, Any]:
    return {
        "type": "app_mention",
        "user": "U42",
        "text": f"<@{BOT}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }


def reply(text: str, ts: str, thread_ts: str, *, channel: str = "C7") -> dict[str, Any]:
    return {
        "type": "message",
        "channel_type": "channel",
        "user": "U42",
        "text": text,
        "ts": ts,
        "thread_ts": thread_ts,
        "channel": channel,
        "event_ts": ts,
    }


def is_answer(call: WebCall) -> bool:
    return call.ok and any(block.get("block_id") == FEEDBACK_BLOCK for block in call.blocks)


def answers(api: SlackApiServer, count: int) -> list[WebCall]:
    """The first ``count`` answers delivered (waited for)."""
    calls = api.wait_until(lambda calls: sum(map(is_answer, calls)) >= count, timeout=60)
    return [call for call in calls if is_answer(call)][:count]


def shown(call: WebCall) -> str:
    return "\n".join(call.texts())


def test_the_in_word_is_a_word_of_its_own() -> None:
    for text in ("in:billing where is the invoice?", "where is the invoice in:billing?"):
        found = IN_WORD.search(text)
        assert found is not None and found.group("name") == "billing"
    assert IN_WORD.search("the login:admin page") is None
    assert IN_WORD.search("see (in:billing)") is None


def test_a_channel_its_in_word_and_routing_choose_the_repository(
    base: str, slack_api: tuple[SlackApiServer, str]
) -> None:
    api, _ = slack_api
    # in the billing channel, even a question whose words are the mailer's
    slash(base, "which service sends the welcome e-mail?", channel=BILLING_CHANNEL)
    [first] = answers(api, 1)
    assert "From the repository *billing*" in shown(first)
    assert "src/welcome.py" not in shown(first)

    # an in: word wins over the channel, and is not part of the question
    slash(base, "in:mailer which service sends the welcome e-mail?", channel=BILLING_CHANNEL)
    [_, second] = answers(api, 2)
    assert "From the repository *mailer*" in shown(second)
    assert "src/welcome.py" in shown(second)
    assert "in:mailer" not in shown(second)

    # elsewhere, a question naming none is routed
    slash(base, "invoice tax lines vat")
    [*_, third] = answers(api, 3)
    assert "From the repository *billing*" in shown(third) and "src/invoice.py" in shown(third)


def test_an_unknown_repository_is_answered_with_the_known_ones_and_nothing_runs(
    base: str, slack_api: tuple[SlackApiServer, str], folders: dict[str, Path]
) -> None:
    api, _ = slack_api
    helped = json.dumps(slash(base, "in:billing").json()["blocks"])  # the in: word alone
    assert "`in:mailer`, `in:billing`" in helped
    refused = slash(base, "in:mobile where is the login screen?")
    reply_ = refused.json()
    assert reply_["response_type"] == "ephemeral"
    assert "No repository is called `mobile`" in reply_["text"]
    assert "`mailer`, `billing`" in reply_["text"]

    send_event(base, mention("in:mobile where is the login screen?", "1700.0100"), "EvU")
    [whispered] = api.wait_until(lambda calls: len(calls) >= 1)
    assert whispered.method == "chat.postEphemeral"
    assert "No repository is called `mobile`" in whispered.arguments["text"]
    # the reply is the listener's last act: no thinking message, no answer, no conversation
    assert [call.method for call in api.calls] == ["chat.postEphemeral"]
    assert not (folders["mailer"].parent / ".szrag" / "conversations.db").exists() or all(
        service_store(folders, name).latest("slack") is None for name in folders
    )


def test_a_thread_stays_in_the_repository_of_its_conversation(
    base: str, slack_api: tuple[SlackApiServer, str], folders: dict[str, Path]
) -> None:
    api, _ = slack_api
    send_event(base, mention("in:billing where is the invoice tax computed?", "1700.0200"), "Ev1")
    [first] = answers(api, 1)
    assert "From the repository *billing*" in shown(first)

    # a follow-up whose words are the mailer's stays in the thread's repository
    send_event(base, reply("and the welcome e-mail?", "1700.0201", "1700.0200"), "Ev2")
    [_, second] = answers(api, 2)
    assert "From the repository *billing*" in shown(second)
    thinking = [call for call in api.calls if call.method == "chat.postMessage"]
    assert [call.arguments.get("thread_ts") for call in thinking] == ["1700.0200", "1700.0200"]
    kept = service_store(folders, "billing")
    conversation = kept.latest("slack")
    assert conversation is not None
    assert [turn.question for turn in kept.turns(conversation.id)] == [
        "where is the invoice tax computed?",
        "and the welcome e-mail?",
    ]
    assert service_store(folders, "mailer").latest("slack") is None

    # feedback on the billing answer is kept in billing's store
    answer_id = feedback_button(second)
    thumbs_up(base, answer_id)
    calls = api.wait_until(lambda calls: calls[-1].method == "chat.postEphemeral")
    assert "Thanks" in calls[-1].arguments["text"]
    [rated] = kept.feedback()
    assert rated.answer_id == answer_id and rated.rating is Rating.UP


def thumbs_up(base: str, answer_id: str) -> None:
    """A click on :+1: under the answer ``answer_id`` in the thread 1700.0200 of C7."""
    payload = {
        "type": "block_actions",
        "user": {"id": "U77", "username": "ada", "team_id": "T1"},
        "api_app_id": "A1",
        "token": "unused",
        "container": {"type": "message", "channel_id": "C7", "thread_ts": "1700.0200"},
        "trigger_id": "1.2.3",
        "team": {"id": "T1", "domain": "example"},
        "channel": {"id": "C7", "name": "general"},
        "message": {"type": "message", "ts": "1700.0300", "thread_ts": "1700.0200"},
        "response_url": "http://127.0.0.1:9/unused",
        "actions": [
            {
                "action_id": FEEDBACK_UP,
                "block_id": FEEDBACK_BLOCK,
                "value": answer_id,
                "type": "button",
                "action_ts": "1700.9",
            }
        ],
    }
    body = urlencode({"payload": json.dumps(payload)}).encode()
    send(base, body, slack_headers(SECRET, body))


def feedback_button(call: WebCall) -> str:
    return next(
        str(element["value"])
        for block in call.blocks
        if block.get("block_id") == FEEDBACK_BLOCK
        for element in block["elements"]
    )


def test_after_a_restart_a_thread_and_its_feedback_find_their_repository(
    folders: dict[str, Path], tmp_path: Path, slack_api: tuple[SlackApiServer, str]
) -> None:
    api, api_url = slack_api
    with serving(tmp_path, api_url) as base:
        send_event(
            base, mention("in:billing where is the invoice tax computed?", "1700.0200"), "E1"
        )
        [answered] = answers(api, 1)
    # a new process: only the first repository is open, billing's store is on disk
    with serving(tmp_path, api_url) as base:
        send_event(base, reply("and the welcome e-mail?", "1700.0201", "1700.0200"), "E2")
        [_, followed] = answers(api, 2)
        assert "From the repository *billing*" in shown(followed)
        thumbs_up(base, feedback_button(answered))
        api.wait_until(lambda calls: calls[-1].method == "chat.postEphemeral")
    [rated] = service_store(folders, "billing").feedback()
    assert rated.answer_id == feedback_button(answered) and rated.rating is Rating.UP
