"""A server over repositories that live elsewhere: real bare repositories cloned over
``file://`` at start, fetched on real signed webhooks (GitHub's HMAC, GitLab's token) and on
an interval, the new commit answered; a clone that fails, a bad signature and a vanished
folder each a clear state or error while the other repositories answer."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from szrag.base.errors import RepositoryError
from szrag.commands import Allowlist
from szrag.server import ServerSettings, create_app
from szrag.server.testing import serve_asgi
from szrag.service.repositories import plan_from_options, read_service_file

MakeRemote = Callable[[str, dict[str, str]], Any]  # the git_remote fixture (conftest.py)
SECRET = "webhook-s3cret"
MAILER = {
    "src/welcome.py": "def send_welcome_email(user):\n"
    "    # the welcome e-mail every new user receives\n"
    "    return smtp_deliver(user.email, template='welcome')\n",
    "src/config.py": "def load_settings(path):\n    return parse_toml(path.read_text())\n",
}
BILLING = {
    "src/invoice.py": "def render_invoice(order):\n"
    "    # an invoice with its tax lines\n"
    "    return pdf(order.lines, tax=vat_rate(order.country))\n",
    "src/config.py": "def load_settings(path):\n    return parse_toml(path.read_text())\n",
}
REFUND = {
    "src/refund.py": "def issue_refund_voucher(customer):\n"
    "    # a refund voucher mailed after a complaint\n"
    "    return voucher_mail(customer.email, amount=goodwill_amount(customer))\n"
}

Serve = Callable[..., str]


def write_files(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """Starts a real server over the service file written from ``text`` (with the webhook
    secret in its environment); yields its base URL."""
    with contextlib.ExitStack() as stack:

        def start(text: str, **environ: str) -> str:
            service_file = tmp_path / "szrag.toml"
            service_file.write_text(text, encoding="utf-8")
            app = create_app(
                plan=read_service_file(service_file),
                environ={
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "SZRAG_AUDIT_LOG": "off",
                    **environ,
                },
                settings=ServerSettings(watch=False, sse_ping_seconds=5.0),
                allowlist=Allowlist(),
                live_tools=False,
            )
            return stack.enter_context(serve_asgi(app))

        yield start


def listed(client: httpx.Client) -> dict[str, Any]:
    return {item["name"]: item for item in client.get("/api/repositories").json()["data"]}


def until(client: httpx.Client, name: str, check: Callable[[dict[str, Any]], bool]) -> Any:
    """The repository's state once ``check`` holds (30 s at most)."""
    deadline = time.monotonic() + 30
    while True:
        state = listed(client)[name]
        if check(state):
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.05)


def ask(client: httpx.Client, question: str, repository: str) -> httpx.Response:
    return client.post(
        "/api/ask", json={"question": question, "repository": repository, "withAi": False}
    )


def github_push(
    client: httpx.Client, name: str, payload: dict[str, Any], secret: str = SECRET
) -> httpx.Response:
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return client.post(
        f"/api/repositories/{name}/webhook",
        content=body,
        headers={
            "Content-Type": "application/json",
            "X-GitHub-Event": "push",
            "X-Hub-Signature-256": signature,
        },
    )


def service_text(remote: Any, *, interval: float = 0, secret: bool = True) -> str:
    hook = 'webhook_secret_env = "MAILER_HOOK"\n' if secret else ""
    return (
        f"fetch_interval = {interval}\n"
        '[[repositories]]\nname = "billing"\npath = "billing"\n'
        f'[[repositories]]\nname = "mailer"\nurl = "{remote.url}"\nbranch = "main"\n{hook}'
    )


def test_a_remote_is_cloned_at_start_and_fetched_on_signed_webhooks(
    serve: Serve, git_remote: MakeRemote, tmp_path: Path
) -> None:
    remote = git_remote("mailer", MAILER)
    write_files(tmp_path / "billing", BILLING)
    base = serve(service_text(remote), MAILER_HOOK=SECRET)

    with httpx.Client(base_url=base, timeout=30) as client:
        first = remote.git("rev-parse", "HEAD")
        ready = until(client, "mailer", lambda state: state["state"] == "ready")
        assert ready["commit"] == first and ready["files"] == 2 and ready["indexedAt"]
        assert ready["url"] == remote.url and ready["fetchedAt"] and ready["error"] is None
        assert (tmp_path / ".szrag/repositories/mailer/src/welcome.py").is_file()
        answered = ask(client, "who sends the welcome e-mail?", "mailer").json()["data"]
        assert answered["repository"] == "mailer"
        assert answered["sources"][0]["path"] == "src/welcome.py"

        pushed = remote.push(REFUND)
        bad = github_push(client, "mailer", {"ref": "refs/heads/main"}, secret="guessed")
        assert (
            bad.status_code == 401 and bad.json()["error"] == "the webhook's signature is not valid"
        )
        unsigned = client.post("/api/repositories/mailer/webhook", json={"ref": "refs/heads/main"})
        assert unsigned.status_code == 401 and unsigned.json()["error"] == bad.json()["error"]
        assert listed(client)["mailer"]["commit"] == first  # refused: nothing fetched

        elsewhere = github_push(client, "mailer", {"ref": "refs/heads/feature"})
        assert elsewhere.status_code == 200 and elsewhere.json()["data"]["accepted"] is False
        assert "feature" in elsewhere.json()["data"]["reason"]

        accepted = github_push(client, "mailer", {"ref": "refs/heads/main"})
        assert accepted.status_code == 202, accepted.text
        assert accepted.json()["data"] == {
            "repository": "mailer",
            "accepted": True,
            "reason": "fetching main in the background",
        }
        moved = until(client, "mailer", lambda state: state["commit"] == pushed)
        assert moved["files"] == 3 and moved["state"] == "ready"
        refund = ask(client, "how is a refund voucher issued?", "mailer").json()["data"]
        assert refund["sources"][0]["path"] == "src/refund.py"

        again = remote.push({"src/refund.py": "def refund_by_bank_transfer(customer):\n"
                                              "    return transfer(customer.iban)\n"})  # fmt: skip
        gitlab = client.post(
            "/api/repositories/mailer/webhook",
            json={"object_kind": "push", "ref": "refs/heads/main"},
            headers={"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": SECRET},
        )
        assert gitlab.status_code == 202, gitlab.text
        until(client, "mailer", lambda state: state["commit"] == again)
        transfer = ask(client, "refund by bank transfer iban", "mailer").json()["data"]
        assert transfer["sources"][0]["path"] == "src/refund.py"
        assert "transfer" in json.dumps(transfer["sources"][0])
        wrong = client.post(
            "/api/repositories/mailer/webhook",
            json={"ref": "refs/heads/main"},
            headers={"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "nope"},
        )
        assert wrong.status_code == 401

        ping = client.post(
            "/api/repositories/mailer/webhook",
            content=b"{}",
            headers={
                "X-GitHub-Event": "ping",
                "X-Hub-Signature-256": "sha256="
                + hmac.new(SECRET.encode(), b"{}", hashlib.sha256).hexdigest(),
            },
        )
        assert ping.status_code == 200 and ping.json()["data"]["accepted"] is False

        for name in ("billing", "nobody"):  # a folder, unknown: one answer for both
            none = client.post(f"/api/repositories/{name}/webhook", json={})
            assert none.status_code == 404 and none.json()["code"] == "no_webhook"
            assert "billing" not in none.json()["error"]  # names are not listed to anyone
        slash = client.post("/api/repositories/a%2Fb/webhook", json={})
        assert slash.status_code == 404  # no repository's name holds a slash
        assert ask(client, "invoice tax lines", "billing").json()["data"]["repository"] == "billing"


def test_a_remote_without_a_secret_has_no_webhook_and_is_fetched_on_its_interval(
    serve: Serve, git_remote: MakeRemote, tmp_path: Path
) -> None:
    remote = git_remote("mailer", MAILER)
    write_files(tmp_path / "billing", BILLING)
    base = serve(service_text(remote, interval=0.2, secret=False))

    with httpx.Client(base_url=base, timeout=30) as client:
        until(client, "mailer", lambda state: state["state"] == "ready")
        off = github_push(client, "mailer", {"ref": "refs/heads/main"})
        assert off.status_code == 404 and "webhook_secret_env" in off.json()["error"]

        pushed = remote.push(REFUND)
        moved = until(client, "mailer", lambda state: state["commit"] == pushed)
        assert moved["files"] == 3
        refund = ask(client, "how is a refund voucher issued?", "mailer").json()["data"]
        assert refund["sources"][0]["path"] == "src/refund.py"


def test_a_clone_that_fails_is_a_failed_state_while_the_others_answer(
    serve: Serve, tmp_path: Path
) -> None:
    write_files(tmp_path / "billing", BILLING)
    missing = (tmp_path / "remotes" / "gone.git").as_uri()
    base = serve(
        '[[repositories]]\nname = "billing"\npath = "billing"\n'
        f'[[repositories]]\nname = "mailer"\nurl = "{missing}"\n'
    )

    with httpx.Client(base_url=base, timeout=30) as client:
        failed = until(client, "mailer", lambda state: state["state"] == "failed")
        assert f"git clone of {missing} failed" in failed["error"]
        assert "does not appear to be a git repository" in failed["error"]
        refused = ask(client, "who sends the welcome e-mail?", "mailer")
        assert refused.status_code == 503
        assert refused.json()["code"] == "repository_unavailable"
        assert "could not be cloned" not in refused.json()["error"]  # git's own reason
        assert "does not appear to be a git repository" in refused.json()["error"]
        answered = ask(client, "invoice tax lines", "billing")
        assert answered.status_code == 200
        assert answered.json()["data"]["sources"][0]["path"] == "src/invoice.py"
        routed = client.post("/api/ask", json={"question": "invoice tax", "withAi": False})
        assert routed.status_code == 200 and routed.json()["data"]["repository"] == "billing"


def test_a_webhook_secret_named_but_not_set_stops_the_server_with_a_clear_error(
    git_remote: MakeRemote,
    tmp_path: Path,
) -> None:
    from szrag.base.errors import ConfigError
    from szrag.service.service import Service

    remote = git_remote("mailer", MAILER)
    write_files(tmp_path / "billing", BILLING)
    (tmp_path / "szrag.toml").write_text(service_text(remote), encoding="utf-8")
    plan = read_service_file(tmp_path / "szrag.toml")

    with pytest.raises(ConfigError, match="webhook_secret_env names MAILER_HOOK, which is not set"):
        Service(plan, {"SZRAG_AUDIT_LOG": "off"})
    with pytest.raises(ConfigError, match="MAILER_HOOK, which is not set"):
        create_app(plan=plan, environ={"SZRAG_AUDIT_LOG": "off", "MAILER_HOOK": " "})


def test_a_folder_that_vanishes_is_a_failed_state_while_the_others_answer(
    serve: Serve, tmp_path: Path
) -> None:
    write_files(tmp_path / "billing", BILLING)
    write_files(tmp_path / "mailer", MAILER)
    base = serve(
        '[[repositories]]\nname = "billing"\npath = "billing"\n'
        '[[repositories]]\nname = "mailer"\npath = "mailer"\n'
    )

    with httpx.Client(base_url=base, timeout=30) as client:
        assert ask(client, "welcome e-mail", "mailer").status_code == 200
        shutil.rmtree(tmp_path / "mailer")
        gone = listed(client)["mailer"]
        assert gone["state"] == "failed"
        assert gone["error"] == f"its folder {tmp_path / 'mailer'} is gone"
        refused = ask(client, "welcome e-mail", "mailer")
        assert refused.status_code == 503 and "is gone" in refused.json()["error"]
        assert ask(client, "invoice tax lines", "billing").status_code == 200
        routed = client.post("/api/ask", json={"question": "welcome e-mail", "withAi": False})
        assert routed.status_code == 200 and routed.json()["data"]["repository"] == "billing"
        assert listed(client)["billing"]["state"] == "ready"


def test_webhook_requests_spend_from_the_read_budget_before_their_body_is_read(
    tmp_path: Path,
) -> None:
    from szrag.base.settings import RateLimit

    write_files(tmp_path / "billing", BILLING)
    (tmp_path / "szrag.toml").write_text(
        '[[repositories]]\nname = "billing"\npath = "billing"\n', encoding="utf-8"
    )
    app = create_app(
        plan=read_service_file(tmp_path / "szrag.toml"),
        environ={"SZRAG_AUDIT_LOG": "off"},
        settings=ServerSettings(watch=False, read_rate=RateLimit(1, 2)),
        allowlist=Allowlist(),
        live_tools=False,
    )
    with serve_asgi(app) as base, httpx.Client(base_url=base, timeout=30) as client:
        answers = [client.post("/api/repositories/x/webhook", json={}) for _ in range(3)]
    assert [answer.status_code for answer in answers] == [404, 404, 429]
    assert answers[2].headers["Retry-After"]


def test_a_service_of_remotes_alone_starts_once_one_is_cloned(
    serve: Serve, git_remote: MakeRemote, tmp_path: Path
) -> None:
    remote = git_remote("mailer", MAILER)
    missing = (tmp_path / "remotes" / "gone.git").as_uri()
    base = serve(
        f'[[repositories]]\nname = "broken"\nurl = "{missing}"\n'
        f'[[repositories]]\nname = "mailer"\nurl = "{remote.url}"\n'
    )

    with httpx.Client(base_url=base, timeout=30) as client:
        states = listed(client)  # the server answers once the first good clone is ready
        assert states["broken"]["state"] == "failed" and states["mailer"]["state"] == "ready"
        assert client.get("/healthz").status_code == 200
        routed = client.post("/api/ask", json={"question": "welcome e-mail", "withAi": False})
        assert routed.json()["data"]["repository"] == "mailer"


def test_a_repo_option_with_a_url_is_cloned_and_served(
    git_remote: MakeRemote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = git_remote("mailer", MAILER)
    write_files(tmp_path / "billing", BILLING)
    monkeypatch.chdir(tmp_path)
    plan = plan_from_options([f"mailer={remote.url}#main", "billing=billing"])
    mailer = plan.named("mailer")
    assert (mailer.url, mailer.branch) == (remote.url, "main")
    assert mailer.path == (tmp_path / ".szrag/repositories/mailer").resolve()
    assert plan.data == (tmp_path / ".szrag/repositories").resolve()
    assert plan.named("billing").url is None
    for scp_like in ("git@github.com:acme/mailer.git", "ssh://git@host/acme/mailer"):
        assert plan_from_options([f"mailer={scp_like}"]).named("mailer").remote
    with pytest.raises(RepositoryError, match="NAME=URL#BRANCH"):
        plan_from_options([f"mailer={remote.url}#"])

    app = create_app(
        plan=plan,
        environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SZRAG_AUDIT_LOG": "off"},
        settings=ServerSettings(watch=False),
        allowlist=Allowlist(),
        live_tools=False,
    )
    with serve_asgi(app) as base, httpx.Client(base_url=base, timeout=30) as client:
        deadline = time.monotonic() + 60
        states: dict[str, str] = {}
        while time.monotonic() < deadline:
            listed = client.get("/api/repositories").json()["data"]
            states = {item["name"]: item["state"] for item in listed}
            if states.get("mailer") == "ready":
                break
            time.sleep(0.2)
        assert states == {"mailer": "ready", "billing": "ready"}, states
        answered = client.post(
            "/api/ask",
            json={"question": "welcome email", "withAi": False, "repository": "mailer"},
        )
        assert answered.status_code == 200, answered.text
        assert answered.json()["data"]["sources"][0]["path"] == "src/welcome.py"
