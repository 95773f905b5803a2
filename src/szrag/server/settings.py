"""How the server is exposed: :class:`ServerSettings` and :class:`RateLimit`, read with the
model's settings in :mod:`szrag.base.settings` so that the one ``Config`` holds them
(``docs/CONFIGURATION.md`` lists the variables)."""

from __future__ import annotations

from szrag.base.settings import (
    MAX_BODY_BYTES,
    SLACK_API_URL,
    THREAD_REPLIES,
    RateLimit,
    ServerSettings,
    slack_api_url,
)

__all__ = [
    "MAX_BODY_BYTES",
    "SLACK_API_URL",
    "THREAD_REPLIES",
    "RateLimit",
    "ServerSettings",
    "slack_api_url",
]
