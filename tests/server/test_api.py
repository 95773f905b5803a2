"""The HTTP API end to end over real HTTP: JSON mode, server-sent events, every error status,
the runtime reads, CORS and the audit log."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from szrag.base.settings import Settings
from szrag.commands import Allowlist
from szrag.llm.testing import ScriptedProvider, text_reply
from szrag.server import ServerSettings, create_app
from szrag.server.auth import fingerprint
from szrag.server.testing import close_index_when_warmed, serve_asgi, sse_events
from szrag.service.audit import AuditLog

StartServer = Callable[..., str]


QUESTION = "How does the gateway rate limiting token bucket work?"
EVENT_BLOCK = re.compile(r"event: (activity|token|result|error)\ndata: [^\n]+\n\n")
IDS = {"answerId", "conversationId"}  # every API answer is kept in a conversation


def audit_records(root: Path) -> list[dict[str, object]]:
    return AuditLog(root / ".rag" / "audit.log").read()


def stream_text(client: httpx.Client, payload: dict[str, object]) -> tuple[httpx.Response, str]:
    with client.stream(
        "POST", "/api/ask", json=payload, headers={"Accept": "text/event-stream"}
    ) as response:
        return response, response.read().decode()


def events_of(raw: str) -> list[tuple[str, object]]:
    return list(sse_events(iter(raw.split("\n"))))


# JSON mode -----------------------------------------------------------------------------


def test_json_mode_without_ai_returns_the_local_shape(client: httpx.Client) -> None:
    response = client.post("/api/ask", json={"question": QUESTION, "withAi": False})

    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    data = body["data"]
    assert set(data) == {"answer", "sources", "images", "command", "activities", "context"} | IDS
    assert any(source["path"] == "README.md" for source in data["sources"])
    assert data["activities"][0]["stage"] == "retrieval"


def test_the_body_sets_the_context_budget(client: httpx.Client) -> None:
    default = client.post("/api/ask", json={"question": QUESTION, "withAi": False}).json()
    assert default["data"]["context"]["budget"] == 12000
    small = client.post("/api/ask", json={"question": QUESTION, "withAi": False, "budget": 300})
    context = small.json()["data"]["context"]
    assert context["budget"] == 300 and context["tokens"] <= 300


def test_json_mode_with_the_model_returns_answer_usage_and_rounds(
    client: httpx.Client, provider: ScriptedProvider
) -> None:
    usage = {"prompt_tokens": 120, "completion_tokens": 9}
    provider.script(
        text_reply("The bucket holds **ten** tokens [src/gateway.js:6-15].", usage=usage)
    )

    data = client.post("/api/ask", json={"question": QUESTION}).json()["data"]

    assert data["answer"] == "The bucket holds **ten** tokens [src/gateway.js:6-15]."
    assert data["usage"]["input"] == 120 and data["usage"]["output"] == 9
    assert data["responseRounds"] == 1
    assert "trace" in data and data["trace"] == data["activities"]
    request = provider.requests[0].json
    assert request["stream"] is True and request["model"] == "test-model"


def test_missing_key_gives_the_no_key_shape(start_server: StartServer) -> None:
    base = start_server(answer_settings=Settings(ai_api_key=None))
    data = httpx.post(f"{base}/api/ask", json={"question": QUESTION}).json()["data"]

    assert set(data) == {"answer", "sources", "images", "command", "activities"} | IDS
    assert data["activities"][-1]["stage"] == "ai" and data["activities"][-1]["status"] == "failed"
    assert "AI_API_KEY" in data["answer"]


# Server-sent events --------------------------------------------------------------------


def test_sse_frames_activities_then_tokens_then_one_result(
    client: httpx.Client, provider: ScriptedProvider
) -> None:
    provider.script(text_reply("Ten tokens, refilled each second.", pieces=4))

    response, raw = stream_text(client, {"question": QUESTION})

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-store"
    # Every frame is exactly one event line, one JSON data line and a blank line.
    assert EVENT_BLOCK.sub("", raw).strip() == ""
    events = events_of(raw)
    names = [name for name, _ in events]
    assert names[-1] == "result" and names.count("result") == 1 and "error" not in names
    first_token = names.index("token")
    assert names[0] == "activity" and first_token > 0
    assert [name for name in names[:first_token] if name != "activity"] == []
    tokens = [data for name, data in events if name == "token"]
    assert len(tokens) == 4
    assert all(isinstance(token, dict) and token["round"] == 1 for token in tokens)
    result = events[-1][1]
    assert isinstance(result, dict)
    assert (
        "".join(str(token["text"]) for token in tokens if isinstance(token, dict))
        == result["answer"]
    )
    streamed_ids = [
        data["id"] for name, data in events if name == "activity" and isinstance(data, dict)
    ]
    assert streamed_ids == [activity["id"] for activity in result["activities"]]


def test_sse_without_ai_streams_activities_and_result(client: httpx.Client) -> None:
    _, raw = stream_text(client, {"question": QUESTION, "withAi": False})

    names = [name for name, _ in events_of(raw)]
    assert names[-1] == "result"
    assert set(names[:-1]) == {"activity"}


def test_a_failure_while_answering_is_an_error_event_or_503(web_repo: Path) -> None:
    app = create_app(web_repo, settings=ServerSettings(watch=False), answer_settings=Settings())
    with serve_asgi(app) as base, httpx.Client(base_url=base) as client:
        close_index_when_warmed(app)  # the index becomes unavailable under the server
        _, raw = stream_text(client, {"question": QUESTION, "withAi": False})
        plain = client.post("/api/ask", json={"question": QUESTION, "withAi": False})

    events = events_of(raw)
    assert events[-1] == ("error", {"code": "index_unavailable", "error": "the index is closed"})
    assert "result" not in [name for name, _ in events]
    assert plain.status_code == 503
    assert plain.json() == {
        "ok": False,
        "code": "index_unavailable",
        "error": "the index is closed",
    }


# Errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'{"question": ""}', "empty_question"),
        (b'{"question": "   "}', "empty_question"),
        (b"{}", "empty_question"),
        (b'{"question": ', "invalid_json"),
        (b"", "invalid_json"),
        (b'["question"]', "invalid_json"),
        (b'{"question": 42}', "invalid_request"),
        (b'{"question": "x", "withAi": "yes"}', "invalid_request"),
        (b'{"question": "x", "userId": 7}', "invalid_request"),
        (b'{"question": "x", "budget": "lots"}', "invalid_request"),
        (b'{"question": "x", "budget": -1}', "invalid_request"),
        (b'{"question": "x", "budget": true}', "invalid_request"),
    ],
)
def test_bad_requests_are_400_with_a_code(client: httpx.Client, body: bytes, code: str) -> None:
    response = client.post("/api/ask", content=body, headers={"Content-Type": "application/json"})

    assert response.status_code == 400
    assert response.json() == {"ok": False, "code": code, "error": response.json()["error"]}
    assert response.json()["error"]


def test_an_empty_question_is_400_in_event_mode_too(client: httpx.Client) -> None:
    response, raw = stream_text(client, {"question": ""})

    assert response.status_code == 400
    assert json.loads(raw)["code"] == "empty_question"


def test_a_body_over_one_mebibyte_is_413(client: httpx.Client) -> None:
    big = json.dumps({"question": "x" * (1024 * 1024)}).encode()

    declared = client.post("/api/ask", content=big, headers={"Content-Type": "application/json"})

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(big), 64 * 1024):
            yield big[start : start + 64 * 1024]

    chunked = client.post(
        "/api/ask", content=chunks(), headers={"Content-Type": "application/json"}
    )

    for response in (declared, chunked):
        assert response.status_code == 413
        assert response.json()["code"] == "payload_too_large"


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [("GET", "/api/ask", "POST"), ("PUT", "/api/ask", "POST"), ("DELETE", "/api/status", "GET")],
)
def test_other_methods_are_405(client: httpx.Client, method: str, path: str, allow: str) -> None:
    response = client.request(method, path)

    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"
    assert response.headers["allow"] == allow


def test_unknown_and_blocked_commands_are_refused(start_server: StartServer) -> None:
    base = start_server(allowlist=Allowlist.of(["echo"]))
    with httpx.Client(base_url=base) as client:
        unknown = client.post("/api/ask", json={"question": "q", "commandId": "nosuch"})
        not_allowed = client.post("/api/ask", json={"question": "q", "commandId": "uuid"})
        recursive = client.post("/api/ask", json={"question": "q", "commandId": "ask"})

    assert unknown.status_code == 404 and unknown.json()["code"] == "unknown_command"
    assert not_allowed.status_code == 403 and not_allowed.json()["code"] == "command_not_allowed"
    assert recursive.status_code == 403


CLAIMS = {"userId": "U123", "username": "ada", "channelId": "C9", "teamId": "T1"}
ECHO = {"question": "echo this back", "commandId": "echo", "commandText": "hello there"}


def test_an_allowlisted_command_runs_as_the_authenticated_caller_and_is_audited(
    client: httpx.Client, web_repo: Path
) -> None:
    data = client.post("/api/ask", json={**ECHO, "withAi": False, **CLAIMS}).json()["data"]

    assert data["command"]["id"] == "echo"
    assert data["command"]["responses"][0]["text"] == "hello there"
    records = audit_records(web_repo)
    command = next(record for record in records if record["event"] == "command")
    # Claims in the body are anyone's to make: the open server's caller is the local user.
    local = {"userId": "local", "userName": "local", "channelId": "api", "teamId": "api"}
    assert command["identity"] == local
    assert command["outcome"] == "ok"
    ask = next(record for record in records if record["event"] == "ask")
    assert ask["source"] == "api" and ask["question"] == "echo this back" and ask["outcome"] == "ok"
    assert ask["identity"] == local


def test_a_token_caller_is_known_by_its_token_digest(
    start_server: StartServer, web_repo: Path
) -> None:
    base = start_server(api_tokens=frozenset({"user-secret"}))
    headers = {"Authorization": "Bearer user-secret"}
    payload = {**ECHO, "withAi": False, **CLAIMS}

    assert httpx.post(f"{base}/api/ask", json=payload, headers=headers).status_code == 200

    command = next(r for r in audit_records(web_repo) if r["event"] == "command")
    identity = command["identity"]
    assert isinstance(identity, dict)
    assert identity["userId"] == identity["userName"] == f"token:{fingerprint('user-secret')}"
    assert identity["channelId"] == "api"


def test_the_admin_token_may_ask_on_behalf_of_a_claimed_identity(
    start_server: StartServer, web_repo: Path
) -> None:
    base = start_server(admin_token="admin-secret")
    headers = {"Authorization": "Bearer admin-secret"}
    payload = {**ECHO, "withAi": False, **CLAIMS}

    assert httpx.post(f"{base}/api/ask", json=payload, headers=headers).status_code == 200

    command = next(r for r in audit_records(web_repo) if r["event"] == "command")
    assert command["identity"] == {
        "userId": "U123",
        "userName": "ada",
        "channelId": "C9",
        "teamId": "T1",
    }


def test_a_command_off_the_allowlist_is_refused_and_audited(
    start_server: StartServer, web_repo: Path
) -> None:
    base = start_server(allowlist=Allowlist.of(["echo"]))
    payload = {"question": "q", "commandId": "uuid", "commandText": "v4"}

    response = httpx.post(f"{base}/api/ask", json=payload)

    assert response.status_code == 403 and response.json()["code"] == "command_not_allowed"
    refused = [r for r in audit_records(web_repo) if r["event"] == "command"]
    assert len(refused) == 1
    assert refused[0]["command"] == "uuid" and refused[0]["outcome"] == "not_allowed"
    assert refused[0]["source"] == "api"
    identity = refused[0]["identity"]
    assert isinstance(identity, dict) and identity["userId"] == "local"


def test_a_refused_command_is_counted_in_the_metrics(start_server: StartServer) -> None:
    base = start_server(allowlist=Allowlist.of(["echo"]))
    with httpx.Client(base_url=base) as client:
        client.post("/api/ask", json={"question": "q", "commandId": "uuid"})
        metrics = client.get("/api/metrics").json()["data"]

    assert metrics["commandsFailed"] == 1


def test_unknown_paths_are_404_in_the_envelope(client: httpx.Client) -> None:
    response = client.get("/api/nothing-here")

    assert response.status_code == 404
    assert response.json()["ok"] is False


# Reads ----------------------------------------------------------------------------------


def test_status_reports_the_process_index_and_watcher(client: httpx.Client) -> None:
    data = client.get("/api/status").json()["data"]

    assert data["service"] == "szrag"
    assert data["index"]["available"] is True and data["index"]["files"] >= 3
    assert data["watcher"]["running"] is False


def test_commands_lists_metadata_and_what_may_run(client: httpx.Client) -> None:
    commands = {item["id"]: item for item in client.get("/api/commands").json()["data"]["commands"]}

    assert commands["echo"]["name"] == "/sz-echo" and commands["echo"]["runnable"] is True
    assert commands["ask"]["runnable"] is False


def test_routes_come_from_the_index(client: httpx.Client) -> None:
    routes = client.get("/api/routes").json()["data"]["routes"]

    assert {"method": "GET", "route": "/api/items", "path": "src/gateway.js"}.items() <= routes[
        0
    ].items()


def test_release_logs_and_metrics_answer(client: httpx.Client) -> None:
    client.post("/api/ask", json={"question": "q", "commandId": "ping", "withAi": False})

    release = client.get("/api/release").json()["data"]
    logs = client.get("/api/logs", params={"limit": 500}).json()["data"]
    metrics = client.get("/api/metrics").json()["data"]
    bad = client.get("/api/logs", params={"limit": -1})

    assert release["service"]["name"] == "szrag"
    assert len(logs["entries"]) <= 10
    assert metrics["commandsExecuted"] >= 0
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_request"


def test_admin_errors_need_the_admin_token(start_server: StartServer) -> None:
    closed = start_server()
    opened = start_server(admin_token="admin-secret")

    disabled = httpx.get(f"{closed}/api/admin/errors")
    missing = httpx.get(f"{opened}/api/admin/errors")
    wrong = httpx.get(f"{opened}/api/admin/errors", headers={"Authorization": "Bearer nope"})
    allowed = httpx.get(
        f"{opened}/api/admin/errors", headers={"Authorization": "Bearer admin-secret"}
    )

    assert disabled.status_code == 403 and "SZRAG_ADMIN_TOKEN" in disabled.json()["error"]
    assert missing.status_code == 403 and wrong.status_code == 403
    assert allowed.status_code == 200 and allowed.json()["data"] == {"errors": []}


def test_healthz_and_the_page_need_no_token(start_server: StartServer) -> None:
    base = start_server(api_tokens=frozenset({"t0k3n"}))

    health = httpx.get(f"{base}/healthz")
    page = httpx.get(f"{base}/")

    assert health.json() == {"ok": True, "data": {"status": "ok", "heals": 0}}
    assert page.status_code == 200 and "<textarea" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"


# CORS -----------------------------------------------------------------------------------


def test_cors_is_closed_by_default(client: httpx.Client) -> None:
    preflight = client.options(
        "/api/ask",
        headers={"Origin": "http://elsewhere.example", "Access-Control-Request-Method": "POST"},
    )
    cross = client.post(
        "/api/ask",
        json={"question": QUESTION, "withAi": False},
        headers={"Origin": "http://elsewhere.example"},
    )

    assert "access-control-allow-origin" not in preflight.headers
    assert cross.status_code == 403 and cross.json()["code"] == "forbidden_origin"


def test_configured_origins_may_call_the_api(start_server: StartServer) -> None:
    origin = "http://tools.example"
    base = start_server(cors_origins=(origin,))
    with httpx.Client(base_url=base) as client:
        preflight = client.options(
            "/api/ask", headers={"Origin": origin, "Access-Control-Request-Method": "POST"}
        )
        allowed = client.post(
            "/api/ask", json={"question": QUESTION, "withAi": False}, headers={"Origin": origin}
        )
        refused = client.post(
            "/api/ask",
            json={"question": QUESTION, "withAi": False},
            headers={"Origin": "http://evil.example"},
        )

    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == origin
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == origin
    assert refused.status_code == 403


def test_same_origin_browser_requests_are_allowed(client: httpx.Client, server: str) -> None:
    response = client.post(
        "/api/ask", json={"question": QUESTION, "withAi": False}, headers={"Origin": server}
    )

    assert response.status_code == 200


def test_the_source_viewer_serves_any_cited_span_not_only_stored_windows(
    start_server: StartServer, web_repo: Path
) -> None:
    base = start_server()
    lines = (web_repo / "src/gateway.js").read_text(encoding="utf-8").split("\n")
    with httpx.Client(base_url=base, timeout=10) as client:
        unit = client.get("/_szrag/source", params={"path": "src/gateway.js", "start": 5, "end": 9})
        past = client.get(
            "/_szrag/source", params={"path": "src/gateway.js", "start": 20, "end": 400}
        )
        missing = client.get("/_szrag/source", params={"path": "nope.js", "start": 1, "end": 3})
    assert unit.status_code == 200, unit.text
    data = unit.json()["data"]
    assert (data["start"], data["end"], len(data["lines"])) == (5, 9, 5)
    shown = re.sub(r"<[^>]+>", "", data["lines"][0])  # highlighted as HTML spans
    assert html.unescape(shown) == lines[4]
    assert past.status_code == 200 and past.json()["data"]["end"] == len(lines)  # cut at the end
    assert missing.status_code == 404 and "no indexed source nope.js:1-3" in missing.text
