"""Keeping a cloned repository current: its states while it is cloned, opened and fetched,
a question meanwhile refused clearly, an existing clone fetched rather than cloned again, a
fetch that fails leaving the repository served on its last commit."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from szrag.base.errors import RepositoryUnavailable
from szrag.service.clones import Checkout, sync
from szrag.service.remotes import RemoteKeeper
from szrag.service.repositories import RepositorySpec, ServicePlan
from szrag.service.service import Service

MakeRemote = Callable[[str, dict[str, str]], Any]  # the git_remote fixture (conftest.py)
FILES = {
    "src/welcome.py": "def send_welcome_email(user):\n    return smtp(user.email)\n",
    "src/config.py": "def load_settings(path):\n    return parse(path)\n",
}
ENVIRON = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SZRAG_AUDIT_LOG": "off"}


def service_of(url: str, data: Path, interval: float = 0) -> Service:
    spec = RepositorySpec("mailer", data / "mailer", url, "main")
    return Service(ServicePlan((spec,), data=data, fetch_interval=interval), ENVIRON)


async def test_a_question_while_the_clone_is_made_is_refused_then_answered(
    git_remote: MakeRemote, tmp_path: Path
) -> None:
    remote = git_remote("mailer", FILES)
    service = service_of(remote.url, tmp_path / "data")
    with pytest.raises(RepositoryUnavailable, match="is not cloned yet"):
        service.host("mailer")  # nothing clones it: a one-shot command says who does
    release = threading.Event()

    def held_sync(spec: RepositorySpec, environ: Any, *, timeout: float) -> Checkout:
        assert release.wait(30)  # the real clone, once the test has asked meanwhile
        return sync(spec, environ, timeout=timeout)

    keeper = RemoteKeeper(service, "mailer", interval=0, syncer=held_sync)
    try:
        keeper.start()
        with anyio.fail_after(10):
            while service.states["mailer"].state != "cloning":
                await anyio.sleep(0.01)
        with pytest.raises(RepositoryUnavailable, match="is being cloned from file://"):
            service.host("mailer")
        release.set()
        with anyio.fail_after(30):
            state = await keeper.settled()
        assert state.state == "ready" and state.error is None
        assert state.commit == remote.git("rev-parse", "HEAD") and state.files == 2
        assert service.host("mailer").root == tmp_path / "data" / "mailer"
    finally:
        release.set()
        await keeper.stop()
        service.close()


async def test_an_existing_clone_is_fetched_and_a_failed_fetch_keeps_it_served(
    git_remote: MakeRemote, tmp_path: Path
) -> None:
    remote = git_remote("mailer", FILES)
    data = tmp_path / "data"
    sync(RepositorySpec("mailer", data / "mailer", remote.url, "main"), ENVIRON)
    pushed = remote.push({"src/refund.py": "def issue_refund(customer):\n    return 1\n"})
    service = service_of(remote.url, data)
    keeper = RemoteKeeper(service, "mailer", interval=0)
    try:
        keeper.start()
        with anyio.fail_after(30):
            state = await keeper.settled()
        assert state.state == "ready" and state.commit == pushed and state.files == 3
        assert keeper.branch == "main" and keeper.syncs == 1

        again = remote.push({"src/refund.py": "def refund_by_transfer(customer):\n    return 2\n"})
        keeper.trigger()
        with anyio.fail_after(30):
            assert await keeper.wait_for_sync(30)
        watcher = keeper.watcher()
        assert watcher is not None and watcher.state.last_changed == 1  # incremental
        assert watcher.state.mode == "fetch" and watcher.state.refreshes == 2
        assert state.commit == again and state.error is None
        index = service.shared_index("mailer")
        assert "refund_by_transfer" in "".join(index.lines("src/refund.py"))

        shutil.rmtree(remote.bare)  # the remote is gone: no network, say
        keeper.trigger()
        with anyio.fail_after(30):
            assert await keeper.wait_for_sync(30)
        assert state.state == "ready" and state.commit == again  # still served
        assert state.error is not None and "git fetch of file://" in state.error
        assert service.host("mailer").index is not None
    finally:
        await keeper.stop()
        service.close()


async def test_a_fault_while_syncing_is_a_failed_state_and_the_next_sync_still_runs(
    git_remote: MakeRemote, tmp_path: Path
) -> None:
    remote = git_remote("mailer", FILES)
    service = service_of(remote.url, tmp_path / "data")
    calls: list[int] = []

    def faulty_once(spec: RepositorySpec, environ: Any, *, timeout: float) -> Checkout:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("a fault of ours")
        return sync(spec, environ, timeout=timeout)

    keeper = RemoteKeeper(service, "mailer", interval=0, syncer=faulty_once)
    try:
        keeper.start()
        with anyio.fail_after(30):
            state = await keeper.settled()
        assert state.state == "failed" and state.error == "keeping it current failed: ValueError"
        keeper.trigger()
        with anyio.fail_after(30):
            assert await keeper.wait_for_sync(30)
        assert state.state == "ready" and state.error is None and state.files == 2
    finally:
        await keeper.stop()
        service.close()
