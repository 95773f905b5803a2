"""The conversation store (``.rag/conversations.db``): records, bounds, owners, migrations, and
what earlier turns give retrieval and the model."""

from __future__ import annotations

import dataclasses
import sqlite3
import stat
from pathlib import Path

import pytest

from szrag.answer.history import follows_up, history_messages, retrieval_query
from szrag.base.config import load_repo_config
from szrag.base.errors import (
    ConfigError,
    ConversationError,
    ConversationStoreError,
    UnknownAnswer,
    UnknownConversation,
)
from szrag.context.tokens import estimate_token_count
from szrag.conversations import (
    ConversationLimits,
    ConversationStore,
    ShownSource,
    Turn,
    new_id,
    store_path,
)
from szrag.conversations.store import MIGRATIONS, SCHEMA_VERSION, migrate
from szrag.index import build_index
from szrag.service.host import Host


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def a_turn(
    conversation_id: str,
    question: str = "how is the webhook verified?",
    *,
    at: float = 1_800_000_000.0,
    answer: str = "In server/webhook.js.",
    outcome: str = "answered",
) -> Turn:
    return Turn(
        answer_id=new_id(),
        conversation_id=conversation_id,
        question=question,
        answer=answer,
        outcome=outcome,
        sources=(ShownSource("server/webhook.js", 1, 25),),
        commit="0123456789abcdef0123456789abcdef01234567",
        asked_at=at,
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> ConversationStore:
    return ConversationStore(store_path(tmp_path), clock=clock)


def test_a_conversation_keeps_its_turns_in_order(store: ConversationStore, clock: Clock) -> None:
    conversation = store.start(face="cli", owner="local:ann")
    first = store.append(a_turn(conversation.id, "how is the webhook verified?", at=clock.now))
    clock.now += 5
    second = store.append(a_turn(conversation.id, "and where is that called?", at=clock.now))

    kept = store.turns(conversation.id)

    assert [turn.answer_id for turn in kept] == [first.answer_id, second.answer_id]
    assert kept[1] == second  # every field comes back as it went in
    assert store.turn(first.answer_id) == first
    assert store.get(conversation.id).updated_at == clock.now
    assert len(conversation.id) == 16 and conversation.id != store.start().id


def test_a_caller_chosen_id_is_started_on_first_use_and_found_after(
    store: ConversationStore,
) -> None:
    thread = "slack:C0123:1712345678.000100"
    started = store.start(thread, face="slack")
    store.append(a_turn(thread))

    again = store.start(thread, face="slack")

    assert started.id == again.id == thread
    assert len(store.turns(thread)) == 1  # starting it again kept what it held


def test_an_unknown_or_malformed_id_is_a_clear_error(store: ConversationStore) -> None:
    with pytest.raises(UnknownConversation, match="no conversation 0000"):
        store.get("0000")
    with pytest.raises(UnknownConversation):
        store.append(a_turn("0000"))
    with pytest.raises(UnknownAnswer, match="no answer feed"):
        store.turn("feed")
    with pytest.raises(ConversationError, match="not an id"):
        store.get("two words")
    assert store.turns("0000") == ()


def test_only_the_owner_continues_an_owned_conversation(store: ConversationStore) -> None:
    owned = store.start(face="api", owner="token:abc")
    shared = store.start("slack:C1:1.2", face="slack")
    turn = store.append(a_turn(owned.id))

    assert store.get(owned.id, owner="token:abc") == owned
    with pytest.raises(UnknownConversation):  # said as unknown: its existence is not leaked
        store.get(owned.id, owner="token:other")
    with pytest.raises(UnknownAnswer):
        store.turn(turn.answer_id, owner="token:other")
    assert store.get(shared.id, owner="anyone").id == shared.id


def test_turns_are_bounded_in_count(tmp_path: Path, clock: Clock) -> None:
    store = ConversationStore(store_path(tmp_path), ConversationLimits(turns=3), clock=clock)
    conversation = store.start()
    turns = [store.append(a_turn(conversation.id, f"question {n}")) for n in range(5)]

    assert [turn.question for turn in store.turns(conversation.id)] == [
        "question 2",
        "question 3",
        "question 4",
    ]
    with pytest.raises(UnknownAnswer, match="last 3 answers"):
        store.turn(turns[0].answer_id)
    with sqlite3.connect(store.path) as conn:  # forgotten, not merely hidden
        assert conn.execute("SELECT COUNT(*) FROM turns").fetchone() == (3,)


def test_turns_and_conversations_are_bounded_in_age(tmp_path: Path, clock: Clock) -> None:
    limits = ConversationLimits(max_age_seconds=3600)
    store = ConversationStore(store_path(tmp_path), limits, clock=clock)
    old = store.start(face="cli")
    store.append(a_turn(old.id, at=clock.now))
    clock.now += 3601

    with pytest.raises(UnknownConversation, match="older than the 1 hours"):
        store.get(old.id)
    assert store.turns(old.id) == ()
    assert store.latest("cli") is None
    store.append(a_turn(store.start().id, at=clock.now))  # a write prunes the old ones
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM conversations").fetchone() == (1,)
        assert conn.execute("SELECT COUNT(*) FROM turns").fetchone() == (1,)


def test_the_conversations_used_least_recently_go_beyond_the_cap(
    tmp_path: Path, clock: Clock
) -> None:
    limits = ConversationLimits(conversations=2)
    store = ConversationStore(store_path(tmp_path), limits, clock=clock)
    first = store.start()
    clock.now += 1
    second = store.start()
    clock.now += 1
    store.append(a_turn(first.id, at=clock.now))  # the first is used again
    clock.now += 1
    store.start()

    assert store.get(first.id).id == first.id
    with pytest.raises(UnknownConversation):
        store.get(second.id)


def test_latest_is_the_conversation_of_the_face_used_last(
    store: ConversationStore, clock: Clock
) -> None:
    older = store.start(face="cli", owner="local:ann")
    clock.now += 1
    newer = store.start(face="cli", owner="local:ann")
    clock.now += 1
    store.start(face="api", owner="local:ann")
    clock.now += 1
    store.append(a_turn(older.id, at=clock.now))

    assert store.latest("cli") == store.get(older.id)
    assert store.latest("cli", owner="local:bob") is None
    assert newer.id != older.id


def test_the_store_is_private_and_survives_an_index_rebuild(tmp_path: Path, clock: Clock) -> None:
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    build_index(tmp_path).close()
    store = ConversationStore.for_root(tmp_path)
    conversation = store.start()
    store.append(a_turn(conversation.id, at=store.clock()))

    (tmp_path / ".rag" / "index.db").write_bytes(b"damaged beyond repair")
    build_index(tmp_path).close()

    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert store.path == tmp_path / ".rag" / "conversations.db"
    assert len(ConversationStore.for_root(tmp_path).turns(conversation.id)) == 1


def test_a_blank_database_gets_every_migration_once(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    with sqlite3.connect(path, isolation_level=None) as conn:
        assert migrate(conn, path) == [name for name, _ in MIGRATIONS]
        assert migrate(conn, path) == []
        assert conn.execute("SELECT COUNT(*) FROM migrations").fetchone() == (SCHEMA_VERSION,)


def test_two_stores_opening_a_new_file_at_once_both_open_it(tmp_path: Path) -> None:
    # the switch to WAL needs the file to itself, and SQLite reports another connection's
    # lock at once instead of waiting: two replicas opening a new store together failed
    # about once in twenty-five (here, 150 tries)
    import threading

    failures: list[BaseException] = []
    for attempt in range(150):
        path = tmp_path / f"store{attempt}.db"
        stores = [ConversationStore(path), ConversationStore(path)]
        barrier = threading.Barrier(2)

        def open_store(store: ConversationStore, barrier: threading.Barrier) -> None:
            barrier.wait()
            try:
                store.start(face="cli")
            except BaseException as error:  # reported below, not lost in the thread
                failures.append(error)

        threads = [threading.Thread(target=open_store, args=(store, barrier)) for store in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for store in stores:
            store.close()
    assert failures == []


def test_a_store_of_the_first_schema_keeps_working_once_migrated(tmp_path: Path) -> None:
    """A ``.rag/conversations.db`` written before conversations named their repository."""
    path = store_path(tmp_path)
    path.parent.mkdir()
    name, script = MIGRATIONS[0]
    with sqlite3.connect(path) as conn:
        conn.executescript(script)
        conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL)")
        conn.execute("INSERT INTO migrations VALUES (?, 0)", (name,))
        conn.execute("INSERT INTO conversations VALUES ('slack:T:C:1', 'slack', 'slack', 1, 2)")
        conn.execute(
            "INSERT INTO turns VALUES ('a1', 'slack:T:C:1', 2, 'how?', 'so.', 'answered',"
            " '[[\"server/webhook.js\", 1, 25]]', NULL)"
        )
        conn.execute(
            "INSERT INTO feedback VALUES ('a1', 'ann', 'slack:T:C:1', 'up', '[]', NULL, 'how?',"
            " '[]', '[\"server/webhook.js\"]', NULL, 3)"
        )
    conn.close()
    store = ConversationStore(path, clock=lambda: 10.0)

    assert store.get("slack:T:C:1").repository == ""
    assert store.repository_of("slack:T:C:1") == "" == store.repository_of_answer("a1")
    assert [turn.sources for turn in store.turns("slack:T:C:1")] == [
        (ShownSource("server/webhook.js", 1, 25),)
    ]
    assert [(item.answer_id, item.repository) for item in store.feedback()] == [("a1", "")]
    store.append(a_turn("slack:T:C:1", at=10.0))
    assert len(store.turns("slack:T:C:1")) == 2
    with sqlite3.connect(path) as conn:
        applied = [row[0] for row in conn.execute("SELECT name FROM migrations ORDER BY name")]
    conn.close()
    assert applied == [name for name, _ in MIGRATIONS] and SCHEMA_VERSION == 2


def test_a_database_of_a_newer_version_is_refused_unchanged(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "c.db")
    store.start()
    with sqlite3.connect(store.path) as conn:
        conn.execute("INSERT INTO migrations VALUES ('9999_from_the_future', 0)")
    before = store.path.read_bytes()

    with pytest.raises(ConversationStoreError, match=r"newer szrag \(migration 9999"):
        ConversationStore(store.path).start()
    assert store.path.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a database at all, but somebody's notes" * 100, "cannot be used"),
        (None, "not a szrag"),
    ],
)
def test_a_file_that_is_not_a_conversation_store_is_left_alone(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "conversations.db"
    if content is None:
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE notes (text TEXT)")
            conn.execute("INSERT INTO notes VALUES ('keep me')")
    else:
        path.write_bytes(content)
    before = path.read_bytes()

    with pytest.raises(ConversationStoreError, match=message) as raised:
        ConversationStore(path).start()
    assert str(path) in raised.value.message and path.read_bytes() == before


# --- bounds from the configuration and the environment ------------------------------------


def test_limits_come_from_the_repository_then_the_environment(tmp_path: Path) -> None:
    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "config.toml").write_text(
        "[conversations]\nturns = 4\nmax_age_hours = 2\ntokens = 900\n"
    )
    config = load_repo_config(tmp_path)

    assert ConversationLimits.of(config.conversations, {}) == ConversationLimits(
        turns=4, max_age_seconds=7200, tokens=900
    )
    environ = {"SZRAG_CONVERSATION_TURNS": "6", "SZRAG_CONVERSATION_MAX_AGE_HOURS": "0.5"}
    assert ConversationLimits.of(config.conversations, environ) == ConversationLimits(
        turns=6, max_age_seconds=1800, tokens=900
    )
    assert Host.from_env(tmp_path, environ).conversations.limits.turns == 6
    assert ConversationLimits.of() == ConversationLimits(
        turns=10, max_age_seconds=7 * 24 * 3600, tokens=4000
    )


@pytest.mark.parametrize(
    ("toml", "environ", "message"),
    [
        ("[conversations]\nturns = 0\n", {}, "turns must be a positive whole number of turns"),
        ("[conversations]\nmax_age_hours = -1\n", {}, "max_age_hours must be a positive"),
        ("[conversations]\nforever = true\n", {}, "unknown .conversations. keys forever"),
        ("", {"SZRAG_CONVERSATION_TURNS": "many"}, "SZRAG_CONVERSATION_TURNS must be a whole"),
        ("", {"SZRAG_CONVERSATION_TOKENS": "-5"}, "SZRAG_CONVERSATION_TOKENS must be 0 or more"),
    ],
)
def test_bad_limits_are_clear_errors(
    tmp_path: Path, toml: str, environ: dict[str, str], message: str
) -> None:
    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "config.toml").write_text(toml)
    with pytest.raises(ConfigError, match=message):
        Host.from_env(tmp_path, environ)


# --- what earlier turns give ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "follow_up"),
    [
        ("and where is that called from?", True),
        ("what about the tests?", True),
        ("why?", True),
        ("where is it used", True),
        ("How does the deploy webhook verify GitHub signatures?", False),
        ("Where is verifyGithubSignature defined?", False),
        ("which function verifies that the webhook signature is valid", False),
        ("How is the index refreshed when a file changes on disk?", False),
    ],
)
def test_what_counts_as_a_follow_up(question: str, follow_up: bool) -> None:
    assert follows_up(question) is follow_up


def test_a_follow_up_is_searched_with_the_questions_it_follows() -> None:
    turns = [
        a_turn("c", "How are deploys scheduled by the cron runner?"),
        a_turn("c", "How does the webhook verify the GitHub signature?"),
        a_turn("c", "and where is that called?"),
    ]

    assert retrieval_query("what about its tests?", turns) == (
        "what about its tests?\nand where is that called?\n"
        "How does the webhook verify the GitHub signature?"
    )
    assert retrieval_query("what about its tests?", turns[:2]) == (
        "what about its tests?\nHow does the webhook verify the GitHub signature?"
    )
    standalone = "How is the rate limit of the API configured per token?"
    assert retrieval_query(standalone, turns) == standalone
    assert retrieval_query("and that?", []) == "and that?"  # outside a conversation: as asked


def test_history_drops_the_oldest_turns_first_within_the_budget() -> None:
    turns = [a_turn("c", f"question {n}", answer=f"answer {n} " + "word " * 40) for n in range(4)]
    one_pair = estimate_token_count("question 0") + estimate_token_count(turns[0].answer) + 8

    history = history_messages(turns, estimate_token_count, budget=2 * one_pair + 1)

    assert [message["content"] for message in history.messages[::2]] == [
        "question 2",
        "question 3",
    ]
    assert [message["role"] for message in history.messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert (history.turns, history.dropped) == (2, 2)
    assert history.tokens <= 2 * one_pair + 1
    assert history_messages(turns, estimate_token_count, budget=0).messages == ()


def test_history_gives_a_local_answer_as_the_sources_it_showed() -> None:
    local = a_turn("c", answer="Most relevant repository sources:\n- ...", outcome="no_model")

    history = history_messages([local], estimate_token_count, budget=1000)

    assert history.messages[1]["content"] == (
        "(No written answer was given; the sources shown were: server/webhook.js:1-25.)"
    )


def test_history_cuts_the_newest_answer_when_it_alone_is_too_long() -> None:
    long = a_turn("c", "explain everything", answer="detail " * 2000)

    history = history_messages([long], estimate_token_count, budget=300)

    answer = history.messages[1]["content"]
    assert answer.endswith("[...]") and answer.startswith("detail detail")
    assert history.turns == 1 and history.tokens <= 300


# --- the kept connection -------------------------------------------------------------------


def test_a_store_moved_aside_is_started_afresh_and_the_old_file_kept(tmp_path: Path) -> None:
    path = tmp_path / "conversations.db"
    store = ConversationStore(path)
    first = store.start(face="api")
    store.append(a_turn(first.id))
    path.rename(tmp_path / "aside.db")  # what the store's error message tells people to do

    second = store.start(face="api")
    assert store.turns(second.id) == () and store.latest("api") == second
    with pytest.raises(UnknownConversation):
        store.get(first.id)
    kept = ConversationStore(tmp_path / "aside.db")
    assert [turn.question for turn in kept.turns(first.id)] == ["how is the webhook verified?"]
    store.close()
    kept.close()


def test_threads_share_one_store_and_other_stores_see_its_writes(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "conversations.db"
    store, other = ConversationStore(path), ConversationStore(path)
    started = store.start(face="api")
    errors: list[BaseException] = []

    def answer(number: int) -> None:
        try:
            for turn in range(5):
                store.append(a_turn(started.id, f"question {number}.{turn}"))
        except BaseException as error:  # the test reports it below
            errors.append(error)

    workers = [threading.Thread(target=answer, args=(number,)) for number in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    kept = other.turns(started.id)  # another connection sees every committed turn
    assert len(kept) == ConversationLimits().turns
    assert kept == store.turns(started.id)
    store.close()
    other.close()


def test_start_with_keeps_a_first_turn_in_a_new_conversation(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "conversations.db")
    turn = a_turn(new_id())
    assert store.start_with(turn, face="api", owner="U1") == turn
    started = store.get(turn.conversation_id, owner="U1")
    assert (started.face, started.owner) == ("api", "U1")
    assert store.turns(turn.conversation_id) == (turn,)
    with pytest.raises(UnknownConversation):
        store.get(turn.conversation_id, owner="U2")
    with pytest.raises(ConversationError, match="is taken"):  # nothing of it is kept
        store.start_with(dataclasses.replace(turn, conversation_id=new_id()), face="api")
    assert len(ConversationStore(tmp_path / "conversations.db").turns(turn.conversation_id)) == 1
    assert store.latest("api") == started
    store.close()


def test_a_first_turn_is_no_older_than_its_conversation(tmp_path: Path) -> None:
    clock = Clock()
    store = ConversationStore(tmp_path / "conversations.db", clock=clock)
    turn = a_turn(new_id(), at=clock.now)
    clock.now += 5  # the store's clock has moved on by the time the turn is kept
    store.start_with(turn, face="api")
    started = store.get(turn.conversation_id)
    assert started.started_at == turn.asked_at <= started.updated_at
    store.close()
