"""The model side of szrag: an OpenAI-compatible streaming client, the tool loop and prompts."""

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
    Usage,
    build_ai_fallback,
    estimate_tokens,
)
from szrag.llm.prompts import SYSTEM_PROMPT, TOOL_CALL_LIMIT_PROMPT, build_user_message, load_prompt
from szrag.llm.stream import ModelReply, ToolCall

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
