"""One server over several repositories: scoped and routed questions, the repository list,
an unknown name refused before anything runs, follow-ups in the repository they began in."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from szrag.commands import Allowlist
from szrag.server import ServerSettings, create_app
from szrag.server.testing import serve_asgi
from szrag.service.repositories import plan_from_options

COMMON = {
    "src/config.py": "def load_settings(path):\n    return parse_toml(path.read_text())\n",
    "src/logging.py": "def setup_logging(level):\n    return basic_config(level=level)\n",
    "tests/test_config.py": "def test_load_settings():\n    assert load_settings\n",
}


def make_repo(root: Path, files: dict[str, str]) -> Path:
    for relative, text in {**COMMON, **files}.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def service_url(tmp_path: Path) -> Iterator[str]:
    mailer = make_repo(
        tmp_path / "mailer",
        {
            "src/welcome.py": "def send_welcome_email(user):\n"
            "    # the welcome e-mail every new user receives\n"
            "    return smtp_deliver(user.email, template='welcome')\n"
        },
    )
    billing = make_repo(
        tmp_path / "billing",
        {
            "src/invoice.py": "def render_invoice(order):\n"
            "    # an invoice with its tax lines\n"
            "    return pdf(order.lines, tax=vat_rate(order.country))\n"
        },
    )
    plan = plan_from_options([f"mailer={mailer}", f"billing={billing}"])
    app = create_app(
        plan=plan,
        environ={"SZRAG_AUDIT_LOG": "off"},
        settings=ServerSettings(watch=False, sse_ping_seconds=5.0),
        allowlist=Allowlist(),
        live_tools=False,
    )
    with contextlib.ExitStack() as stack:
        yield stack.enter_context(serve_asgi(app))


def ask(client: httpx.Client, **body: object) -> httpx.Response:
    return client.post("/api/ask", json={"withAi": False, **body})


def test_questions_are_scoped_or_routed_to_the_repository_that_answers(service_url: str) -> None:
    with httpx.Client(base_url=service_url, timeout=30) as client:
        listed = client.get("/api/repositories").json()["data"]
        assert [item["name"] for item in listed] == ["mailer", "billing"]
        assert listed[0]["state"] == "ready"  # the first is opened at start

        scoped = ask(client, question="how is the invoice rendered?", repository="billing")
        assert scoped.status_code == 200
        data = scoped.json()["data"]
        assert data["repository"] == "billing"
        assert data["sources"][0]["path"] == "src/invoice.py"

        routed = ask(client, question="which service sends the welcome e-mail?").json()["data"]
        assert routed["repository"] == "mailer"
        assert routed["sources"][0]["path"] == "src/welcome.py"

        routed = ask(client, question="invoice tax lines vat").json()["data"]
        assert routed["repository"] == "billing"

        listed = {item["name"]: item for item in client.get("/api/repositories").json()["data"]}
        assert listed["billing"]["state"] == "ready" and listed["billing"]["files"] == 4
        assert listed["billing"]["indexedAt"]


def test_an_unknown_repository_is_refused_before_anything_runs(service_url: str) -> None:
    with httpx.Client(base_url=service_url, timeout=30) as client:
        refused = ask(client, question="anything", repository="mobile")
        assert refused.status_code == 404
        assert refused.json()["code"] == "unknown_repository"
        assert "mailer, billing" in refused.json()["error"]
        bad = ask(client, question="anything", repository=["mailer"])
        assert bad.status_code == 400 and bad.json()["code"] == "invalid_request"


def test_a_follow_up_continues_in_the_repository_it_began_in(service_url: str) -> None:
    with httpx.Client(base_url=service_url, timeout=30) as client:
        first = ask(client, question="where is the invoice tax computed?", repository="billing")
        conversation = first.json()["data"]["conversationId"]
        # names no repository and would route anywhere: it follows its conversation
        follow = ask(client, question="and the welcome e-mail?", conversationId=conversation)
        assert follow.status_code == 200
        assert follow.json()["data"]["repository"] == "billing"
        assert follow.json()["data"]["conversationId"] == conversation


def test_feedback_goes_to_the_repository_its_answer_was_about(service_url: str) -> None:
    with httpx.Client(base_url=service_url, timeout=30) as client:
        # billing is not the first repository: the server's default would not know its answer
        answer = ask(client, question="how is the invoice rendered?", repository="billing")
        answer_id = answer.json()["data"]["answerId"]
        given = client.post(
            "/api/feedback",
            json={"answerId": answer_id, "rating": "up", "rightFiles": ["src/invoice.py"]},
        )
        assert given.status_code == 200
        assert given.json()["data"]["rightFiles"] == ["src/invoice.py"]
        assert given.json()["data"]["repository"] == "billing"
        unknown = client.post("/api/feedback", json={"answerId": "0" * 16, "rating": "up"})
        assert unknown.status_code == 404 and unknown.json()["code"] == "unknown_answer"


def test_feedback_goes_to_the_repository_its_answer_is_from(service_url: str) -> None:
    with httpx.Client(base_url=service_url, timeout=30) as client:
        answer = ask(client, question="how is the invoice rendered?", repository="billing")
        answer_id = answer.json()["data"]["answerId"]
        # named by the page, or found in the store that keeps it
        found = client.post("/api/feedback", json={"answerId": answer_id, "rating": "up"})
        assert found.status_code == 200, found.text
        wrong = client.post(
            "/api/feedback", json={"answerId": answer_id, "rating": "up", "repository": "mailer"}
        )
        assert wrong.status_code == 404 and wrong.json()["code"] == "unknown_answer"
        never = client.post("/api/feedback", json={"answerId": "0" * 16, "rating": "up"})
        assert never.status_code == 404 and never.json()["code"] == "unknown_answer"
        kept = client.post(
            "/api/feedback",
            json={
                "answerId": answer_id,
                "rating": "down",
                "rightFiles": ["src/invoice.py"],
                "repository": "billing",
            },
        )
        assert kept.status_code == 200, kept.text
        assert kept.json()["data"]["rightFiles"] == ["src/invoice.py"]
        unknown = client.post(
            "/api/feedback", json={"answerId": answer_id, "rating": "up", "repository": "x"}
        )
        assert unknown.status_code == 404 and unknown.json()["code"] == "unknown_repository"


def test_listing_the_repositories_spends_one_read(tmp_path: Path) -> None:
    from szrag.server import RateLimit

    app = create_app(
        plan=plan_from_options([f"one={make_repo(tmp_path / 'one', {})}"]),
        environ={"SZRAG_AUDIT_LOG": "off"},
        settings=ServerSettings(watch=False, read_rate=RateLimit(per_minute=1, burst=2)),
        allowlist=Allowlist(),
        live_tools=False,
    )
    with serve_asgi(app) as base, httpx.Client(base_url=base, timeout=30) as client:
        codes = [client.get("/api/repositories").status_code for _ in range(3)]
    assert codes == [200, 200, 429]  # the page reads it as it loads: one read each time
