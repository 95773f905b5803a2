"""Replicas: ``szrag serve --store URL`` answers from the PostgreSQL store alone (no checkout,
no watcher), several replicas on one database see each publish whole and without a restart,
and a replica whose database goes away answers 503 ``store_unavailable`` at once and
recovers by itself when it is back."""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg

import szrag
from szrag.base.settings import Settings
from szrag.index import build_index, load_index
from szrag.index.pg import publish
from szrag.server import RateLimit, ServerSettings, create_app
from szrag.server.testing import serve_asgi
from szrag.service.configuration import load_config
from szrag.service.repositories import replica_plan

SOURCE = str(Path(szrag.__file__).resolve().parents[1])  # this checkout's szrag, for a child
QUESTION = "how does the deploy webhook verify signatures?"
IMAGE = "docs/images/architecture-diagram.png"
NO_MODEL = Settings(ai_api_key=None, retries=0)
# the watcher asked for (a replica still runs none), and no ask budget: the load is the test's
SETTINGS = ServerSettings(watch=True, sse_ping_seconds=5.0, ask_rate=RateLimit(0, 0))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ask(base: str, question: str = QUESTION, timeout: float = 30) -> httpx.Response:
    return httpx.post(
        f"{base}/api/ask", json={"question": question, "withAi": False}, timeout=timeout
    )


def paths_of(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [source["path"] for source in response.json()["data"]["sources"]]


@contextlib.contextmanager
def replica(url: str, data: Path, *names: str) -> Iterator[str]:
    """A replica of ``names`` (all published without any) on a real uvicorn server."""
    if not names:
        from szrag.index.pg import published

        names = tuple(published(url))
    plan = replica_plan(url, list(names), data)
    config = load_config(plan.repositories[0].path, {})
    app = create_app(
        config=config, plan=plan, environ={}, settings=SETTINGS, answer_settings=NO_MODEL
    )
    with serve_asgi(app) as base:
        yield base


def publish_tree(root: Path, url: str, name: str) -> int:
    with load_index(root) as index:
        return publish(index, url, name).generation


def test_a_replica_started_in_an_empty_folder_serves_from_the_store_alone(
    pg_url: str, retrieval_repo: Path, tmp_path: Path
) -> None:
    (retrieval_repo / "server/health.py").write_text(
        'from fastapi import FastAPI\n\napp = FastAPI()\n\n\n@app.get("/health")\n'
        'def health():\n    return {"ok": True}\n'
    )
    with build_index(retrieval_repo) as index:
        publish(index, pg_url, "web")
    with serve_asgi(create_app(retrieval_repo, settings=SETTINGS, answer_settings=NO_MODEL)) as b:
        expected = paths_of(ask(b))  # the checkout's own server, for comparison
    image = (retrieval_repo / IMAGE).read_bytes()
    shutil.rmtree(retrieval_repo)  # the store alone answers
    empty = tmp_path / "replica"
    empty.mkdir()
    port = free_port()
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("AI_", "SZRAG_"))
    }
    # the test cluster trusts every local connection, so a password in the URL is ignored
    # by the server: it must never be shown by szrag either
    with_password = pg_url.replace("postgres@", "postgres:hunter2@", 1)
    environment.update(PYTHONPATH=SOURCE, PYTHONUNBUFFERED="1", SZRAG_STORE=with_password)
    server = subprocess.Popen(
        [sys.executable, "-m", "szrag", "serve", "--port", str(port)],
        cwd=empty,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.poll() is None:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        answered = ask(base)
        assert paths_of(answered) == expected
        assert answered.json()["data"]["repository"] == "web"
        conversation = answered.json()["data"]["conversationId"]
        cited = answered.json()["data"]["sources"][0]
        shown = httpx.get(
            f"{base}/_szrag/source",
            params={"path": cited["path"], "start": cited["start"], "end": cited["end"]},
        )
        assert shown.status_code == 200 and shown.json()["data"]["lines"]
        served = httpx.get(f"{base}/{IMAGE}")
        assert served.status_code == 200 and served.content == image
        assert served.headers["content-type"] == "image/png"
        assert httpx.get(f"{base}/docs/images/missing.png").status_code == 404
        repositories = httpx.get(f"{base}/api/repositories").json()["data"]
        assert [item["name"] for item in repositories] == ["web"]
        routes = httpx.get(f"{base}/api/routes").json()["data"]  # from the store's records
        assert [(item["route"], item["path"]) for item in routes["routes"]] == [
            ("/health", "server/health.py")
        ]
        status = httpx.get(f"{base}/api/status").json()["data"]
        assert status["watcher"]["running"] is False  # the indexer watches, not a replica
        assert status["index"]["available"] is True  # the store's facts: no SQLite file here
        assert status["index"]["files"] == 11
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=30)
    assert "a replica: no checkout, no watcher" in output, output
    assert "hunter2" not in output and "postgres:***@" in output
    # the conversation is kept in the store's database, where every replica continues it
    with psycopg.connect(pg_url) as conn:
        kept = conn.execute(
            "SELECT repository FROM szrag_conversations WHERE id = %s", (conversation,)
        ).fetchall()
    assert kept == [("web",)]
    assert [item.name for item in empty.iterdir()] == [".szrag"]  # and nothing of its own
    assert not list(empty.rglob("conversations.db"))


def test_two_replicas_answer_and_both_see_a_publish_whole(
    pg_url: str, retrieval_repo: Path, tmp_path: Path
) -> None:
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "backup.py").write_text("def nightly_backup():\n    return 'done'\n")
    assert publish_tree(retrieval_repo, pg_url, "web") == 1
    assert publish_tree(jobs, pg_url, "jobs") == 1
    with (
        replica(pg_url, tmp_path / "one") as first,
        replica(pg_url, tmp_path / "two", "web") as second,
    ):
        names = [item["name"] for item in httpx.get(f"{first}/api/repositories").json()["data"]]
        assert names == ["jobs", "web"]  # every published repository, without --repo
        assert paths_of(ask(first, "nightly backup")) == ["backup.py"]
        before = paths_of(ask(first, QUESTION))
        assert paths_of(ask(second, QUESTION)) == before
        assert "docs/zebra.md" not in before
        zebra = "# Zebra crossings\n\nThe zebra crossing webhook verifies each zebra stripe.\n"
        (retrieval_repo / "docs/zebra.md").write_text(zebra)
        assert publish_tree(retrieval_repo, pg_url, "web") == 2
        for base in (first, second):  # no restart: the next question reads generation 2
            response = httpx.post(
                f"{base}/api/ask",
                json={"question": "zebra crossing stripes", "withAi": False, "repository": "web"},
                timeout=30,
            )
            assert paths_of(response)[0] == "docs/zebra.md"
            shown = httpx.get(
                f"{base}/_szrag/source",
                params={"path": "docs/zebra.md", "start": 1, "end": 3, "repository": "web"},
            )
            assert shown.status_code == 200 and len(shown.json()["data"]["lines"]) == 3
        unknown = httpx.get(
            f"{first}/_szrag/source",
            params={"path": "docs/zebra.md", "start": 1, "end": 3, "repository": "mobile"},
        )
        assert unknown.status_code == 404 and unknown.json()["code"] == "unknown_repository"


def test_a_replica_whose_database_goes_away_answers_503_and_recovers(
    own_cluster: Any, retrieval_repo: Path, tmp_path: Path
) -> None:
    url = own_cluster.create_database().replace("postgres@", "postgres:hunter2@", 1)
    publish_tree(retrieval_repo, url, "web")
    with replica(url, tmp_path / "replica", "web") as base:
        expected = paths_of(ask(base))
        own_cluster.stop("fast")  # a restart: sessions ended, commits kept
        try:
            started = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:  # under load, all bounded
                answers = list(pool.map(lambda _: ask(base, timeout=60), range(16)))
            assert time.monotonic() - started < 40
            assert {response.status_code for response in answers} == {503}
            body = answers[0].json()
            assert body["code"] == "store_unavailable" and "cannot be" in body["error"]
            health = httpx.get(f"{base}/healthz", timeout=30)
            assert health.status_code == 503 and health.json()["code"] == "store_unavailable"
            assert "hunter2" not in body["error"] + health.text and ":***@" in body["error"]
        finally:
            own_cluster.start()  # the same port and data: the outage ends
        deadline = time.monotonic() + 60
        recovered: httpx.Response | None = None
        while time.monotonic() < deadline:
            recovered = ask(base)
            if recovered.status_code == 200:
                break
            assert recovered.json()["code"] == "store_unavailable"
            time.sleep(0.5)
        assert recovered is not None and paths_of(recovered) == expected
        assert httpx.get(f"{base}/healthz", timeout=30).status_code == 200


def test_serving_a_store_names_what_is_wrong(pg_url: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from szrag.cli import main

    def serve(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(main, ["serve", "--data", str(tmp_path / "data"), *args])
        return result.exit_code, result.output

    code, output = serve("--store", pg_url)
    assert code == 1 and "holds no szrag index yet" in output
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    publish_tree(tmp_path, pg_url, "app")
    code, output = serve("--store", pg_url, "--repo", "elsewhere")
    assert code == 2 and "no repository 'elsewhere' is published" in output
    assert "(published: app)" in output
    code, output = serve("--store", pg_url, "--repo", f"app={tmp_path}")
    assert code == 2 and "with --store, --repo names a published repository" in output
    code, output = serve("--store", "mysql://db/x")
    assert code == 2 and "is not a PostgreSQL URL" in output


async def test_a_replicas_live_tools_read_the_store(pg_url: str, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "app.py").write_text(
        'from fastapi import FastAPI\n\napp = FastAPI()\n\n\n@app.post("/orders")\n'
        "def create_order():\n    return {}\n"
    )
    publish_tree(checkout, pg_url, "shop")
    shutil.rmtree(checkout)
    from szrag.index.pg import PostgresIndex
    from szrag.service.host import Host

    plan = replica_plan(pg_url, ["shop"], tmp_path / "replica")
    with PostgresIndex(pg_url, "shop") as index:
        config = load_config(plan.repositories[0].path, {}, repository=index.config)
        host = Host.of(config, index=index)
        try:
            adapter = host.tools()
            routes = (await adapter.call("getRoutes")).content["routes"]
            assert [(route["method"], route["route"]) for route in routes] == [("POST", "/orders")]
            status = (await adapter.call("getStatus")).content
            assert status["index"]["available"] is True and status["index"]["files"] == 1
        finally:
            host.conversations.close()
