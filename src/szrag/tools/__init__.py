"""The live tools a model can call during generation, and the adapter that runs them."""

from __future__ import annotations

from szrag.tools.adapter import ToolAdapter, ToolEvent, ToolResult, fit_output
from szrag.tools.definitions import (
    BLOCKED_TOOL_COMMANDS,
    MAX_OUTPUT_BYTES,
    TOOL_TIMEOUT_MS,
    TOOLS,
    ToolDefinition,
    tool_definitions,
)
from szrag.tools.sanitise import is_sensitive_key, sanitise, sanitise_text

__all__ = [
    "BLOCKED_TOOL_COMMANDS",
    "MAX_OUTPUT_BYTES",
    "TOOLS",
    "TOOL_TIMEOUT_MS",
    "ToolAdapter",
    "ToolDefinition",
    "ToolEvent",
    "ToolResult",
    "fit_output",
    "is_sensitive_key",
    "sanitise",
    "sanitise_text",
    "tool_definitions",
]
