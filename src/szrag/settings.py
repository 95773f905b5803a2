"""Settings from the environment, read once per call into a frozen record.

The model provider is configured with the spec's names; what only szrag has uses ``SZRAG_*``:

* ``AI_URL``: OpenAI-compatible base URL, or the full ``.../chat/completions`` endpoint
  (default ``https://ai.hackclub.com/proxy/v1``);
* ``AI_MODEL``: the model named in each request (default ``openai/gpt-6-luna``);
* ``AI_API_KEY``: the bearer key; unset means no model calls (a local answer instead);
* ``SZRAG_AI_CONNECT_TIMEOUT``: seconds to open a connection (10);
* ``SZRAG_AI_READ_TIMEOUT``: seconds of silence tolerated while reading a reply (120);
* ``SZRAG_AI_RETRIES``: extra attempts after a 429 or 5xx answer (2);
* ``SZRAG_AI_RETRY_DELAY``: the first backoff delay in seconds, doubled each attempt (1);
* ``SZRAG_AI_RETRY_MAX_DELAY``: the longest single wait, a Retry-After included (10);
* ``SZRAG_AI_TOTAL_TIMEOUT``: seconds one reply may take from first byte to last (300);
* ``SZRAG_AI_MAX_REPLY_CHARS``: the longest answer accepted, in characters (200,000);
* ``SZRAG_AI_MAX_TOKENS``: ``max_tokens`` sent with each request (unset: not sent).

``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` stand in for ``AI_API_KEY`` and ``AI_URL`` when
those are unset, so a shell set up for OpenAI's own tools works as it is. A key read from
``OPENAI_API_KEY`` is meant for OpenAI: with no URL set it goes to ``https://api.openai.com/v1``
(model ``gpt-4o-mini`` unless ``AI_MODEL`` names one), never to the default proxy.
``Settings.key_source`` and ``url_source`` say where each came from (``szrag doctor`` shows them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from szrag.env import flag as env_flag
from szrag.env import number as env_number
from szrag.env import text as env_text
from szrag.errors import ConfigError

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
