"""answer_question() on a fixture repository, with a scripted provider on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from szrag.answer import Listeners, NamedCommand, Question
from szrag.base.activity import Activity
from szrag.base.errors import CommandError, ConfigError, QuestionError
from szrag.base.settings import Settings
from szrag.commands import Allowlist
from szrag.conversations import ConversationStore
from szrag.index import load_index
from szrag.llm.loop import LIVE_DATA_LABEL
from szrag.llm.prompts import override_path
from szrag.llm.testing import ScriptedProvider, json_reply, text_reply, tool_reply
from szrag.service.audit import AuditLog
from szrag.service.host import (
    Host,
    answer_question,
    answer_question_async,
    debug_question,
    debug_question_async,
)

QUESTION = "How does the webhook deploy work?"
AI_KEYS = [
    "answer",
    "responseRounds",
    "sources",
    "images",
    "command",
    "activities",
    "trace",
    "usage",
]


def asked(text: str, **options: Any) -> Question:
    """The question a face would build from these options (``command_id`` and
    ``command_text``, ``source``, ``on_activity`` and ``on_token`` as the faces name them)."""
    command_id, command_text = options.pop("command_id", None), options.pop("command_text", None)
    if command_id is not None:
        options["command"] = NamedCommand(command_id, command_text or "")
    if "source" in options:
        options["face"] = options.pop("source")
    listened = {key: options.pop(key) for key in ("on_activity", "on_token") if key in options}
    return Question(text, listeners=Listeners(**listened), **options)


async def answer_json(text: str, host: Any, **options: Any) -> dict[str, Any]:
    """The public JSON of an answer: what every face sends."""
    return (await answer_question_async(asked(text, **options), host)).to_dict()


async def debug_json(text: str, host: Any, **options: Any) -> dict[str, Any]:
    return (await debug_question_async(asked(text, **options), host)).to_dict()


def answer_sync_json(text: str, host: Any, **options: Any) -> dict[str, Any]:
    return answer_question(asked(text, **options), host).to_dict()


def debug_sync_json(text: str, host: Any, **options: Any) -> dict[str, Any]:
    return debug_question(asked(text, **options), host).to_dict()


@pytest.fixture
def settings(provider_settings: Callable[..., Settings]) -> Settings:
    return provider_settings()


def steps(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(activity["stage"], activity["status"]) for activity in result["activities"]]


async def test_ai_answer_has_the_spec_shape_and_streams_tokens(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(
        text_reply(
            "Webhooks are verified in server/webhook.js.",
            usage={"prompt_tokens": 900, "completion_tokens": 12},
        )
    )
    tokens: list[tuple[str, int]] = []
    seen: list[Activity] = []

    result = await answer_json(
        QUESTION,
        Host.from_env(retrieval_repo, settings=settings),
        on_token=lambda text, number: tokens.append((text, number)),
        on_activity=seen.append,
    )

    assert list(result) == AI_KEYS
    assert result["answer"] == "Webhooks are verified in server/webhook.js."
    assert "".join(text for text, _ in tokens) == result["answer"]
    assert {number for _, number in tokens} == {1}
    assert result["responseRounds"] == 1
    assert result["usage"] == {"input": 900, "output": 12, "total": 912, "estimated": False}
    assert result["command"] is None
    assert result["sources"] and all("path" in source for source in result["sources"])
    assert "server/webhook.js" in [source["path"] for source in result["sources"]]
    assert steps(result) == [
        ("retrieval", "started"),
        ("retrieval", "completed"),
        ("retrieval", "completed"),
        ("context", "completed"),
        ("ai", "started"),
        ("ai", "completed"),
    ]
    assert [activity.to_dict() for activity in seen] == result["activities"]
    assert result["trace"] == result["activities"]
    assert result["trace"] is not result["activities"]


async def test_the_model_receives_the_system_prompt_and_the_evidence(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("ok"))

    host = Host.from_env(retrieval_repo, settings=settings, live_tools=False)
    result = await answer_json(QUESTION, host)

    system, user = provider.requests[0].json["messages"]
    assert system["role"] == "system" and "Answer only from the evidence" in system["content"]
    assert user["role"] == "user"
    assert f"<question>\n{QUESTION}\n</question>" in user["content"]
    first = result["sources"][0]
    assert f"{first['path']}" in user["content"]
    assert "<image_assets>" in user["content"]
    assert "tools" not in provider.requests[0].json


async def test_repository_prompt_override_is_sent(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    path = override_path("SYSTEM_PROMPT", retrieval_repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("Pagebot house rules.", encoding="utf-8")
    provider.script(text_reply("ok"))

    await answer_json(QUESTION, Host.from_env(retrieval_repo, settings=settings))

    assert provider.requests[0].json["messages"][0]["content"] == "Pagebot house rules."


async def test_without_ai_the_result_carries_the_packed_context(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    result = await answer_json(
        QUESTION, Host.from_env(retrieval_repo, settings=settings), with_ai=False, budget=1500
    )

    assert list(result) == ["answer", "sources", "images", "command", "activities", "context"]
    assert result["answer"].startswith("The model was not asked")
    assert "- server/webhook.js:" in result["answer"]
    assert result["context"]["budget"] == 1500
    assert 0 < result["context"]["tokens"] <= 1500
    assert "server/webhook.js" in result["context"]["text"]
    assert steps(result)[-1] == ("context", "completed")
    assert provider.requests == []


async def test_the_library_never_reads_the_process_environment(
    retrieval_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SZRAG_AI_READ_TIMEOUT", "not a number")
    monkeypatch.setenv("AI_API_KEY", "sk-from-the-process")
    monkeypatch.setenv("SZRAG_CONTEXT_BUDGET", "77")

    result = await answer_json(QUESTION, retrieval_repo)

    assert result["sources"] and result["activities"][-1]["message"].startswith("AI_API_KEY")
    with pytest.raises(ConfigError, match="SZRAG_AI_READ_TIMEOUT"):
        Host.from_env(retrieval_repo, {"SZRAG_AI_READ_TIMEOUT": "not a number"})
    given = Host.from_env(retrieval_repo, {"SZRAG_CONTEXT_BUDGET": "77"})
    assert (await answer_json(QUESTION, given, with_ai=False))["context"]["budget"] == 77


async def test_async_callbacks_are_awaited_in_order(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("Streamed answer.", pieces=4))
    events: list[str] = []

    async def on_activity(activity: Activity) -> None:
        await asyncio.sleep(0)
        events.append(f"{activity.stage}:{activity.status}")

    async def on_token(text: str, number: int) -> None:
        await asyncio.sleep(0)
        events.append("token")

    await answer_json(
        QUESTION,
        Host.from_env(retrieval_repo, settings=settings),
        on_activity=on_activity,
        on_token=on_token,
    )

    assert events[-6:] == ["ai:started", "token", "token", "token", "token", "ai:completed"]


async def test_missing_key_gives_a_local_answer_and_a_failed_ai_activity(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    keyless = Settings(ai_url=settings.ai_url)

    result = await answer_json(QUESTION, Host.from_env(retrieval_repo, settings=keyless))

    assert list(result) == ["answer", "sources", "images", "command", "activities"]
    assert "AI_API_KEY" in result["answer"] and "AI_URL" in result["answer"]
    assert "server/webhook.js" in result["answer"]
    assert steps(result)[-1] == ("ai", "failed")
    assert provider.requests == []


async def test_missing_key_is_read_from_the_environment(
    retrieval_repo: Path, provider: ScriptedProvider
) -> None:
    result = await answer_json(QUESTION, retrieval_repo)

    assert "activities" in result and "usage" not in result
    assert result["activities"][-1]["message"].startswith("AI_API_KEY is not set")


async def test_a_provider_failure_is_an_answer_not_a_crash(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(json_reply({"error": {"message": "invalid api key"}}, status=401))

    result = await answer_json(QUESTION, Host.from_env(retrieval_repo, settings=settings))

    assert list(result) == [*AI_KEYS, "error"]
    assert result["error"]["code"] == "auth"
    assert "invalid api key" in result["error"]["message"]
    assert result["answer"].startswith("The model could not answer")
    assert "server/webhook.js" in result["answer"]
    assert steps(result)[-2:] == [("ai", "started"), ("ai", "failed")]
    assert result["responseRounds"] == 1


async def test_an_inferred_command_runs_first_and_skips_codebase_context(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("2 + 2 is 4."))

    result = await answer_json(
        "Please run /sz-calc 2 + 2", Host.from_env(retrieval_repo, settings=settings)
    )

    assert result["command"]["id"] == "calc"
    assert result["command"]["command"] == "/sz-calc"
    assert "4" in result["command"]["responses"][0]["text"]
    assert steps(result)[:2] == [("command", "started"), ("command", "completed")]
    assert ("context", "skipped") in steps(result)
    user = provider.requests[0].json["messages"][1]["content"]
    assert "<command_result>\nCommand: /sz-calc 2 + 2\nResponse 1:" in user
    records = AuditLog.for_root(retrieval_repo, {}).read()
    (audited,) = [record for record in records if record["event"] == "command"]
    assert [record["event"] for record in records] == ["command", "ask"]
    assert (audited["command"], audited["source"], audited["outcome"]) == (
        "calc",
        "inference",
        "ok",
    )


async def test_a_command_failure_is_reported_and_answering_goes_on(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("The expression was invalid."))

    result = await answer_json(
        "question",
        Host.from_env(retrieval_repo, settings=settings),
        command_id="calc",
        command_text="2 +",
    )

    assert result["command"]["responses"] == []
    assert result["command"]["error"]
    assert steps(result)[:2] == [("command", "started"), ("command", "failed")]
    assert result["answer"] == "The expression was invalid."


async def test_an_inferred_command_off_the_allowlist_does_not_run(
    retrieval_repo: Path,
    provider: ScriptedProvider,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider.script(text_reply("Not allowed here."))
    host = Host.from_env(retrieval_repo, {"SZRAG_COMMAND_ALLOWLIST": "ping"}, settings=settings)

    result = await answer_json("Please run /sz-calc 2 + 2", host)

    assert "allowlist" in result["command"]["error"]
    assert steps(result)[1] == ("command", "failed")


async def test_an_unknown_explicit_command_is_the_callers_error(retrieval_repo: Path) -> None:
    with pytest.raises(CommandError, match="unknown command"):
        await answer_json("q", retrieval_repo, command_id="no-such-command")


@pytest.mark.parametrize("question", ["", "   \n"])
async def test_an_empty_question_is_refused(retrieval_repo: Path, question: str) -> None:
    with pytest.raises(QuestionError):
        await answer_json(question, retrieval_repo)


async def test_default_tools_run_and_become_tool_activities(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(
        tool_reply(("getStatus", "{}"), text="Checking."), text_reply("Up and running.")
    )
    tokens: list[tuple[str, int]] = []

    result = await answer_json(
        "Is pagebot up?",
        Host.from_env(retrieval_repo, settings=settings),
        tools=True,
        on_token=lambda text, number: tokens.append((text, number)),
    )

    first, second = (request.json for request in provider.requests)
    assert "getStatus" in [tool["function"]["name"] for tool in first["tools"]]
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"].startswith(LIVE_DATA_LABEL)
    assert result["answer"] == "Up and running."
    assert result["responseRounds"] == 2
    assert steps(result)[-5:] == [
        ("ai", "completed"),
        ("reasoning", "completed"),
        ("tool", "completed"),
        ("ai", "started"),
        ("ai", "completed"),
    ]
    tool = next(a for a in result["activities"] if a["stage"] == "tool")
    assert tool["metadata"]["tool"] == "getStatus"
    assert tool["metadata"]["endpoint"] == "/api/status"
    assert tool["type"] == "api_request"
    assert [number for _, number in tokens] == sorted(number for _, number in tokens)


async def test_tool_activities_reach_the_callers_on_activity(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    seen: list[Activity] = []
    provider.script(tool_reply(("getRoutes", "{}")), text_reply("Routes listed."))

    result = await answer_json(
        "Which routes exist?",
        Host.from_env(retrieval_repo, settings=settings, audit=AuditLog.disabled()),
        tools=True,
        on_activity=seen.append,
    )

    assert [(a.metadata or {})["tool"] for a in seen if a.stage == "tool"] == ["getRoutes"]
    assert [a["metadata"]["tool"] for a in result["activities"] if a["stage"] == "tool"] == [
        "getRoutes"
    ]
    content = provider.requests[1].json["messages"][-1]["content"]
    assert json.loads(content.removeprefix(LIVE_DATA_LABEL))["routes"] is not None


async def test_a_given_index_is_used_and_left_open(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    with load_index(retrieval_repo) as index:
        result = await answer_json(
            QUESTION, Host.from_env(retrieval_repo, settings=settings, index=index), with_ai=False
        )

        assert result["sources"]
        assert index.counts()["files"] > 0


def test_sync_wrapper_matches_the_async_core(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("Same answer."), text_reply("Same answer."))

    sync = answer_sync_json(QUESTION, Host.from_env(retrieval_repo, settings=settings))
    core = asyncio.run(answer_json(QUESTION, Host.from_env(retrieval_repo, settings=settings)))

    assert list(sync) == list(core) == AI_KEYS
    assert sync["answer"] == core["answer"]
    assert sync["sources"] == core["sources"]
    assert steps(sync) == steps(core)


async def test_sync_wrapper_refuses_a_running_loop(retrieval_repo: Path) -> None:
    with pytest.raises(RuntimeError, match="running event loop"):
        answer_sync_json(QUESTION, retrieval_repo)


def test_debug_question_shows_everything_without_running_anything(retrieval_repo: Path) -> None:
    result = debug_sync_json("run /sz-calc 1 + 1 and explain webhook.js", retrieval_repo)

    assert result["command"] == {"id": "calc", "text": "1 + 1 and explain webhook.js"}
    assert result["commandOriented"] is True
    assert result["codebaseContext"] is None
    assert result["context"]["budget"] == 12000  # the default profile's budget
    assert [a["stage"] for a in result["activities"]] == [
        "retrieval",
        "retrieval",
        "retrieval",
        "context",
    ]
    assert AuditLog.for_root(retrieval_repo, {}).read() == []


def test_debug_question_includes_the_codebase_context(retrieval_repo: Path) -> None:
    result = debug_sync_json("Where is verifyGithubSignature in server/webhook.js?", retrieval_repo)

    assert result["command"] is None
    assert result["codebaseContext"] is not None
    assert "server/webhook.js" in result["codebaseContext"]["files"]


async def test_a_host_runner_runs_commands_with_its_allowlist_and_observers(
    retrieval_repo: Path,
) -> None:
    from szrag.commands import CommandRunner
    from szrag.commands.model import CommandOutcome

    seen: list[CommandOutcome] = []
    host = Host.from_env(retrieval_repo, allowlist=Allowlist.of(["calc"]))
    host = host.replace(runner=CommandRunner(host.policy, observers=[seen.append]))
    result = await answer_json("Please run /sz-calc 2 + 2", host, with_ai=False)
    assert result["command"]["responses"] and "error" not in result["command"]
    assert [(item.command_id, item.source, item.status) for item in seen] == [
        ("calc", "inference", "ok")
    ]

    refused = await answer_json("Please run /sz-echo hello", host, with_ai=False)
    assert "allowlist" in refused["command"]["error"]
    assert seen[-1].command_id == "echo" and seen[-1].status == "not_allowed"


async def test_source_snippets_reach_callers_redacted(copy_fixture: Any) -> None:
    root = copy_fixture("secrets_app")  # a fixture that plants every kind of secret
    result = await answer_json("slack bot token github token aws keys config", root, with_ai=False)
    texts = "\n".join(source["text"] for source in result["sources"])
    assert result["sources"] and "[REDACTED:" in texts
    for planted in ("xoxb-", "ghp_", "AKIA", "BEGIN RSA PRIVATE KEY"):
        assert planted not in texts
    debug = await debug_json("slack bot token github token aws keys config", root)
    assert "xoxb-" not in json.dumps(debug)


async def test_a_password_in_a_hash_question_never_reaches_the_model(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("Here is the derived key."))
    question = "/sz-hash the password hunter2 with PBKDF2 and 1000 iterations using sha256"
    result = await answer_json(question, Host.from_env(retrieval_repo, settings=settings))
    assert result["command"]["id"] == "hash" and "error" not in result["command"]
    sent = json.dumps(provider.requests[0].json)
    assert "hunter2" not in sent and "[REDACTED:password]" in sent
    assert "hunter2" not in json.dumps(result["activities"])
    assert "hunter2" not in json.dumps(await debug_json(question, retrieval_repo))


async def test_the_input_of_a_sensitive_command_named_explicitly_never_reaches_the_model(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    provider.script(text_reply("Here is the digest."))
    # Slack's `/sz-ask run /sz-hash sha256 hunter2`: the command is named, its input is also
    # in the question
    result = await answer_json(
        "run /sz-hash sha256 hunter2",
        Host.from_env(retrieval_repo, settings=settings),
        command_id="hash",
        command_text="sha256 hunter2",
        remember=True,
    )

    assert result["command"]["id"] == "hash" and "error" not in result["command"]
    sent = json.dumps(provider.requests[0].json)
    assert "hunter2" not in sent and "[REDACTED:command input]" in sent
    [turn] = ConversationStore.for_root(retrieval_repo).turns(result["conversationId"])
    assert turn.question == "run /sz-hash [REDACTED:command input]"


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("/sz-hash sha256 hunter2pass", None),
        ("run /sz-hash sha256 hunter2pass", None),
        ("run /sz-hash sha256 hunter2pass", ("hash", "sha256 hunter2pass")),
    ],
)
async def test_a_command_input_stays_out_of_the_audit_log_the_conversation_and_follow_ups(
    retrieval_repo: Path,
    provider: ScriptedProvider,
    settings: Settings,
    question: str,
    named: tuple[str, str] | None,
) -> None:
    provider.script(text_reply("Here is the digest."), text_reply("It was sha256."))
    host = Host.from_env(retrieval_repo, settings=settings)
    command = {"command_id": named[0], "command_text": named[1]} if named else {}
    first = await answer_json(question, host, remember=True, **command)
    assert first["command"]["id"] == "hash" and "error" not in first["command"]
    await answer_json("which digest did that use?", host, conversation_id=first["conversationId"])

    [ask, _] = [record for record in host.audit.read() if record["event"] == "ask"]
    assert ask["question"].endswith("/sz-hash [REDACTED:command input]")
    for request in provider.requests:
        assert "hunter2pass" not in json.dumps(request.json)
    kept = b"".join(path.read_bytes() for path in (retrieval_repo / ".rag").iterdir())
    assert b"hunter2pass" not in kept


@pytest.mark.parametrize(
    "question",
    ["/sz-hash sha256 hello there", "/sz-token 16", "run /sz-hash pbkdf2 sha256 10 pw s"],
)
async def test_a_secret_command_output_is_shown_to_the_asker_but_never_sent_to_the_model(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings, question: str
) -> None:
    provider.script(text_reply("Done."))

    result = await answer_json(question, Host.from_env(retrieval_repo, settings=settings))

    output = result["command"]["responses"][0]["text"]
    secret = max(re.findall(r"[0-9a-f]{16,}", output), key=len)  # the digest, token or key
    sent = json.dumps(provider.requests[0].json)
    assert secret not in sent
    assert "shown to the asker only" in sent
    assert secret in result["answer"] or secret in json.dumps(result["command"])


async def test_a_known_context_window_keeps_the_whole_request_inside_it(
    retrieval_repo: Path,
    provider: ScriptedProvider,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from szrag.context.tokens import load_counter

    environ = {"SZRAG_CONTEXT_WINDOW": "2600", "SZRAG_ANSWER_TOKENS": "600"}
    provider.script(text_reply("ok"))

    host = Host.from_env(retrieval_repo, environ, settings=settings)
    await answer_json(QUESTION, host, tools=True)

    body = provider.requests[0].json
    count = load_counter("cl100k_base")
    sent = sum(4 + count(message["content"]) for message in body["messages"])
    sent += count(json.dumps(body["tools"], separators=(",", ":")))
    assert sent + 600 <= 2600  # prompt, question, context and tools leave the answer room
    assert "FILE: " in body["messages"][1]["content"]  # and some evidence still fits


async def test_the_default_profile_packs_twelve_thousand_real_tokens(
    retrieval_repo: Path,
) -> None:
    result = await answer_json(QUESTION, retrieval_repo, with_ai=False)
    assert result["context"]["budget"] == 12000
    assert result["context"]["tokenizer"] == "cl100k_base"
    kinds = [
        chunk["kind"] for chunk in result["context"]["chunks"] if chunk["status"] == "included"
    ]
    assert kinds[0] == "source"


async def test_an_answer_cut_at_the_output_limit_says_so(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    from szrag.llm.testing import chunk, sse_reply

    provider.script(sse_reply(chunk("The webhook verifies"), chunk(finish="length")))

    result = await answer_json(QUESTION, Host.from_env(retrieval_repo, settings=settings))

    assert result["answer"].startswith("The webhook verifies")
    assert "the model stopped at its output limit" in result["answer"]
    assert any("output limit" in a["message"] for a in result["activities"])


async def test_text_that_streamed_before_a_failure_is_kept_and_marked_as_cut(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    from szrag.llm.testing import chunk, sse_reply

    provider.script(sse_reply(chunk("The webhook checks the HMAC"), done=False, cut=True))

    result = await answer_json(QUESTION, Host.from_env(retrieval_repo, settings=settings))

    assert result["answer"].startswith("The webhook checks the HMAC")
    assert "[answer cut: " in result["answer"]
    assert result["error"]["code"] == "stream_cut"
    assert result["sources"]  # the evidence is still delivered
    usage = result["usage"]  # the failed request still cost its prompt: estimated, and said so
    assert usage["estimated"] is True and usage["input"] > 0 and usage["output"] > 0


async def test_an_answer_without_a_model_shows_the_best_matching_lines(
    retrieval_repo: Path,
) -> None:
    result = await answer_json("where is verifyGithubSignature?", retrieval_repo, with_ai=False)
    lines = result["answer"].splitlines()
    first = next(number for number, line in enumerate(lines) if line.startswith("- "))
    assert lines[first].startswith("- server/webhook.js:")
    # a fenced block of its own, so the page renders it as code, not a paragraph
    assert lines[first + 1] == "" and lines[first + 2] == "```js"
    close = lines.index("```", first + 3)
    shown = lines[first + 3 : close]
    assert shown and all(" | " in line for line in shown)  # numbered lines of the source
    assert any("verifyGithubSignature" in line for line in shown)
    start = int(lines[first].split(":")[1].split("-")[0])
    assert int(shown[0].split(" | ")[0]) == start  # the unit's first line, its signature
    assert "Symbols found:" in lines and any("`verifyGithubSignature`" in line for line in lines)


async def test_excerpts_are_redacted(copy_fixture: Any) -> None:
    root = copy_fixture("secrets_app")
    result = await answer_json("slack bot token config", root, with_ai=False)
    assert " | " in result["answer"]
    for planted in ("xoxb-", "ghp_", "AKIA"):
        assert planted not in result["answer"]


async def test_a_window_smaller_than_counted_shrinks_the_context_and_asks_again(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    refusal = {
        "error": {
            "message": "This model's maximum context length is 2048 tokens. However, you"
            " requested 3000 tokens (2900 in the messages, 100 in the completion).",
            "code": "context_length_exceeded",
        }
    }
    provider.script(json_reply(refusal, status=400), text_reply("It checks the HMAC."))

    result = await answer_json(QUESTION, Host.from_env(retrieval_repo, settings=settings))

    assert result["answer"] == "It checks the HMAC." and "error" not in result
    first, second = (request.json["messages"][1]["content"] for request in provider.requests)
    assert len(second) < len(first)  # less context the second time
    assert any("smaller than counted" in a["message"] for a in result["activities"])


def test_the_smaller_budget_follows_the_providers_own_figures() -> None:
    from szrag.answer import smaller_budget
    from szrag.base.errors import ProviderError
    from szrag.context.pack import PackedContext

    packed = PackedContext("x", 6000, 12000, (), 0, 0, (), "cl100k_base", ())
    said = ProviderError(
        "maximum context length is 8192 tokens. However, you requested 10858 tokens"
        " (10602 in the messages, 256 in the completion)"
    )
    budget = smaller_budget(said, packed, counted=7100)
    assert budget is not None and 0 < budget < 6000
    ratio = 10602 / 7100  # the provider counts about half again as many tokens as we do
    assert (7100 - 6000 + budget) * ratio <= 8192 - 256
    vague = ProviderError("the request exceeds the available context size")
    assert smaller_budget(vague, packed, counted=7100) == 3000  # no figures: half goes
    assert smaller_budget(ProviderError("invalid api key"), packed, counted=7100) is None


def test_a_refusal_as_too_long_is_read_and_answered_with_the_window_to_set() -> None:
    from szrag.answer import window_advice
    from szrag.base.errors import ProviderError
    from szrag.llm.errors import Overflow, context_overflow

    openai = ProviderError(
        "This model's maximum context length is 8192 tokens. However, you requested 10858"
        " tokens (10602 in the messages, 256 in the completion)."
    )
    llama_cpp_python = ProviderError("Requested tokens (9001) exceed context window of 8192")
    vague = ProviderError("the request exceeds the available context size")
    assert context_overflow(openai) == Overflow(8192, 10602, 256)
    assert context_overflow(llama_cpp_python) == Overflow(8192, 9001, 0)
    assert context_overflow(vague) == Overflow()
    assert context_overflow(ProviderError("invalid api key")) is None

    advice = window_advice(Overflow(8192, 10602, 256), counted=7100)
    # the provider counts 1.49 of its tokens per token of szrag's: 8192 / 1.49, in 64s
    assert "SZRAG_CONTEXT_WINDOW=5440" in advice and "window of 8192 tokens" in advice
    assert "SZRAG_CONTEXT_WINDOW=8192" in window_advice(Overflow(8192, 6000), counted=7100)
    assert "SZRAG_CONTEXT_WINDOW to the model's context size" in window_advice(Overflow(), 7100)


async def test_results_are_typed_records_that_say_how_they_were_made(
    retrieval_repo: Path, provider: ScriptedProvider, settings: Settings
) -> None:
    from szrag.answer.results import Answer, DebugReport, Outcome

    provider.script(text_reply("Verified in server/webhook.js."))
    answered = await answer_question_async(
        QUESTION, Host.from_env(retrieval_repo, settings=settings)
    )
    local = await answer_question_async(Question(QUESTION, with_ai=False), retrieval_repo)
    keyless = await answer_question_async(QUESTION, retrieval_repo)
    report = await debug_question_async(QUESTION, retrieval_repo)

    assert isinstance(answered, Answer) and answered.outcome is Outcome.ANSWERED
    assert answered.usage is not None and answered.usage.output_tokens > 0
    assert answered.sources[0].path and answered.response_rounds == 1
    assert local.outcome is Outcome.NOT_ASKED and local.context is not None
    assert keyless.outcome is Outcome.NO_MODEL and not keyless.asked_model
    assert isinstance(report, DebugReport) and report.context.budget == 12000
    assert list(local.to_dict()) == [
        "answer",
        "sources",
        "images",
        "command",
        "activities",
        "context",
    ]
