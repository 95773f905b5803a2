"""``POST /api/ask`` in a conversation and ``POST /api/feedback``, over a real server on
127.0.0.1 with the scripted provider answering."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from szrag.conversations import ConversationStore
from szrag.llm.testing import ScriptedProvider, text_reply
from szrag.server import RateLimit
from szrag.server.testing import sse_events

StartServer = Callable[..., str]
ALPHA = {"Authorization": "Bearer alpha"}
BETA = {"Authorization": "Bearer beta"}
LOCAL_ASK = {"question": "how are gateway tokens taken?", "withAi": False}


def ask(client: httpx.Client, body: dict[str, Any], **headers: str) -> httpx.Response:
    return client.post("/api/ask", json=body, headers=headers)


def test_an_ask_starts_a_conversation_that_the_next_ask_continues(
    server: str, provider: ScriptedProvider, web_repo: Path
) -> None:
    provider.script(text_reply("Tokens refill in src/gateway.js."), text_reply("Per client."))
    with httpx.Client(base_url=server, timeout=15) as client:
        first = ask(client, {"question": "how are gateway tokens refilled?"}).json()["data"]
        second = ask(
            client, {"question": "and for whom?", "conversationId": first["conversationId"]}
        ).json()["data"]

    assert len(first["conversationId"]) == 16 and len(first["answerId"]) == 16
    assert second["conversationId"] == first["conversationId"]
    assert second["answerId"] != first["answerId"]
    sent = provider.requests[1].json["messages"]
    assert [message["role"] for message in sent] == ["system", "user", "assistant", "user"]
    assert sent[2]["content"] == "Tokens refill in src/gateway.js."
    kept = ConversationStore.for_root(web_repo).turns(first["conversationId"])
    assert [turn.answer_id for turn in kept] == [first["answerId"], second["answerId"]]
    assert {turn.outcome for turn in kept} == {"answered"}


def test_a_streamed_answer_carries_its_ids_in_the_result(server: str) -> None:
    with (
        httpx.Client(base_url=server, timeout=15) as client,
        client.stream(
            "POST", "/api/ask", json=LOCAL_ASK, headers={"Accept": "text/event-stream"}
        ) as streamed,
    ):
        events = list(sse_events(iter(streamed.read().decode().split("\n"))))

    (result,) = [data for name, data in events if name == "result"]
    assert result["answerId"] and result["conversationId"]


@pytest.mark.parametrize("accept", ["application/json", "text/event-stream"])
def test_an_unknown_conversation_is_a_404_not_a_new_conversation(
    server: str, web_repo: Path, accept: str
) -> None:
    body = {**LOCAL_ASK, "conversationId": "0123456789abcdef"}
    with httpx.Client(base_url=server, timeout=15) as client:
        response = client.post("/api/ask", json=body, headers={"Accept": accept})

    assert response.status_code == 404
    assert response.json()["code"] == "unknown_conversation"
    assert "no conversation 0123456789abcdef" in response.json()["error"]
    assert ConversationStore.for_root(web_repo).latest("api") is None  # none was started


@pytest.mark.parametrize(
    ("conversation", "message"),
    [(42, "not an id"), ("has spaces", "not an id"), ("x" * 201, "not an id")],
)
def test_a_malformed_conversation_id_is_a_bad_request(
    server: str, conversation: object, message: str
) -> None:
    response = httpx.post(
        f"{server}/api/ask", json={**LOCAL_ASK, "conversationId": conversation}, timeout=15
    )

    assert response.status_code == 400 and response.json()["code"] == "invalid_request"
    assert message in response.json()["error"]


def test_a_caller_cannot_continue_or_rate_another_callers_conversation(
    start_server: StartServer,
) -> None:
    base = start_server(api_tokens=frozenset({"alpha", "beta"}))
    with httpx.Client(base_url=base, timeout=15) as client:
        mine = client.post("/api/ask", json=LOCAL_ASK, headers=ALPHA).json()["data"]
        theirs = client.post(
            "/api/ask", json={**LOCAL_ASK, "conversationId": mine["conversationId"]}, headers=BETA
        )
        rated = client.post(
            "/api/feedback", json={"answerId": mine["answerId"], "rating": "up"}, headers=BETA
        )
        again = client.post(
            "/api/ask", json={**LOCAL_ASK, "conversationId": mine["conversationId"]}, headers=ALPHA
        )

    assert theirs.status_code == 404 and theirs.json()["code"] == "unknown_conversation"
    assert rated.status_code == 404 and rated.json()["code"] == "unknown_answer"
    assert again.status_code == 200


def test_feedback_is_kept_with_what_the_answer_showed(server: str, web_repo: Path) -> None:
    with httpx.Client(base_url=server, timeout=15) as client:
        answer = ask(client, LOCAL_ASK).json()["data"]
        response = client.post(
            "/api/feedback",
            json={
                "answerId": answer["answerId"],
                "rating": "down",
                "rightFiles": ["./src/gateway.js"],
                "comment": "the bucket is in the gateway",
            },
        )

    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["answerId"] == answer["answerId"]
    assert data["conversationId"] == answer["conversationId"]
    assert (data["rating"], data["rightFiles"]) == ("down", ["src/gateway.js"])
    assert data["comment"] == "the bucket is in the gateway"
    assert data["question"] == LOCAL_ASK["question"]
    assert data["sources"] == [
        {"path": item["path"], "start": item["start"], "end": item["end"]}
        for item in answer["sources"]
    ]
    assert data["givenAt"].endswith("Z")
    (kept,) = ConversationStore.for_root(web_repo).feedback()
    assert kept.right_files == ("src/gateway.js",) and kept.given_by == "local"


@pytest.mark.parametrize(
    ("body", "status", "code", "message"),
    [
        ({"rating": "up"}, 400, "invalid_request", "answerId is required"),
        ({"answerId": "ANSWER", "rating": "meh"}, 400, "invalid_request", "up or down"),
        (
            {"answerId": "ANSWER", "rating": "up", "rightFiles": "a.js"},
            400,
            "invalid_request",
            "list",
        ),
        ({"answerId": "feedfeedfeedfeed", "rating": "up"}, 404, "unknown_answer", "no answer"),
        (
            {"answerId": "ANSWER", "rating": "down", "rightFiles": ["gateway.js", "src/nope.js"]},
            400,
            "bad_feedback",
            "gateway.js is not in the index of",
        ),
        (
            {"answerId": "ANSWER", "rating": "up", "comment": "x" * 2001},
            400,
            "invalid_request",
            "2000",
        ),
    ],
)
def test_bad_feedback_is_refused_with_a_clear_message(
    server: str, body: dict[str, Any], status: int, code: str, message: str
) -> None:
    with httpx.Client(base_url=server, timeout=15) as client:
        answer_id = ask(client, LOCAL_ASK).json()["data"]["answerId"]
        if body.get("answerId") == "ANSWER":
            body = {**body, "answerId": answer_id}
        response = client.post("/api/feedback", json=body)

    assert response.status_code == status, response.text
    assert response.json()["code"] == code and message in response.json()["error"]


def test_a_right_file_that_is_a_near_miss_gets_a_suggestion(server: str) -> None:
    with httpx.Client(base_url=server, timeout=15) as client:
        answer_id = ask(client, LOCAL_ASK).json()["data"]["answerId"]
        response = client.post(
            "/api/feedback",
            json={"answerId": answer_id, "rating": "down", "rightFiles": ["gateway.js"]},
        )

    assert "did you mean src/gateway.js?" in response.json()["error"]


def test_feedback_follows_the_asks_token_origin_and_rate_rules(
    start_server: StartServer,
) -> None:
    base = start_server(api_tokens=frozenset({"alpha"}), ask_rate=RateLimit(per_minute=6, burst=2))
    with httpx.Client(base_url=base, timeout=15) as client:
        answer_id = client.post("/api/ask", json=LOCAL_ASK, headers=ALPHA).json()["data"][
            "answerId"
        ]
        body = {"answerId": answer_id, "rating": "up"}
        anonymous = client.post("/api/feedback", json=body)
        foreign = client.post(
            "/api/feedback", json=body, headers={**ALPHA, "Origin": "http://evil.example"}
        )
        given = client.post("/api/feedback", json=body, headers=ALPHA)
        limited = client.post("/api/feedback", json=body, headers=ALPHA)

    assert anonymous.status_code == 401
    assert foreign.status_code == 403 and foreign.json()["code"] == "forbidden_origin"
    assert given.status_code == 200  # the ask and this one spent the burst of two
    assert limited.status_code == 429 and "retry-after" in limited.headers


def test_a_slack_threads_conversation_is_not_continued_or_rated_through_the_api(
    server: str, web_repo: Path
) -> None:
    import time

    from szrag.answer.question import SLACK_OWNER
    from szrag.conversations import ShownSource, Turn, new_id

    store = ConversationStore.for_root(web_repo)
    thread = store.start("slack:T1:C7:1700000001.000100", face="slack", owner=SLACK_OWNER)
    kept = store.append(
        Turn(
            answer_id=new_id(),
            conversation_id=thread.id,
            question="how are tokens taken?",
            answer="In src/gateway.js.",
            outcome="answered",
            sources=(ShownSource("src/gateway.js", 1, 28),),
            commit=None,
            asked_at=time.time(),
        )
    )
    with httpx.Client(base_url=server, timeout=15) as client:
        continued = ask(client, {**LOCAL_ASK, "conversationId": thread.id})
        rated = client.post("/api/feedback", json={"answerId": kept.answer_id, "rating": "up"})

    assert continued.status_code == 404 and continued.json()["code"] == "unknown_conversation"
    assert rated.status_code == 404 and rated.json()["code"] == "unknown_answer"


def test_a_stopped_server_leaves_its_conversations_in_the_file(web_repo: Path) -> None:
    import sqlite3

    from szrag.conversations.store import store_path
    from szrag.server import ServerSettings, create_app
    from szrag.server.testing import serve_asgi

    app = create_app(web_repo, settings=ServerSettings(watch=False))
    with serve_asgi(app) as base, httpx.Client(base_url=base, timeout=15) as client:
        first = ask(client, LOCAL_ASK).json()["data"]
    path = store_path(web_repo)
    assert not path.with_name(path.name + "-wal").exists()  # closed: all of it in the file
    with sqlite3.connect(path) as conn:
        kept = conn.execute(
            "SELECT count(*) FROM turns WHERE answer_id = ?", (first["answerId"],)
        ).fetchone()
    assert kept == (1,)


def test_one_ask_checks_its_command_and_reads_its_conversation_once(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from szrag.commands.policy import CommandPolicy

    checks: list[tuple[str, str]] = []
    reads: list[str] = []
    check, read = CommandPolicy.check, ConversationStore.get

    def counted_check(policy: CommandPolicy, command_id: str, source: str) -> Any:
        checks.append((command_id, source))
        return check(policy, command_id, source)

    def counted_read(store: ConversationStore, conversation_id: str, **options: Any) -> Any:
        reads.append(conversation_id)
        return read(store, conversation_id, **options)

    with httpx.Client(base_url=server, timeout=15) as client:
        first = ask(client, LOCAL_ASK).json()["data"]
        monkeypatch.setattr(CommandPolicy, "check", counted_check)
        monkeypatch.setattr(ConversationStore, "get", counted_read)
        body = {
            **LOCAL_ASK,
            "commandId": "calc",
            "commandText": "6 * 7",
            "conversationId": first["conversationId"],
        }
        for headers in ({}, {"Accept": "text/event-stream"}):  # answered whole, and streamed
            checks.clear()
            reads.clear()
            answered = client.post("/api/ask", json=body, headers=headers)
            assert answered.status_code == 200 and "42" in answered.text
            assert checks == [("calc", "api")]
            assert reads == [first["conversationId"]]
