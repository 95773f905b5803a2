"""The default runtime: status, Git head, index statistics, metrics, logs, errors, releases."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from pathlib import Path

import pytest

from szrag import __version__
from szrag.base.public import public_dict
from szrag.commands import CommandOutcome, Identity
from szrag.index import build_index
from szrag.runtime import (
    BlockingRuntime,
    LogBuffer,
    ProcessRuntime,
    Runtime,
    ThreadedRuntime,
    as_runtime,
)
from szrag.runtime.errorlog import ErrorLog
from szrag.runtime.git import read_git_head
from szrag.runtime.logs import tail_lines
from szrag.runtime.releases import (
    find_history_file,
    parse_history,
    project_version,
    read_release_info,
)

SHA = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


async def test_process_runtime_satisfies_the_protocol(tmp_path: Path) -> None:
    blocking: BlockingRuntime = ProcessRuntime(tmp_path, environ={})
    runtime: Runtime = as_runtime(blocking)
    assert isinstance(runtime, ThreadedRuntime) and as_runtime(runtime) is runtime
    shown = public_dict(await runtime.status())  # read in a worker thread
    assert shown["service"] == "szrag" and list(shown) == list(public_dict(blocking.status()))


# Status ----------------------------------------------------------------------------------


def test_status_fields(tmp_path: Path) -> None:
    environ = {"DEPLOY_ENV": "production", "GIT_SHA": "abc123", "RELEASE": " ", "AI_API_KEY": "k"}
    status = public_dict(ProcessRuntime(tmp_path, environ=environ).status())
    assert status["service"] == "szrag" and status["version"] == __version__
    assert status["python"].count(".") == 2 and status["platform"]
    assert status["uptimeSeconds"] >= 0 and status["startedAt"].endswith("Z")
    assert status["repository"] == {"root": str(tmp_path.resolve()), "git": None}
    assert status["index"]["available"] is False
    assert status["deployment"] == {"target": "production", "gitSha": "abc123"}
    assert "k" not in json.dumps(status["deployment"])


def test_status_reads_index_statistics_without_building(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    assert public_dict(ProcessRuntime(root, environ={}).status())["index"] == {
        "available": False,
        "reason": f"no index at {root / '.rag' / 'index.db'}; run `szrag index` first",
    }
    assert not (root / ".rag").exists()
    (root / "README.md").write_text("# Hello\n")
    (root / "app.js").write_text("console.log(1);\n")
    build_index(root).close()
    index = public_dict(ProcessRuntime(root, environ={}).status())["index"]
    assert index["available"] is True and index["files"] == 2 and index["chunks"] == 2
    assert index["generatedAt"] and index["profile"] == "default"


def test_a_corrupt_index_is_reported_not_rebuilt(tmp_path: Path) -> None:
    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "index.db").write_bytes(b"not a database at all" * 100)
    index = public_dict(ProcessRuntime(tmp_path, environ={}).status())["index"]
    assert index["available"] is False
    assert index["reason"].endswith("is not usable: unreadable (file is not a database)")
    assert (tmp_path / ".rag" / "index.db").read_bytes().startswith(b"not a database")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_head_of_a_real_repository(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    git("init", "-q", "-b", "trunk")
    (tmp_path / "a.txt").write_text("a")
    git("add", "a.txt")
    git("commit", "-q", "-m", "first")
    git("pack-refs", "--all")  # the branch now lives in packed-refs only
    (tmp_path / "sub").mkdir()
    head = read_git_head(tmp_path / "sub")
    assert head is not None
    assert (head.branch, head.commit) == ("trunk", git("rev-parse", "HEAD"))
    git("checkout", "-q", "--detach")
    detached = public_dict(ProcessRuntime(tmp_path, environ={}).status())["repository"]["git"]
    assert detached == {"branch": None, "commit": git("rev-parse", "HEAD"), "detached": True}


def _fake_git(root: Path, head: str) -> Path:
    git_dir = root / ".git"
    (git_dir / "refs" / "heads").mkdir(parents=True)
    (git_dir / "HEAD").write_text(head + "\n")
    return git_dir


def test_git_head_loose_packed_and_unborn(tmp_path: Path) -> None:
    git_dir = _fake_git(tmp_path, "ref: refs/heads/feature/x")
    unborn = read_git_head(tmp_path)
    assert unborn is not None and (unborn.branch, unborn.commit) == ("feature/x", None)
    (git_dir / "packed-refs").write_text(f"# pack-refs with: peeled\n{SHA} refs/heads/feature/x\n")
    packed = read_git_head(tmp_path)
    assert packed is not None and packed.commit == SHA
    (git_dir / "refs" / "heads" / "feature").mkdir()
    (git_dir / "refs" / "heads" / "feature" / "x").write_text(OTHER + "\n")
    loose = read_git_head(tmp_path)
    assert loose is not None and loose.commit == OTHER  # loose refs win over packed ones


def test_git_worktree_file(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main_git = _fake_git(main, "ref: refs/heads/main")
    (main_git / "refs" / "heads" / "wt").write_text(SHA + "\n")
    worktree_git = main_git / "worktrees" / "wt"
    worktree_git.mkdir(parents=True)
    (worktree_git / "HEAD").write_text("ref: refs/heads/wt\n")
    (worktree_git / "commondir").write_text("../..\n")
    checkout = tmp_path / "wt"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {worktree_git}\n")
    head = read_git_head(checkout)
    assert head is not None and (head.branch, head.commit) == ("wt", SHA)
    assert head.git_dir == worktree_git.resolve()


def test_no_git_and_a_broken_pointer(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("gitdir: /nonexistent/place\n")
    assert read_git_head(tmp_path) is None


# Metrics ---------------------------------------------------------------------------------


def _outcome(command: str, status: str, user: str, channel: str, ms: float) -> CommandOutcome:
    who = Identity(user_id=user, user_name=user, channel_id=channel, team_id="T")
    return CommandOutcome(command, "", who, "tool", status, ms)


def test_metrics_count_commands_users_and_channels(tmp_path: Path) -> None:
    runtime = ProcessRuntime(tmp_path, environ={})
    runtime.record_command(_outcome("ping", "ok", "U1", "C1", 2.0))
    runtime.record_command(_outcome("ping", "ok", "U2", "C1", 4.0))
    runtime.record_command(_outcome("calc", "bad_input", "U1", "C2", 1.0))
    runtime.record_command(_outcome("zzz", "unknown_command", "U3", "C2", 0.5))
    runtime.record_tool("getStatus", "completed", 3.0)
    runtime.record_tool("getStatus", "timeout", 5000.0)
    metrics = public_dict(runtime.metrics())
    assert metrics["commandsExecuted"] == 4
    assert metrics["commandsSucceeded"] == 2 and metrics["commandsFailed"] == 2
    assert metrics["uniqueUsers"] == 3 and metrics["uniqueChannels"] == 2
    assert metrics["commands"]["ping"] == {
        "count": 2,
        "failures": 0,
        "averageMs": 3.0,
        "maxMs": 4.0,
        "lastMs": 4.0,
        "lastStatus": "ok",
    }
    assert set(metrics["commands"]) == {"ping", "calc", "(unknown)"}
    assert metrics["toolCalls"]["getStatus"]["failures"] == 1
    assert metrics["bySource"] == {"tool": 4}


# Logs and errors -------------------------------------------------------------------------


def test_log_buffer_is_bounded_and_filters_by_level() -> None:
    buffer = LogBuffer(capacity=3)
    log = logging.getLogger("szrag.test_runtime.buffer")
    log.addHandler(buffer)
    log.setLevel(logging.DEBUG)
    try:
        for number in range(5):
            log.info("info %d", number)
        log.error("bad")
    finally:
        log.removeHandler(buffer)
        log.setLevel(logging.NOTSET)
    assert [entry.message for entry in buffer.entries(10)] == ["info 3", "info 4", "bad"]
    assert [entry.message for entry in buffer.entries(10, "error")] == ["bad"]
    assert [entry.message for entry in buffer.entries(1)] == ["bad"]
    assert buffer.entries(0) == []
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        buffer.entries(5, "loud")


def test_runtime_collects_the_szrag_logger_while_attached(tmp_path: Path) -> None:
    runtime = ProcessRuntime(tmp_path, environ={})
    log = logging.getLogger("szrag.test_runtime.attach")
    runtime.attach()
    runtime.attach()  # attaching twice adds the handlers once
    try:
        assert logging.getLogger("szrag").handlers.count(runtime.log_buffer) == 1
        log.warning("while attached")
    finally:
        runtime.detach()
    log.warning("after detach")
    entries = public_dict(runtime.logs(10))["entries"]
    assert [entry["message"] for entry in entries] == ["while attached"]
    assert entries[0]["logger"] == "szrag.test_runtime.attach" and entries[0]["level"] == "warning"


def test_log_file_tail(tmp_path: Path) -> None:
    log_file = tmp_path / "service.log"
    lines = [json.dumps({"level": "info", "msg": f"line {n}"}) for n in range(30)] + [
        "plain text line"
    ]
    log_file.write_text("\n".join(lines) + "\n")
    runtime = ProcessRuntime(tmp_path, environ={"SZRAG_LOG_FILE": str(log_file)})
    file_part = public_dict(runtime.logs(3))["logFile"]
    assert file_part["location"] == str(log_file)
    assert file_part["entries"] == [
        {"level": "info", "msg": "line 28"},
        {"level": "info", "msg": "line 29"},
        {"line": "plain text line"},
    ]
    missing = public_dict(
        ProcessRuntime(tmp_path, log_file=tmp_path / "none.log", environ={}).logs(3)
    )["logFile"]
    assert "error" in missing


def test_tail_lines_reads_only_the_end(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_text("".join(f"line {n:05d}\n" for n in range(20000)))
    assert tail_lines(path, 2, max_bytes=100) == ["line 19998", "line 19999"]
    assert tail_lines(path, 100, max_bytes=50) == [
        "line 19996",
        "line 19997",
        "line 19998",
        "line 19999",
    ]


def test_errors_are_recorded_newest_first_with_optional_stacks(tmp_path: Path) -> None:
    runtime = ProcessRuntime(tmp_path, environ={})
    with runtime:
        try:
            raise ValueError("first")
        except ValueError as error:
            runtime.record_error(error, "import job")
        log = logging.getLogger("szrag.test_runtime.errors")
        try:
            raise OSError("second")
        except OSError:
            log.exception("writing failed")
        log.error("an error without an exception is only a log line")
    errors = public_dict(runtime.errors(10))["errors"]
    assert [(e["type"], e["message"]) for e in errors] == [
        ("OSError", "second"),
        ("ValueError", "first"),
    ]
    assert errors[0]["where"] == "szrag.test_runtime.errors: writing failed"
    assert errors[1]["where"] == "import job"
    assert all("stack" not in e for e in errors)
    stacked = public_dict(runtime.errors(1, include_stack=True))["errors"]
    assert len(stacked) == 1 and 'raise OSError("second")' in stacked[0]["stack"]


def test_error_log_capacity() -> None:
    errors = ErrorLog(capacity=2)
    for number in range(3):
        errors.record(RuntimeError(str(number)))
    assert [record.message for record in errors.entries(10)] == ["2", "1"]


# Release information ---------------------------------------------------------------------

HISTORY = """# Changelog
All notable changes.

## [Unreleased]
- Next.

## [2.1.0-beta.1] - 2024-07-01
### Fixed
- A bug.

```
## 9.9.9 inside a code block is not a release
```

## v2.0.0 (2024-06-01)
- Big.

# 1.0
- First.
"""


def test_parse_history() -> None:
    entries = parse_history(HISTORY)
    assert [(e.version, e.date) for e in entries] == [
        ("Unreleased", None),
        ("2.1.0-beta.1", "2024-07-01"),
        ("2.0.0", "2024-06-01"),
        ("1.0", None),
    ]
    assert entries[1].body.startswith("### Fixed\n- A bug.")
    assert "9.9.9 inside a code block" in entries[1].body
    assert entries[3].body == "- First."


def test_history_file_and_project_version(tmp_path: Path) -> None:
    assert find_history_file(tmp_path) is None and project_version(tmp_path) is None
    (tmp_path / "changes.md").write_text("## 0.1.0\n- x\n")
    assert find_history_file(tmp_path) == tmp_path / "changes.md"
    (tmp_path / "package.json").write_text('{"name": "slackzilla", "version": "3.4.5"}')
    assert project_version(tmp_path) == {
        "name": "slackzilla",
        "version": "3.4.5",
        "source": "package.json",
    }
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.9"\n')
    assert project_version(tmp_path) == {
        "name": "demo",
        "version": "0.9",
        "source": "pyproject.toml",
    }


def test_release_info(tmp_path: Path) -> None:
    (tmp_path / "CHANGELOG.md").write_text(HISTORY)
    runtime = ProcessRuntime(tmp_path, environ={"RELEASE": "2.0.0"})
    info = public_dict(runtime.release_info())
    assert info["service"] == {"name": "szrag", "version": __version__}
    assert info["latest"]["version"] == "2.1.0-beta.1"  # Unreleased is not a release
    assert info["history"]["versions"] == ["Unreleased", "2.1.0-beta.1", "2.0.0", "1.0"]
    assert info["deployment"] == {"release": "2.0.0"}
    found = public_dict(runtime.release_info("V2.0.0"))
    assert found["found"] is True and found["release"]["notes"] == "- Big."
    missing = read_release_info(tmp_path, "5.0")
    assert missing["found"] is False and missing["message"] == "version 5.0 is not in CHANGELOG.md"


def test_release_history_in_restructured_text_and_under_docs(tmp_path: Path) -> None:
    rst = (
        "Changelog\n=========\n\n"
        "Version 3.1.1\n-------------\n\nUnreleased\n\n-   Fix the session cookie.\n\n"
        "Version 3.1.0\n-------------\n\nReleased 2024-11-13\n\n-   Drop Python 3.8.\n\n"
        "Bug fixes\n~~~~~~~~~\n\n-   A fix inside the release.\n"
    )
    entries = parse_history(rst)
    assert [(entry.version, entry.date) for entry in entries] == [
        ("3.1.1", None),
        ("3.1.0", "2024-11-13"),
    ]
    assert "Drop Python 3.8." in entries[1].body and "A fix inside the release." in entries[1].body
    (tmp_path / "CHANGES.rst").write_text(rst)
    assert find_history_file(tmp_path) == tmp_path / "CHANGES.rst"
    (tmp_path / "CHANGES.rst").unlink()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "changelog.rst").write_text(rst)
    assert find_history_file(tmp_path) == tmp_path / "docs" / "changelog.rst"
