"""run_process: output, limits, and a timeout or cancellation that kills the whole group."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest

from szrag.commands import (
    CommandContext,
    CommandFailed,
    CommandRegistry,
    CommandRunner,
    CommandSpec,
    CommandTimeout,
    run_process,
)

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or shutil.which("sh") is None, reason="needs a POSIX shell"
)


def _alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: fall back to signal 0
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"


async def _wait_dead(pid: int) -> bool:
    for _ in range(200):
        if not _alive(pid):
            return True
        await asyncio.sleep(0.01)
    return False


async def _read_pid(path: Path) -> int:
    for _ in range(500):
        if path.exists() and path.read_text().strip():
            return int(path.read_text().split()[0])
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} was never written")


async def test_output_and_exit_status() -> None:
    result = await run_process([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"])
    assert result.returncode == 3
    assert result.stdout.strip() == "out"
    assert not result.truncated


async def test_input_is_passed_on_stdin() -> None:
    result = await run_process([sys.executable, "-c", "print(input()[::-1])"], input="abc\n")
    assert result.stdout.strip() == "cba"


async def test_output_is_capped() -> None:
    result = await run_process([sys.executable, "-c", "print('x' * 100000)"], output_limit=1000)
    assert len(result.stdout) == 1000 and result.truncated


async def test_missing_program_is_a_clear_failure(tmp_path: Path) -> None:
    with pytest.raises(CommandFailed, match="cannot start"):
        await run_process([str(tmp_path / "no-such-program")])


async def test_own_timeout_kills_the_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    with pytest.raises(CommandFailed, match=r"did not finish within 0\.2 s and was killed"):
        await run_process(["sh", "-c", f"echo $$ > {pid_file}; exec sleep 30"], timeout=0.2)
    assert await _wait_dead(await _read_pid(pid_file))


async def test_command_timeout_kills_the_subprocess_and_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    script = f"sleep 30 & echo $$ $! > {pid_file}; wait"

    async def sleepy(context: CommandContext) -> None:
        result = await run_process(["sh", "-c", script])
        context.respond(result.stdout)

    registry = CommandRegistry([CommandSpec("sleepy", "Runs a sleeping shell.", sleepy)])
    with pytest.raises(CommandTimeout):
        await CommandRunner(registry=registry).run("sleepy", timeout=1.0)
    shell, child = (int(part) for part in pid_file.read_text().split())
    assert await _wait_dead(shell)
    assert await _wait_dead(child)
