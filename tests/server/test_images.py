"""Images found by retrieval are served at their URL; nothing else from the repository is."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from szrag.index import build_index
from szrag.server import RateLimit
from szrag.server.images import content_type, is_clean_relative

StartServer = Callable[..., str]


IMAGE = "docs/diagrams/architecture-diagram.png"


def raw_get(base_url: str, raw_path: str) -> tuple[int, bytes]:
    """GET ``raw_path`` exactly as written (no client-side normalisation of ``..``)."""
    parts = urlsplit(base_url)
    assert parts.hostname is not None and parts.port is not None
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as sock:
        request = f"GET {raw_path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n"
        sock.sendall(request.encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_an_indexed_image_is_served_with_its_content_type(
    client: httpx.Client, web_repo: Path
) -> None:
    response = client.get(f"/{IMAGE}")

    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.content == (web_repo / IMAGE).read_bytes()


def test_retrieved_image_urls_are_the_served_paths(client: httpx.Client) -> None:
    data = client.post(
        "/api/ask", json={"question": "architecture diagram", "withAi": False}
    ).json()["data"]

    assert data["images"][0]["url"] == f"/{IMAGE}"
    assert client.get(data["images"][0]["url"]).status_code == 200


@pytest.mark.parametrize(
    "raw_path",
    [
        "/.env",
        "/README.md",
        "/src/gateway.js",
        "/.rag/index.db",
        "/../.env",
        "/docs/../.env",
        "/docs/diagrams/../../.env",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/docs%2F..%2F.env",
        "/docs/diagrams/..%2f..%2f.env",
        "/..%5c.env",
        "/docs/diagrams/./architecture-diagram.png",
        "/docs//diagrams/architecture-diagram.png",
        "/docs/diagrams/missing.png",
        "/etc/passwd",
        "//etc/passwd",
    ],
)
def test_everything_else_is_refused(server: str, raw_path: str) -> None:
    status, body = raw_get(server, raw_path)

    assert status in (400, 404)
    assert b"GATEWAY_SECRET" not in body and b"root:" not in body and b"PNG" not in body


def test_a_symlink_out_of_the_repository_is_not_served(
    start_server: StartServer, web_repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.png"
    outside.write_bytes((web_repo / IMAGE).read_bytes() + b"outside")
    (web_repo / "docs" / "leak.png").symlink_to(outside)
    build_index(web_repo).close()
    base = start_server()

    status, body = raw_get(base, "/docs/leak.png")

    assert status == 404 and b"outside" not in body


def test_images_need_the_token_when_the_api_does(start_server: StartServer) -> None:
    base = start_server(api_tokens=frozenset({"alpha"}))

    refused = httpx.get(f"{base}/{IMAGE}")
    allowed = httpx.get(f"{base}/{IMAGE}", headers={"Authorization": "Bearer alpha"})

    assert refused.status_code == 401
    assert allowed.status_code == 200


def test_images_spend_from_the_read_budget(start_server: StartServer) -> None:
    base = start_server(read_rate=RateLimit(60, 2))

    statuses = [httpx.get(f"{base}/{IMAGE}").status_code for _ in range(3)]
    status = httpx.get(f"{base}/api/status")

    assert statuses == [200, 200, 429]
    assert status.status_code == 429  # one budget for every read of a caller


def test_images_refuse_a_foreign_origin(server: str) -> None:
    response = httpx.get(f"{server}/{IMAGE}", headers={"Origin": "http://evil.example"})

    assert response.status_code == 403 and response.json()["code"] == "forbidden_origin"


@pytest.mark.parametrize(
    ("path", "clean"),
    [
        ("docs/a.png", True),
        ("a.png", True),
        ("", False),
        ("/docs/a.png", False),
        ("docs/../a.png", False),
        ("docs/./a.png", False),
        ("docs//a.png", False),
        ("docs\\a.png", False),
        ("docs/a.png\x00.txt", False),
    ],
)
def test_clean_relative_paths(path: str, clean: bool) -> None:
    assert is_clean_relative(path) is clean


def test_content_types() -> None:
    assert content_type("a/B.PNG") == "image/png"
    assert content_type("x.jpeg") == content_type("x.jpg") == "image/jpeg"
    assert content_type("x.gif") == "image/gif" and content_type("x.webp") == "image/webp"
    assert content_type("x.svg") is None and content_type("x.md") is None
