"""Fixtures of the index tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from szrag.index.pg.vectors import MAX_LEXEME_BYTES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LONG_TOKEN = "f00d" * (MAX_LEXEME_BYTES // 2)  # longer than a tsvector lexeme may be


def _tree(root: Path) -> Path:
    """Several languages, prose, identical files (tied scores), a chunk repeating one token
    more often than a tsvector keeps, one far longer than its positions reach, a token
    longer than a lexeme may be, and words beyond ASCII."""
    shutil.copytree(FIXTURES / "retrieval_repo", root)
    shutil.copytree(FIXTURES / "languages", root / "languages")
    shutil.copytree(FIXTURES / "python_app", root / "python_app")
    (root / "docs/images").mkdir(parents=True)
    (root / "docs/images/deploy-flow.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    for copy in range(4):
        (root / f"same/copy{copy}.txt").parent.mkdir(exist_ok=True)
        (root / f"same/copy{copy}.txt").write_text("deploy webhook signature\n" * 5)
    (root / "data").mkdir()
    (root / "data/metrics.csv").write_text(
        "\n".join(",".join(["7"] * 40) + ",metric,counter" for _ in range(60)) + "\n"
    )
    (root / "data/long.txt").write_text(
        "\n".join(" ".join(f"word{n} counter" for n in range(400)) for _ in range(50)) + "\n"
    )
    (root / "data/long_token.txt").write_text(f"token {LONG_TOKEN}\nother words\n")
    (root / "docs/unicode.md").write_text("# Café\n\nnaïve straße café Ünïcödé 東京 deploy\n")
    (root / "server/cache.py").write_text(
        "def refresh_cache():\n    return restartService()\n\n"
        "def restartService():\n    return refresh_cache()\n"
    )
    return root


@pytest.fixture(scope="session")
def hard_tree() -> Callable[[Path], Path]:
    """Writes the tree whose full-text data a PostgreSQL store finds hardest at a folder."""
    return _tree
