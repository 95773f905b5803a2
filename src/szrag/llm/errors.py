"""Reading a provider's failures: the error for an HTTP status, the provider's own message.

The classes live in :mod:`szrag.base.errors` (the one tree) and are re-exported here for the
client's callers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from szrag.base.errors import (
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
    "Overflow",
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
    "context_overflow",
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


_OVERFLOW = re.compile(
    r"context length|context window|context size|maximum context|too many tokens|too long",
    re.IGNORECASE,
)
# "maximum context length is W" (OpenAI, vLLM); "exceed context window of W" (llama-cpp-python)
_WINDOW = re.compile(r"maximum context length is (\d+)|context window of (\d+)", re.IGNORECASE)
# "(M in the messages, C in the completion)"; "Requested tokens (M)" (llama-cpp-python)
_SENT = re.compile(
    r"(\d+) in the messages(?:, (\d+) in the completion)?|requested tokens \((\d+)\)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Overflow:
    """A refusal of a request longer than the model's window, with the provider's figures (in
    its own tokens; None where it gave none)."""

    window: int | None = None
    prompt: int | None = None  # the messages as the provider counted them
    completion: int = 0  # the tokens the request kept for the answer


def context_overflow(error: ProviderError) -> Overflow | None:
    """The figures of a refusal that says the request is over the model's window, or None
    when the error is about something else."""
    if not _OVERFLOW.search(error.message):
        return None
    window, sent = _WINDOW.search(error.message), _SENT.search(error.message)
    prompt = (sent.group(1) or sent.group(3)) if sent else None
    return Overflow(
        window=int(window.group(1) or window.group(2)) if window else None,
        prompt=int(prompt) if prompt else None,
        completion=int(sent.group(2) or 0) if sent else 0,
    )
