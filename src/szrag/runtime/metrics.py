"""Counters of the running process: commands executed, who ran them, how long they took,
and live tool calls."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from szrag.base.public import public, public_dict, rounded
from szrag.runtime.logs import iso_time


class Runner(Protocol):
    """Who ran a command, as the counters need it (``commands.model.Identity``)."""

    @property
    def user_id(self) -> str: ...

    @property
    def channel_id(self) -> str: ...

    @property
    def team_id(self) -> str: ...


class FinishedCommand(Protocol):
    """One finished execution, as the counters need it (``commands.model.CommandOutcome``:
    the command layer sits above the runtime, so the runtime names only what it reads)."""

    @property
    def command_id(self) -> str: ...

    @property
    def identity(self) -> Runner: ...

    @property
    def source(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def duration_ms(self) -> float: ...

    @property
    def ok(self) -> bool: ...


UNKNOWN_COMMAND = "(unknown)"  # attempts of unregistered ids share one counter


@dataclass
class _Timing:
    """Count, failures and latency of one command or tool."""

    count: int = 0
    failures: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    last_ms: float = 0.0
    last_status: str = ""

    def add(self, ok: bool, status: str, duration_ms: float) -> None:
        self.count += 1
        self.failures += 0 if ok else 1
        self.total_ms += duration_ms
        self.max_ms = max(self.max_ms, duration_ms)
        self.last_ms = duration_ms
        self.last_status = status

    def figures(self) -> TimingFigures:
        return TimingFigures(
            count=self.count,
            failures=self.failures,
            average_ms=self.total_ms / self.count if self.count else 0.0,
            max_ms=self.max_ms,
            last_ms=self.last_ms,
            last_status=self.last_status,
        )


_MILLISECONDS = public(convert=rounded(3))


@dataclass(frozen=True, slots=True)
class TimingFigures:
    """Count, failures and latency of one command or tool, as ``getMetrics`` shows them."""

    count: int
    failures: int
    average_ms: float = field(metadata=_MILLISECONDS)
    max_ms: float = field(metadata=_MILLISECONDS)
    last_ms: float = field(metadata=_MILLISECONDS)
    last_status: str


@dataclass(frozen=True, slots=True)
class MetricsSnapshot:
    """Every counter since ``since`` (epoch seconds)."""

    since: float = field(metadata=public(convert=iso_time))
    commands_executed: int
    commands_succeeded: int
    commands_failed: int
    unique_users: int
    unique_channels: int
    by_source: Mapping[str, int]  # keys: where commands came from (data)
    commands: Mapping[str, TimingFigures]  # keys: command ids (data)
    tool_calls: Mapping[str, TimingFigures]  # keys: tool names (data)


class Metrics:
    """Thread-safe counters, read as one JSON snapshot."""

    def __init__(self) -> None:
        self.started = time.time()
        self._lock = threading.Lock()
        self._commands: dict[str, _Timing] = {}
        self._tools: dict[str, _Timing] = {}
        self._sources: dict[str, int] = {}
        self._users: set[str] = set()
        self._channels: set[str] = set()

    def record_command(self, outcome: FinishedCommand) -> None:
        """Count one command execution (an observer of the command runner)."""
        key = UNKNOWN_COMMAND if outcome.status == "unknown_command" else outcome.command_id
        with self._lock:
            self._commands.setdefault(key, _Timing()).add(
                outcome.ok, outcome.status, outcome.duration_ms
            )
            self._sources[outcome.source] = self._sources.get(outcome.source, 0) + 1
            self._users.add(f"{outcome.identity.team_id}/{outcome.identity.user_id}")
            self._channels.add(f"{outcome.identity.team_id}/{outcome.identity.channel_id}")

    def record_tool(self, name: str, status: str, duration_ms: float) -> None:
        """Count one live tool call."""
        with self._lock:
            self._tools.setdefault(name, _Timing()).add(status == "completed", status, duration_ms)

    def figures(self) -> MetricsSnapshot:
        """Every counter, as one consistent record."""
        with self._lock:
            executed = sum(timing.count for timing in self._commands.values())
            failed = sum(timing.failures for timing in self._commands.values())
            return MetricsSnapshot(
                since=self.started,
                commands_executed=executed,
                commands_succeeded=executed - failed,
                commands_failed=failed,
                unique_users=len(self._users),
                unique_channels=len(self._channels),
                by_source=dict(sorted(self._sources.items())),
                commands={key: self._commands[key].figures() for key in sorted(self._commands)},
                tool_calls={key: self._tools[key].figures() for key in sorted(self._tools)},
            )

    def snapshot(self) -> dict[str, Any]:
        """Every counter as JSON."""
        return public_dict(self.figures())
