"""A scripted provider on 127.0.0.1 and settings that point the client at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from szrag.llm.client import ChatClient
from szrag.llm.testing import ScriptedProvider, serve
from szrag.settings import Settings


@pytest.fixture(scope="session")
def provider_server() -> Iterator[tuple[ScriptedProvider, str]]:
    """One provider for the whole session (each test resets it)."""
    app = ScriptedProvider()
    with serve(app) as base_url:
        yield app, base_url


@pytest.fixture
def provider(provider_server: tuple[ScriptedProvider, str]) -> ScriptedProvider:
    """The scripted provider, with an empty script and no recorded requests."""
    app, _ = provider_server
    app.reset()
    return app


@pytest.fixture
def settings(provider_server: tuple[ScriptedProvider, str]) -> Settings:
    """Settings for the scripted provider: short timeouts, no backoff wait."""
    _, base_url = provider_server
    return Settings(
        ai_url=base_url,
        ai_model="test-model",
        ai_api_key="test-key",
        connect_timeout=2.0,
        read_timeout=2.0,
        retries=2,
        retry_delay=0.0,
        retry_max_delay=0.05,
    )


@pytest.fixture
def client(settings: Settings) -> ChatClient:
    """A client for the scripted provider."""
    return ChatClient(settings)
