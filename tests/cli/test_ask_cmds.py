"""``szrag ask`` and ``szrag debug`` through click, with a scripted provider on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from szrag.cli.ask_cmds import register
from szrag.llm.testing import ScriptedProvider, json_reply, text_reply, tool_reply

QUESTION = "How does the webhook deploy work?"


@pytest.fixture
def provider(
    provider_server: tuple[ScriptedProvider, str], monkeypatch: pytest.MonkeyPatch
) -> ScriptedProvider:
    """The shared provider, configured through the environment as a user would."""
    app, base_url = provider_server
    app.reset()
    monkeypatch.setenv("AI_URL", base_url)
    monkeypatch.setenv("AI_API_KEY", "test-key")
    monkeypatch.setenv("AI_MODEL", "test-model")
    monkeypatch.setenv("SZRAG_AI_RETRIES", "0")
    return app


def run(*args: str) -> tuple[int, str, str]:
    group = click.Group("szrag")
    register(group)
    result = CliRunner().invoke(group, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_commands_have_help_text() -> None:
    for name in ("ask", "debug"):
        code, out, _ = run(name, "--help")
        assert code == 0
        assert "QUESTION" in out and "--root" in out and "--json" in out


def test_ask_streams_the_answer_then_sources_and_usage(
    retrieval_repo: Path, provider: ScriptedProvider
) -> None:
    provider.script(text_reply("Deploys run from server/webhook.js.", usage={"prompt_tokens": 5}))

    code, out, err = run("ask", QUESTION, "--root", str(retrieval_repo))

    assert code == 0, err
    assert out.count("Deploys run from server/webhook.js.") == 1
    assert "Sources" in out and "server/webhook.js:" in out
    assert "usage: 5 input" in out and "(estimated)" in out
    assert provider.requests[0].json["model"] == "test-model"


def test_ask_verbose_shows_activities_on_stderr(
    retrieval_repo: Path, provider: ScriptedProvider
) -> None:
    provider.script(text_reply("Fine."))

    code, _, err = run("ask", QUESTION, "--root", str(retrieval_repo), "--verbose")

    assert code == 0
    assert "retrieval" in err and "context" in err and "Model answered" in err


def test_ask_with_tools_marks_the_live_data_round(
    retrieval_repo: Path, provider: ScriptedProvider
) -> None:
    provider.script(tool_reply(("getStatus", "{}"), text="Checking."), text_reply("All up."))

    code, out, err = run("ask", "Is it up?", "--root", str(retrieval_repo), "--tools")

    assert code == 0, err
    assert "consulting live data: getStatus" in err
    assert "Checking.\n" in out and "All up." in out
    assert out.count("All up.") == 1


def test_ask_without_a_key_prints_the_local_answer_and_how_to_configure(
    retrieval_repo: Path,
) -> None:
    code, out, _ = run("ask", QUESTION, "--root", str(retrieval_repo))

    assert code == 0
    assert "AI_API_KEY" in out and "AI_URL" in out and "AI_MODEL" in out
    assert "server/webhook.js:" in out


def test_ask_no_ai_json(retrieval_repo: Path, provider: ScriptedProvider) -> None:
    code, out, _ = run("ask", QUESTION, "--root", str(retrieval_repo), "--no-ai", "--json")

    assert code == 0
    result = json.loads(out)
    assert list(result) == [
        "answer",
        "sources",
        "images",
        "command",
        "activities",
        "context",
        "answerId",
        "conversationId",
    ]
    assert provider.requests == []


def test_ask_provider_failure_exits_non_zero_with_the_answer(
    retrieval_repo: Path, provider: ScriptedProvider
) -> None:
    provider.script(json_reply({"error": {"message": "model missing"}}, status=404))

    code, out, err = run("ask", QUESTION, "--root", str(retrieval_repo))

    assert code == 1
    assert "The model could not answer" in out
    assert "model error (not_found)" in err
    assert (out + err).count("model missing") == 1  # said once, in the answer
    assert "usage:" not in out  # the request failed: no usage line


def test_a_context_length_refusal_names_the_window_setting_once(
    retrieval_repo: Path, provider: ScriptedProvider
) -> None:
    refusal = {
        "error": {
            "message": "This model's maximum context length is 8192 tokens. However, you"
            " requested 10858 tokens (10602 in the messages, 256 in the completion).",
            "code": "context_length_exceeded",
        }
    }
    # refused, repacked and asked again, refused again
    provider.script(json_reply(refusal, status=400), json_reply(refusal, status=400))

    code, out, err = run("ask", QUESTION, "--root", str(retrieval_repo), "--no-tools")

    assert code == 1
    assert len(provider.requests) == 2
    everything = out + err
    assert everything.count("SZRAG_CONTEXT_WINDOW=") == 1
    assert "window of 8192 tokens" in out
    suggested = int(out.split("SZRAG_CONTEXT_WINDOW=")[1].split()[0])
    assert 0 < suggested < 8192  # the provider counts more tokens than szrag: below its window
    assert "maximum context length" not in everything  # the fix, not the provider's prose
    assert "usage:" not in out
    assert "model error (bad_request)" in err


def test_ask_rejects_an_empty_question(retrieval_repo: Path) -> None:
    code, _, err = run("ask", "  ", "--root", str(retrieval_repo))

    assert code == 2
    assert "question is empty" in err


def test_debug_reports_every_stage_without_a_model(
    retrieval_repo: Path, provider: ScriptedProvider
) -> None:
    code, out, _ = run(
        "debug",
        "Where is verifyGithubSignature in server/webhook.js?",
        "--root",
        str(retrieval_repo),
    )

    assert code == 0
    for section in ("sources", "images", "codebase context", "packed context", "activities"):
        assert section in out
    assert "server/webhook.js:" in out
    assert provider.requests == []


def test_debug_json(retrieval_repo: Path) -> None:
    code, out, _ = run(
        "debug", QUESTION, "--root", str(retrieval_repo), "--json", "--budget", "500"
    )

    assert code == 0
    result = json.loads(out)
    assert result["context"]["budget"] == 500
    assert result["activities"][0]["stage"] == "retrieval"
