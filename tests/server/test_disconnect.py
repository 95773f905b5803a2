"""A client that hangs up mid-stream cancels the answer and, with it, the model request."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from szrag.base.settings import Settings
from szrag.llm.testing import ScriptedProvider, serve, text_reply
from szrag.server.testing import SlowStreamProvider, serve_asgi
from szrag.service.audit import AuditLog

StartServer = Callable[..., str]


@pytest.fixture
def slow_provider() -> Iterator[tuple[SlowStreamProvider, str]]:
    provider = SlowStreamProvider(interval=0.1, tokens=300)  # 30 s unless cancelled
    with serve_asgi(provider, lifespan="off") as base_url:
        yield provider, f"{base_url}/v1"


def slow_model_settings(base_url: str) -> Settings:
    return Settings(ai_url=base_url, ai_api_key="test-key", read_timeout=30.0, retries=0)


def wait_until(condition: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.05)
    return False


def test_disconnecting_cancels_the_model_request(
    start_server: StartServer, slow_provider: tuple[SlowStreamProvider, str], web_repo: Path
) -> None:
    provider, base_url = slow_provider
    server = start_server(answer_settings=slow_model_settings(base_url))
    payload = {"question": "How does the gateway token bucket work?"}
    seen_token = False
    started = time.monotonic()
    with (
        httpx.Client(base_url=server, timeout=10.0) as client,
        client.stream(
            "POST", "/api/ask", json=payload, headers={"Accept": "text/event-stream"}
        ) as response,
    ):
        for line in response.iter_lines():
            if line == "event: token":
                seen_token = True
                break
    # Leaving the block closed the connection after the first token.

    assert seen_token and provider.started.is_set()
    assert provider.disconnected.wait(5.0), "the provider connection stayed open"
    assert not provider.finished.is_set()
    assert time.monotonic() - started < 10.0

    def cancelled_ask_audited() -> bool:
        records = AuditLog(web_repo / ".rag" / "audit.log").read()
        return any(r["event"] == "ask" and r["outcome"] == "cancelled" for r in records)

    assert wait_until(cancelled_ask_audited, 5.0)


def test_the_server_keeps_answering_after_a_disconnect(
    start_server: StartServer, slow_provider: tuple[SlowStreamProvider, str]
) -> None:
    provider, base_url = slow_provider
    server = start_server(answer_settings=slow_model_settings(base_url))
    with httpx.Client(base_url=server, timeout=10.0) as client:
        with client.stream(
            "POST",
            "/api/ask",
            json={"question": "gateway"},
            headers={"Accept": "text/event-stream"},
        ) as response:
            for line in response.iter_lines():
                if line.startswith("event: token"):
                    break
        follow_up = client.post("/api/ask", json={"question": "gateway", "withAi": False})

    assert follow_up.status_code == 200 and follow_up.json()["ok"] is True
    assert provider.disconnected.wait(5.0)


def test_a_json_client_that_hangs_up_cancels_the_answer(
    start_server: StartServer, slow_provider: tuple[SlowStreamProvider, str], web_repo: Path
) -> None:
    provider, base_url = slow_provider
    server = start_server(answer_settings=slow_model_settings(base_url))
    payload = {"question": "How does the gateway token bucket work?"}
    started = time.monotonic()

    # JSON mode: the client gives up waiting after a second and closes its connection.
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server}/api/ask", json=payload, timeout=httpx.Timeout(10.0, read=1.0))

    assert provider.started.is_set()
    assert provider.disconnected.wait(5.0), "the model request went on without a client"
    assert not provider.finished.is_set()
    assert time.monotonic() - started < 10.0

    def cancelled_ask_audited() -> bool:
        records = AuditLog(web_repo / ".rag" / "audit.log").read()
        return any(r["event"] == "ask" and r["outcome"] == "cancelled" for r in records)

    assert wait_until(cancelled_ask_audited, 5.0)


def test_a_client_gone_mid_burst_leaves_no_failed_writes_in_the_log(
    start_server: StartServer, web_repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The model's reply arrives in one burst, so many events are queued when the client
    # hangs up: each must wait for the loop to learn of the lost connection, not be written
    # to a dead socket (asyncio logs every write past the fifth as a failed send).
    provider = ScriptedProvider()
    with serve(provider) as base_url:
        server = start_server(answer_settings=slow_model_settings(base_url))
        caplog.set_level("WARNING", logger="asyncio")
        for _ in range(3):
            provider.script(text_reply("The gateway refills its bucket. " * 20, pieces=40))
            with (
                httpx.Client(base_url=server, timeout=10.0) as client,
                client.stream(
                    "POST",
                    "/api/ask",
                    json={"question": "gateway"},
                    headers={"Accept": "text/event-stream"},
                ) as response,
            ):
                for line in response.iter_lines():
                    if line == "event: token":
                        break

        def asked_three_times() -> bool:
            records = AuditLog(web_repo / ".rag" / "audit.log").read()
            return sum(1 for r in records if r["event"] == "ask") >= 3

        assert wait_until(asked_three_times, 10.0)
    # the server's own writes: the scripted provider, cut off mid-reply, may log its own
    port = httpx.URL(server).port
    failed_writes = [
        record
        for record in caplog.records
        if "socket.send() raised" in record.getMessage() and record.threadName == f"asgi-{port}"
    ]
    assert failed_writes == []
