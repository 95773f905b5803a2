"""The PostgreSQL conversation store as replicas use it: two hosts on one database alternating
the turns of one conversation and giving feedback from either, two processes appending to
one conversation at once, its own migrations beside the index's, and clear errors."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from szrag.answer import Question
from szrag.base.errors import ConfigError, ConversationStoreError
from szrag.base.settings import Settings
from szrag.commands import Identity
from szrag.conversations import ConversationLimits, Turn, new_id, open_conversation_store
from szrag.conversations.pg import MIGRATIONS, PostgresConversations
from szrag.index.pg import schema as index_schema
from szrag.llm.testing import ScriptedProvider, text_reply
from szrag.service.feedback import give_feedback, list_feedback
from szrag.service.host import Host

ANN = Identity(user_id="ann", user_name="ann")
BOB = Identity(user_id="bob", user_name="bob")
SOURCE = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def replicas(
    retrieval_repo: Path, provider_settings: Callable[..., Settings], pg_url: str
) -> Iterator[tuple[Host, Host]]:
    """Two hosts of one repository, each with a store (a pool) of its own on one database."""
    made = [
        Host.from_env(
            retrieval_repo,
            {},
            settings=provider_settings(),
            conversations=open_conversation_store(pg_url),
        )
        for _ in range(2)
    ]
    yield made[0], made[1]
    for host in made:
        host.conversations.close()


async def test_two_replicas_alternate_the_turns_of_one_conversation(
    replicas: tuple[Host, Host], provider: ScriptedProvider
) -> None:
    one, two = replicas
    provider.script(*(text_reply(f"Answer {number} in server/webhook.js.") for number in range(4)))
    first = await one.ask(
        Question("How does the webhook deploy work?", identity=ANN, remember=True)
    )
    conversation = first.conversation_id
    assert conversation is not None
    answers = [first]
    for number, host in enumerate((two, one, two), start=1):
        answers.append(
            await host.ask(
                Question(f"and follow-up {number}?", identity=ANN, conversation_id=conversation)
            )
        )

    assert {answer.conversation_id for answer in answers} == {conversation}
    kept = one.conversations.turns(conversation)
    assert kept == two.conversations.turns(conversation)
    assert [turn.answer_id for turn in kept] == [answer.answer_id for answer in answers]
    # each replica gave the model every earlier turn, whichever replica kept it
    last = provider.requests[3].json
    assert isinstance(last, dict)
    assert [message["role"] for message in last["messages"]][1:-1] == ["user", "assistant"] * 3

    answer_id = answers[1].answer_id  # kept by the second replica
    assert answer_id is not None
    give_feedback(one, answer_id, "down", identity=ANN)
    give_feedback(two, answer_id, "up", identity=BOB)
    give_feedback(two, answer_id, "up", identity=ANN, comment="the right file after all")
    kept_feedback = list_feedback(one)
    assert [(item.given_by, item.rating.value) for item in kept_feedback] == [
        ("bob", "up"),
        ("ann", "up"),
    ]
    assert list_feedback(two) == kept_feedback

    audited = one.audit.read()  # both replicas' asks, in the database
    assert one.audit.path is None and len(audited) == 4
    assert [line["question"] for line in audited][1:] == [
        f"and follow-up {number}?" for number in (1, 2, 3)
    ]


WRITER = textwrap.dedent(
    """
    import sys
    from szrag.conversations import ConversationLimits, ShownSource, Turn, new_id
    from szrag.conversations.pg import PostgresConversations

    url, conversation, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = PostgresConversations(url, ConversationLimits(turns=1000))
    print("ready", flush=True)
    sys.stdin.readline()  # both processes start writing together
    for number in range(count):
        store.append(
            Turn(new_id(), conversation, f"{name} {number}", "kept", "answered",
                 (ShownSource("a.py", 1, 2),), None, store.clock())
        )
    store.close()
    """
)


def test_two_processes_appending_to_one_conversation_lose_no_turn(pg_url: str) -> None:
    store = PostgresConversations(pg_url, ConversationLimits(turns=1000))
    conversation = store.start(face="api").id
    count = 40
    environment = {**os.environ, "PYTHONPATH": str(SOURCE)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, pg_url, conversation, name, str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=environment,
            text=True,
        )
        for name in ("left", "right")
    ]
    try:
        for writer in writers:
            assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        for writer in writers:
            assert writer.wait(timeout=120) == 0
        kept = [turn.question for turn in store.turns(conversation)]
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
        store.close()

    assert len(kept) == 2 * count
    for name in ("left", "right"):
        assert [item for item in kept if item.startswith(name)] == [
            f"{name} {number}" for number in range(count)
        ]


def test_replicas_trim_one_conversation_to_its_last_turns(pg_url: str) -> None:
    limits = ConversationLimits(turns=3)
    one, two = PostgresConversations(pg_url, limits), PostgresConversations(pg_url, limits)
    try:
        conversation = one.start(face="api").id
        for number in range(5):
            store = one if number % 2 == 0 else two
            store.append(
                Turn(new_id(), conversation, f"q{number}", "a", "answered", (), None, store.clock())
            )
        assert [turn.question for turn in two.turns(conversation)] == ["q2", "q3", "q4"]
        with psycopg.connect(pg_url) as conn:  # trimmed in the table, not only when read
            kept = conn.execute("SELECT count(*) FROM szrag_turns").fetchone()
            assert kept == (3,)
    finally:
        one.close()
        two.close()


def test_its_migrations_are_its_own_beside_the_index(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        index_schema.migrate(conn)  # the index's tables in the same database
    first = PostgresConversations(pg_url)
    second = PostgresConversations(pg_url)  # applied once, found applied by the next
    first.close()
    second.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM szrag_conversation_migrations")]
        assert names == [name for name, _ in MIGRATIONS]
        index_schema.check_schema(conn, pg_url, "web")  # the index sees none it does not know
        conn.execute("INSERT INTO szrag_conversation_migrations (name) VALUES ('9999_future')")
    with pytest.raises(ConversationStoreError, match="newer szrag"):
        PostgresConversations(pg_url)


def test_bad_urls_and_unreachable_servers_are_clear_errors(pg_url: str) -> None:
    with pytest.raises(ConfigError, match="not a PostgreSQL URL"):
        PostgresConversations("mysql://somewhere/db")
    with pytest.raises(ConversationStoreError, match="cannot be used") as raised:
        open_conversation_store("postgresql://ann:hunter2@127.0.0.1:1/szrag")
    assert "hunter2" not in raised.value.message and ":***@" in raised.value.message
