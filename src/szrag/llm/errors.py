"""Reading a provider's failures: the error for an HTTP status, the provider's own message.

The classes live in :mod:`szrag.errors` (the one tree) and are re-exported here for the
client's callers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from szrag.errors import (
    MalformedResponseError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderNotFoundError,
    ProviderRateLimitError,
    ProviderRequestError,
    ProviderServerError,
    ProviderTimeoutError,
    ReplyTooLargeError,
    StreamCutError,
)

__all__ = [
    "MalformedResponseError",
    "ProviderAuthError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderNotFoundError",
    "ProviderRateLimitError",
    "ProviderRequestError",
    "ProviderServerError",
    "ProviderTimeoutError",
    "ReplyTooLargeError",
    "StreamCutError",
    "error_detail",
    "message_of",
    "names_streaming_tools",
    "provider_code",
    "says_request_is_invalid",
    "status_error",
]

MAX_DETAIL_CHARS = 1200  # long validation errors name the field near their end


def provider_code(error: ProviderError) -> str:
    """The short code of ``error`` (``provider`` for the bare base class)."""
    return error.code


def status_error(status: int, body: bytes, *, endpoint: str) -> ProviderError:
    """The error for an HTTP ``status`` answered by ``endpoint``, with the provider's detail."""
    detail = error_detail(body)
    suffix = f": {detail}" if detail else ""
    message: str
    kind: type[ProviderError]
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
