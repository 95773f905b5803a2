"""The model side of szrag: an OpenAI-compatible streaming client, the tool loop and prompts.

The names below are imported on first use (PEP 562): a keyless answer reads the token usage
record without paying for the HTTP client behind the rest."""

from __future__ import annotations

from typing import TYPE_CHECKING

from szrag.base.lazy import lazy_getattr

if TYPE_CHECKING:
    from szrag.llm.client import ChatClient
    from szrag.llm.errors import (
        MalformedResponseError,
        ProviderAuthError,
        ProviderConnectionError,
        ProviderNotFoundError,
        ProviderRateLimitError,
        ProviderRequestError,
        ProviderServerError,
        ProviderTimeoutError,
        StreamCutError,
    )
    from szrag.llm.loop import (
        LIVE_DATA_LABEL,
        MAX_TOOL_ROUNDS,
        LoopResult,
        ToolExecutor,
        ToolLoop,
        build_ai_fallback,
        estimate_tokens,
    )
    from szrag.llm.prompts import (
        SYSTEM_PROMPT,
        TOOL_CALL_LIMIT_PROMPT,
        build_user_message,
        load_prompt,
    )
    from szrag.llm.stream import ModelReply, ToolCall
    from szrag.llm.usage import Usage

_HOMES = {
    "LIVE_DATA_LABEL": "szrag.llm.loop",
    "MAX_TOOL_ROUNDS": "szrag.llm.loop",
    "SYSTEM_PROMPT": "szrag.llm.prompts",
    "TOOL_CALL_LIMIT_PROMPT": "szrag.llm.prompts",
    "ChatClient": "szrag.llm.client",
    "LoopResult": "szrag.llm.loop",
    "MalformedResponseError": "szrag.llm.errors",
    "ModelReply": "szrag.llm.stream",
    "ProviderAuthError": "szrag.llm.errors",
    "ProviderConnectionError": "szrag.llm.errors",
    "ProviderNotFoundError": "szrag.llm.errors",
    "ProviderRateLimitError": "szrag.llm.errors",
    "ProviderRequestError": "szrag.llm.errors",
    "ProviderServerError": "szrag.llm.errors",
    "ProviderTimeoutError": "szrag.llm.errors",
    "StreamCutError": "szrag.llm.errors",
    "ToolCall": "szrag.llm.stream",
    "ToolExecutor": "szrag.llm.loop",
    "ToolLoop": "szrag.llm.loop",
    "Usage": "szrag.llm.usage",
    "build_ai_fallback": "szrag.llm.loop",
    "build_user_message": "szrag.llm.prompts",
    "estimate_tokens": "szrag.llm.loop",
    "load_prompt": "szrag.llm.prompts",
}

__getattr__ = lazy_getattr(__name__, _HOMES)

__all__ = [
    "LIVE_DATA_LABEL",
    "MAX_TOOL_ROUNDS",
    "SYSTEM_PROMPT",
    "TOOL_CALL_LIMIT_PROMPT",
    "ChatClient",
    "LoopResult",
    "MalformedResponseError",
    "ModelReply",
    "ProviderAuthError",
    "ProviderConnectionError",
    "ProviderNotFoundError",
    "ProviderRateLimitError",
    "ProviderRequestError",
    "ProviderServerError",
    "ProviderTimeoutError",
    "StreamCutError",
    "ToolCall",
    "ToolExecutor",
    "ToolLoop",
    "Usage",
    "build_ai_fallback",
    "build_user_message",
    "estimate_tokens",
    "load_prompt",
]
