"""Fixtures of the server tests: the web fixture repository with a built index, the scripted
provider, and a factory that runs a real szrag server on 127.0.0.1."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from szrag.base.settings import Settings
from szrag.commands import Allowlist
from szrag.index import build_index
from szrag.llm.testing import ScriptedProvider
from szrag.server import ServerSettings, create_app
from szrag.server.testing import CaptureServer, serve_asgi
from szrag.service.audit import AuditLog

CopyFixture = Callable[[str], Path]
StartServer = Callable[..., str]

TEST_SETTINGS = ServerSettings(watch=False, sse_ping_seconds=5.0)


@pytest.fixture
def web_repo(copy_fixture: CopyFixture) -> Path:
    """A copy of tests/fixtures/web_repo with its index built."""
    root = copy_fixture("web_repo")
    build_index(root).close()
    return root


def model_settings_for(base_url: str, *, read_timeout: float = 5.0) -> Settings:
    """Settings that send model requests to ``base_url`` without retries."""
    return Settings(
        ai_url=base_url,
        ai_model="test-model",
        ai_api_key="test-key",
        connect_timeout=2.0,
        read_timeout=read_timeout,
        retries=0,
        retry_delay=0.0,
        retry_max_delay=0.0,
    )


@pytest.fixture
def model_settings(provider_server: tuple[ScriptedProvider, str]) -> Settings:
    """Model settings pointing at the scripted provider."""
    return model_settings_for(provider_server[1])


@pytest.fixture
def start_server(web_repo: Path, model_settings: Settings) -> Iterator[StartServer]:
    """``start_server(**overrides)`` runs szrag on ``web_repo`` and returns its base URL.

    Keywords ``answer_settings``, ``allowlist``, ``root`` and ``live_tools`` go to create_app;
    every other keyword replaces a field of the test ServerSettings.
    """
    with contextlib.ExitStack() as stack:

        def start(**overrides: Any) -> str:
            root = overrides.pop("root", web_repo)
            app = create_app(
                root,
                settings=replace(TEST_SETTINGS, **_settings_fields(overrides)),
                answer_settings=overrides.get("answer_settings", model_settings),
                allowlist=overrides.get("allowlist", Allowlist()),
                audit=AuditLog(Path(root) / ".rag" / "audit.log"),
                live_tools=overrides.get("live_tools", True),
            )
            base_url: str = stack.enter_context(serve_asgi(app))
            return base_url

        yield start


_APP_KEYS = frozenset({"answer_settings", "allowlist", "live_tools"})


def _settings_fields(overrides: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in overrides.items() if key not in _APP_KEYS}


@pytest.fixture
def server(start_server: StartServer) -> str:
    """A running server with the test settings; its base URL."""
    return start_server()


@pytest.fixture
def client(server: str) -> Iterator[httpx.Client]:
    """An HTTP client for ``server``."""
    with httpx.Client(base_url=server, timeout=15.0) as http:
        yield http


@pytest.fixture
def capture() -> Iterator[tuple[CaptureServer, str]]:
    """A server recording every post (Slack's response_url); yields it and its base URL."""
    app = CaptureServer()
    with serve_asgi(app, lifespan="off") as base_url:
        yield app, base_url
