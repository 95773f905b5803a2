"""``szrag index --store URL --repo NAME=PATH`` publishes; ``szrag retrieve --store URL --repo
NAME`` answers from the database alone, as the checkout's own index does."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from szrag.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_publish_then_retrieve_without_the_checkout(pg_url: str, tmp_path: Path) -> None:
    web = tmp_path / "web"
    shutil.copytree(FIXTURES / "retrieval_repo", web)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "backup.py").write_text("def nightly_backup():\n    return 'done'\n")
    code, out, err = run(
        "index", "--store", pg_url, "--repo", f"web={web}", "--repo", f"jobs={jobs}", "--json"
    )
    assert code == 0, err
    reports = json.loads(out)
    assert [(item["repository"], item["generation"]) for item in reports] == [
        ("web", 1),
        ("jobs", 1),
    ]
    assert reports[0]["files"] == 10 and reports[0]["store"].endswith("(repository web)")
    question = "how does the deploy webhook verify signatures?"
    code, local, _ = run("retrieve", question, "--root", str(web), "--json")
    assert code == 0 and json.loads(local)
    shutil.rmtree(web)  # the store alone answers
    code, stored, err = run("retrieve", question, "--store", pg_url, "--repo", "web", "--json")
    assert code == 0, err
    assert json.loads(stored) == json.loads(local)
    code, out, _ = run("retrieve", "nightly backup", "--store", pg_url, "--repo", "jobs")
    assert code == 0 and "backup.py" in out
    assert [item["filesRewritten"] for item in reports] == [None, None]  # every row
    # a second publish is the next generation, told in words without --json; it writes the
    # files that changed
    (jobs / "restore.py").write_text("def nightly_restore():\n    return 'done'\n")
    code, out, _ = run("index", "--store", pg_url, "--repo", f"jobs={jobs}")
    assert code == 0
    assert "published jobs as generation 2 to " in out
    assert "(1 file written again)" in out


def test_store_and_repo_go_together(pg_url: str, tmp_path: Path) -> None:
    code, _, err = run("index", "--store", pg_url)
    assert code == 2 and "--repo NAME=PATH" in err
    code, _, err = run("index", "--repo", f"web={tmp_path}")
    assert code == 2 and "give --store too" in err
    code, _, err = run("index", "--store", pg_url, "--repo", str(tmp_path))
    assert code == 2 and "NAME=PATH" in err
    code, _, err = run("retrieve", "deploy", "--store", pg_url)
    assert code == 2 and "go together" in err


def test_a_bad_url_or_an_unreachable_store_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    code, _, err = run("retrieve", "main", "--store", "mysql://db/x", "--repo", "app")
    assert code == 2 and "is not a PostgreSQL URL" in err
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    unreachable = f"postgresql://me:secret@127.0.0.1:{port}/db"
    code, _, err = run("retrieve", "main", "--store", unreachable, "--repo", "app")
    assert code == 1 and "cannot be reached" in err and "secret" not in err
    code, _, err = run("index", "--store", unreachable, "--repo", f"app={tmp_path}")
    assert code == 1 and "cannot be reached" in err and "secret" not in err


def test_an_unpublished_repository_is_named(pg_url: str, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    assert run("index", "--store", pg_url, "--repo", f"app={tmp_path}")[0] == 0
    code, _, err = run("retrieve", "main", "--store", pg_url, "--repo", "elsewhere")
    assert code == 1 and "no repository 'elsewhere' is published" in err


def test_szrag_store_is_the_default_store(pg_url: str, tmp_path: Path) -> None:
    (tmp_path / "backup.py").write_text("def nightly_backup():\n    return 'done'\n")
    environment = {"SZRAG_STORE": pg_url}
    published = CliRunner().invoke(main, ["index", "--repo", f"jobs={tmp_path}"], env=environment)
    assert published.exit_code == 0, published.output
    assert "published jobs as generation 1" in published.stdout
    found = CliRunner().invoke(
        main, ["retrieve", "nightly backup", "--repo", "jobs"], env=environment
    )
    assert found.exit_code == 0 and "backup.py" in found.stdout
    # without --repo the variable names no repository: the commands work on --root as ever
    local = CliRunner().invoke(main, ["index", "--root", str(tmp_path), "--json"], env=environment)
    assert local.exit_code == 0 and "generation" not in json.loads(local.stdout)
    found = CliRunner().invoke(
        main, ["retrieve", "nightly backup", "--root", str(tmp_path)], env=environment
    )
    assert found.exit_code == 0 and "backup.py" in found.stdout


def test_ask_answers_from_the_store_alone(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    web = tmp_path / "web"
    shutil.copytree(FIXTURES / "retrieval_repo", web)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "backup.py").write_text("def nightly_backup():\n    return 'done'\n")
    assert run("index", "--store", pg_url, "--repo", f"web={web}", "--repo", f"jobs={jobs}")[0] == 0
    shutil.rmtree(jobs)  # the store alone answers
    runner = CliRunner()
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    asked = runner.invoke(
        main,
        ["ask", "nightly backup", "--store", pg_url, "--repo", "jobs", "--no-ai", "--json"],
    )
    assert asked.exit_code == 0, asked.output
    answer = json.loads(asked.stdout)
    assert answer["repository"] == "jobs"
    assert [source["path"] for source in answer["sources"]] == ["backup.py"]
    # without --repo the question goes to the repository it is most likely about
    routed = runner.invoke(main, ["ask", "nightly backup", "--store", pg_url, "--no-ai", "--json"])
    assert routed.exit_code == 0 and json.loads(routed.stdout)["repository"] == "jobs"
    # the conversation is kept in the store's database, as a replica keeps it
    with psycopg.connect(pg_url) as conn:
        kept = conn.execute(
            "SELECT repository FROM szrag_conversations WHERE id = %s",
            (answer["conversationId"],),
        ).fetchall()
    assert kept == [("jobs",)]
    assert not list(empty.rglob("conversations.db"))
    missing = runner.invoke(main, ["ask", "x", "--store", pg_url, "--repo", "mobile", "--no-ai"])
    assert missing.exit_code == 2 and "no repository 'mobile' is published" in missing.output
