"""A service of several repositories keeps one conversation store and one audit log, each
conversation, feedback and audit line tagged with its repository; a server of one repository
(``--root``) keeps its own ``.rag/conversations.db`` and audit lines as before."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from szrag.answer import Question
from szrag.base.errors import UnknownConversation
from szrag.conversations import ConversationStore, open_conversation_store, store_path
from szrag.service.feedback import feedback_cases, give_feedback, list_feedback
from szrag.service.host import Host
from szrag.service.repositories import plan_from_options, read_service_file
from szrag.service.service import Service

FILES = {
    "mailer": {
        "src/welcome.py": "def send_welcome_email(user):\n"
        "    '''Send the welcome e-mail to a new user.'''\n"
        "    return smtp_deliver(user.email, template='welcome')\n",
    },
    "billing": {
        "src/invoice.py": "def render_invoice(order):\n"
        "    '''Render an invoice with tax lines.'''\n"
        "    return pdf(order.lines, tax=vat_rate(order.country))\n",
    },
}


@pytest.fixture
def repositories(write_folders: Callable[..., dict[str, Path]]) -> dict[str, Path]:
    return write_folders(FILES)


def local(text: str) -> Question:
    """A question answered from the index alone, kept as the first turn of a conversation."""
    return Question(text, with_ai=False, remember=True)


async def test_a_service_keeps_one_store_and_one_audit_log_tagged_by_repository(
    repositories: dict[str, Path],
) -> None:
    plan = plan_from_options([f"{name}={path}" for name, path in repositories.items()])
    service = Service(plan, {})
    try:
        mailer, billing = service.host("mailer"), service.host("billing")
        first = await mailer.ask(local("who sends the welcome e-mail?"))
        second = await billing.ask(local("how is the invoice rendered?"))
        assert first.conversation_id and second.conversation_id and second.answer_id
        follow = await billing.ask(
            Question("and its tax?", with_ai=False, conversation_id=second.conversation_id)
        )
        assert follow.conversation_id == second.conversation_id

        home = repositories["mailer"].resolve() / ".rag" / "service"
        assert plan.home == home
        assert isinstance(service.conversations, ConversationStore)
        assert service.conversations.path == home / "conversations.db"
        for path in repositories.values():  # no repository keeps a store of its own
            assert not store_path(path).exists()
        assert service.repository_of(first.conversation_id) == "mailer"
        assert service.repository_of(second.conversation_id) == "billing"
        assert service.repository_of_answer(second.answer_id) == "billing"
        assert service.repository_of("never-started") is None
        assert mailer.conversations.get(first.conversation_id).repository == "mailer"
        with pytest.raises(UnknownConversation):  # each repository sees its own
            mailer.conversations.get(second.conversation_id)
        assert len(billing.conversations.turns(second.conversation_id)) == 2

        given = give_feedback(billing, second.answer_id, "up", right_files=["src/invoice.py"])
        assert given.repository == "billing"
        assert list_feedback(mailer) == [] and list_feedback(billing) == [given]
        cases = feedback_cases(list_feedback(billing)).cases
        assert [case["repository"] for case in cases] == ["billing"]

        lines = [json.loads(line) for line in (home / "audit.log").read_text().splitlines()]
        assert [(line["event"], line["repository"]) for line in lines] == [
            ("ask", "mailer"),
            ("ask", "billing"),
            ("ask", "billing"),
        ]
        assert service.audit.read()[-1]["question"] == "and its tax?"
    finally:
        service.close()


async def test_a_service_file_keeps_its_data_beside_it_and_a_store_can_be_given(
    repositories: dict[str, Path], tmp_path: Path, pg_url: str
) -> None:
    service_file = tmp_path / "szrag.toml"
    service_file.write_text(
        "".join(f'[[repositories]]\nname = "{n}"\npath = "{n}"\n' for n in repositories)
    )
    plan = read_service_file(service_file)
    assert plan.home == tmp_path.resolve() / ".szrag"

    store = open_conversation_store(pg_url)  # replicas: one database for every repository
    service = Service(plan, {}, conversations=store)
    try:
        answer = await service.host("billing").ask(local("how is the invoice rendered?"))
        assert answer.conversation_id is not None
        assert store.repository_of(answer.conversation_id) == "billing"
        assert not (tmp_path / ".szrag" / "conversations.db").exists()
        audited = service.audit.read()  # in the database's szrag_audit table, not a file
        assert [(line["event"], line["repository"]) for line in audited] == [("ask", "billing")]
        assert service.audit.path is None and not (tmp_path / ".szrag" / "audit.log").exists()
    finally:
        service.close()


def test_auditing_turned_off_is_off_for_the_whole_service(repositories: dict[str, Path]) -> None:
    plan = plan_from_options([f"{name}={path}" for name, path in repositories.items()])
    service = Service(plan, {"SZRAG_AUDIT_LOG": "off"})
    try:
        assert not service.audit.enabled and not service.host("mailer").audit.enabled
    finally:
        service.close()


async def test_one_repository_keeps_its_own_store_and_untagged_audit_lines(
    repositories: dict[str, Path],
) -> None:
    root = repositories["mailer"]
    host = Host.from_env(root, {})
    try:
        answer = await host.ask(local("who sends the welcome e-mail?"))
        assert answer.conversation_id is not None
        assert isinstance(host.conversations, ConversationStore)
        assert host.conversations.path == store_path(root)
        assert host.conversations.get(answer.conversation_id).repository == ""
        line = json.loads((root / ".rag" / "audit.log").read_text().splitlines()[0])
        assert "repository" not in line and line["event"] == "ask"
    finally:
        host.conversations.close()


def test_the_watcher_ignores_what_a_service_writes_beside_its_file(tmp_path: Path) -> None:
    from watchfiles import Change

    from szrag.service.watch import RepositoryFilter

    allowed = RepositoryFilter()
    assert allowed(Change.modified, str(tmp_path / "src" / "main.py"))
    for written in (".szrag/audit.log", ".szrag/conversations.db-wal", ".rag/index.db"):
        assert not allowed(Change.modified, str(tmp_path / written))
