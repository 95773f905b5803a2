"""The model may read admin-only data (getErrors) only for a caller holding the admin token."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx

from szrag.llm.testing import ScriptedProvider, text_reply, tool_reply

StartServer = Callable[..., str]

QUESTION = "What errors has the service had?"


def offered(provider: ScriptedProvider) -> set[str]:
    tools = provider.requests[0].json.get("tools") or []
    return {tool["function"]["name"] for tool in tools}


def tool_replies(provider: ScriptedProvider) -> list[dict[str, object]]:
    """The JSON of each tool result the model read (after its evidence label)."""
    messages = provider.requests[-1].json["messages"]
    texts = [str(message["content"]) for message in messages if message["role"] == "tool"]
    return [json.loads(text[text.index("{") :]) for text in texts]


def test_an_ordinary_caller_cannot_have_the_model_read_errors(
    start_server: StartServer, provider: ScriptedProvider
) -> None:
    provider.script(
        tool_reply(("getErrors", json.dumps({"includeStack": True}))), text_reply("None.")
    )
    base = start_server(admin_token="admin-secret")

    response = httpx.post(f"{base}/api/ask", json={"question": QUESTION}, timeout=15)

    assert response.status_code == 200
    assert "getErrors" not in offered(provider) and "getStatus" in offered(provider)
    (reply,) = tool_replies(provider)
    assert reply == {
        "error": {"type": "forbidden", "message": "getErrors is only available to administrators"}
    }


def test_the_admin_token_lets_the_model_read_errors(
    start_server: StartServer, provider: ScriptedProvider
) -> None:
    provider.script(tool_reply(("getErrors", "{}")), text_reply("None."))
    base = start_server(admin_token="admin-secret")

    response = httpx.post(
        f"{base}/api/ask",
        json={"question": QUESTION},
        headers={"Authorization": "Bearer admin-secret"},
        timeout=15,
    )

    assert response.status_code == 200
    assert "getErrors" in offered(provider)
    (reply,) = tool_replies(provider)
    assert reply == {"errors": []}
