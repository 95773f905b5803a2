"""Provider failures, one class per way a model request can go wrong.

::

    ProviderError                   (szrag.errors)
    └── ProviderFailure             adds ``code`` and ``status``
        ├── ProviderAuthError       401 / 403: the key is missing, wrong or not allowed
        ├── ProviderNotFoundError   404: wrong AI_URL or unknown model
        ├── ProviderRequestError    any other 4xx: the provider refused the request
        ├── ProviderRateLimitError  429 after every retry
        ├── ProviderServerError     5xx after every retry, or an error sent inside the stream
        ├── ProviderConnectionError nothing accepted the connection
        ├── ProviderTimeoutError    no data within the read (or connect) timeout
        ├── StreamCutError          the reply ended before it was complete
        ├── MalformedResponseError  a body or event that is not the JSON it should be
        └── ReplyTooLargeError      the reply grew past the configured size

Each carries a short ``code`` for machine consumers and, where there was one, the HTTP
``status``. Messages include the provider's own explanation when its body has one.
"""

from __future__ import annotations

import json
import re
from typing import Any

from szrag.errors import ProviderError

MAX_DETAIL_CHARS = 1200  # long validation errors name the field near their end


class ProviderFailure(ProviderError):
    """A provider failure with a short machine-readable ``code`` and the HTTP ``status``."""

    code = "provider"

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ProviderAuthError(ProviderFailure):
    """The provider rejected the key (401) or the key's permissions (403)."""

    code = "auth"


class ProviderNotFoundError(ProviderFailure):
    """The endpoint or the model does not exist (404)."""

    code = "not_found"


class ProviderRequestError(ProviderFailure):
    """The provider refused the request for another client-side reason (4xx)."""

    code = "bad_request"


class ProviderRateLimitError(ProviderFailure):
    """Too many requests (429), still refused after the retries."""

    code = "rate_limited"


class ProviderServerError(ProviderFailure):
    """The provider failed on its side (5xx or an error event in the stream)."""

    code = "server_error"


class ProviderConnectionError(ProviderFailure):
    """The provider could not be reached, or (``dropped``) took the request and hung up."""

    code = "connection"
    dropped = False


class ProviderTimeoutError(ProviderFailure):
    """The provider went silent for longer than the timeout allows."""

    code = "timeout"


class StreamCutError(ProviderFailure):
    """The reply stopped before it was complete."""

    code = "stream_cut"


class MalformedResponseError(ProviderFailure):
    """The provider sent something that is not the JSON it should be."""

    code = "malformed"


class ReplyTooLargeError(ProviderFailure):
    """The reply grew past the configured size (``SZRAG_AI_MAX_REPLY_CHARS``)."""

    code = "too_large"


def provider_code(error: ProviderError) -> str:
    """The short code of ``error`` (``provider`` for the bare base class)."""
    return str(getattr(error, "code", "provider"))


def status_error(status: int, body: bytes, *, endpoint: str) -> ProviderFailure:
    """The error for an HTTP ``status`` answered by ``endpoint``, with the provider's detail."""
    detail = error_detail(body)
    suffix = f": {detail}" if detail else ""
    message: str
    kind: type[ProviderFailure]
    if status in (401, 403):
        verb = "rejected the API key" if status == 401 else "refused access with this API key"
        kind, message = ProviderAuthError, f"the model provider {verb} (HTTP {status}){suffix}"
    elif status == 404:
        kind = ProviderNotFoundError
        message = (
            f"the model provider answered 404 for {endpoint}: check AI_URL and AI_MODEL{suffix}"
        )
    elif status == 429:
        kind, message = (
            ProviderRateLimitError,
            f"the model provider is rate limiting requests{suffix}",
        )
    elif status >= 500:
        kind, message = ProviderServerError, f"the model provider failed (HTTP {status}){suffix}"
    else:
        kind = ProviderRequestError
        message = f"the model provider refused the request (HTTP {status}){suffix}"
    return kind(message, status=status)


def error_detail(body: bytes | str) -> str:
    """The provider's own error message from a JSON (or short text) error body."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = text.strip()
    if not text:
        return ""
    try:
        payload = json.loads(text)
    except ValueError:
        return _shorten(" ".join(text.split())) if not text.startswith("<") else ""
    message = message_of(payload)
    return _shorten(message) if message else ""


def message_of(payload: Any) -> str | None:
    """The message in common error shapes: ``{"error": {"message"}}``, ``{"error": "..."}``,
    ``{"message"}``, ``{"detail"}``."""
    if isinstance(payload, str):
        return payload.strip() or None
    if not isinstance(payload, dict):
        return None
    for key in ("error", "message", "detail"):
        if key in payload:
            found = message_of(payload[key])
            if found:
                return found
    return None


def _shorten(text: str) -> str:
    """The text, or its beginning and its end when it is long: what failed is said first,
    which field or limit often last."""
    if len(text) <= MAX_DETAIL_CHARS:
        return text
    head = MAX_DETAIL_CHARS * 2 // 3
    tail = MAX_DETAIL_CHARS - head - 3
    return f"{text[:head]} … {text[-tail:]}"


_INVALID_REQUEST = re.compile(
    r"validation|invalid|input should be|is not supported|not supported|unsupported"
    r"|must be|required|context.length|maximum context|too long",
    re.IGNORECASE,
)
_STREAMING_TOOLS = re.compile(r"stream", re.IGNORECASE)
_TOOL_WORDS = re.compile(r"tool", re.IGNORECASE)


def says_request_is_invalid(body: bytes | str) -> bool:
    """The error body says the request itself is wrong: sending it again cannot help."""
    return bool(_INVALID_REQUEST.search(error_detail(body)))


def names_streaming_tools(error: ProviderError) -> bool:
    """The provider says it cannot stream a request that offers tools."""
    return bool(_STREAMING_TOOLS.search(error.message) and _TOOL_WORDS.search(error.message))
