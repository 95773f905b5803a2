"""``szrag doctor`` against scripted providers: a working one, a broken one, a llama.cpp one."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner

from szrag.base.settings import Settings
from szrag.cli import main
from szrag.llm.doctor import FAIL, OK, WARN, check_provider, format_checks, verdict
from szrag.llm.testing import (
    Reply,
    ScriptedProvider,
    completion,
    free_port,
    json_reply,
    serve,
    text_reply,
    tool_reply,
)

MODELS = json_reply({"object": "list", "data": [{"id": "test-model"}, {"id": "other"}]})


async def test_a_working_provider_passes_every_check(
    provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(MODELS, text_reply("OK"), text_reply("OK"), tool_reply(("ping", "{}")))

    checks = await check_provider(settings)

    assert [(check.name, check.status) for check in checks] == [
        ("configuration", OK),
        ("reachable", OK),
        ("key", OK),
        ("model listed", OK),
        ("completion", OK),
        ("streaming", OK),
        ("tool calls", OK),
        ("tool streaming", OK),
    ]
    assert verdict(checks)
    assert provider.requests[0].method == "GET" and provider.requests[0].path == "/v1/models"
    assert provider.requests[1].json["max_tokens"] == 16  # a check costs a few tokens


async def test_an_unreachable_provider_says_what_to_change(settings: Settings) -> None:
    broken = dataclasses.replace(settings, ai_url=f"http://127.0.0.1:{free_port()}/v1")

    checks = await check_provider(broken)

    assert [(check.name, check.status) for check in checks] == [
        ("configuration", OK),
        ("reachable", FAIL),
    ]
    assert not verdict(checks)
    assert "AI_URL" in (checks[-1].hint or "")
    assert "FAIL  reachable:" in format_checks(checks)


async def test_a_server_that_dies_on_the_first_completion_is_not_blamed_on_the_url(
    settings: Settings,
) -> None:
    dying = ScriptedProvider()
    with serve(dying) as base_url:
        dying.script(MODELS, Reply(chunks=(), crash=True))
        checks = await check_provider(dataclasses.replace(settings, ai_url=base_url))

    completion_check = checks[-1]
    assert (completion_check.name, completion_check.status) == ("completion", FAIL)
    assert "closed the connection" in completion_check.detail
    assert "AI_URL" not in (completion_check.hint or "")
    assert "log" in (completion_check.hint or "")


async def test_a_rejected_key_and_an_unlisted_model(
    provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(json_reply({"error": {"message": "invalid api key"}}, status=401))
    rejected = await check_provider(settings)
    assert (rejected[-1].name, rejected[-1].status) == ("key", FAIL)
    assert "invalid api key" in rejected[-1].detail

    provider.reset()
    provider.script(MODELS, text_reply("OK"), text_reply("OK"), tool_reply(("ping", "{}")))
    unlisted = await check_provider(dataclasses.replace(settings, ai_model="gpt-9"))
    listed = next(check for check in unlisted if check.name == "model listed")
    assert listed.status == WARN and "test-model" in listed.detail
    # it answered to gpt-9 all the same: the server takes any name, as llama.cpp's does
    assert "answers any model name" in listed.detail
    assert "one of other, test-model" in listed.detail
    assert verdict(unlisted)


async def test_an_unlisted_model_the_server_refuses_keeps_the_plain_warning(
    provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(MODELS, json_reply({"error": {"message": "model gpt-9 not found"}}, status=404))

    checks = await check_provider(dataclasses.replace(settings, ai_model="gpt-9"))

    listed = next(check for check in checks if check.name == "model listed")
    assert listed.status == WARN and "answers any" not in listed.detail
    assert checks[-1].name == "completion" and checks[-1].status == FAIL


async def test_a_llama_cpp_server_is_reported_as_it_behaves(
    provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(
        MODELS,
        json_reply(completion("OK")),  # answers JSON to a streamed request
        Reply(chunks=()),  # the streaming check: an empty stream
        Reply(chunks=()),  # tools, streamed: an empty stream again
        json_reply(completion(tool_calls=[{"id": "c", "type": "function",
                                           "function": {"name": "ping", "arguments": "{}"}}])),
    )  # fmt: skip

    checks = {check.name: check for check in await check_provider(settings)}

    assert checks["streaming"].status == WARN and "empty stream" in checks["streaming"].detail
    assert checks["tool calls"].status == OK  # asked unstreamed, as answering would
    tool_streaming = checks["tool streaming"]
    assert tool_streaming.status == WARN
    assert "unstreamed" in tool_streaming.detail
    assert "no text arrives until a round's whole reply is ready" in tool_streaming.detail
    assert "SZRAG_AI_READ_TIMEOUT" in (tool_streaming.hint or "")


def test_the_command_prints_json_and_fails_on_a_broken_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AI_URL", f"http://127.0.0.1:{free_port()}/v1")
    monkeypatch.setenv("AI_API_KEY", "k")
    result = CliRunner().invoke(main, ["doctor", "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert [item["name"] for item in report] == ["configuration", "reachable"]
    assert report[1]["status"] == "fail" and report[1]["hint"]
    monkeypatch.delenv("AI_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    human = CliRunner().invoke(main, ["doctor"])
    assert human.exit_code == 1 and "AI_API_KEY" in human.stdout


def test_the_doctor_says_which_key_goes_where(
    monkeypatch: pytest.MonkeyPatch, provider_server: tuple[ScriptedProvider, str]
) -> None:
    provider, base_url = provider_server
    provider.reset()
    provider.script(MODELS, text_reply("OK"), text_reply("OK"), tool_reply(("ping", "{}")))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-only")
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("AI_MODEL", "test-model")
    result = CliRunner().invoke(main, ["doctor", "--json"])
    report = json.loads(result.stdout)
    assert report[0]["detail"] == (
        f"the key from OPENAI_API_KEY goes to {base_url}/chat/completions (OPENAI_BASE_URL),"
        " model test-model"
    )
    assert provider.requests[0].headers["authorization"] == "Bearer sk-openai-only"
