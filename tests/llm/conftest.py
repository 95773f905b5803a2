"""Settings and a client for the chat client tests (the provider is the shared one)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from szrag.base.settings import Settings
from szrag.llm.client import ChatClient


@pytest.fixture
def settings(provider_settings: Callable[..., Settings]) -> Settings:
    """Settings for the scripted provider: short timeouts, two quick retries."""
    return provider_settings(retries=2, retry_max_delay=0.05)


@pytest.fixture
def client(settings: Settings) -> ChatClient:
    """A client for the scripted provider."""
    return ChatClient(settings)
