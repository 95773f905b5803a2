"""The HTTP faces of szrag: the API with server-sent events, the web page and Slack."""

from __future__ import annotations

from szrag.server.app import create_app
from szrag.server.settings import RateLimit, ServerSettings

__all__ = ["RateLimit", "ServerSettings", "create_app"]
