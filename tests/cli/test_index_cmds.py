from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from szrag.cli import main
from szrag.index import store


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_index_builds_then_refreshes(retrieval_repo: Path) -> None:
    code, out, _ = run("index", "--root", str(retrieval_repo), "--json")
    assert code == 0
    built = json.loads(out)
    assert built["rebuilt"] is True and built["files"] == 10 and built["images"] == 5
    assert built["profile"] == "default"
    (retrieval_repo / "docs/security.md").write_text("# Security\nchanged\n")
    code, out, _ = run("index", "--root", str(retrieval_repo), "--json")
    refreshed = json.loads(out)
    assert refreshed["rebuilt"] is False and refreshed["changed"] == ["docs/security.md"]


def test_index_human_output_lists_skips_with_reasons(retrieval_repo: Path) -> None:
    (retrieval_repo / "blob.md").write_bytes(b"\x00\x01")
    code, out, _ = run("index", "--root", str(retrieval_repo), "--rebuild")
    assert code == 0
    assert "built" in out and "10 files" in out
    assert "blob.md: binary (contains NUL bytes)" in out


def test_retrieve_and_images_print_json_records(retrieval_repo: Path) -> None:
    code, out, _ = run("retrieve", "verifyGithubSignature", "--root", str(retrieval_repo), "--json")
    assert code == 0
    sources = json.loads(out)
    assert sources[0]["path"] == "server/webhook.js"
    assert set(sources[0]) == {"path", "start", "end", "type", "heading", "text", "score"}
    code, out, _ = run("images", "dashboard", "--root", str(retrieval_repo), "--json")
    assert json.loads(out) == [
        {"path": "assets/dashboard.webp", "url": "/assets/dashboard.webp", "score": 10}
    ]


def test_retrieve_table_and_no_match(retrieval_repo: Path) -> None:
    code, out, _ = run("retrieve", "verifyGithubSignature", "--root", str(retrieval_repo), "--text")
    # the function itself (with the imports above it), not a 60-line window
    assert code == 0 and "server/webhook.js:1-12" in out and "timingSafeEqual" in out
    code, out, _ = run("retrieve", "qqqq zzzz", "--root", str(retrieval_repo))
    assert code == 0 and "no matching sources" in out


def test_stats_describes_the_index(retrieval_repo: Path) -> None:
    run("index", "--root", str(retrieval_repo))
    _, out, _ = run("stats", "--root", str(retrieval_repo), "--json")
    stats = json.loads(out)
    assert stats["files"] == 10
    assert stats["schemaVersion"] == store.SCHEMA_VERSION
    assert stats["types"]["javascript"] == 4


def test_errors_go_to_stderr_without_traceback(retrieval_repo: Path, tmp_path: Path) -> None:
    code, out, err = run("retrieve", "   ", "--root", str(retrieval_repo))
    assert code == 2 and out == ""
    assert "error: the question is empty" in err and "Traceback" not in err
    (retrieval_repo / ".rag").mkdir(exist_ok=True)
    (retrieval_repo / ".rag/config.toml").write_text("profile = 'nope'\n")
    code, _, err = run("index", "--root", str(retrieval_repo))
    assert code == 2 and "unknown profile 'nope'" in err
    code, _, err = run("index", "--root", str(tmp_path / "missing"))
    assert code != 0 and "does not exist" in err


def test_a_damaged_index_is_reported_once_by_every_command(retrieval_repo: Path) -> None:
    # the log record and the report's warning are one event: said once on stderr
    szrag = [sys.executable, "-m", "szrag"]
    subprocess.run([*szrag, "index", "--root", str(retrieval_repo)], check=True)
    for command in (["index"], ["retrieve", "webhook"], ["ask", "--no-ai", "webhook"]):
        store.index_path(retrieval_repo).write_bytes(b"garbage, not SQLite " * 500)
        done = subprocess.run(
            [*szrag, *command, "--root", str(retrieval_repo)],
            capture_output=True,
            text=True,
            check=True,
        )
        said = [line for line in done.stderr.splitlines() if "index.db.corrupt-" in line]
        assert len(said) == 1, (command, done.stderr)
        assert said[0].startswith("warning: "), said
