"""A long-running face's evidence (its views kept in memory, read by the words of each
question) is the evidence a one-shot command finds in SQLite: the same sources, codebase
context and packed text, before and after a refresh."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from szrag.answer.evidence import Evidence, _find
from szrag.base.public import to_public
from szrag.context.plan import ContextPlan
from szrag.index import build_index, refresh_index
from szrag.index.protocol import IndexStore
from szrag.index.shared import open_shared_index
from szrag.service.watch import warm_views

CopyFixture = Callable[[str], Path]

QUESTIONS = (
    "how does the server handle a request",
    "where is the configuration read from the environment",
    "what does app.py define",
    "how are users created and saved to the database",
    "which routes are registered in server/routes.js",
    "test the logger",
    "how is the cache invalidated",
)


Found = tuple[list[tuple[str, int, int, int]], object, str]


def _evidence(index: IndexStore) -> list[Found]:
    plan = ContextPlan.of(index.config, {})
    found: list[Found] = []
    for question in QUESTIONS:
        with index.reading():
            evidence: Evidence = _find(
                question, index, limit=8, plan=plan, budget_for=None, expand=True
            )
        found.append(
            (
                [(item.path, item.start, item.end, item.score) for item in evidence.sources],
                to_public(evidence.context),
                evidence.packed.text,
            )
        )
    return found


@pytest.mark.parametrize("fixture", ["context_app_js", "context_app_py", "express_app"])
def test_warm_evidence_is_the_one_shot_evidence(copy_fixture: CopyFixture, fixture: str) -> None:
    root = copy_fixture(fixture)
    with build_index(root) as index:
        one_shot = _evidence(index)
    with open_shared_index(root) as kept:
        kept.keep_in_memory()
        warm_views(kept)
        assert _evidence(kept) == one_shot
        assert any(sources for sources, _, _ in one_shot)  # the questions find something
        # a changed file: the views carried to the new generation answer as SQLite does
        changed = next(path for path in sorted(root.rglob("*")) if path.suffix in (".js", ".py"))
        changed.write_text(
            changed.read_text() + "\n# the cache is invalidated by the logger\n"
            if changed.suffix == ".py"
            else changed.read_text() + "\n// the cache is invalidated by the logger\n"
        )
        assert refresh_index(kept).changed
        warm_views(kept)
        carried = _evidence(kept)
    with build_index(root) as index:
        assert _evidence(index) == carried
