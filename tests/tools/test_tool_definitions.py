"""The eight tool definitions."""

from __future__ import annotations

from szrag.tools import (
    BLOCKED_TOOL_COMMANDS,
    MAX_OUTPUT_BYTES,
    TOOL_TIMEOUT_MS,
    TOOLS,
    tool_definitions,
)

EXPECTED = {
    "getStatus": "/api/status",
    "getCommands": "/api/commands",
    "getReleaseInfo": "/api/release",
    "runCommand": "/api/commands/run",
    "getLogs": "/api/logs",
    "getErrors": "/api/admin/errors",
    "getMetrics": "/api/metrics",
    "getRoutes": "/api/routes",
}


def test_the_spec_constants() -> None:
    assert TOOL_TIMEOUT_MS == 5000
    assert MAX_OUTPUT_BYTES == 32 * 1024
    assert {"ask"} == BLOCKED_TOOL_COMMANDS


def test_eight_tools_with_their_endpoints() -> None:
    assert {tool.name: tool.endpoint for tool in TOOLS} == EXPECTED
    kinds = {tool.name: tool.kind for tool in TOOLS}
    assert kinds.pop("runCommand") == "command_tool"
    assert set(kinds.values()) == {"api_request"}


def test_schemas_reject_undeclared_fields() -> None:
    for tool in TOOLS:
        assert tool.parameters["type"] == "object"
        assert tool.parameters["additionalProperties"] is False, tool.name
        assert tool.description


def test_limits_in_the_schemas() -> None:
    by_name = {tool.name: tool.parameters for tool in TOOLS}
    assert by_name["runCommand"]["required"] == ["commandId"]
    assert by_name["runCommand"]["properties"]["text"]["maxLength"] == 500
    assert by_name["getLogs"]["properties"]["limit"]["maximum"] == 10
    assert by_name["getErrors"]["properties"]["limit"]["maximum"] == 10
    assert by_name["getErrors"]["properties"]["includeStack"]["type"] == "boolean"
    assert set(by_name["getCommands"]["properties"]) == {
        "id",
        "name",
        "description",
        "category",
        "usageHint",
        "text",
    }


def test_openai_function_format() -> None:
    definitions = tool_definitions()
    assert len(definitions) == 8
    for definition in definitions:
        assert definition["type"] == "function"
        assert set(definition["function"]) == {"name", "description", "parameters"}
