"""How the server is exposed, read once from the environment into a frozen record.

* ``SZRAG_API_TOKENS``: comma-separated bearer tokens accepted by the API (none: open API, which
  is allowed on a loopback address only);
* ``SZRAG_ADMIN_TOKEN``: the bearer token for ``/api/admin/*`` (none: admin routes refused);
* ``SZRAG_CORS_ORIGINS``: comma-separated origins allowed to call the API from a browser
  (none: no CORS headers, so other sites cannot read answers);
* ``SZRAG_ALLOWED_HOSTS``: comma-separated host names (no port) an open API also answers to,
  besides loopback (``127.0.0.1``, ``localhost``, ``[::1]``) and the address it is bound to;
  requests naming any other ``Host`` are refused, which defeats DNS rebinding. Browser pages
  served from these hosts (any port) may call the API too;
* ``SZRAG_RATE_LIMIT``: questions per minute per identity (30; 0 turns the limit off);
* ``SZRAG_RATE_BURST``: questions an identity may ask at once before the rate applies (10);
* ``SZRAG_READ_RATE_LIMIT``: other API reads per minute per identity (300; 0: off);
* ``SZRAG_REPO_URL``: repository browser base (``https://github.com/o/r/blob/main``) for links;
* ``SZRAG_WATCH``: ``0`` turns the file watcher off (on by default);
* ``SZRAG_WATCH_DEBOUNCE_MS``: how long changes are gathered before a refresh (400);
* ``SLACK_SIGNING_SECRET``, ``SLACK_BOT_TOKEN``, ``SLACK_APP_TOKEN`` (Socket Mode);
* ``SZRAG_SLACK_API_URL``: the base URL of Slack's Web API (``https://slack.com/api/``), for a
  proxy or an Enterprise Grid gateway;
* ``SZRAG_SLACK_THREAD_REPLIES``: which replies in a thread the bot started it answers: ``all``
  (the default) or only those that ``mention`` it (``mentions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from szrag.env import choice as env_choice
from szrag.env import flag as env_flag
from szrag.env import number as env_number
from szrag.env import text as env_text
from szrag.env import text_list as env_list
from szrag.errors import ConfigError
from szrag.settings import live_tools_enabled

MAX_BODY_BYTES = 1024 * 1024
SLACK_API_URL = "https://slack.com/api/"
THREAD_REPLIES = ("all", "mentions")


@dataclass(frozen=True, slots=True)
class RateLimit:
    """A token-bucket budget: ``per_minute`` refill rate and ``burst`` capacity; 0 means off."""

    per_minute: float
    burst: int

    @property
    def enabled(self) -> bool:
        """Whether requests are limited at all."""
        return self.per_minute > 0 and self.burst > 0


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Tokens, limits, CORS, Slack and watcher settings of one server."""

    api_tokens: frozenset[str] = frozenset()
    admin_token: str | None = None
    cors_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    ask_rate: RateLimit = field(default_factory=lambda: RateLimit(30, 10))
    read_rate: RateLimit = field(default_factory=lambda: RateLimit(300, 60))
    max_body_bytes: int = MAX_BODY_BYTES
    repo_url: str | None = None
    slack_signing_secret: str | None = None
    slack_bot_token: str | None = None
    slack_app_token: str | None = None
    slack_api_url: str = SLACK_API_URL  # the Web API base, always ending in "/"
    slack_thread_replies: str = "all"  # "all" replies in the bot's threads, or "mentions"
    watch: bool = True
    watch_debounce_ms: int = 400
    sse_ping_seconds: float = 15.0
    live_tools: bool | None = None  # SZRAG_TOOLS; None: the repository's setting, else on

    @property
    def auth_required(self) -> bool:
        """Whether API requests must carry a bearer token."""
        return bool(self.api_tokens)

    @property
    def slack_enabled(self) -> bool:
        """Whether the Slack app is mounted (it needs a signing secret to verify requests)."""
        return bool(self.slack_signing_secret)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ServerSettings:
        """Settings from ``environ``; bad values raise ConfigError."""
        env = environ
        burst = int(env_number(env, "SZRAG_RATE_BURST", 10, integer=True))
        return cls(
            api_tokens=frozenset(env_list(env, "SZRAG_API_TOKENS")),
            admin_token=env_text(env, "SZRAG_ADMIN_TOKEN") or None,
            cors_origins=tuple(env_list(env, "SZRAG_CORS_ORIGINS")),
            allowed_hosts=tuple(host.lower() for host in env_list(env, "SZRAG_ALLOWED_HOSTS")),
            ask_rate=RateLimit(env_number(env, "SZRAG_RATE_LIMIT", 30), burst),
            read_rate=RateLimit(env_number(env, "SZRAG_READ_RATE_LIMIT", 300), max(burst, 60)),
            repo_url=(env_text(env, "SZRAG_REPO_URL").rstrip("/") or None),
            slack_signing_secret=env_text(env, "SLACK_SIGNING_SECRET") or None,
            slack_bot_token=env_text(env, "SLACK_BOT_TOKEN") or None,
            slack_app_token=env_text(env, "SLACK_APP_TOKEN") or None,
            slack_api_url=slack_api_url(env),
            slack_thread_replies=env_choice(env, "SZRAG_SLACK_THREAD_REPLIES", THREAD_REPLIES),
            watch=env_flag(env, "SZRAG_WATCH", True),
            live_tools=live_tools_enabled(env) if env_text(env, "SZRAG_TOOLS") else None,
            watch_debounce_ms=int(env_number(env, "SZRAG_WATCH_DEBOUNCE_MS", 400, integer=True)),
        )


def slack_api_url(env: Mapping[str, str]) -> str:
    """``SZRAG_SLACK_API_URL`` as the Web API client wants it (an http(s) URL ending in "/"),
    else Slack's own."""
    value = env_text(env, "SZRAG_SLACK_API_URL")
    if not value:
        return SLACK_API_URL
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"SZRAG_SLACK_API_URL must be an http(s) URL, not {value!r}")
    return value.rstrip("/") + "/"
