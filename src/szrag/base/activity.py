"""Activity records: what happened while a question was answered, as it happened.

Every step of answering (retrieval, context, command, model requests, the model's intermediate
reasoning, live tool calls) creates an :class:`Activity`. An :class:`ActivityRecorder` keeps them
in order and forwards each one to an optional ``on_activity`` callback the moment it exists, so a
face can stream progress. The callback receives the :class:`Activity` record itself
(``szrag.base.public.to_public`` gives the spec's camelCase shape); it may be a plain function or a
coroutine function.

Metadata is written with snake_case keys, like any field name; the public form camelCases them
(``duration_ms`` -> ``durationMs``); the values are shown as they are (records through
``to_public``, the keys of nested mappings as data).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from szrag.base.public import public, public_dict

STAGES = ("retrieval", "context", "command", "ai", "reasoning", "tool")

STARTED = "started"
COMPLETED = "completed"
FAILED = "failed"
SKIPPED = "skipped"

OnActivity = Callable[["Activity"], Awaitable[None] | None]
"""A callback told about each activity as it is created (sync or async)."""


def now_ms() -> int:
    """The current time in whole milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


def new_id() -> str:
    """A fresh random UUID as text."""
    return str(uuid.uuid4())


def plural(count: int, word: str) -> str:
    """``1 source``, ``3 sources``: the count with the word it counts, for messages."""
    return f"{count} {word}{'' if count == 1 else 's'}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Activity:
    """One step of answering a question: stage, status, message and optional details; shown
    in the spec's shape (``type`` is the ``kind`` when set, else the stage)."""

    id: str = field(default_factory=new_id)
    timestamp: int = field(default_factory=now_ms)
    type: str = field(init=False)  # the kind when set, else the stage
    stage: str
    status: str
    message: str
    activity_id: str | None = field(default=None, metadata=public(omit_none=True))
    metadata: Mapping[str, Any] | None = field(
        default=None, metadata=public(omit_none=True, camel_keys=True)
    )
    # a finer event type (a tool's api_request or command_tool)
    kind: str | None = field(default=None, metadata=public(hidden=True))

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise ValueError(f"unknown activity stage {self.stage!r}; expected one of {STAGES}")
        object.__setattr__(self, "type", self.kind or self.stage)

    def to_dict(self) -> dict[str, Any]:
        """The record in the spec's shape."""
        return public_dict(self)


class ActivityRecorder:
    """Keeps activities in creation order and forwards each to ``on_activity`` at once."""

    def __init__(self, on_activity: OnActivity | None = None) -> None:
        self._on_activity = on_activity
        self._activities: list[Activity] = []
        self._pending: list[asyncio.Future[None]] = []

    @property
    def activities(self) -> list[Activity]:
        """A copy of the activities recorded so far, oldest first."""
        return list(self._activities)

    def to_dicts(self) -> list[dict[str, Any]]:
        """Every activity in the spec's shape, oldest first."""
        return [public_dict(activity) for activity in self._activities]

    async def record(
        self,
        stage: str,
        status: str,
        message: str,
        *,
        activity_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Activity:
        """Create an activity, keep it, and wait for the callback to take it."""
        activity = Activity(
            stage=stage, status=status, message=message, activity_id=activity_id, metadata=metadata
        )
        await self.add(activity)
        return activity

    async def add(self, activity: Activity) -> None:
        """Keep ``activity`` and wait for the callback to take it."""
        result = self._keep(activity)
        if result is not None:
            await result

    def add_nowait(self, activity: Activity) -> None:
        """Keep ``activity`` from synchronous code; an async callback runs as a task that
        :meth:`flush` waits for."""
        result = self._keep(activity)
        if result is not None:
            self._pending.append(asyncio.ensure_future(result))

    async def flush(self) -> None:
        """Wait for callbacks started by :meth:`add_nowait`; the first failure is raised."""
        pending, self._pending = self._pending, []
        if pending:
            await asyncio.gather(*pending)

    def _keep(self, activity: Activity) -> Awaitable[None] | None:
        self._activities.append(activity)
        if self._on_activity is None:
            return None
        return self._on_activity(activity)  # None from a plain function
