"""One pathological file (a minified bundle: one line of most of a megabyte, thousands of
functions) costs what an ordinary file costs, and a server gathers evidence off its event
loop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from szrag.answer import gather_evidence
from szrag.base.activity import ActivityRecorder
from szrag.context import build_codebase_context, pack_repository_context
from szrag.context.pack import INCLUDED, OVER_BUDGET, ContextChunk, pack_chunks
from szrag.index import build_index
from szrag.index.shared import open_shared_index
from szrag.rank.retrieve import retrieve
from szrag.structure.context import MAX_SECTION_ITEMS
from szrag.structure.queries import MAX_LINE_CHARS

CopyFixture = Callable[[str], Path]
QUESTION = "how does function f12 fetch the api"


def minified(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    parts = [
        f"function f{n}(a,b){{var t{n}=a+b*{n};if(a>{n})return fetch('/api/x{n}');return 0}}"
        for n in range(8000)
    ]
    (root / "bundle.js").write_text(";".join(parts))
    (root / "README.md").write_text("# App\nThe app fetches data from the api.\n")
    return root


def test_a_minified_bundle_gives_a_bounded_context(tmp_path: Path) -> None:
    root = minified(tmp_path / "repo")
    with build_index(root) as index:
        sources = retrieve(QUESTION, index=index)
        context = build_codebase_context(QUESTION, index, sources)
        packed = pack_repository_context(sources, context, budget=12000)

    (entry,) = [entry for entry in context.code if entry.path == "bundle.js"]
    assert len(entry.text) < (MAX_SECTION_ITEMS + 10) * 40 + 3 * MAX_LINE_CHARS
    assert "more characters on this line" in entry.symbol_source
    assert "… and" in entry.structure and "more" in entry.structure
    assert "bundle.js" in packed.files and packed.tokens <= 12000


def test_a_chunk_far_over_the_budget_is_judged_by_its_length_alone() -> None:
    huge = ContextChunk(key="k", kind="code", score=1, text="x = 1; " * 200_000, path="a.py")
    small = ContextChunk(key="s", kind="source", score=1, text="def a(): pass", path="a.py")

    packed = pack_chunks([huge, small], budget=1000)

    statuses = {chunk.key: chunk.status for chunk in packed.chunks}
    assert statuses == {"k": OVER_BUDGET, "s": INCLUDED}
    assert next(chunk for chunk in packed.chunks if chunk.key == "k").tokens > 1000


async def test_a_server_index_is_read_off_the_event_loop(copy_fixture: CopyFixture) -> None:
    web_repo = copy_fixture("web_repo")
    build_index(web_repo).close()
    seen: list[str] = []
    loop_thread = threading.current_thread().name
    with open_shared_index(web_repo) as index:
        original = index.definitions_by_words

        def definitions_by_words(*args: Any) -> list[object]:
            seen.append(threading.current_thread().name)
            return list(original(*args))

        index.definitions_by_words = definitions_by_words  # type: ignore[method-assign,assignment]
        evidence = await gather_evidence("gateway routes", index, ActivityRecorder())

    assert evidence.sources
    assert seen and loop_thread not in seen
