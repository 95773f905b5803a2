"""A full disk is not a damaged index: the index stays as it was and answers, with a warning.

Each test mounts a 2 MiB tmpfs of its own (as root; skipped where mounting is not permitted),
fills it and unmounts it afterwards."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from szrag.base.errors import IndexStoreError
from szrag.index import build_index, load_index
from szrag.rank.retrieve import retrieve

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SMALL_DISK_BYTES = 2 * 1024 * 1024
FILLER_BYTES = 16 * 1024


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs mounted for this test, unmounted after it."""
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SMALL_DISK_BYTES}", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(disk: Path, *, leave: int = 0) -> list[Path]:
    """Write filler files until the disk is full, then remove enough to leave about
    ``leave`` bytes free; the fillers left."""
    fillers: list[Path] = []
    while True:
        filler = disk / f"filler-{len(fillers)}"
        try:
            with open(filler, "wb") as handle:
                handle.write(b"\0" * FILLER_BYTES)
        except OSError as error:
            assert error.errno == errno.ENOSPC, error
            with contextlib.suppress(FileNotFoundError):
                filler.unlink()
            break
        fillers.append(filler)
    while leave > 0 and fillers:
        fillers.pop().unlink()
        leave -= FILLER_BYTES
    return fillers


def built_repo(disk: Path) -> Path:
    root = disk / "repo"
    shutil.copytree(FIXTURES / "web_repo", root)
    build_index(root).close()
    return root


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def aside(root: Path) -> list[str]:
    """What was moved aside in the index directory."""
    return sorted(path.name for path in (root / ".rag").iterdir() if "index.db." in path.name)


def test_a_full_disk_keeps_the_index_and_answers_from_it(small_disk: Path) -> None:
    root = built_repo(small_disk)
    before = digest(root / ".rag" / "index.db")
    fill(small_disk)
    for _ in range(2):  # every later command too
        with load_index(root) as index:
            warnings = index.last_report.warnings
            found = [source.path for source in retrieve("gateway", index=index)]
        assert "src/gateway.js" in found
        assert any("is the disk full?" in warning for warning in warnings), warnings
    assert digest(root / ".rag" / "index.db") == before
    assert aside(root) == []

    with pytest.raises(IndexStoreError, match="is it full"):
        build_index(root)
    assert digest(root / ".rag" / "index.db") == before and aside(root) == []


def test_a_refresh_that_fills_the_disk_is_rolled_back(small_disk: Path) -> None:
    root = built_repo(small_disk)
    lines = (
        f"def wombat_{n}(value):\n    return value + {n}  # burrow {n * 7919}" for n in range(3000)
    )
    (root / "src" / "wombats.py").write_text("\n".join(lines))
    # room for SQLite's shared-memory file, not for the new file's rows
    fillers = fill(small_disk, leave=64 * 1024)
    with load_index(root) as index:
        warnings = index.last_report.warnings
        paths = [record.path for record in index.files()]
        found = [source.path for source in retrieve("gateway", index=index)]
    assert any("database or disk is full" in warning for warning in warnings), warnings
    assert "src/wombats.py" not in paths and "src/gateway.js" in found
    assert aside(root) == []

    for filler in fillers:
        filler.unlink()
    with load_index(root) as index:
        assert index.last_report.warnings == []
        assert "src/wombats.py" in [record.path for record in index.files()]
