"""The eight live tools: names, descriptions, JSON schemas and endpoint labels.

Every schema rejects undeclared fields (``additionalProperties: false``). The endpoint labels
name the data source an activity records; the adapter calls the runtime directly, not HTTP.
An ``admin`` tool reads what only the admin token may read over HTTP (``getErrors``): the
adapter offers and runs it for privileged callers only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from szrag.commands.policy import NEVER_FOR_CALLERS

TOOL_TIMEOUT_MS = 5000
MAX_OUTPUT_BYTES = 32 * 1024
BLOCKED_TOOL_COMMANDS = NEVER_FOR_CALLERS  # the spec's name: /sz-ask from a tool would recurse
MAX_COMMAND_TEXT = 500
MAX_LOG_ENTRIES = 10
MAX_ERROR_ENTRIES = 10
MAX_ROUTES = 200

API_REQUEST = "api_request"
COMMAND_TOOL = "command_tool"
CODE_TOOL = "code_tool"  # read from the index (``tools/code.py``), not the running app


@dataclass(frozen=True)
class ToolDefinition:
    """One live tool as offered to the model."""

    name: str
    description: str
    parameters: dict[str, Any]
    endpoint: str
    kind: str = API_REQUEST
    admin: bool = False  # offered and run only for privileged callers (the data is admin-only)

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI function-tool form."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def _object(
    properties: dict[str, Any] | None = None, required: tuple[str, ...] = ()
) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties or {},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


def _text(description: str, max_length: int = 200) -> dict[str, Any]:
    return {"type": "string", "description": description, "maxLength": max_length}


def _limit(maximum: int, description: str) -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": maximum,
        "description": f"{description} (1-{maximum}, default {maximum})",
    }


_LEVELS = ["debug", "info", "warning", "error", "critical"]

TOOLS: tuple[ToolDefinition, ...] = (
    ToolDefinition(
        "getStatus",
        "Read the live status of the running service: version, uptime, Python and platform, "
        "the repository's Git branch and commit, index statistics and deployment fields. "
        "This is current runtime evidence, not repository text.",
        _object(),
        "/api/status",
    ),
    ToolDefinition(
        "getCommands",
        "List the registered commands (the /sz-* commands: repository and runtime commands and built-in utilities). With no arguments it returns only the "
        "command ids. `id` looks one command up exactly. `name`, `description`, `category`, "
        "`usageHint` and `text` are case-insensitive substring filters (`text` searches every "
        "field); given together they must all match. Each result says whether runCommand may "
        "run it.",
        _object(
            {
                "id": _text("Exact command id, e.g. hash", 64),
                "name": _text("Part of the slash name, e.g. /sz-ha"),
                "description": _text("Part of the description"),
                "category": _text("Part of the category, e.g. crypto"),
                "usageHint": _text("Part of the usage hint"),
                "text": _text("Substring searched in every field"),
            }
        ),
        "/api/commands",
    ),
    ToolDefinition(
        "getReleaseInfo",
        "Read version and release information: the service version, the project version and "
        "the release notes from the repository's CHANGELOG or release history, latest by "
        "default or of one version.",
        _object({"version": _text("A version to look up, e.g. 1.2.0", 64)}),
        "/api/release",
    ),
    ToolDefinition(
        "runCommand",
        "Run a registered command (an /sz-* command) and return its responses. Call it when the user "
        "asks to run, execute, use, call or invoke a command, then use its output as evidence "
        "in the answer. Only allowlisted commands run; `ask` is never available here.",
        _object(
            {
                "commandId": {
                    "type": "string",
                    "description": "The command id (e.g. hash) or slash name (e.g. /sz-hash)",
                    "minLength": 1,
                    "maxLength": 64,
                },
                "text": _text("The command's input text", MAX_COMMAND_TEXT),
            },
            required=("commandId",),
        ),
        "/api/commands/run",
        COMMAND_TOOL,
    ),
    ToolDefinition(
        "getLogs",
        f"Read the latest log entries of the running service (at most {MAX_LOG_ENTRIES}), "
        "oldest first, optionally from a minimum level and only since a time.",
        _object(
            {
                "limit": _limit(MAX_LOG_ENTRIES, "How many entries"),
                "level": {"type": "string", "enum": _LEVELS, "description": "Minimum level"},
                "since": _text(
                    "Only entries at or after this: an ISO 8601 time, or a span back from now "
                    "such as 15m, 2h, 1d",
                    40,
                ),
            }
        ),
        "/api/logs",
    ),
    ToolDefinition(
        "getErrors",
        f"Read the latest errors the service caught (at most {MAX_ERROR_ENTRIES}), newest "
        "first; stack traces only when includeStack is true.",
        _object(
            {
                "limit": _limit(MAX_ERROR_ENTRIES, "How many errors"),
                "includeStack": {"type": "boolean", "description": "Include stack traces"},
            }
        ),
        "/api/admin/errors",
        admin=True,
    ),
    ToolDefinition(
        "getMetrics",
        "Read the service's current metrics: commands executed and failed, unique users and "
        "channels, per-command counts and latency, and tool calls; from a Prometheus "
        "exposition, the samples, optionally only those whose name contains `name` and whose "
        "labels include `label` (`key=value`).",
        _object(
            {
                "name": _text("Substring of the metric name, e.g. http_requests"),
                "label": _text("A label the samples must have, e.g. route=/api/report"),
            }
        ),
        "/api/metrics",
    ),
    ToolDefinition(
        "getRoutes",
        "List the HTTP routes detected in the current repository index (method, route: the "
        "URL path, path: the file that serves it, line, handler), optionally filtered by method "
        "or a substring of the route.",
        _object(
            {
                "method": _text("HTTP method, e.g. GET", 10),
                "route": _text("Substring of the route's URL path, e.g. /api/"),
                "limit": _limit(MAX_ROUTES, "How many routes"),
            }
        ),
        "/api/routes",
    ),
)

TOOLS_BY_NAME: dict[str, ToolDefinition] = {tool.name: tool for tool in TOOLS}


def tool_definitions() -> list[dict[str, Any]]:
    """Every tool in the OpenAI function-tool form."""
    return [tool.to_openai() for tool in TOOLS]
