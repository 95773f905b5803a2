"""An unscoped question's answer, made in the repository it is routed to, offered the other
repositories' best files beside its own: in the model's message, in the local answer and in
the public JSON, within a share of the context budget, redacted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from szrag.answer import Question
from szrag.answer.elsewhere import ELSEWHERE_SHARE, MergedSource, offered_elsewhere
from szrag.base.settings import Settings
from szrag.commands import Allowlist
from szrag.llm.testing import ScriptedProvider, text_reply
from szrag.rank.retrieve import Source
from szrag.server import ServerSettings, create_app
from szrag.server.testing import serve_asgi
from szrag.service.host import Host, answer_question_async
from szrag.service.repositories import plan_from_options
from szrag.service.service import Routed, Service

WriteFolders = Callable[[dict[str, dict[str, str]]], dict[str, Path]]

MAILER = (
    {
        f"src/mail_{name}.py": f"def {name}_email(user):\n"
        f"    '''Send the {name} email to the user.'''\n"
        f"    return deliver_email(user.email, template='{name}')\n"
        for name in ("welcome", "reset", "digest", "receipt", "reminder", "farewell")
    }
    | {
        f"src/{name}.py": f"def {name}(queue):\n"
        f"    '''The {name} step of the outgoing queue.'''\n"
        f"    return queue.{name}(retries=3)\n"
        for name in ("schedule", "retry", "throttle", "bounce", "archive", "metrics", "health")
    }
    | {
        "src/mail_reminder.py": "def reminder_email(user):\n"
        "    '''Send the reminder email to the user.'''\n"
        "    SMTP_PASSWORD = 'sk_live_51HqLyjWDarjtT1zdp7dcXnQ8Wq4o2rT9vKcE'\n"
        "    return deliver_email(user.email, template='reminder', password=SMTP_PASSWORD)\n",
    }
)
BILLING = {
    f"src/{name}.py": f"def {name}(order):\n"
    f"    '''The {name} of an order's invoice with its tax lines.'''\n"
    f"    return total(order.lines, tax=vat_rate(order.country))\n"
    for name in ("render", "tax", "refund", "discount", "currency", "ledger", "export")
} | {
    "src/gateway.py": "def refund_gateway(order):\n"
    "    '''Refund an invoice at the payment gateway.'''\n"
    "    return charge(order, gateway='refunds')\n",
}
QUESTION = "refund invoice reminder email"


@pytest.fixture
def routed(write_folders: WriteFolders) -> tuple[Routed, dict[str, Path]]:
    folders = write_folders({"mailer": MAILER, "billing": BILLING})
    service = Service(plan_from_options([f"{n}={p}" for n, p in folders.items()]), {})
    try:
        return service.route(QUESTION), folders
    finally:
        service.close()


def test_the_other_repositories_best_files_are_offered_beside_the_chosen_one(
    routed: tuple[Routed, dict[str, Path]],
) -> None:
    found, _ = routed
    offered = found.elsewhere()
    assert offered, "the other repository's files scoring close are offered"
    # billing holds the best file (its refund code); the mailer's reminder scores close
    assert found.repository == "billing"
    assert {item.repository for item in offered} == {"mailer"}
    assert "src/mail_reminder.py" in {item.source.path for item in offered}
    best = found.merged[0].shared_score
    assert all(item.shared_score >= best / 2 for item in offered)
    assert len({item.source.path for item in found.elsewhere(1)}) == 1


def test_offered_sources_count_files_not_units_and_skip_the_chosen_repository() -> None:
    def merged(repository: str, path: str, start: int) -> MergedSource:
        return MergedSource(repository, Source(path, start, start + 2, "code", None, "x", 1), 1.0)

    ranking = [
        merged("a", "one.py", 1),
        merged("b", "two.py", 1),
        merged("b", "two.py", 9),  # a second unit of the same file
        merged("c", "three.py", 1),
        merged("b", "four.py", 1),
    ]
    offered = offered_elsewhere(ranking, "a", 2)
    assert [(item.repository, item.source.path, item.source.start) for item in offered] == [
        ("b", "two.py", 1),
        ("b", "two.py", 9),
        ("c", "three.py", 1),
    ]
    assert offered[0].cited == "b:two.py:1-3"


async def test_the_model_reads_them_named_by_repository_within_the_budget(
    routed: tuple[Routed, dict[str, Path]],
    provider: ScriptedProvider,
    provider_settings: Callable[..., Settings],
) -> None:
    found, folders = routed
    provider.script(text_reply("The refund is in billing."))
    host = Host.from_env(folders["billing"], settings=provider_settings(), live_tools=False)
    budget = 2000
    question = Question(QUESTION, budget=budget, elsewhere=found.elsewhere())
    result = await answer_question_async(question, host)

    _, user = provider.requests[0].json["messages"]
    block = user["content"].split("<other_repositories>", 1)[1].split("</other_repositories>")[0]
    assert "--- mailer:src/mail_reminder.py:1-4" in block
    assert "sk_live_51HqLyjWDarjtT1zdp7dcXnQ8Wq4o2rT9vKcE" not in user["content"]
    shown = result.to_dict()
    assert shown["otherSources"][0]["repository"] == "mailer"
    assert {"path", "start", "end", "text", "sharedScore"} <= set(shown["otherSources"][0])
    assert all("sk_live_" not in item["text"] for item in shown["otherSources"])
    assert not any(source["path"].startswith("src/mail_") for source in shown["sources"])
    beside = next(a for a in shown["activities"] if a["message"].startswith("Other repositor"))
    assert beside["metadata"]["repositories"] == ["mailer"]
    packed = next(a for a in shown["activities"] if a["message"].startswith("Packed"))
    # this repository's context and the other repositories' blocks share one budget
    assert beside["metadata"]["budget"] <= budget // ELSEWHERE_SHARE
    assert packed["metadata"]["tokens"] + beside["metadata"]["tokens"] <= budget


async def test_a_local_answer_lists_them_and_a_scoped_one_has_none(
    routed: tuple[Routed, dict[str, Path]], provider: ScriptedProvider
) -> None:
    found, folders = routed
    host = Host.from_env(folders["billing"], live_tools=False)
    local = await answer_question_async(
        Question(QUESTION, with_ai=False, elsewhere=found.elsewhere()), host
    )
    assert "In other repositories:\n- mailer:src/mail_reminder.py:1-4" in local.answer
    assert local.to_dict()["otherSources"]
    scoped = await answer_question_async(Question(QUESTION, with_ai=False), host)
    assert "otherSources" not in scoped.to_dict()
    assert "In other repositories" not in scoped.answer
    assert provider.requests == []


def test_a_routed_answer_over_http_carries_them_and_a_scoped_one_does_not(
    write_folders: WriteFolders,
) -> None:
    folders = write_folders({"mailer": MAILER, "billing": BILLING})
    app = create_app(
        plan=plan_from_options([f"{n}={p}" for n, p in folders.items()]),
        environ={"SZRAG_AUDIT_LOG": "off"},
        settings=ServerSettings(watch=False, sse_ping_seconds=5.0),
        allowlist=Allowlist(),
        live_tools=False,
    )
    with serve_asgi(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        routed = client.post("/api/ask", json={"question": QUESTION, "withAi": False}).json()
        scoped = client.post(
            "/api/ask", json={"question": QUESTION, "withAi": False, "repository": "billing"}
        ).json()
    assert routed["data"]["repository"] == "billing"
    offered = routed["data"]["otherSources"]
    assert {item["repository"] for item in offered} == {"mailer"}
    assert "sk_live_" not in str(offered)
    assert "In other repositories:\n- mailer:src/mail_reminder.py:1-4" in routed["data"]["answer"]
    assert scoped["data"]["repository"] == "billing" and "otherSources" not in scoped["data"]
