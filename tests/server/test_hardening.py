"""What an adversarial run broke in the server, kept fixed: bodies capped before they are read,
malformed Slack headers and JSON refused with 4xx (never a 500 with a traceback), stalled and
abandoned uploads ended, and no escaping mention in Slack's notification text."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from szrag.server import requests as server_requests
from szrag.server.slack_blocks import fallback_text
from szrag.server.testing import slack_headers

StartServer = Callable[..., str]
SECRET = "shh-its-a-secret"


@pytest.fixture
def slack_server(start_server: StartServer) -> str:
    return start_server(slack_signing_secret=SECRET, admin_token="admin-secret")


def errors_logged(base: str) -> list[object]:
    response = httpx.get(
        f"{base}/api/admin/errors", headers={"Authorization": "Bearer admin-secret"}
    )
    errors: list[object] = response.json()["data"]["errors"]
    return errors


def chunks(size: int, piece: int = 64 * 1024) -> Iterator[bytes]:
    for _ in range(size // piece):
        yield b"x" * piece


def test_a_huge_slack_body_is_refused_before_it_is_read(slack_server: str) -> None:
    declared = httpx.post(
        f"{slack_server}/slack/events",
        content=b"x" * (2 * 1024 * 1024),
        headers=slack_headers("wrong", b""),
        timeout=10,
    )
    streamed = httpx.post(  # chunked: no length to refuse by, so the reading stops at the cap
        f"{slack_server}/slack/events",
        content=chunks(8 * 1024 * 1024),
        headers=slack_headers("wrong", b""),
        timeout=10,
    )

    assert declared.status_code == 413 and declared.json()["code"] == "payload_too_large"
    assert streamed.status_code == 413
    assert errors_logged(slack_server) == []


@pytest.mark.parametrize("stamp", ["not-a-number", "", "12.5", "1e9"])
def test_a_slack_timestamp_that_is_no_number_is_refused(slack_server: str, stamp: str) -> None:
    body = b"command=%2Fsz-ping&text="
    headers = {**slack_headers(SECRET, body), "X-Slack-Request-Timestamp": stamp}

    response = httpx.post(f"{slack_server}/slack/events", content=body, headers=headers)

    assert response.status_code == 401
    assert errors_logged(slack_server) == []


def test_deeply_nested_json_is_a_bad_request(slack_server: str) -> None:
    response = httpx.post(
        f"{slack_server}/api/ask",
        content=b"[" * 200_000,
        headers={"Content-Type": "application/json"},
        timeout=10,
    )

    assert response.status_code == 400 and response.json()["code"] == "invalid_json"
    assert errors_logged(slack_server) == []


def raw_request(base: str, head: bytes) -> socket.socket:
    parts = urlsplit(base)
    conn = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=10)
    conn.sendall(head)
    return conn


def test_a_stalled_upload_is_ended(slack_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_requests, "BODY_READ_TIMEOUT", 0.3)
    conn = raw_request(
        slack_server,
        b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Transfer-Encoding: chunked\r\n\r\n5\r\n{"que\r\n',  # ... and then nothing
    )
    with conn:
        reply = read_reply(conn)

    assert reply.startswith("HTTP/1.1 408") and "request_timeout" in reply


def read_reply(conn: socket.socket) -> str:
    """A whole reply: its head and body may come in separate segments."""
    data = b""
    while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < _length(data):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode()


def _length(data: bytes) -> int:
    head = data.partition(b"\r\n\r\n")[0].decode().lower()
    for line in head.split("\r\n"):
        name, _, value = line.partition(":")
        if name == "content-length":
            return int(value)
    return 0


def test_a_client_that_hangs_up_mid_upload_leaves_no_error(slack_server: str) -> None:
    conn = raw_request(
        slack_server,
        b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100000\r\n\r\n{"question": "half',
    )
    conn.close()
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:  # the server notices the hang-up on its next read
        if httpx.get(f"{slack_server}/healthz").status_code == 200:
            break
    assert errors_logged(slack_server) == []


def test_slack_notification_text_is_escaped_like_the_blocks() -> None:
    assert fallback_text("<!channel> deploy & <@U1>") == "&lt;!channel&gt; deploy &amp; &lt;@U1&gt;"


def test_a_question_with_a_lone_surrogate_is_answered(slack_server: str, web_repo: Path) -> None:
    response = httpx.post(
        f"{slack_server}/api/ask",
        content=b'{"question": "gateway \\ud800 routes", "withAi": false}',
        headers={"Content-Type": "application/json"},
    )

    assert response.status_code == 200
    assert response.json()["data"]["sources"]


def damage(database: Path) -> None:
    """Overwrite pages in the middle of the file, as a failing disk would."""
    data = bytearray(database.read_bytes())
    for page in range(3, len(data) // 4096 - 1, 2):
        data[page * 4096 + 100 : page * 4096 + 600] = b"\xa5" * 500
    database.write_bytes(bytes(data))


def test_a_running_server_heals_a_damaged_index(
    start_server: StartServer, web_repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from szrag.index import store

    for number in range(60):
        (web_repo / f"docs/page{number}.md").write_text(f"# Page {number}\n" + "quokka " * 400)
    from szrag.index import build_index

    build_index(web_repo).close()
    base = start_server()
    database = store.index_path(web_repo)
    with httpx.Client(base_url=base, timeout=20) as client:
        assert client.get("/healthz").status_code == 200
        damage(database)
        states = set()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            client.post("/api/ask", json={"question": "quokka page", "withAi": False})
            health = client.get("/healthz")
            states.add(health.json().get("code") or "ok")
            if health.status_code == 200 and health.json()["data"]["heals"] >= 1:
                break
            time.sleep(0.1)
        answered = client.post("/api/ask", json={"question": "quokka page", "withAi": False})

    assert health.status_code == 200 and health.json()["data"]["heals"] == 1
    assert answered.status_code == 200 and answered.json()["data"]["sources"]
    assert any(".corrupt-" in path.name for path in database.parent.iterdir())
    # however many questions met the damage, it is reported once, without a traceback
    szrag_records = [record for record in caplog.records if record.name.startswith("szrag")]
    reports = [record for record in szrag_records if "damaged" in record.getMessage()]
    assert len(reports) == 1, [record.getMessage() for record in reports]
    assert not [record for record in szrag_records if record.levelno >= logging.ERROR]


def truncate(database: Path) -> None:
    """Cut the file to a third, as a copy that stopped half-way would."""
    data = database.read_bytes()
    database.write_bytes(data[: len(data) // 3])


def many_pages(web_repo: Path) -> None:
    from szrag.index import build_index

    for number in range(60):
        (web_repo / f"docs/page{number}.md").write_text(f"# Page {number}\n" + "quokka " * 400)
    build_index(web_repo).close()


def aside(database: Path) -> list[str]:
    """The databases set aside (without their -wal and -shm files)."""
    return sorted(
        path.name
        for path in database.parent.iterdir()
        if ".corrupt-" in path.name and not path.name.endswith(("-wal", "-shm"))
    )


def test_the_request_that_finds_a_damaged_index_gets_a_503_not_a_500(
    start_server: StartServer, web_repo: Path
) -> None:
    from szrag.index import store

    many_pages(web_repo)
    base = start_server()
    database = store.index_path(web_repo)
    with httpx.Client(base_url=base, timeout=20) as client:
        assert client.post("/api/ask", json={"question": "quokka", "withAi": False}).status_code
        truncate(database)
        first = client.post("/api/ask", json={"question": "quokka page", "withAi": False})
        replies = [first]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            health = client.get("/healthz")
            if health.status_code == 200 and health.json()["data"]["heals"] >= 1:
                break
            replies.append(client.post("/api/ask", json={"question": "quokka", "withAi": False}))
            time.sleep(0.1)
        answered = client.post("/api/ask", json={"question": "quokka page", "withAi": False})

    assert first.status_code == 503 and first.json()["code"] == "index_damaged", first.text
    assert {reply.status_code for reply in replies} <= {200, 503}
    assert answered.status_code == 200 and answered.json()["data"]["sources"]


def test_a_running_server_takes_the_index_the_cli_rebuilt_as_it_is(
    start_server: StartServer, web_repo: Path
) -> None:
    from szrag.index import load_index, store

    many_pages(web_repo)
    base = start_server()
    database = store.index_path(web_repo)
    with httpx.Client(base_url=base, timeout=20) as client:
        assert client.post("/api/ask", json={"question": "quokka", "withAi": False}).status_code
        truncate(database)
        with load_index(web_repo) as index:  # the CLI: sets the damaged file aside, rebuilds
            assert "moved to index.db.corrupt-" in index.last_report.warnings[0]
        rebuilt = database.stat().st_ino
        assert len(aside(database)) == 1
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            answered = client.post("/api/ask", json={"question": "quokka page", "withAi": False})
            if answered.status_code == 200 and client.get("/healthz").status_code == 200:
                break
            time.sleep(0.1)
        health = client.get("/healthz").json()

    assert answered.status_code == 200 and answered.json()["data"]["sources"]
    assert health["data"]["status"] == "ok"
    assert len(aside(database)) == 1, "the server set the new index aside too"
    assert database.stat().st_ino == rebuilt
