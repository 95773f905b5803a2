"""answer_question() in a conversation: earlier turns as messages, follow-ups searched with the
questions they follow, the turn kept with its ids, and nothing kept or run when it should not
be. A scripted provider on 127.0.0.1 answers."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from szrag.answer import Question
from szrag.answer.results import Outcome
from szrag.base.errors import UnknownConversation
from szrag.base.settings import Settings
from szrag.commands import Identity
from szrag.conversations import store_path
from szrag.llm.testing import ScriptedProvider, text_reply
from szrag.service.host import Host, answer_question_async

FIRST = "How does the webhook deploy work?"
FOLLOW_UP = "and where is that verified?"
ANN = Identity(user_id="ann", user_name="ann")


@pytest.fixture
def host(retrieval_repo: Path, provider_settings: Callable[..., Settings]) -> Host:
    return Host.from_env(retrieval_repo, settings=provider_settings())


def messages_sent(provider: ScriptedProvider, number: int) -> list[dict[str, Any]]:
    body = provider.requests[number].json
    assert isinstance(body, dict)
    messages: list[dict[str, Any]] = body["messages"]
    return messages


async def test_a_follow_up_gives_the_model_the_earlier_turn_and_is_kept(
    host: Host, provider: ScriptedProvider
) -> None:
    provider.script(
        text_reply("Deploys start in server/webhook.js:1-25."), text_reply("It is verified there.")
    )

    first = await answer_question_async(Question(FIRST, remember=True, identity=ANN), host)
    second = await answer_question_async(
        Question(FOLLOW_UP, conversation_id=first.conversation_id, identity=ANN), host
    )

    assert first.answer_id and first.conversation_id
    assert second.conversation_id == first.conversation_id
    assert second.answer_id not in (None, first.answer_id)
    sent = messages_sent(provider, 1)
    assert [message["role"] for message in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == FIRST
    assert sent[2]["content"] == "Deploys start in server/webhook.js:1-25."
    assert FOLLOW_UP in sent[3]["content"] and "<repository_knowledge>" in sent[3]["content"]
    assert len(messages_sent(provider, 0)) == 2  # the first question had no history
    kept = host.conversations.turns(first.conversation_id or "")
    assert [turn.question for turn in kept] == [FIRST, FOLLOW_UP]
    assert kept[1].answer == "It is verified there." and kept[1].outcome == "answered"
    assert [str(source) for source in kept[1].sources] == [
        f"{source.path}:{source.start}-{source.end}" for source in second.sources
    ]
    (history,) = [a.metadata for a in second.activities if "earlier turn" in a.message]
    assert history is not None and history["tokens"] > 0
    assert {key: history[key] for key in ("turns", "dropped_turns", "budget")} == {
        "turns": 1,
        "dropped_turns": 0,
        "budget": 4000,
    }
    (shown,) = [a.to_dict()["metadata"] for a in second.activities if "earlier turn" in a.message]
    assert list(shown) == ["turns", "droppedTurns", "tokens", "budget"]
    record = second.to_dict()
    assert record["answerId"] == second.answer_id
    assert record["conversationId"] == first.conversation_id


async def test_a_follow_up_is_retrieved_with_the_question_it_follows(host: Host) -> None:
    alone = await answer_question_async(Question(FOLLOW_UP, with_ai=False), host)
    first = await answer_question_async(Question(FIRST, with_ai=False, remember=True), host)
    followed = await answer_question_async(
        Question(FOLLOW_UP, with_ai=False, conversation_id=first.conversation_id), host
    )

    assert first.sources[0].path == "server/webhook.js"
    assert alone.sources[0].path != "server/webhook.js"
    assert followed.sources[0].path == "server/webhook.js"
    searching = followed.activities[0]
    assert searching.metadata == {"earlier_questions": 1}
    assert searching.to_dict()["metadata"] == {"earlierQuestions": 1}
    assert "1 earlier question" in searching.message
    assert alone.activities[0].metadata is None


async def test_the_oldest_turns_are_dropped_to_stay_within_the_token_bound(
    retrieval_repo: Path, provider_settings: Callable[..., Settings], provider: ScriptedProvider
) -> None:
    host = Host.from_env(
        retrieval_repo, {"SZRAG_CONVERSATION_TOKENS": "60"}, settings=provider_settings()
    )
    provider.script(
        text_reply("First answer. " + "more " * 80),
        text_reply("Second answer."),
        text_reply("Third answer."),
    )
    first = await answer_question_async(Question(FIRST, remember=True), host)
    await answer_question_async(
        Question("Where is the scheduler configured?", conversation_id=first.conversation_id), host
    )
    third = await answer_question_async(
        Question("and its tests?", conversation_id=first.conversation_id), host
    )

    contents = [message["content"] for message in messages_sent(provider, 2)[1:-1]]
    assert contents == ["Where is the scheduler configured?", "Second answer."]
    (note,) = [a for a in third.activities if "earlier turn" in a.message]
    assert "1 older turn left out to stay in 60" in note.message


async def test_an_unknown_conversation_is_refused_before_anything_runs(
    host: Host, provider: ScriptedProvider
) -> None:
    with pytest.raises(UnknownConversation, match="no conversation 0123456789abcdef"):
        await answer_question_async(
            Question("/sz-calc 1+1 and explain", conversation_id="0123456789abcdef"), host
        )
    assert provider.requests == []
    audit = [json.loads(line) for line in host.audit.path.read_text().splitlines()]  # type: ignore[union-attr]
    assert audit[-1]["outcome"] == "failed" and [r["event"] for r in audit] == ["ask"]


async def test_nothing_is_kept_unless_asked(host: Host) -> None:
    result = await answer_question_async(Question(FIRST, with_ai=False), host)

    assert result.answer_id is None and result.conversation_id is None
    assert "answerId" not in result.to_dict() and "conversationId" not in result.to_dict()
    assert not store_path(host.root).exists()


async def test_a_turn_keeps_no_secret_of_a_command(host: Host) -> None:
    question = "/sz-hash the password hunter2 with PBKDF2 and 1000 iterations using sha256"

    result = await answer_question_async(Question(question, with_ai=False, remember=True), host)

    (turn,) = host.conversations.turns(result.conversation_id or "")
    assert result.outcome is Outcome.NOT_ASKED and result.command is not None
    digest = result.command.responses[0].plain_text()
    assert "hunter2" not in turn.question and "[REDACTED:password]" in turn.question
    assert digest not in turn.answer and "not kept" in turn.answer
    assert b"hunter2" not in store_path(host.root).read_bytes()


async def test_a_turn_records_the_commit_of_the_checkout(host: Host) -> None:
    root = host.root
    for arguments in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"],
    ):
        subprocess.run(["git", "-C", str(root), *arguments], check=True)
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()

    result = await answer_question_async(Question(FIRST, with_ai=False, remember=True), host)

    assert host.conversations.turn(result.answer_id or "").commit == head


async def test_an_answer_is_still_given_when_the_store_cannot_keep_it(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    path = store_path(host.root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database, and it stays as it is" * 50)

    result = await answer_question_async(Question(FIRST, with_ai=False, remember=True), host)

    assert result.sources and result.answer_id is None
    assert "could not be kept" in caplog.text
    assert path.read_bytes().startswith(b"this is not a database")


async def test_with_a_known_window_the_history_and_the_context_fit_together(
    retrieval_repo: Path, provider_settings: Callable[..., Settings], provider: ScriptedProvider
) -> None:
    from szrag.context.tokens import load_counter

    environ = {"SZRAG_CONTEXT_WINDOW": "3000", "SZRAG_ANSWER_TOKENS": "600"}
    host = Host.from_env(retrieval_repo, environ, settings=provider_settings())
    provider.script(text_reply("The webhook " + "deploys and verifies " * 300), text_reply("ok"))
    first = await answer_question_async(Question(FIRST, remember=True, tools=False), host)

    await answer_question_async(
        Question(FOLLOW_UP, conversation_id=first.conversation_id, tools=False), host
    )

    count = load_counter("cl100k_base")
    messages = messages_sent(provider, 1)
    sent = sum(4 + count(message["content"]) for message in messages)
    assert sent + 600 <= 3000  # history, context and question leave the answer its room
    assert count(messages[2]["content"]) <= 3000 // 4  # the long answer was cut to its share
    assert messages[2]["content"].endswith("[...]")
    assert "FILE: " in messages[3]["content"]  # and some evidence still fits
