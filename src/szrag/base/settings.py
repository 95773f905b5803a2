"""Settings from an environment mapping, each read once into a frozen record: the model
provider's (:class:`Settings`) and the server's (:class:`ServerSettings`: tokens, limits, CORS,
Slack and the watcher).

The model provider is configured with the spec's names (``AI_URL``, ``AI_MODEL``,
``AI_API_KEY``); what only szrag has uses ``SZRAG_*``. ``OPENAI_API_KEY`` and
``OPENAI_BASE_URL`` stand in for ``AI_API_KEY`` and ``AI_URL`` when those are unset, so a shell
set up for OpenAI's own tools works as it is. A key read from ``OPENAI_API_KEY`` is meant for
OpenAI: with no URL set it goes to ``https://api.openai.com/v1`` (model ``gpt-4o-mini`` unless
``AI_MODEL`` names one), never to the default proxy. ``Settings.key_source`` and
``url_source`` say where each came from (``szrag doctor`` shows them).

Every variable, its default and meaning is listed once, in :mod:`szrag.base.variables` (and
``docs/CONFIGURATION.md``, made from it); :func:`szrag.service.configuration.load_config` calls these
readers, once per face.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from szrag.base.env import choice as env_choice
from szrag.base.env import flag as env_flag
from szrag.base.env import number as env_number
from szrag.base.env import text as env_text
from szrag.base.env import text_list as env_list
from szrag.base.errors import ConfigError

DEFAULT_AI_URL = "https://ai.hackclub.com/proxy/v1"
DEFAULT_AI_MODEL = "openai/gpt-6-luna"
OPENAI_URL = "https://api.openai.com/v1"  # where a key from OPENAI_API_KEY goes by default
OPENAI_MODEL = "gpt-4o-mini"
CHAT_COMPLETIONS_PATH = "/chat/completions"
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 120.0
DEFAULT_RETRIES = 2
DEFAULT_RETRY_DELAY = 1.0
DEFAULT_RETRY_MAX_DELAY = 10.0
DEFAULT_TOTAL_TIMEOUT = 300.0
DEFAULT_MAX_REPLY_CHARS = 200_000


@dataclass(frozen=True, slots=True)
class Settings:
    """How to reach the model provider and how patiently."""

    ai_url: str = DEFAULT_AI_URL
    ai_model: str = DEFAULT_AI_MODEL
    ai_api_key: str | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    retries: int = DEFAULT_RETRIES
    retry_delay: float = DEFAULT_RETRY_DELAY
    retry_max_delay: float = DEFAULT_RETRY_MAX_DELAY
    total_timeout: float = DEFAULT_TOTAL_TIMEOUT
    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS
    max_tokens: int | None = None
    # where the key and the URL were read from (None: given, or a default); provenance only
    key_source: str | None = field(default=None, compare=False)
    url_source: str | None = field(default=None, compare=False)

    @property
    def endpoint(self) -> str:
        """The chat-completions URL derived from ``ai_url``."""
        return chat_completions_url(self.ai_url)

    @property
    def has_key(self) -> bool:
        """Whether a provider key is configured."""
        return bool(self.ai_api_key)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Settings from ``environ``; a bad number or AI_URL raises ConfigError."""
        env = environ
        url_source = next(
            (name for name in ("AI_URL", "OPENAI_BASE_URL") if env_text(env, name)), None
        )
        key_source = next(
            (name for name in ("AI_API_KEY", "OPENAI_API_KEY") if env_text(env, name)), None
        )
        # an OpenAI key with no URL is for OpenAI, not for the default proxy
        for_openai = key_source == "OPENAI_API_KEY" and url_source is None
        max_tokens = int(env_number(env, "SZRAG_AI_MAX_TOKENS", 0, integer=True))
        return cls(
            ai_url=(
                _url(env, url_source, DEFAULT_AI_URL)
                if url_source is not None
                else OPENAI_URL
                if for_openai
                else DEFAULT_AI_URL
            ),
            ai_model=env_text(env, "AI_MODEL")
            or (OPENAI_MODEL if for_openai else DEFAULT_AI_MODEL),
            ai_api_key=env_text(env, key_source) if key_source is not None else None,
            key_source=key_source,
            url_source=url_source,
            total_timeout=env_number(
                env, "SZRAG_AI_TOTAL_TIMEOUT", DEFAULT_TOTAL_TIMEOUT, positive=True
            ),
            max_reply_chars=int(
                env_number(
                    env,
                    "SZRAG_AI_MAX_REPLY_CHARS",
                    DEFAULT_MAX_REPLY_CHARS,
                    positive=True,
                    integer=True,
                )
            ),
            max_tokens=max_tokens or None,
            connect_timeout=env_number(
                env, "SZRAG_AI_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT, positive=True
            ),
            read_timeout=env_number(
                env, "SZRAG_AI_READ_TIMEOUT", DEFAULT_READ_TIMEOUT, positive=True
            ),
            retries=int(env_number(env, "SZRAG_AI_RETRIES", DEFAULT_RETRIES, integer=True)),
            retry_delay=env_number(env, "SZRAG_AI_RETRY_DELAY", DEFAULT_RETRY_DELAY),
            retry_max_delay=env_number(env, "SZRAG_AI_RETRY_MAX_DELAY", DEFAULT_RETRY_MAX_DELAY),
        )


def key_route(settings: Settings) -> str:
    """Which key goes where, said once for ``szrag doctor`` and the CLI's notes."""
    if not settings.ai_api_key:
        return f"no key set (AI_API_KEY or OPENAI_API_KEY); would send to {settings.endpoint}"
    url = f"{settings.url_source}" if settings.url_source else "the default URL"
    return (
        f"the key from {settings.key_source or 'the settings'} goes to {settings.endpoint} ({url})"
    )


TOOLS_SETTING = "SZRAG_TOOLS"


def live_tools_enabled(environ: Mapping[str, str], *, repository: bool | None = None) -> bool:
    """Whether the model is offered the live tools: ``SZRAG_TOOLS`` when set, else the
    repository's ``tools`` setting, else on. The one default of every face;
    ``--tools/--no-tools`` overrides it on the command line."""
    default = True if repository is None else repository
    return env_flag(environ, TOOLS_SETTING, default)


def chat_completions_url(url: str) -> str:
    """``url`` without trailing slashes, with ``/chat/completions`` appended unless present."""
    base = url.strip().rstrip("/")
    return base if base.endswith(CHAT_COMPLETIONS_PATH) else base + CHAT_COMPLETIONS_PATH


def _url(env: Mapping[str, str], name: str, default: str) -> str:
    """An http(s) URL with a host (and a numeric port, if any), or ConfigError."""
    raw = env_text(env, name)
    if not raw:
        return default
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:
        raise ConfigError(f"{name} is not a valid URL: {raw!r}") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ConfigError(f"{name} must start with http:// or https://, not {raw!r}")
    if not parts.hostname or not raw.isprintable() or any(char.isspace() for char in raw):
        raise ConfigError(f"{name} is not a valid URL: {raw!r}")
    return raw


# ---- the server ------------------------------------------------------------------------

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
    memory_mb: int | None = None  # SZRAG_MEMORY_MB; None: the service file's, else the default

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
            memory_mb=(
                int(env_number(env, "SZRAG_MEMORY_MB", 0, integer=True))
                if env_text(env, "SZRAG_MEMORY_MB")
                else None
            ),
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
