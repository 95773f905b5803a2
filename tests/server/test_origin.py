"""Hosts and origins: an open server answers only for its own host names (DNS rebinding), and a
browser origin is judged against the allowed hosts and CORS origins, never the request's Host."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from szrag.server import ServerSettings
from szrag.server.origin import allowed_host, host_name, origin_allowed

StartServer = Callable[..., str]

OPEN = ServerSettings()
TOKENS = ServerSettings(api_tokens=frozenset({"secret"}))
IMAGE = "/docs/diagrams/architecture-diagram.png"
REBOUND = {"Host": "evil.example:8799", "Origin": "http://evil.example:8799"}


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("127.0.0.1:8799", "127.0.0.1"),
        ("LocalHost", "localhost"),
        ("[::1]:80", "::1"),
        ("evil.example:8799", "evil.example"),
        ("", None),
        ("[::1", None),
    ],
)
def test_host_names(value: str, name: str | None) -> None:
    assert host_name(value) == name


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("10.0.0.5", True),  # the bound address
        ("rag.internal", True),  # SZRAG_ALLOWED_HOSTS
        ("evil.example", False),
        (None, False),
    ],
)
def test_allowed_hosts(name: str | None, allowed: bool) -> None:
    settings = ServerSettings(allowed_hosts=("rag.internal",))

    assert allowed_host(name, settings, "10.0.0.5") is allowed


def test_an_origin_is_never_judged_by_the_request_host_on_an_open_server() -> None:
    assert not origin_allowed("http://evil.example:8799", "evil.example:8799", OPEN, "127.0.0.1")
    assert origin_allowed("http://localhost:5173", "127.0.0.1:8799", OPEN, "127.0.0.1")
    assert not origin_allowed("null", "127.0.0.1:8799", OPEN, "127.0.0.1")


def test_behind_tokens_a_page_may_call_from_its_own_origin() -> None:
    assert origin_allowed("https://rag.example", "rag.example", TOKENS, "0.0.0.0")
    assert not origin_allowed("https://evil.example", "rag.example", TOKENS, "0.0.0.0")


def test_allowed_hosts_come_from_the_environment() -> None:
    settings = ServerSettings.from_env({"SZRAG_ALLOWED_HOSTS": " Rag.Internal , box "})

    assert settings.allowed_hosts == ("rag.internal", "box")


@pytest.mark.parametrize("path", ["/api/status", "/healthz", "/", "/_szrag/app.js", IMAGE])
def test_an_open_server_refuses_a_rebound_host_on_every_route(server: str, path: str) -> None:
    response = httpx.get(f"{server}{path}", headers=REBOUND)

    assert response.status_code == 403
    assert response.json()["code"] == "forbidden_host"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_an_open_server_refuses_a_rebound_ask(server: str) -> None:
    response = httpx.post(
        f"{server}/api/ask", json={"question": "gateway", "withAi": False}, headers=REBOUND
    )

    assert response.status_code == 403 and response.json()["code"] == "forbidden_host"


@pytest.mark.parametrize("host", ["localhost:8799", "127.0.0.1", "[::1]:1"])
def test_loopback_host_names_are_served(server: str, host: str) -> None:
    response = httpx.get(f"{server}/api/status", headers={"Host": host})

    assert response.status_code == 200


def test_configured_hosts_are_served(start_server: StartServer) -> None:
    base = start_server(allowed_hosts=("rag.internal",))
    headers = {"Host": "rag.internal:8799", "Origin": "http://rag.internal:8799"}

    assert httpx.get(f"{base}/api/status", headers=headers).status_code == 200
    assert httpx.get(f"{base}/api/status", headers=REBOUND).status_code == 403


def test_a_foreign_origin_is_refused_on_the_page_and_images(server: str) -> None:
    headers = {"Origin": "http://evil.example"}

    for path in ("/api/status", IMAGE):
        response = httpx.get(f"{server}{path}", headers=headers)
        assert response.status_code == 403 and response.json()["code"] == "forbidden_origin"


def test_a_server_behind_tokens_serves_any_host_with_the_token(start_server: StartServer) -> None:
    base = start_server(api_tokens=frozenset({"secret"}))
    headers = {
        "Host": "rag.example",
        "Origin": "http://rag.example",
        "Authorization": "Bearer secret",
    }

    assert httpx.get(f"{base}/api/status", headers=headers).status_code == 200
    assert httpx.get(f"{base}/api/status", headers=REBOUND).status_code == 401


def test_slack_is_not_subject_to_the_host_check(server: str) -> None:
    response = httpx.post(f"{server}/slack/events", content=b"x", headers=REBOUND)

    assert response.json()["code"] == "slack_disabled"
