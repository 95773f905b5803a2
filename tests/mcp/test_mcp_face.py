"""The MCP face in process: calls made while the start-up thread builds the shared views."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from szrag.mcp import McpFace

FIXTURES = Path(__file__).parent.parent / "fixtures"


async def test_calls_needing_the_views_wait_for_the_start_up_build(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "python_app", root)
    face = McpFace.open(root, {}, privileged=True)
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
