"""Two replicas of one service, real servers on 127.0.0.1, each over its own checkout and both
keeping conversations in one PostgreSQL database: a conversation begun on one continues on
the other, feedback on an answer is taken by either, and both audit into the database."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from szrag.commands import Allowlist
from szrag.server import ServerSettings, create_app
from szrag.server.testing import serve_asgi
from szrag.service.repositories import plan_from_options

FILES = {
    "mailer": {
        "src/welcome.py": "def send_welcome_email(user):\n"
        "    # the welcome e-mail a new user gets\n"
        "    return smtp_deliver(user.email, template='welcome')\n",
        "src/config.py": "def load_settings(path):\n    return parse_toml(path.read_text())\n",
    },
    "billing": {
        "src/invoice.py": "def render_invoice(order):\n"
        "    # an invoice with its tax lines\n"
        "    return pdf(order.lines, tax=vat_rate(order.country))\n",
        "src/config.py": "def load_settings(path):\n    return parse_toml(path.read_text())\n",
    },
}


def checkout(folder: Path) -> list[str]:
    """One replica's checkout of both repositories, as ``--repo`` options."""
    options = []
    for name, files in FILES.items():
        for relative, text in files.items():
            path = folder / name / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        options.append(f"{name}={folder / name}")
    return options


@pytest.fixture
def replicas(tmp_path: Path, pg_url: str) -> Iterator[tuple[str, str]]:
    with contextlib.ExitStack() as stack:
        urls = []
        for replica in ("one", "two"):
            plan = plan_from_options(checkout(tmp_path / replica))
            app = create_app(
                plan=dataclasses.replace(plan, conversations=pg_url),
                environ={},
                settings=ServerSettings(watch=False, sse_ping_seconds=5.0),
                allowlist=Allowlist(),
                live_tools=False,
            )
            urls.append(stack.enter_context(serve_asgi(app)))
        yield urls[0], urls[1]


def ask(client: httpx.Client, **body: object) -> dict[str, object]:
    answered = client.post("/api/ask", json={"withAi": False, **body})
    assert answered.status_code == 200, answered.text
    data: dict[str, object] = answered.json()["data"]
    return data


def test_two_replicas_alternate_the_turns_of_one_conversation(
    replicas: tuple[str, str], pg_url: str, tmp_path: Path
) -> None:
    one = httpx.Client(base_url=replicas[0], timeout=30)
    two = httpx.Client(base_url=replicas[1], timeout=30)
    with one, two:
        first = ask(one, question="where is the invoice tax computed?", repository="billing")
        conversation = first["conversationId"]
        answers = [first]
        for client, question in ((two, "and its lines?"), (one, "and the vat rate?")):
            # names no repository: each replica finds the conversation's in the database
            answers.append(ask(client, question=question, conversationId=conversation))
        assert [item["conversationId"] for item in answers] == [conversation] * 3
        assert [item["repository"] for item in answers] == ["billing"] * 3

        on_one = one.post(
            "/api/feedback", json={"answerId": answers[1]["answerId"], "rating": "up"}
        )
        on_two = two.post(
            "/api/feedback",
            json={
                "answerId": first["answerId"],
                "rating": "down",
                "rightFiles": ["src/invoice.py"],
            },
        )
        assert on_one.status_code == 200 and on_two.status_code == 200
        assert on_two.json()["data"]["repository"] == "billing"

        unknown = two.post(
            "/api/ask", json={"withAi": False, "question": "x", "conversationId": "nope"}
        )
        assert unknown.status_code == 404 and unknown.json()["code"] == "unknown_conversation"

    with psycopg.connect(pg_url) as conn:
        turns = conn.execute(
            "SELECT question FROM szrag_turns WHERE conversation_id = %s ORDER BY seq",
            (conversation,),
        ).fetchall()
        feedback = conn.execute(
            "SELECT answer_id, rating, repository FROM szrag_feedback ORDER BY seq"
        ).fetchall()
        audited = conn.execute("SELECT repository, event FROM szrag_audit ORDER BY seq").fetchall()
    assert [row[0] for row in turns] == [
        "where is the invoice tax computed?",
        "and its lines?",
        "and the vat rate?",
    ]
    assert feedback == [
        (answers[1]["answerId"], "up", "billing"),
        (first["answerId"], "down", "billing"),
    ]
    assert audited[:3] == [("billing", "ask")] * 3
    for replica in ("one", "two"):  # nothing kept beside the checkouts
        assert not (tmp_path / replica / "mailer" / ".rag" / "service").exists()
