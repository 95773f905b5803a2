"""Running a subprocess from a command so that a timeout or cancellation really ends it.

The child starts in a new session (its own process group). When the awaiting task is
cancelled, whether by the runner's timeout or by its caller, the whole group is killed and
reaped before the cancellation goes on, so nothing keeps running behind a command that
has already been reported as timed out.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from szrag.commands.errors import CommandFailed

DEFAULT_OUTPUT_LIMIT = 1024 * 1024
_READ_SIZE = 65536


@dataclass(frozen=True)
class ProcessResult:
    """A finished subprocess: exit status and (possibly truncated) output."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    truncated: bool = False


async def _drain(stream: asyncio.StreamReader | None, limit: int) -> tuple[bytes, bool]:
    """Read a stream to its end, keeping at most ``limit`` bytes (the rest is discarded)."""
    if stream is None:
        return b"", False
    kept = bytearray()
    truncated = False
    while chunk := await stream.read(_READ_SIZE):
        room = limit - len(kept)
        if room > 0:
            kept += chunk[:room]
        truncated = truncated or len(chunk) > room
    return bytes(kept), truncated


def _kill_group(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform != "win32":
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - no process groups to kill
            process.kill()


async def run_process(
    argv: Sequence[str],
    *,
    input: str | None = None,
    timeout: float | None = None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> ProcessResult:
    """Run ``argv`` (no shell) and collect its output; killed on timeout or cancellation."""
    if not argv:
        raise ValueError("run_process() needs a program to run")
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=sys.platform != "win32",
        )
    except OSError as error:
        raise CommandFailed(f"cannot start {argv[0]}: {error.strerror or error}") from error

    async def communicate() -> tuple[tuple[bytes, bool], tuple[bytes, bool]]:
        if input is not None and process.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                process.stdin.write(input.encode("utf-8"))
                await process.stdin.drain()
            process.stdin.close()
        out, err = await asyncio.gather(
            _drain(process.stdout, output_limit), _drain(process.stderr, output_limit)
        )
        await process.wait()
        return out, err

    try:
        async with asyncio.timeout(timeout):
            (stdout, out_cut), (stderr, err_cut) = await communicate()
    except TimeoutError:
        raise CommandFailed(
            f"{argv[0]} did not finish within {timeout:g} s and was killed"
        ) from None
    finally:
        # Reached on success too, where it does nothing; on cancellation or timeout it
        # kills the group and waits so no orphan or zombie is left behind.
        if process.returncode is None:
            _kill_group(process)
            with contextlib.suppress(ProcessLookupError):
                await asyncio.shield(process.wait())
    return ProcessResult(
        argv=tuple(argv),
        returncode=process.returncode if process.returncode is not None else -1,
        stdout=stdout.decode("utf-8", "replace"),
        stderr=stderr.decode("utf-8", "replace"),
        truncated=out_cut or err_cut,
    )
