"""The audit log: where it lives, what a record holds, and that writing never breaks a command."""

from __future__ import annotations

import json
import logging
import stat
import threading
from pathlib import Path

import pytest

from szrag.commands import CommandOutcome, CommandRunner, Identity, builtin_registry
from szrag.service.audit import AuditLog

ADA = Identity(user_id="U1", user_name="ada", channel_id="C1", team_id="T1")


def test_location(tmp_path: Path) -> None:
    assert AuditLog.for_root(tmp_path, {}).path == tmp_path / ".rag" / "audit.log"
    elsewhere = tmp_path / "logs" / "audit.jsonl"
    assert AuditLog.for_root(tmp_path, {"SZRAG_AUDIT_LOG": str(elsewhere)}).path == elsewhere
    for off in ("off", "OFF", "none", "-"):
        assert not AuditLog.for_root(tmp_path, {"SZRAG_AUDIT_LOG": off}).enabled
    assert (
        AuditLog.disabled().record("command", identity=ADA, outcome="ok", duration_ms=1, source="x")
        is None
    )


async def test_command_executions_are_recorded(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.log")
    runner = CommandRunner(
        registry=builtin_registry(), observers=[audit.record_command], root=tmp_path
    )
    await runner.run("echo", "deploy with token=abc123", ADA, source="inference")
    with pytest.raises(Exception, match="unknown command"):
        await runner.run("nope", "", ADA)
    first, second = audit.read()
    assert first["event"] == "command" and first["source"] == "inference"
    assert first["identity"] == {
        "userId": "U1",
        "userName": "ada",
        "channelId": "C1",
        "teamId": "T1",
    }
    assert first["command"] == "echo" and first["outcome"] == "ok" and first["responses"] == 1
    assert first["arguments"] == {"text": "deploy with token=[REDACTED]"}
    assert first["durationMs"] >= 0 and first["time"].endswith("Z")
    assert (second["command"], second["outcome"]) == ("nope", "unknown_command")
    assert second["message"] == "unknown command 'nope'; `/sz-help` (`szrag commands`) lists them"
    assert "abc123" not in (tmp_path / "audit.log").read_text()


def test_sensitive_input_is_not_written(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.log")
    outcome = CommandOutcome(
        "hash", "pbkdf2 sha256 1000 hunter2", ADA, "tool", "ok", 3.0, 1, sensitive=True
    )
    audit.record_command(outcome)
    assert audit.read()[0]["arguments"] == {"text": "[REDACTED]"}
    assert "hunter2" not in (tmp_path / "audit.log").read_text()


def test_file_is_private_and_created_with_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "audit.log"
    AuditLog(path).record_ask(ADA, "what is the status?", outcome="ok", duration_ms=12.5)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    record = AuditLog(path).read()[0]
    assert (record["event"], record["question"], record["durationMs"]) == (
        "ask",
        "what is the status?",
        12.5,
    )


def test_questions_are_sanitised(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.log")
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    audit.record_ask(
        ADA, f"why does {secret} fail?", outcome="failed", duration_ms=1, message="boom"
    )
    assert secret not in (tmp_path / "audit.log").read_text()
    assert audit.read()[0]["outcome"] == "failed"


@pytest.mark.parametrize(
    "question",
    [
        "/sz-hash the password hunter2 with 1000 iterations",
        "hash my passphrase hunter2 please",
        'hash the passphrase "hunter2" with 5000 rounds',
        "/sz-hash password is hunter2, 100 rounds",
    ],
)
def test_passwords_named_in_prose_are_not_written(tmp_path: Path, question: str) -> None:
    audit = AuditLog(tmp_path / "audit.log")
    audit.record_ask(ADA, question, outcome="ok", duration_ms=1)
    assert "hunter2" not in (tmp_path / "audit.log").read_text()
    assert "[REDACTED:password]" in audit.read()[0]["question"]


def test_prose_password_in_a_command_input_is_not_written(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.log")
    audit.record_command(CommandOutcome("echo", "my password hunter2", ADA, "cli", "ok", 1.0, 1))
    assert audit.read()[0]["arguments"] == {"text": "my password [REDACTED:password]"}


def test_a_write_failure_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "is-a-directory"
    blocked.mkdir()
    with caplog.at_level(logging.WARNING, logger="szrag.service.audit"):
        result = AuditLog(blocked).record(
            "command", identity=ADA, outcome="ok", duration_ms=1, source="x"
        )
    assert result is None
    assert "cannot write the audit log" in caplog.text


def test_concurrent_writers_keep_lines_whole(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.log")

    def write(worker: int) -> None:
        for number in range(50):
            audit.record(
                "command",
                identity=ADA,
                outcome="ok",
                duration_ms=1,
                source="t",
                command=f"{worker}-{number}",
            )

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = (tmp_path / "audit.log").read_text().splitlines()
    assert len(lines) == 400
    assert len({json.loads(line)["command"] for line in lines}) == 400


def test_read_skips_damaged_lines(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    audit = AuditLog(path)
    audit.record("command", identity=ADA, outcome="ok", duration_ms=1, source="t", command="a")
    with path.open("a") as handle:
        handle.write("{not json\n[1, 2]\n")
    audit.record("command", identity=ADA, outcome="ok", duration_ms=1, source="t", command="b")
    assert [record["command"] for record in audit.read()] == ["a", "b"]
    assert [record["command"] for record in audit.read(limit=1)] == ["b"]


def test_a_services_one_log_names_each_lines_repository(tmp_path: Path) -> None:
    from szrag.service.audit import service_audit_path

    home = tmp_path / ".szrag"
    assert service_audit_path(home, {}) == home / "audit.log"
    elsewhere = tmp_path / "all.log"
    assert service_audit_path(home, {"SZRAG_AUDIT_LOG": str(elsewhere)}) == elsewhere
    assert service_audit_path(home, {"SZRAG_AUDIT_LOG": "off"}) is None

    shared = AuditLog(home / "audit.log")
    web, api = shared.for_repository("web"), shared.for_repository("api")
    web.record_ask(ADA, "where is the router?", outcome="ok", duration_ms=1.0)
    api.record_ask(ADA, "where is the handler?", outcome="ok", duration_ms=2.0)
    shared.record_ask(ADA, "and no repository?", outcome="ok", duration_ms=3.0)

    assert web.path == api.path == shared.path == home / "audit.log"
    lines = [json.loads(line) for line in shared.path.read_text().splitlines()]
    assert [line.get("repository") for line in lines] == ["web", "api", None]
    assert [line["question"] for line in api.read()] == [
        "where is the router?",
        "where is the handler?",
        "and no repository?",
    ]
    assert stat.S_IMODE(shared.path.stat().st_mode) == 0o600
