"""Shared fixtures: isolated environment and fixture repositories copied to a temporary root."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from szrag.base.settings import Settings
from szrag.base.variables import NAMES
from szrag.llm.testing import ScriptedProvider, serve

FIXTURES = Path(__file__).parent / "fixtures"

# Images are path-matched only; their bytes just have to look like images.
PNG_BYTES = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
RETRIEVAL_IMAGES = (
    "docs/images/architecture-diagram.png",
    "docs/images/calc-flow.jpg",
    "assets/dashboard.webp",
    "assets/git-workflow.gif",
    "assets/logo.png",
)


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test sees the developer's model keys or szrag settings: every variable szrag reads
    (``szrag.base.variables``, the one registry) is unset."""
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    yield


CopyFixture = Callable[[str], Path]


@pytest.fixture
def copy_fixture(tmp_path: Path) -> CopyFixture:
    """Copy ``tests/fixtures/<name>`` into a fresh temporary directory and return its path."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / name, target, symlinks=True)
        return target

    return copy


@pytest.fixture
def retrieval_repo(copy_fixture: CopyFixture) -> Path:
    """The Pagebot fixture repository with a few images added."""
    root = copy_fixture("retrieval_repo")
    for relative in RETRIEVAL_IMAGES:
        image = root / relative
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_bytes(PNG_BYTES)
    return root


# --- the scripted model provider, shared by every suite ------------------------------------


@pytest.fixture(scope="session")
def provider_server() -> Iterator[tuple[ScriptedProvider, str]]:
    """One scripted OpenAI-compatible provider on 127.0.0.1 for the whole session."""
    app = ScriptedProvider()
    with serve(app) as base_url:
        yield app, base_url


@pytest.fixture
def provider(provider_server: tuple[ScriptedProvider, str]) -> ScriptedProvider:
    """The scripted provider, with an empty script and no recorded requests."""
    app, _ = provider_server
    app.reset()
    return app


ProviderSettings = Callable[..., Settings]


@pytest.fixture
def provider_settings(provider_server: tuple[ScriptedProvider, str]) -> ProviderSettings:
    """``provider_settings(**overrides)``: settings that point the client at the scripted
    provider, with short timeouts and no retries or waits unless overridden."""
    _, base_url = provider_server

    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "ai_url": base_url,
            "ai_model": "test-model",
            "ai_api_key": "test-key",
            "connect_timeout": 2.0,
            "read_timeout": 2.0,
            "retries": 0,
            "retry_delay": 0.0,
            "retry_max_delay": 0.0,
        }
        values.update(overrides)
        return Settings(**values)

    return make
