"""The code tools a model may call in the default profile: what each reads from the index,
the errors it gives, the slackzilla profile's eight live tools alone, and a real tool loop
in which the model reads the lines an excerpt showed in part."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from szrag.answer import Question
from szrag.base.settings import Settings
from szrag.index import load_index
from szrag.llm import LIVE_DATA_LABEL
from szrag.llm.testing import ScriptedProvider, text_reply, tool_reply
from szrag.service.host import Host, answer_question_async
from szrag.tools import TOOLS
from szrag.tools.code import CODE_LABEL, CODE_TOOLS, MAX_READ_LINES, READ_LINES

CODE_NAMES = [tool.name for tool in CODE_TOOLS]
LIVE_NAMES = [tool.name for tool in TOOLS]


@pytest.fixture
def settings(provider_settings: Callable[..., Settings]) -> Settings:
    return provider_settings()


async def call(host: Host, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    result = await host.tools().call(name, json.dumps(arguments))
    return result.ok, result.content


def test_the_default_profile_offers_the_code_tools_and_slackzilla_the_live_ones_alone(
    retrieval_repo: Path,
) -> None:
    default = Host.from_env(retrieval_repo)
    names = [tool["function"]["name"] for tool in default.tools().definitions()]
    assert names == LIVE_NAMES + CODE_NAMES
    (retrieval_repo / ".rag").mkdir(exist_ok=True)
    (retrieval_repo / ".rag/config.toml").write_text('profile = "slackzilla"\n')
    spec = Host.from_env(retrieval_repo)
    assert spec.config.repository.profile.name == "slackzilla"
    assert [tool["function"]["name"] for tool in spec.tools().definitions()] == LIVE_NAMES


async def test_read_code_gives_numbered_lines_and_says_whether_the_file_goes_on(
    retrieval_repo: Path,
) -> None:
    host = Host.from_env(retrieval_repo)
    lines = (retrieval_repo / "server/webhook.js").read_text().splitlines()
    ok, read = await call(host, "readCode", {"path": "server/webhook.js", "startLine": 4})
    assert ok
    shown = read["text"].splitlines()
    assert shown[0] == f"4: {lines[3]}"
    assert (read["startLine"], read["endLine"]) == (4, min(len(lines), 4 + READ_LINES - 1))
    assert read["moreLines"] is (len(lines) > 4 + READ_LINES - 1)
    ok, tail = await call(
        host, "readCode", {"path": "server/webhook.js", "startLine": 14, "endLine": 14}
    )
    assert ok and tail["text"] == f"14: {lines[13]}" and tail["moreLines"] is True
    ok, whole = await call(
        host, "readCode", {"path": "./server/webhook.js", "startLine": 1, "endLine": 100_000}
    )
    assert ok and whole["path"] == "server/webhook.js"
    assert whole["endLine"] == min(len(lines), MAX_READ_LINES)


async def test_read_code_names_what_is_wrong(retrieval_repo: Path) -> None:
    host = Host.from_env(retrieval_repo)
    lines = len((retrieval_repo / "server/webhook.js").read_text().splitlines())
    cases: dict[str, tuple[dict[str, Any], str]] = {
        "no/such/file.js": ({"path": "no/such/file.js"}, "is not in the index"),
        "outside": ({"path": "../secrets.txt"}, "outside the indexed root"),
        "past the end": (
            {"path": "server/webhook.js", "startLine": lines + 10},
            f"fewer than {lines + 10} lines",
        ),
    }
    for case, (arguments, message) in cases.items():
        ok, content = await call(host, "readCode", arguments)
        assert not ok, case
        assert content["error"]["type"] == "not_found", case
        assert message in content["error"]["message"], case
        assert str(retrieval_repo) not in content["error"]["message"], case  # the server's folder
    for arguments in ({"startLine": 0}, {"startLine": 9, "endLine": 3}):
        ok, content = await call(host, "readCode", {"path": "server/webhook.js", **arguments})
        assert not ok and content["error"]["type"] == "invalid_arguments", arguments
    assert "endLine 3 is before startLine 9" in content["error"]["message"]


async def test_read_code_redacts_secrets_before_it_numbers_the_lines(
    retrieval_repo: Path,
) -> None:
    key = "sk-" + "Q3v9Lm2Xw8Rt5Yp1Zk7Nb4Hc6Jd0Fg"
    password = "Xk29" + "fhQ2mz"
    body = "MIIEpAIBAAKCAQEA1234567890abcdefghijklmnop\nqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"
    (retrieval_repo / "server/keys.js").write_text(
        f'const openai = "{key}";\nmodule.exports = {{ openai }};\n'
    )
    (retrieval_repo / "config/deploy.yaml").write_text(
        f"name: deploy\npassword: {password}\nkey: |\n"
        f"  -----BEGIN RSA PRIVATE KEY-----\n  {body.replace(chr(10), chr(10) + '  ')}\n"
        "  -----END RSA PRIVATE KEY-----\nregion: eu\n"
    )
    host = Host.from_env(retrieval_repo)
    ok, read = await call(host, "readCode", {"path": "server/keys.js"})
    assert ok and "const openai" in read["text"]
    assert key not in json.dumps(read)
    ok, config = await call(host, "readCode", {"path": "config/deploy.yaml"})
    assert ok
    shown = json.dumps(config)
    assert password not in shown and "MIIEpAIBAAKCAQEA" not in shown and "qrstuvwxyz" not in shown
    lines = config["text"].splitlines()
    assert lines[0] == "1: name: deploy" and lines[-1] == "8: region: eu"  # numbers still true
    assert any(line.startswith("4: ") and "REDACTED" in line for line in lines)


async def test_search_symbols_and_references_read_the_index(retrieval_repo: Path) -> None:
    host = Host.from_env(retrieval_repo)
    ok, found = await call(host, "searchCode", {"question": "deploy webhook signature"})
    assert ok and found["sources"][0]["path"] == "server/webhook.js"
    assert len({source["path"] for source in found["sources"]}) <= 5  # files, each its units
    ok, symbols = await call(host, "findSymbols", {"question": "verifyGithubSignature"})
    assert ok and symbols["symbols"][0]["name"] == "verifyGithubSignature"
    assert (symbols["symbols"][0]["path"], symbols["symbols"][0]["line"]) == (
        "server/webhook.js",
        4,
    )
    ok, calls = await call(host, "findReferences", {"name": "verifyGithubSignature"})
    assert ok and calls["name"] == "verifyGithubSignature"
    assert {"server/webhook.js"} <= {reference["path"] for reference in calls["references"]}


async def test_code_tools_read_a_given_index(retrieval_repo: Path) -> None:
    with load_index(retrieval_repo) as index:
        host = Host.from_env(retrieval_repo, index=index)
        ok, read = await call(host, "readCode", {"path": "README.md", "endLine": 1})
    assert ok and read["text"].startswith("1: ")


async def test_the_model_reads_the_rest_of_a_function_and_is_told_it_is_code(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(
        tool_reply(
            ("readCode", json.dumps({"path": "server/webhook.js", "startLine": 14})),
            text="Reading the handler.",
        ),
        text_reply("The handler is at server/webhook.js:14-40."),
    )
    host = Host.from_env(retrieval_repo, settings=settings)
    answer = await answer_question_async(
        Question("how does the deploy webhook verify signatures?", tools=True), host
    )

    first, second = (request.json for request in provider.requests)
    assert [tool["function"]["name"] for tool in first["tools"]] == LIVE_NAMES + CODE_NAMES
    system = first["messages"][0]["content"]
    assert "Answer only from the evidence" in system and "`readCode`" in system
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"].startswith(CODE_LABEL + "\n")
    assert not tool_message["content"].startswith(LIVE_DATA_LABEL)
    read = json.loads(tool_message["content"].removeprefix(CODE_LABEL + "\n"))
    assert read["path"] == "server/webhook.js" and read["startLine"] == 14
    assert "14: async function handleDeployWebhook" in read["text"]
    assert answer.answer == "The handler is at server/webhook.js:14-40."


async def test_a_window_too_small_for_the_code_tools_keeps_the_evidence(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("ok"), text_reply("ok"))
    small = Host.from_env(
        retrieval_repo,
        {"SZRAG_CONTEXT_WINDOW": "6000", "SZRAG_ANSWER_TOKENS": "600"},
        settings=settings,
    )
    await answer_question_async(Question("how are webhooks verified?", tools=True), small)
    large = Host.from_env(retrieval_repo, {"SZRAG_CONTEXT_WINDOW": "32000"}, settings=settings)
    await answer_question_async(Question("how are webhooks verified?", tools=True), large)

    offered = [
        [tool["function"]["name"] for tool in request.json["tools"]]
        for request in provider.requests
    ]
    assert offered == [LIVE_NAMES, LIVE_NAMES + CODE_NAMES]
    assert "`readCode`" not in provider.requests[0].json["messages"][0]["content"]


async def test_a_slow_code_tool_is_cut_at_the_time_limit_whatever_index_it_reads(
    retrieval_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from szrag.tools import code

    def slow(index: Any, args: Any) -> Any:
        time.sleep(1.5)
        return {}

    monkeypatch.setitem(code.RUNNERS, "readCode", slow)
    with load_index(retrieval_repo) as index:  # bound to this thread: read in one of its own
        adapter = Host.from_env(retrieval_repo, index=index).tools()
        adapter.timeout = 0.2
        started = time.perf_counter()
        result = await adapter.call("readCode", {"path": "README.md"})
    assert time.perf_counter() - started < 1.0
    assert not result.ok and result.content["error"]["type"] == "timeout"
