"""Live evidence beside the code: the running application's errors in the files found, the
commit it runs and whether cited files changed since, and which variables it has set."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

from szrag.answer.evidence import Evidence
from szrag.base.activity import COMPLETED, ActivityRecorder, plural
from szrag.base.errors import ToolError
from szrag.base.public import public_dict
from szrag.rank.words import named_variables
from szrag.runtime.sources import (
    ApplicationRuntime,
    changed_since,
    drift_text,
    environment_names,
    environment_text,
    errors_text,
    matching_errors,
    running_commit,
)
from szrag.tools.sanitise import sanitise_text


async def join_live(
    question: str, evidence: Evidence, live: ApplicationRuntime, recorder: ActivityRecorder
) -> Evidence:
    """The running application's errors raised in the files found or naming the route the
    question names, offered to the model beside the code (names, places and counts; the
    records' text is sanitised like any tool output)."""
    files = {source.path for source in evidence.sources} | set(evidence.packed.files)
    cited = list(dict.fromkeys(source.path for source in evidence.sources))
    started = time.perf_counter()
    source, errors = await asyncio.to_thread(matching_errors, live, question, files)
    wanted = _variables_of(question, evidence)
    commit, drift, environment = await asyncio.to_thread(_release_facts, live, cited, wanted)
    elapsed = (time.perf_counter() - started) * 1000
    metadata: dict[str, Any] = {
        "source": source,
        "errors": len(errors),
        "duration_ms": round(elapsed, 1),
    }
    if drift:
        metadata["drift"] = drift
    if commit:
        metadata["running_commit"] = commit
    parts = [errors_text(source, errors)] if errors else []
    parts += [text for text in (drift, environment) if text]
    message = (
        f"Live evidence: {plural(len(errors), 'error')} of the running application match this code"
        if errors
        else "No live error matches this code"
    )
    if drift:
        message += "; the running release is older than the checkout for cited files"
    await recorder.record("context", COMPLETED, message, metadata=metadata)
    if not parts:
        return dataclasses.replace(evidence, commit=commit)
    live_text = sanitise_text("\n".join(parts))
    return dataclasses.replace(evidence, live=live_text, drift=drift, commit=commit)


def _variables_of(question: str, evidence: Evidence) -> list[str]:
    """The environment variables a question is about: named in it, or read by the code found."""
    names = list(named_variables(question))
    if evidence.context is not None:
        names += [item.name for item in evidence.context.environment_variables]
    return list(dict.fromkeys(names))[:8]


def _release_facts(
    live: ApplicationRuntime, cited: list[str], wanted: list[str]
) -> tuple[str | None, str, str]:
    """The running commit, the sentence saying which cited files changed since it, and which
    of ``wanted`` the application has set (names only): each empty when not known."""
    try:
        status = public_dict(live.status())
    except ToolError:
        status = {}
    commit = running_commit(live, status)
    drift = ""
    if commit is not None:
        changed = changed_since(live.root, commit, cited)
        drift = drift_text(commit, changed) if changed else ""
    names = environment_names(live, status) if wanted else None
    environment = environment_text(names, wanted) if names is not None else ""
    return commit, drift, environment
