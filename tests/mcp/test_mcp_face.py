"""The MCP face in process: calls made while the start-up thread builds the shared views."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

from szrag.mcp import McpFace
from szrag.service.configuration import load_config
from szrag.tools.definitions import TOOLS

FIXTURES = Path(__file__).parent.parent / "fixtures"


async def test_calls_needing_the_views_wait_for_the_start_up_build(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "python_app", root)
    face = McpFace.open(load_config(root, {}), privileged=True)
    try:
        building: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        face.warming = building
        context = asyncio.create_task(
            face.call("get_context", {"question": "how are items created?"}, privileged=True)
        )
        found = await face.call("search_code", {"question": "create an item"}, privileged=True)
        await asyncio.sleep(0.2)

        assert not found.is_error  # a search reads no shared view: it does not wait
        assert not context.done()  # the context waits for the build instead of racing it

        building.set_result(None)
        result = await asyncio.wait_for(context, 30)
        assert not result.is_error and result.structured_content["files"]
    finally:
        face.close()


QUESTION_TOOLS = ("search_code", "get_context", "find_symbols", "find_routes")


async def test_tools_are_named_one_way_and_take_the_question_one_way(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "python_app", root)
    face = McpFace.open(load_config(root, {}), privileged=True)
    try:
        listed = {tool.name: tool for tool in face.tools(privileged=True)}
        assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", name) for name in listed), sorted(listed)
        assert {"get_status", "get_release_info", "run_command", "get_errors"} <= set(listed)
        assert "runCommand" in {tool.name for tool in TOOLS}  # the model's own loop keeps it
        assert "run_command" in (listed["get_commands"].description or "")
        for name in QUESTION_TOOLS:
            properties = listed[name].input_schema["properties"]
            assert "question" in properties and "query" not in properties, name

        by_question = await face.call(
            "find_symbols", {"question": "require_token"}, privileged=True
        )
        by_query = await face.call("find_symbols", {"query": "require_token"}, privileged=True)
        routes = await face.call(
            "find_routes", {"query": "items", "method": "DELETE"}, privileged=True
        )
        both = await face.call(
            "find_symbols", {"question": "require_token", "query": "x"}, privileged=True
        )
        spec_named = await face.call("getStatus", {}, privileged=True)
        snake_named = await face.call("get_status", {}, privileged=True)
    finally:
        face.close()
    assert not by_query.is_error  # the old name is still accepted
    assert by_query.structured_content == by_question.structured_content
    assert by_question.structured_content["symbols"][0]["name"] == "require_token"
    assert not routes.is_error and routes.structured_content["routes"]
    assert both.is_error and "'query'" in both.structured_content["error"]["message"]
    assert not spec_named.is_error and not snake_named.is_error
    assert spec_named.structured_content["service"] == snake_named.structured_content["service"]
