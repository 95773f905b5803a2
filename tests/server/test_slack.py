"""Slack over real HTTP: signed, wrongly signed and stale requests, /sz-ask with its thinking
reply and Block Kit answer posted to response_url, explicit commands and other /sz-* commands."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from szrag.base.settings import Settings
from szrag.commands import Allowlist, builtin_registry
from szrag.llm.testing import ScriptedProvider, text_reply
from szrag.server import RateLimit, ServerSettings, create_app
from szrag.server.slack import explicit_command, is_help, slack_identity
from szrag.server.testing import (
    CaptureServer,
    close_index_when_warmed,
    serve_asgi,
    slack_headers,
    slack_signature,
)
from szrag.service.audit import AuditLog

StartServer = Callable[..., str]


SECRET = "test-signing-secret"
REPO_URL = "https://github.com/example/gateway/blob/main"


def command_body(command: str, text: str, response_url: str, user: str = "U42") -> bytes:
    return urlencode(
        {
            "token": "unused",
            "team_id": "T1",
            "team_domain": "example",
            "channel_id": "C7",
            "channel_name": "general",
            "user_id": user,
            "user_name": "grace",
            "command": command,
            "text": text,
            "api_app_id": "A1",
            "response_url": response_url,
            "trigger_id": "1.2.3",
        }
    ).encode()


def post(base: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{base}/slack/events", content=body, headers=headers, timeout=10.0)


def nothing_else_arrives(base: str, recorder: CaptureServer, url: str) -> None:
    """Send a command that answers through ``response_url`` and wait for its post: the
    requests before it have had their turn, and none of them posted anything."""
    body = command_body("/sz-echo", "barrier", f"{url}/barrier")
    assert post(base, body, slack_headers(SECRET, body)).status_code == 200
    assert [item.path for item in recorder.wait_for(1)] == ["/barrier"]


@pytest.fixture
def slack_server(start_server: StartServer) -> str:
    return start_server(slack_signing_secret=SECRET, repo_url=REPO_URL)


def texts(blocks: list[dict[str, Any]]) -> str:
    found: list[str] = []
    for block in blocks:
        if "text" in block:
            found.append(block["text"]["text"])
        for element in block.get("elements", []):
            text = element.get("text", "")
            found.append(text["text"] if isinstance(text, dict) else text)  # a button's label
    return "\n".join(found)


# Verification ----------------------------------------------------------------------------


def test_a_wrongly_signed_request_is_refused(
    slack_server: str, capture: tuple[CaptureServer, str]
) -> None:
    recorder, url = capture
    body = command_body("/sz-ask", "how does the gateway work?", f"{url}/hook")
    headers = slack_headers(SECRET, body)
    headers["X-Slack-Signature"] = slack_signature(
        "another-secret", headers["X-Slack-Request-Timestamp"], body
    )

    response = post(slack_server, body, headers)

    assert response.status_code == 401
    nothing_else_arrives(slack_server, recorder, url)


def test_a_tampered_body_is_refused(slack_server: str, capture: tuple[CaptureServer, str]) -> None:
    _, url = capture
    body = command_body("/sz-ask", "help", f"{url}/hook")
    headers = slack_headers(SECRET, body)

    response = post(slack_server, body.replace(b"help", b"hel"), headers)

    assert response.status_code == 401


def test_a_stale_request_is_refused(slack_server: str, capture: tuple[CaptureServer, str]) -> None:
    recorder, url = capture
    body = command_body("/sz-ask", "help", f"{url}/hook")
    # Correctly signed, but six minutes old: a replay.
    response = post(slack_server, body, slack_headers(SECRET, body, timestamp=time.time() - 360))

    assert response.status_code == 401
    assert recorder.received == []


def signed_with(stamp: str, body: bytes, content_type: str) -> dict[str, str]:
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": slack_signature(SECRET, stamp, body),
    }


JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


@pytest.mark.parametrize(
    ("body", "content_type", "stamp", "signed", "status"),
    [
        (b"{bad", JSON, "now", False, 401),  # unsigned garbage: the signature comes first
        (b"payload=%7Bnot", FORM, "now", False, 401),
        (b"{bad", JSON, "now", True, 400),
        (b"payload=%7Bnot", FORM, "now", True, 400),
        (b"[1, 2]", JSON, "now", True, 400),
        (b"payload=%5B%5D", FORM, "now", True, 400),
        (b"token=x", FORM, "9" * 309, True, 401),
        (b"token=x", FORM, "\u00b9\u00b2\u00b3", True, 401),
        (b"token=x", FORM, "-12", True, 401),
    ],
)
def test_a_body_or_timestamp_that_fails_parsing_is_refused_without_a_traceback(
    slack_server: str,
    caplog: pytest.LogCaptureFixture,
    body: bytes,
    content_type: str,
    stamp: str,
    signed: bool,
    status: int,
) -> None:
    stamp = str(int(time.time())) if stamp == "now" else stamp
    headers = signed_with(stamp, body, content_type)
    if not signed:
        headers["X-Slack-Signature"] = "v0=" + "0" * 64
    response = httpx.post(
        f"{slack_server}/slack/events",
        content=body,
        # bytes: a superscript timestamp is not ASCII
        headers={key.encode(): value.encode() for key, value in headers.items()},
        timeout=10.0,
    )

    assert response.status_code == status, response.text
    assert response.json()["ok"] is False
    assert not [record for record in caplog.records if record.exc_info], caplog.text
    assert "Traceback" not in caplog.text


def test_slack_is_off_without_a_signing_secret(server: str) -> None:
    body = command_body("/sz-ask", "help", "http://127.0.0.1:9/hook")

    response = post(server, body, slack_headers(SECRET, body))

    assert response.status_code == 404
    assert response.json()["code"] == "slack_disabled"


# /sz-ask ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "help", "  HELP "])
def test_help_shows_usage_and_examples(
    slack_server: str, capture: tuple[CaptureServer, str], text: str
) -> None:
    recorder, url = capture
    body = command_body("/sz-ask", text, f"{url}/hook")

    response = post(slack_server, body, slack_headers(SECRET, body))

    assert response.status_code == 200
    reply = response.json()
    assert reply["response_type"] == "ephemeral"
    shown = texts(reply["blocks"])
    assert "/sz-ask &lt;question&gt;" in shown and "Examples" in shown and "/sz-echo" in shown
    nothing_else_arrives(slack_server, recorder, url)


def test_a_question_gets_thinking_then_the_answer_through_response_url(
    slack_server: str, capture: tuple[CaptureServer, str], provider: ScriptedProvider
) -> None:
    recorder, url = capture
    provider.script(
        text_reply(
            "## Buckets\nThe gateway keeps **ten** tokens per client; see [the code](src/gateway.js). "
            "Use `takeToken(id)` & <b>",
            usage={"prompt_tokens": 50, "completion_tokens": 20},
        )
    )
    body = command_body(
        "/sz-ask", "How does the gateway rate limiting token bucket work?", f"{url}/hook"
    )

    started = time.monotonic()
    response = post(slack_server, body, slack_headers(SECRET, body))
    acknowledged = time.monotonic() - started

    assert response.status_code == 200 and acknowledged < 3.0
    assert "Thinking about" in response.json()["text"]
    [posted] = recorder.wait_for(1)
    assert posted.path == "/hook"
    message = posted.json
    assert message["response_type"] == "in_channel"
    blocks = message["blocks"]
    assert (
        blocks[0]["type"] == "context"
        and "How does the gateway" in blocks[0]["elements"][0]["text"]
    )
    answer = blocks[1]["text"]["text"]
    assert answer.startswith("*Buckets*\nThe gateway keeps *ten* tokens")
    assert "the code (src/gateway.js)" in answer and "`takeToken(id)` &amp; &lt;b&gt;" in answer
    sources = next(
        b for b in blocks if b["type"] == "context" and "Sources" in b["elements"][0]["text"]
    )
    links = [element["text"] for element in sources["elements"][1:]]
    # each source links to its own lines, the range shown being the range linked
    linked = [
        re.match(rf"<{re.escape(REPO_URL)}/README\.md#L(\d+)-L(\d+)\|README\.md:(\d+)-(\d+)>", link)
        for link in links
    ]
    assert any(match and match.group(1, 2) == match.group(3, 4) for match in linked), links
    assert "tokens: 50 in · 20 out" in texts(blocks)
    assert message["text"].startswith("## Buckets The gateway keeps")


def test_run_passes_the_command_explicitly_with_the_slack_identity(
    start_server: StartServer, web_repo: Path, capture: tuple[CaptureServer, str]
) -> None:
    recorder, url = capture
    base = start_server(slack_signing_secret=SECRET, answer_settings=Settings(ai_api_key=None))
    body = command_body("/sz-ask", "run /sz-echo hello from slack", f"{url}/hook")

    assert post(base, body, slack_headers(SECRET, body)).status_code == 200
    [posted] = recorder.wait_for(1)

    assert "hello from slack" in texts(posted.json["blocks"])
    records = AuditLog(web_repo / ".rag" / "audit.log").read()
    command = next(r for r in records if r["event"] == "command")
    assert command["command"] == "echo" and command["arguments"] == {"text": "hello from slack"}
    assert command["identity"] == {
        "userId": "U42",
        "userName": "grace",
        "channelId": "C7",
        "teamId": "T1",
    }
    ask = next(r for r in records if r["event"] == "ask")
    assert ask["source"] == "slack" and ask["identity"]["userId"] == "U42"


def test_a_failure_is_a_friendly_message(
    web_repo: Path, capture: tuple[CaptureServer, str]
) -> None:
    recorder, url = capture
    settings = ServerSettings(watch=False, slack_signing_secret=SECRET)
    app = create_app(web_repo, settings=settings, answer_settings=Settings())
    with serve_asgi(app) as base:
        close_index_when_warmed(app)
        body = command_body("/sz-ask", "anything at all", f"{url}/hook")
        assert post(base, body, slack_headers(SECRET, body)).status_code == 200
        [posted] = recorder.wait_for(1)

    assert posted.json["response_type"] == "ephemeral"
    assert posted.json["blocks"][0]["text"]["text"].startswith(
        ":warning: Sorry, I could not answer that."
    )
    assert "index is closed" in posted.json["text"]


# Other commands --------------------------------------------------------------------------


def test_other_registered_commands_answer_as_themselves(
    slack_server: str, capture: tuple[CaptureServer, str]
) -> None:
    recorder, url = capture
    body = command_body("/sz-uuid", "", f"{url}/hook")

    response = post(slack_server, body, slack_headers(SECRET, body))

    assert response.status_code == 200
    [posted] = recorder.wait_for(1)
    assert re.search(
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", posted.json["text"]
    )
    assert posted.json["response_type"] == "in_channel"


def test_commands_off_the_allowlist_are_refused(
    start_server: StartServer, capture: tuple[CaptureServer, str]
) -> None:
    recorder, url = capture
    base = start_server(slack_signing_secret=SECRET, allowlist=Allowlist.of(["echo"]))
    body = command_body("/sz-uuid", "", f"{url}/hook")

    response = post(base, body, slack_headers(SECRET, body))

    assert response.status_code == 200
    assert (
        response.json()["text"].startswith(":no_entry:") and "allowlist" in response.json()["text"]
    )
    nothing_else_arrives(base, recorder, url)


def test_a_refused_command_is_audited_with_the_slack_identity(
    start_server: StartServer, web_repo: Path, capture: tuple[CaptureServer, str]
) -> None:
    _, url = capture
    base = start_server(slack_signing_secret=SECRET, allowlist=Allowlist.of(["echo"]))
    body = command_body("/sz-uuid", "", f"{url}/hook")

    assert post(base, body, slack_headers(SECRET, body)).status_code == 200

    records = AuditLog(web_repo / ".rag" / "audit.log").read()
    [refused] = [r for r in records if r["event"] == "command"]
    assert refused["command"] == "uuid" and refused["outcome"] == "not_allowed"
    assert refused["source"] == "slack" and refused["identity"]["userId"] == "U42"


# Secrets stay with the asker -------------------------------------------------------------


def test_an_answer_that_ran_a_sensitive_command_is_private_and_not_echoed(
    start_server: StartServer, capture: tuple[CaptureServer, str]
) -> None:
    recorder, url = capture
    base = start_server(slack_signing_secret=SECRET, answer_settings=Settings(ai_api_key=None))
    body = command_body("/sz-ask", "run /sz-hash sha256 hunter2", f"{url}/hook")

    assert post(base, body, slack_headers(SECRET, body)).status_code == 200
    [posted] = recorder.wait_for(1)

    message = posted.json
    assert message["response_type"] == "ephemeral"
    assert "*Q:*" not in texts(message["blocks"])
    assert "hunter2" not in posted.body.decode()


def test_an_ordinary_answer_echoes_the_question_in_the_channel(
    start_server: StartServer, capture: tuple[CaptureServer, str]
) -> None:
    recorder, url = capture
    base = start_server(slack_signing_secret=SECRET, answer_settings=Settings(ai_api_key=None))
    body = command_body("/sz-ask", "run /sz-echo hello", f"{url}/hook")

    assert post(base, body, slack_headers(SECRET, body)).status_code == 200
    [posted] = recorder.wait_for(1)

    assert posted.json["response_type"] == "in_channel"
    assert "*Q:* run /sz-echo hello" in texts(posted.json["blocks"])


def test_a_generated_token_is_shown_only_to_the_asker(
    slack_server: str, capture: tuple[CaptureServer, str]
) -> None:
    recorder, url = capture
    body = command_body("/sz-token", "", f"{url}/hook")

    assert post(slack_server, body, slack_headers(SECRET, body)).status_code == 200
    [posted] = recorder.wait_for(1)

    assert posted.json["response_type"] == "ephemeral"


def test_slack_users_are_rate_limited(
    start_server: StartServer, capture: tuple[CaptureServer, str]
) -> None:
    _, url = capture
    base = start_server(slack_signing_secret=SECRET, ask_rate=RateLimit(per_minute=1, burst=1))
    first = command_body("/sz-ask", "help", f"{url}/hook")
    post(base, first, slack_headers(SECRET, first))

    response = post(base, first, slack_headers(SECRET, first))
    other_user = command_body("/sz-ask", "help", f"{url}/hook", user="U99")
    other = post(base, other_user, slack_headers(SECRET, other_user))

    assert "try again in" in response.json()["text"]
    assert "blocks" in other.json()


# Parsing ---------------------------------------------------------------------------------


def test_explicit_command_forms() -> None:
    registry = builtin_registry()

    assert explicit_command("run /sz-hash sha256 hi", registry) == ("hash", "sha256 hi")
    assert explicit_command("execute uuid", registry) == ("uuid", "")
    assert explicit_command("Run the command /sz-echo a  b", registry) == ("echo", "a  b")
    assert explicit_command("execute the tests please", registry) is None
    assert explicit_command("how do I run /sz-echo?", registry) is None
    assert is_help("") and is_help(" help ") and not is_help("help me with the gateway")


def test_slack_identity_from_a_payload() -> None:
    identity = slack_identity(
        {"user_id": "U1", "user_name": "ada", "channel_id": "C1", "team_id": "T1"}
    )

    assert identity.to_dict() == {
        "userId": "U1",
        "userName": "ada",
        "channelId": "C1",
        "teamId": "T1",
    }
    assert slack_identity({}).user_id == "unknown"
